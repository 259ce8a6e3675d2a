package kbackend

import (
	"errors"
	"strings"
	"testing"
)

// A layer class of the test's own: y = x + b, b a weight of ones; {"fail": true} fails.
func addBias(layer *LayerContext, config string, inputs []*Tensor) ([]*Tensor, error) {
	if strings.Contains(config, `"fail":true`) {
		return nil, errors.New("asked to fail")
	}
	shape, err := inputs[0].Shape()
	if err != nil {
		return nil, err
	}
	b, err := layer.AddWeight("b", []int64{shape[len(shape)-1]}, `"ones"`, true)
	if err != nil {
		return nil, err
	}
	y, err := Add(inputs[0], b)
	return []*Tensor{y}, err
}

func TestCustomLayers(t *testing.T) {
	if err := RegisterLayer("AddBias", addBias); err != nil {
		t.Fatal(err)
	}
	json := `{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "AddBias",` +
		` "config": {"name": "ab", "batch_input_shape": [null, 2]}}]}}`
	m, err := ModelFromJSON(json)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x := f32(t, []float32{1, 2}, 1, 2)
	p, err := m.Predict([]*Tensor{x}, 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p[0].Float32s()
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("predict: %v", got)
	}
	failing := strings.Replace(json, `"name": "ab"`, `"name": "ab", "fail": true`, 1)
	var e *Error
	if _, err := ModelFromJSON(failing); !errors.As(err, &e) ||
		!strings.Contains(e.Message, "layer 'ab' (AddBias): the Go layer func failed: asked to fail") {
		t.Fatalf("failing layer: %v", err)
	}
	if err := RegisterLayer("Panics", func(*LayerContext, string, []*Tensor) ([]*Tensor, error) {
		panic("boom")
	}); err != nil {
		t.Fatal(err)
	}
	panics := strings.Replace(json, "AddBias", "Panics", 1)
	if _, err := ModelFromJSON(panics); err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("panicking layer: %v", err)
	}
	if err := RegisterLayer("Nil", nil); err == nil {
		t.Fatal("a nil func was registered")
	}
}
