package kbackend

// #include <stdint.h>
// #include <stdlib.h>
// #include <kbackend.h>
// #include "callbacks.h"
import "C"

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime/cgo"
	"unsafe"
)

// FitCallback runs after each batch (batch >= 0) and each epoch (batch == -1) of FitWith with
// Keras' logs so far ("loss", the metrics, "val_loss" at an epoch's end); returning true stops
// training. It may use the model (save it, read its weights): fit waits for it.
type FitCallback func(epoch, batch int64, logs map[string]float64) (stop bool)

// History is what Keras' History holds: each logged value per epoch ("loss", "val_loss", the
// metrics), NaN where a value was not a number.
type History map[string][]float64

type fitCallback struct {
	fn     FitCallback
	failed error
}

// FitWith is Keras' fit with its arguments as values (FitOptions, from DefaultFitOptions:
// Keras' defaults) and a callback (nil: none); an error or panic of the callback stops
// training and comes back.
func (m *Model) FitWith(x, y []*Tensor, o FitOptions, callback FitCallback) (History, error) {
	options, err := o.OptionsJSON()
	if err != nil {
		return nil, err
	}
	coptions, err := cString("model_fit", options)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(coptions))
	cx, nx := cTensors(x)
	cy, ny := cTensors(y)
	var h cgo.Handle
	fc := &fitCallback{fn: callback}
	if callback != nil {
		h = cgo.NewHandle(fc)
		defer h.Delete()
	}
	var history *C.char
	err = call(func() C.kb_status {
		return C.kbgo_model_fit(m.c(), cx, nx, cy, ny, C.int64_t(o.BatchSize), C.int64_t(o.Epochs),
			C.int32_t(o.Verbose), coptions, C.uintptr_t(h), &history)
	}, m, x, y)
	if fc.failed != nil {
		return nil, fc.failed
	}
	if err != nil {
		return nil, err
	}
	var values map[string][]*float64
	if err := json.Unmarshal([]byte(C.GoString(history)), &values); err != nil {
		return nil, &Error{Status: ErrInternal, Message: "model_fit: the history is not JSON: " + err.Error()}
	}
	out := History{}
	for k, v := range values {
		out[k] = make([]float64, len(v))
		for i, p := range v {
			out[k][i] = number(p)
		}
	}
	return out, nil
}

func number(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

//export kbgoFit
func kbgoFit(h C.uintptr_t, epoch, batch C.int64_t, logs *C.char) (stop C.int32_t) {
	fc := cgo.Handle(h).Value().(*fitCallback)
	defer func() {
		if p := recover(); p != nil {
			fc.failed = fmt.Errorf("fit: the callback panicked: %v", p)
			stop = 1
		}
		if fc.failed != nil { // fit fails at once; the error comes back from FitWith
			msg := C.CString(fc.failed.Error())
			C.kb_set_error(C.KB_ERROR_INVALID_ARGUMENT, msg)
			C.free(unsafe.Pointer(msg))
		}
	}()
	var values map[string]*float64
	if err := json.Unmarshal([]byte(C.GoString(logs)), &values); err != nil {
		fc.failed = &Error{Status: ErrInternal, Message: "model_fit: the logs are not JSON: " + err.Error()}
		return 1
	}
	out := make(map[string]float64, len(values))
	for k, p := range values {
		out[k] = number(p)
	}
	if fc.fn(int64(epoch), int64(batch), out) {
		return 1
	}
	return 0
}
