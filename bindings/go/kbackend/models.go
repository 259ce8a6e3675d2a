package kbackend

import (
	"runtime"
	"sync/atomic"

	"kbackend.dev/kbackend/raw"
)

// Model is a Keras model (kb_model_*) of one input and one output: loaded from a Keras HDF5
// file, trained, evaluated and saved natively. It owns its native handle, released by Close or,
// as a safety net, when it is collected. Use a Model from one goroutine at a time.
type Model struct {
	h uintptr
}

func wrapModel(m raw.Model) *Model {
	if m == nil || m.Swigcptr() == 0 {
		return nil
	}
	out := &Model{h: m.Swigcptr()}
	runtime.SetFinalizer(out, (*Model).Close)
	return out
}

func (m *Model) ptr() raw.SwigcptrModel {
	if m == nil {
		return 0
	}
	return raw.SwigcptrModel(atomic.LoadUintptr(&m.h))
}

// Close releases the model now; it is unusable afterwards. Idempotent.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	if h := atomic.SwapUintptr(&m.h, 0); h != 0 {
		raw.DeleteModel(raw.SwigcptrModel(h))
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// LoadModel reads a Keras HDF5 file; compile also compiles it from the file's training config
// (its optimizer's state included).
func LoadModel(path string, compile bool) (*Model, error) {
	var r raw.Model
	c := 0
	if compile {
		c = 1
	}
	if err := do(func() { r = raw.Model_load(path, c) }); err != nil {
		return nil, err
	}
	return wrapModel(r), nil
}

// ModelFromJSON makes a model from Keras' JSON (model.to_json()).
func ModelFromJSON(json string) (*Model, error) {
	var r raw.Model
	if err := do(func() { r = raw.Model_from_json(json) }); err != nil {
		return nil, err
	}
	return wrapModel(r), nil
}

// Compile is Keras' compile: an optimizer name ("adam") or JSON config, one loss, one metric
// name or "", options as JSON ({"optimizer": {"lr": 0.01}}) or "".
func (m *Model) Compile(optimizer, loss, metric, options string) error {
	return do(func() { raw.Model_compile(m.ptr(), optimizer, loss, metric, options) }, m)
}

// Fit is Keras' fit; it returns the per-epoch history as JSON. verbose 1 draws Keras' progress
// bar on stderr; options: {"shuffle": true, "seed": 0, "validation_split": 0.1, ...} or "".
func (m *Model) Fit(x, y *Tensor, batchSize, epochs int64, verbose int32, options string) (string, error) {
	var h string
	err := do(func() { h = raw.Model_fit(m.ptr(), x.ptr(), y.ptr(), batchSize, epochs, int(verbose), options) }, m, x, y)
	return h, err
}

// Evaluate returns the loss, then the metrics.
func (m *Model) Evaluate(x, y *Tensor, batchSize int64) ([]float64, error) {
	t, err := tensorCall(func() raw.Tensor { return raw.Model_evaluate(m.ptr(), x.ptr(), y.ptr(), batchSize) }, m, x, y)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Float64s()
}

// Predict returns the model's output for x, batchSize rows at a time.
func (m *Model) Predict(x *Tensor, batchSize int64) (*Tensor, error) {
	return tensorCall(func() raw.Tensor { return raw.Model_predict(m.ptr(), x.ptr(), batchSize) }, m, x)
}

// Save writes a Keras HDF5 file (with the optimizer's state when includeOptimizer).
func (m *Model) Save(path string, includeOptimizer bool) error {
	c := 0
	if includeOptimizer {
		c = 1
	}
	return do(func() { raw.Model_save(m.ptr(), path, c) }, m)
}

// Summary is Keras' model.summary() text.
func (m *Model) Summary() (string, error) {
	var s string
	err := do(func() { s = raw.Model_summary(m.ptr()) }, m)
	return s, err
}
