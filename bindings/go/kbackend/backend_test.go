package kbackend

// The generated functions (backend.go) against known values, one or more per family.

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func f32(t *testing.T, data []float32, shape ...int64) *Tensor {
	t.Helper()
	x, err := FromFloat32(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// vals(t)(f(...)) is the value of the tensor f returns, as float32s.
func vals(t *testing.T) func(x *Tensor, err error) []float32 {
	return func(x *Tensor, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		v, err := x.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantStatus(t *testing.T, err error, status Status, text string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != status || !strings.Contains(e.Message, text) {
		t.Fatalf("want status %d naming %q, got %v", status, text, err)
	}
}

func image(t *testing.T) *Tensor {
	return f32(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 3, 3, 1)
}

func TestConvolutionWithDefaultsAndOptions(t *testing.T) {
	ones := f32(t, []float32{1, 1, 1, 1}, 2, 2, 1, 1)
	near(t, vals(t)(Conv2D(image(t), ones, nil, Valid, ChannelsLast, nil)), 12, 16, 24, 28)
	near(t, vals(t)(Conv2D(image(t), ones, []int64{1, 1}, Same, ChannelsLast, nil)),
		12, 16, 9, 24, 28, 15, 15, 17, 9)
	near(t, vals(t)(Conv2D(image(t), ones, []int64{2, 2}, Valid, ChannelsLast, nil)), 12)
	x := f32(t, []float32{1, 2, 3, 4}, 1, 4, 1)
	diff := f32(t, []float32{1, -1}, 2, 1, 1)
	near(t, vals(t)(Conv1D(x, diff, 1, Valid, ChannelsLast, 1)), -1, -1, -1)
	_, err := Conv2D(image(t), ones, []int64{1, 1, 1}, Valid, ChannelsLast, nil)
	wantStatus(t, err, ErrInvalidArgument, "conv2d")
	// conv3d of a 2x2x2 volume of ones with a 2x2x2 kernel of ones: one sum of 8
	vol := f32(t, []float32{1, 1, 1, 1, 1, 1, 1, 1}, 1, 2, 2, 2, 1)
	near(t, vals(t)(Conv3D(vol, vol.reshaped(t, 2, 2, 2, 1, 1), nil, Valid, ChannelsLast, nil)), 8)
}

func (x *Tensor) reshaped(t *testing.T, shape ...int64) *Tensor {
	t.Helper()
	r, err := Reshape(x, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPoolingPaddingAndResizing(t *testing.T) {
	near(t, vals(t)(Pool2D(image(t), []int64{2, 2}, nil, Valid, ChannelsLast, MaxPool)), 5, 6, 8, 9)
	padded, err := Spatial2DPadding(image(t), nil, ChannelsLast)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := padded.Shape(); len(s) != 4 || s[1] != 5 || s[2] != 5 {
		t.Fatalf("shape %v", s)
	}
	sum := float32(0)
	for _, v := range vals(t)(padded, nil) {
		sum += v
	}
	if sum != 45 {
		t.Fatalf("sum %v", sum)
	}
	big, err := ResizeImages(image(t), 2, 2, ChannelsLast, InterpolationNearest)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := big.Shape(); s[1] != 6 || s[2] != 6 {
		t.Fatalf("shape %v", s)
	}
}

func TestReductionsShapesAndSharedLengths(t *testing.T) {
	x := f32(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	near(t, vals(t)(Sum(x, []int64{1}, false)), 6, 15)
	near(t, vals(t)(Sum(x, nil, false)), 21)
	kept, err := Max(x, []int64{0}, true)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := kept.Shape(); len(s) != 2 || s[0] != 1 || s[1] != 3 {
		t.Fatalf("shape %v", s)
	}
	near(t, vals(t)(Slice(x, []int64{0, 1}, []int64{2, 2})), 2, 3, 5, 6)
	_, err = Slice(x, []int64{0, 1}, []int64{2})
	wantStatus(t, err, ErrInvalidArgument, "one length")
	near(t, vals(t)(StridedSlice(x, []int64{1, 0}, []int64{2, 3}, []int64{1, 2}, 0, 0, 1, 0)), 4, 6)
	near(t, vals(t)(BatchDot(x, x, []int64{1, 1})), 14, 77)
	near(t, vals(t)(BatchDot(x, x, []int64{1})), 14, 77)
	_, err = BatchDot(x, x, []int64{1, 1, 1})
	wantStatus(t, err, ErrInvalidArgument, "axes")
	near(t, vals(t)(Var(x, []int64{1}, false)), 2.0/3, 2.0/3)
	near(t, vals(t)(L2Normalize(f32(t, []float32{3, 4}, 2), nil)), 0.6, 0.8)
}

func TestNNCTCAndNormalization(t *testing.T) {
	near(t, vals(t)(Relu(f32(t, []float32{-1, 0.5, 3}, 3), 0, OptFloat(2), 0)), 0, 0.5, 2)
	// Best path: classes 0, 0, 1 (2 is the blank): repeats merged gives [0, 1].
	probs := f32(t, []float32{0.7, 0.2, 0.1, 0.6, 0.3, 0.1, 0.1, 0.8, 0.1}, 1, 3, 3)
	lengths, _ := FromInt32([]int32{3}, 1)
	decoded, logProb, err := CTCDecode(probs, lengths, true, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 1 {
		t.Fatalf("%d paths", len(decoded))
	}
	if got, _ := decoded[0].Int64s(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("decoded %v", got)
	}
	eps, _ := Epsilon()
	want := -(math.Log(0.7+eps) + math.Log(0.6+eps) + math.Log(0.8+eps))
	near(t, vals(t)(logProb, nil), float32(want))
	x := f32(t, []float32{1, 2, 3, 4}, 4)
	mean, variance := f32(t, []float32{2.5}, 1), f32(t, []float32{1.25}, 1)
	s := float32(math.Sqrt(1.25 + 1e-3))
	near(t, vals(t)(BatchNormalization(x, mean, variance, nil, nil, -1, 1e-3)),
		-1.5/s, -0.5/s, 0.5/s, 1.5/s)
	onehot := f32(t, []float32{0, 1, 1, 0}, 2, 2)
	guess := f32(t, []float32{0.2, 0.8, 0.6, 0.4}, 2, 2)
	near(t, vals(t)(CategoricalCrossentropy(onehot, guess, false, -1)),
		float32(-math.Log(0.8)), float32(-math.Log(0.6)))
}

func TestRandomDropoutAndControl(t *testing.T) {
	a := vals(t)(RandomUniform([]int64{100}, 0, 1, DefaultDType, OptInt(7)))
	b := vals(t)(RandomUniform([]int64{100}, 0, 1, DefaultDType, OptInt(7)))
	for i := range a {
		if a[i] != b[i] || a[i] < 0 || a[i] >= 1 {
			t.Fatalf("draws %v and %v", a[i], b[i])
		}
	}
	x := f32(t, []float32{1, 2}, 2)
	near(t, vals(t)(Dropout(x, 0, nil, OptInt(1))), 1, 2)
	alt := f32(t, []float32{5, 6}, 2)
	near(t, vals(t)(InTrainPhase(x, alt, nil, TrainingTrue)), 1, 2)
	near(t, vals(t)(InTestPhase(x, alt, nil, TrainingTrue)), 5, 6)
	cond, _ := FromInt32([]int32{1, 0}, 2)
	b8, _ := Cast(cond, Bool)
	near(t, vals(t)(Switch(b8, x, alt)), 1, 6)
	r, err := Arange(1, OptFloat(4), 1, Int32)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Int32s(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("arange %v", got)
	}
}

func TestStringsBooleansAndNames(t *testing.T) {
	v, err := VariableFromTensor(f32(t, []float32{1}, 1), DefaultDType, "w")
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := TensorName(v); !strings.Contains(name, "w") {
		t.Fatalf("name %q", name)
	}
	if p, _ := IsPlaceholder(v); p {
		t.Fatal("a variable is no placeholder")
	}
	if ok, _ := IsTensor(v); !ok {
		t.Fatal("a variable is a tensor")
	}
	_, err = VariableFromTensor(f32(t, []float32{1}, 1), DefaultDType, "a\x00b")
	wantStatus(t, err, ErrInvalidArgument, "NUL")
	if d, _ := DTypeOf(v); d != Float32 {
		t.Fatalf("dtype %v", d)
	}
}

const denseJSON = `{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name":
"Dense", "config": {"name": "d", "units": 2, "activation": "linear", "batch_input_shape":
[null, 3]}}]}}`

func TestModelBridgeAndLayers(t *testing.T) {
	m, err := ModelFromJSON(denseJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if n, _ := m.LayerCount(); n != 1 {
		t.Fatalf("%d layers", n)
	}
	if c, _ := m.LayerClass(0); c != "Dense" {
		t.Fatalf("class %q", c)
	}
	_, err = m.LayerName(5)
	wantStatus(t, err, ErrInvalidArgument, "")
	weights, err := m.Weights()
	if err != nil || len(weights) != 2 {
		t.Fatalf("weights %v %v", weights, err)
	}
	kernel := f32(t, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	bias := f32(t, []float32{0.5, -0.5}, 2)
	if err := m.LayerSetWeights(0, []*Tensor{kernel, bias}); err != nil {
		t.Fatal(err)
	}
	x := f32(t, []float32{1, 2, 3}, 1, 3)
	out, err := m.PredictOnBatch([]*Tensor{x})
	if err != nil || len(out) != 1 {
		t.Fatalf("predict %v %v", out, err)
	}
	near(t, vals(t)(out[0], nil), 4.5, 4.5)
	if err := m.Compile("sgd", []string{"mse"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	y := f32(t, []float32{0, 0}, 1, 2)
	before, err := m.TestOnBatch([]*Tensor{x}, []*Tensor{y})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TrainOnBatch([]*Tensor{x}, []*Tensor{y}); err != nil {
		t.Fatal(err)
	}
	after, _ := m.TestOnBatch([]*Tensor{x}, []*Tensor{y})
	if b, a := vals(t)(before, nil), vals(t)(after, nil); a[0] >= b[0] {
		t.Fatalf("one SGD step must lower the loss: %v then %v", b, a)
	}
	inputs, err := m.Inputs()
	if err != nil || len(inputs) != 1 {
		t.Fatalf("inputs %v %v", inputs, err)
	}
	if s, _ := inputs[0].Shape(); len(s) != 2 || s[1] != 3 {
		t.Fatalf("input shape %v", s)
	}
}

func TestModelWithDtypePolicy(t *testing.T) {
	m, err := ModelFromJSON(denseJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	third := float32(1.0 / 3)
	if err := m.LayerSetWeights(0, []*Tensor{f32(t, []float32{third, 0, 0, third, third, third}, 3, 2),
		f32(t, []float32{0, 0}, 2)}); err != nil {
		t.Fatal(err)
	}
	x := f32(t, []float32{1, 2, 3}, 1, 3)
	mixed, err := m.WithDtypePolicy("mixed_bfloat16")
	if err != nil {
		t.Fatal(err)
	}
	defer mixed.Close()
	out, err := mixed.PredictOnBatch([]*Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := DTypeOf(out[0]); d != Bfloat16 { // the layer computes in bfloat16
		t.Fatalf("dtype %v", d)
	}
	back, err := mixed.WithDtypePolicy("float32") // the same float32 weights
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	got, err := back.PredictOnBatch([]*Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	near(t, vals(t)(got[0], nil), 4*third, 5*third)
	_, err = m.WithDtypePolicy("bfloat16")
	wantStatus(t, err, ErrInvalidArgument, "does not keep float32 variables")
}
