package kbackend

// Go funcs as the library's callbacks: callbacks.c's trampolines call the exported functions
// below with a cgo.Handle of the *callback as their user data.

// #include <stdint.h>
// #include <stdlib.h>
// #include <kbackend.h>
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// callback is a Go func the library calls while one building call runs. fn gets borrowed
// tensors as Tensors of their own; its first error or panic is kept and comes back out of the
// building call instead of the library's message.
type callback struct {
	who    string
	states bool // rnn: the func returns new states too
	fn     func(args []*Tensor) (*Tensor, []*Tensor, error)
	failed error
}

// run calls build with a handle of cb and returns its status as an error.
func (cb *callback) run(build func(h C.uintptr_t) C.kb_status, keep ...interface{}) error {
	h := cgo.NewHandle(cb)
	defer h.Delete()
	err := call(func() C.kb_status { return build(C.uintptr_t(h)) }, keep...)
	if err != nil && cb.failed != nil {
		return cb.failed
	}
	return err
}

// fail keeps err (the building call returns it unchanged) and reports it to the library as
// message, so that the building call fails.
func (cb *callback) fail(err error, message string) C.kb_status {
	cb.failed = err
	msg := C.CString(message)
	defer C.free(unsafe.Pointer(msg))
	C.kb_set_error(C.KB_ERROR_INVALID_ARGUMENT, msg)
	return C.KB_ERROR_INVALID_ARGUMENT
}

// invoke runs the func on borrowed tensors and hands new references to the library.
func invoke(h C.uintptr_t, args []*C.kb_tensor, out **C.kb_tensor, states **C.kb_tensor_list) (st C.kb_status) {
	cb := cgo.Handle(h).Value().(*callback)
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("%s: the callback panicked: %v", cb.who, p)
			st = cb.fail(err, err.Error())
		}
	}()
	in := make([]*Tensor, len(args))
	for i, p := range args {
		C.kb_tensor_retain(p)
		in[i] = wrapC(p)
	}
	r, newStates, err := cb.fn(in)
	if err != nil {
		return cb.fail(err, fmt.Sprintf("%s: the callback failed: %v", cb.who, err))
	}
	if r == nil || r.handle() == 0 {
		err := fmt.Errorf("%s: the callback returned a nil or closed tensor", cb.who)
		return cb.fail(err, err.Error())
	}
	if cb.states {
		for _, s := range newStates {
			if s == nil || s.handle() == 0 {
				err := fmt.Errorf("%s: the step function returned a nil or closed state", cb.who)
				return cb.fail(err, err.Error())
			}
		}
		cs, n := cTensors(newStates)
		if err := call(func() C.kb_status { return C.kb_tensor_list_new(cs, n, states) }, newStates); err != nil {
			return cb.fail(err, err.Error())
		}
	}
	C.kb_tensor_retain(r.c())
	runtime.KeepAlive(r)
	*out = r.c()
	return C.KB_OK
}

//export kbgoMap
func kbgoMap(h C.uintptr_t, x *C.kb_tensor, out **C.kb_tensor) C.kb_status {
	return invoke(h, []*C.kb_tensor{x}, out, nil)
}

//export kbgoFold
func kbgoFold(h C.uintptr_t, acc, x *C.kb_tensor, out **C.kb_tensor) C.kb_status {
	return invoke(h, []*C.kb_tensor{acc, x}, out, nil)
}

//export kbgoStep
func kbgoStep(h C.uintptr_t, input *C.kb_tensor, states **C.kb_tensor, n C.size_t,
	output **C.kb_tensor, newStates **C.kb_tensor_list) C.kb_status {
	args := []*C.kb_tensor{input}
	if n > 0 {
		args = append(args, unsafe.Slice(states, int(n))...)
	}
	return invoke(h, args, output, newStates)
}
