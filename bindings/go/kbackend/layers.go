package kbackend

// Custom layers: a Go func builds a layer class of the program's own when a model names it.

// #include <stdint.h>
// #include <stdlib.h>
// #include <kbackend.h>
// #include "callbacks.h"
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// LayerFunc builds a custom layer's outputs from its inputs with the backend's functions, as a
// Keras layer's call does: config is the layer's config (JSON), layer gives its weights.
type LayerFunc func(layer *LayerContext, config string, inputs []*Tensor) ([]*Tensor, error)

// LayerContext is a custom layer while its LayerFunc runs.
type LayerContext struct {
	c *C.kb_layer
}

// layerFuncs keeps the registered funcs' handles: models may be built at any later time, on any
// goroutine, so a registered func lives as long as the process (a class registered again is
// replaced and its old func dropped).
var layerFuncs = struct {
	sync.Mutex
	byClass map[string]cgo.Handle
}{byClass: map[string]cgo.Handle{}}

// RegisterLayer lets model files and JSON name the layer class className (a Lambda, a layer of
// one's own): fn builds it. An error or panic in fn fails the model's loading with a message
// naming the layer.
func RegisterLayer(className string, fn LayerFunc) error {
	if fn == nil {
		return &Error{Status: ErrInvalidArgument, Message: "register_layer: fn is nil"}
	}
	name, err := cString("register_layer", className)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(name))
	layerFuncs.Lock()
	defer layerFuncs.Unlock()
	h := cgo.NewHandle(fn)
	if err := call(func() C.kb_status { return C.kbgo_register_layer(name, C.uintptr_t(h)) }); err != nil {
		h.Delete()
		return err
	}
	if old, ok := layerFuncs.byClass[className]; ok {
		old.Delete()
	}
	layerFuncs.byClass[className] = h
	return nil
}

// AddWeight is the layer's weight name (a variable): made with the Keras initializer
// initializerJSON (`"zeros"`, `{"class_name": "RandomNormal", "config": {...}}`) the first
// time, the same variable after; saved and loaded in the order first asked for.
func (l *LayerContext) AddWeight(name string, shape []int64, initializerJSON string, trainable bool) (*Tensor, error) {
	if l == nil || l.c == nil {
		return nil, &Error{Status: ErrInvalidArgument, Message: "add_weight: the layer's func has returned"}
	}
	cname, err := cString("add_weight", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	cinit, err := cString("add_weight", initializerJSON)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cinit))
	var dims *C.int64_t
	if len(shape) > 0 {
		dims = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	flag := C.int32_t(0)
	if trainable {
		flag = 1
	}
	var out *C.kb_tensor
	err = call(func() C.kb_status {
		return C.kb_model_layer_weight(l.c, cname, dims, C.size_t(len(shape)), cinit, flag, &out)
	}, shape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

//export kbgoLayer
func kbgoLayer(h C.uintptr_t, layer *C.kb_layer, config *C.char, inputs **C.kb_tensor, n C.size_t,
	outputs **C.kb_tensor, capacity C.size_t, count *C.size_t) (st C.kb_status) {
	fail := func(message string) C.kb_status {
		msg := C.CString(message)
		defer C.free(unsafe.Pointer(msg))
		C.kb_set_error(C.KB_ERROR_INVALID_ARGUMENT, msg)
		return C.KB_ERROR_INVALID_ARGUMENT
	}
	defer func() {
		if p := recover(); p != nil {
			st = fail(fmt.Sprintf("the Go layer func panicked: %v", p))
		}
	}()
	fn := cgo.Handle(h).Value().(LayerFunc)
	ctx := &LayerContext{c: layer}
	defer func() { ctx.c = nil }() // the handle is valid only while the func runs
	in := make([]*Tensor, int(n))
	if n > 0 {
		for i, p := range unsafe.Slice(inputs, int(n)) {
			C.kb_tensor_retain(p)
			in[i] = wrapC(p)
		}
	}
	out, err := fn(ctx, C.GoString(config), in)
	if err != nil {
		return fail(fmt.Sprintf("the Go layer func failed: %v", err))
	}
	if len(out) > int(capacity) {
		return fail(fmt.Sprintf("the Go layer func returned %d outputs, more than %d", len(out), int(capacity)))
	}
	slots := unsafe.Slice(outputs, int(capacity))
	for i, t := range out {
		if t == nil || t.handle() == 0 {
			for _, done := range slots[:i] {
				C.kb_tensor_release(done)
			}
			return fail("the Go layer func returned a nil or closed tensor")
		}
		C.kb_tensor_retain(t.c())
		runtime.KeepAlive(t)
		slots[i] = t.c()
	}
	*count = C.size_t(len(out))
	return C.KB_OK
}
