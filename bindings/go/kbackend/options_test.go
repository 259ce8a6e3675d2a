package kbackend

import (
	"math"
	"strings"
	"testing"
)

// The option structs (options.go, generated from api/kbackend.toml) write the keys the library
// takes; a key outside its set is refused with its name.
func TestOptionsAsValuesAndUnknownKeys(t *testing.T) {
	f := DefaultFitOptions()
	if f.BatchSize != 32 || f.Epochs != 1 || f.Verbose != 1 || !f.Shuffle {
		t.Fatalf("not Keras' defaults: %+v", f)
	}
	f.Shuffle = false
	f.ValidationSplit = 0.25
	f.ClassWeight = map[int64]float64{0: 1, -1: 2.5}
	got, err := f.OptionsJSON()
	want := `{"shuffle": false, "seed": 0, "validation_split": 0.25, "initial_epoch": 0, ` +
		`"class_weight": {"-1": 2.5, "0": 1}}`
	if err != nil || got != want {
		t.Fatalf("OptionsJSON: %q, %v", got, err)
	}
	f.ValidationSplit = math.NaN()
	_, err = f.OptionsJSON()
	wantStatus(t, err, ErrInvalidArgument, "'validation_split' is not a finite number")

	json := `{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",` +
		` "config": {"name": "d", "units": 1, "activation": "linear", "batch_input_shape": [null, 2]}}]}}`
	m, err := ModelFromJSON(json)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = m.Compile("sgd", []string{"mse"}, nil, `{"loss_weight": [1]}`)
	wantStatus(t, err, ErrInvalidArgument, "unknown key 'loss_weight' (did you mean 'loss_weights'?)")
	if err := m.CompileWith("sgd", []string{"mse"}, nil, CompileOptions{LossWeights: []float64{2}}); err != nil {
		t.Fatal(err)
	}
	x := f32(t, []float32{1, 0, 0, 1, 1, 1, 0, 0}, 4, 2)
	y := f32(t, []float32{1, 2, 3, 0}, 4, 1)
	_, err = m.Fit([]*Tensor{x}, []*Tensor{y}, 4, 1, 0, `{"shufle": true}`)
	wantStatus(t, err, ErrInvalidArgument, "unknown key 'shufle' (did you mean 'shuffle'?)")
	o := DefaultFitOptions()
	o.Verbose = 0
	o.Epochs = 2
	history, err := m.FitWith([]*Tensor{x}, []*Tensor{y}, o)
	if err != nil || !strings.Contains(history, `"loss"`) {
		t.Fatalf("FitWith: %s, %v", history, err)
	}
}
