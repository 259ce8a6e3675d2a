package kbackend

// #include <stdlib.h>
// #include <kbackend.h>
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Model is a Keras model (kb_model_*): loaded from a Keras HDF5 file or Keras' JSON, trained,
// evaluated and saved natively, with one tensor per input and per output. It owns its native
// handle, released by Close or, as a safety net, when it is collected. Use a Model from one
// goroutine at a time. The methods that backend.go generates give the rest: layers, weights,
// the model's graph values (Inputs, TotalLoss, ...), the *OnBatch calls, SaveWeights.
type Model struct {
	h uintptr
}

func wrapModel(m *C.kb_model) *Model {
	out := &Model{h: uintptr(unsafe.Pointer(m))}
	runtime.SetFinalizer(out, (*Model).Close)
	return out
}

func (m *Model) handle() uintptr {
	if m == nil {
		return 0
	}
	return atomic.LoadUintptr(&m.h)
}

// Close releases the model now; it is unusable afterwards. Idempotent.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	if h := atomic.SwapUintptr(&m.h, 0); h != 0 {
		C.kb_model_release((*C.kb_model)(cPointer(h)))
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// LoadModel reads a Keras HDF5 file; compile also compiles it from the file's training config
// (its optimizer's state included).
func LoadModel(path string, compile bool) (*Model, error) {
	cpath, err := cString("model_load", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var m *C.kb_model
	if err := call(func() C.kb_status { return C.kb_model_load(cpath, cBool(compile), &m) }); err != nil {
		return nil, err
	}
	return wrapModel(m), nil
}

// ModelFromJSON makes a model from Keras' JSON (model.to_json()).
func ModelFromJSON(json string) (*Model, error) {
	cjson, err := cString("model_from_json", json)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cjson))
	var m *C.kb_model
	if err := call(func() C.kb_status { return C.kb_model_from_json(cjson, &m) }); err != nil {
		return nil, err
	}
	return wrapModel(m), nil
}

// WithDtypePolicy is a copy of the model (uncompiled, the same weights' values) whose float32
// layers take the dtype policy named policy ("mixed_bfloat16": bfloat16 computation over float32
// variables), as Keras' clone_model with each layer's dtype set.
func (m *Model) WithDtypePolicy(policy string) (*Model, error) {
	cpolicy, err := cString("model_with_dtype_policy", policy)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpolicy))
	var out *C.kb_model
	if err := call(func() C.kb_status { return C.kb_model_with_dtype_policy(m.c(), cpolicy, &out) }); err != nil {
		return nil, err
	}
	return wrapModel(out), nil
}

// cStrings is a C array of C copies of ss, and the function that frees them.
func cStrings(who string, ss []string) (**C.char, C.size_t, func(), error) {
	out := (**C.char)(C.calloc(C.size_t(len(ss)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	items := unsafe.Slice(out, len(ss)+1)
	free := func() {
		for _, p := range items {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(out))
	}
	for i, s := range ss {
		p, err := cString(who, s)
		if err != nil {
			free()
			return nil, 0, nil, err
		}
		items[i] = p
	}
	return out, C.size_t(len(ss)), free, nil
}

// Compile is Keras' compile: an optimizer name ("adam") or JSON config, the losses (one per
// output or one for all), the metric names, options as JSON ({"optimizer": {"lr": 0.01},
// "loss_weights": [...]}) or "".
func (m *Model) Compile(optimizer string, losses, metrics []string, options string) error {
	copt, err := cString("model_compile", optimizer)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(copt))
	coptions, err := cOptString("model_compile", options)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(coptions))
	cl, nl, freeLosses, err := cStrings("model_compile", losses)
	if err != nil {
		return err
	}
	defer freeLosses()
	cm, nm, freeMetrics, err := cStrings("model_compile", metrics)
	if err != nil {
		return err
	}
	defer freeMetrics()
	return call(func() C.kb_status { return C.kb_model_compile(m.c(), copt, cl, nl, cm, nm, coptions) }, m)
}

// Fit is Keras' fit with one tensor per input in x and per output in y; it returns the
// per-epoch history as JSON. verbose 1 draws Keras' progress bar on stderr; options:
// {"shuffle": true, "seed": 0, "validation_split": 0.1, ...} or "".
func (m *Model) Fit(x, y []*Tensor, batchSize, epochs int64, verbose int32, options string) (string, error) {
	coptions, err := cOptString("model_fit", options)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(coptions))
	cx, nx := cTensors(x)
	cy, ny := cTensors(y)
	var history *C.char
	err = call(func() C.kb_status {
		return C.kb_model_fit(m.c(), cx, nx, cy, ny, C.int64_t(batchSize), C.int64_t(epochs),
			C.int32_t(verbose), coptions, nil, nil, &history)
	}, m, x, y)
	if err != nil {
		return "", err
	}
	return C.GoString(history), nil
}

// CompileWith is Compile with its options as values (CompileOptions: loss weights, the
// optimizer's config).
func (m *Model) CompileWith(optimizer string, losses, metrics []string, o CompileOptions) error {
	options, err := o.OptionsJSON()
	if err != nil {
		return err
	}
	return m.Compile(optimizer, losses, metrics, options)
}

// Evaluate returns the loss, then the metrics (as MetricsNames names them), in batches of
// batchSize, its other arguments Keras' defaults (DefaultEvaluateOptions).
func (m *Model) Evaluate(x, y []*Tensor, batchSize int64) ([]float64, error) {
	o := DefaultEvaluateOptions()
	o.BatchSize = batchSize
	return m.EvaluateWith(x, y, o)
}

// EvaluateWith is Evaluate with its arguments as values.
func (m *Model) EvaluateWith(x, y []*Tensor, o EvaluateOptions) ([]float64, error) {
	cx, nx := cTensors(x)
	cy, ny := cTensors(y)
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		return C.kb_model_evaluate(m.c(), cx, nx, cy, ny, C.int64_t(o.BatchSize),
			C.int32_t(o.Verbose), &out)
	}, m, x, y)
	if err != nil {
		return nil, err
	}
	t := wrapC(out)
	defer t.Close()
	return t.Float64s()
}

// PredictWith is Predict with its arguments as values (DefaultPredictOptions: Keras' defaults).
func (m *Model) PredictWith(x []*Tensor, o PredictOptions) ([]*Tensor, error) {
	return m.Predict(x, o.BatchSize, int32(o.Verbose))
}
