package kbackend

import (
	"errors"
	"io/fs"
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
		`"class_weight": {"-1": 2.5, "0": 1}, "distributed": false}`
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
	// A new C function, reached with no Go code (backend.go is generated): 2 x 1 kernel, 1 bias.
	if n, err := m.CountParams(); err != nil || n != 3 {
		t.Fatalf("CountParams: %d, %v", n, err)
	}
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
	// The callback gets typed logs and may use the model: it saves it at each epoch's end.
	path := t.TempDir() + "/m.h5"
	var losses []float64
	history, err := m.FitWith([]*Tensor{x}, []*Tensor{y}, o, func(epoch, batch int64, logs map[string]float64) bool {
		if batch == -1 {
			losses = append(losses, logs["loss"])
			if err := m.Save(path, true); err != nil {
				panic(err)
			}
		}
		return false
	})
	if err != nil || len(history["loss"]) != 2 || history["loss"][1] != losses[1] {
		t.Fatalf("FitWith: %v (callback saw %v), %v", history, losses, err)
	}
	again, err := LoadModel(path, true)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	// A panic in the callback stops training and comes back as the error.
	_, err = m.FitWith([]*Tensor{x}, []*Tensor{y}, o, func(epoch, batch int64, logs map[string]float64) bool {
		panic("stop here")
	})
	if err == nil || !strings.Contains(err.Error(), "stop here") {
		t.Fatalf("the callback's panic: %v", err)
	}
}

// Keras' callbacks as values: no improvement of 100 in the loss, so training stops when
// patience (1) runs out, after the second epoch; ReduceLROnPlateau logs the rate.
func TestKerasCallbacksRunInFit(t *testing.T) {
	json := `{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",` +
		` "config": {"name": "d", "units": 1, "activation": "linear", "batch_input_shape": [null, 2]}}]}}`
	m, err := ModelFromJSON(json)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Compile("sgd", []string{"mse"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	x := f32(t, []float32{1, 0, 0, 1, 1, 1, 0, 0}, 4, 2)
	y := f32(t, []float32{1, 2, 3, 0}, 4, 1)
	reduce := NewReduceLROnPlateau()
	reduce.Monitor = "loss"
	stop := NewEarlyStopping()
	stop.Monitor, stop.Patience, stop.MinDelta = "loss", 1, 100
	o := DefaultFitOptions()
	o.Verbose, o.Epochs = 0, 10
	o.Callbacks = []KerasCallback{reduce, stop}
	history, err := m.FitWith([]*Tensor{x}, []*Tensor{y}, o, nil)
	if err != nil || len(history["loss"]) != 2 || len(history["learning_rate"]) != 2 {
		t.Fatalf("FitWith: %v, %v", history, err)
	}
	save := NewModelCheckpoint()
	save.Filepath, save.SaveFreq = "a\"b.keras", 3
	text, err := save.CallbackJSON()
	if err != nil || !strings.Contains(text, `"filepath": "a\"b.keras"`) ||
		!strings.Contains(text, `"save_freq": 3`) {
		t.Fatalf("CallbackJSON: %s, %v", text, err)
	}
	save.SaveFreq = 2.5
	o.Callbacks = []KerasCallback{save}
	_, err = m.FitWith([]*Tensor{x}, []*Tensor{y}, o, nil)
	wantStatus(t, err, ErrInvalidArgument, "'save_freq' is not an integer or a string")
}

// A missing file is fs.ErrNotExist to errors.Is (api/kbackend.toml's [errors]), with its status.
func TestMissingFileIsErrNotExist(t *testing.T) {
	_, err := LoadModel("/nonexistent/m.h5", true)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("not fs.ErrNotExist: %v", err)
	}
	wantStatus(t, err, ErrNotFound, "/nonexistent/m.h5: no such file")
	if errors.Is(err, fs.ErrPermission) {
		t.Fatal("a missing file is not a permission error")
	}
}
