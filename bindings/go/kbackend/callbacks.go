package kbackend

// Go funcs as the library's callbacks: callbacks.c's trampolines call the exported functions
// below with a cgo.Handle of the *callback as their user data.

// #include <stdint.h>
// #include <stdlib.h>
// #include <kbackend.h>
// #include "callbacks.h"
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

//export kbgoBranch
func kbgoBranch(h C.uintptr_t, out **C.kb_tensor) C.kb_status {
	return invoke(h, nil, out, nil)
}

// branches runs a building call that takes two branch funcs (Keras' callables): the first
// error or panic of either comes back out of it unchanged.
func branches(who string, a, b func() (*Tensor, error),
	build func(ha, hb C.uintptr_t, out **C.kb_tensor) C.kb_status, keep ...interface{}) (*Tensor, error) {
	if a == nil || b == nil {
		return nil, &Error{Status: ErrInvalidArgument, Message: who + ": a branch is nil"}
	}
	wrap := func(f func() (*Tensor, error)) *callback {
		return &callback{who: who, fn: func([]*Tensor) (*Tensor, []*Tensor, error) {
			r, err := f()
			return r, nil, err
		}}
	}
	ca, cbb := wrap(a), wrap(b)
	ha, hb := cgo.NewHandle(ca), cgo.NewHandle(cbb)
	defer ha.Delete()
	defer hb.Delete()
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		return build(C.uintptr_t(ha), C.uintptr_t(hb), &out)
	}, keep...)
	if err != nil {
		if ca.failed != nil {
			return nil, ca.failed
		}
		if cbb.failed != nil {
			return nil, cbb.failed
		}
		return nil, err
	}
	return wrapC(out), nil
}

// SwitchFn is Keras' switch with callables for the branches (kb_switch_fn): each is called at
// most once, while the graph is built.
func SwitchFn(condition *Tensor, thenFn, elseFn func() (*Tensor, error)) (*Tensor, error) {
	return branches("switch", thenFn, elseFn, func(a, b C.uintptr_t, out **C.kb_tensor) C.kb_status {
		return C.kbgo_switch_fn(condition.c(), a, b, out)
	}, condition)
}

// InTrainPhaseFn is Keras' in_train_phase with callables (kb_in_train_phase_fn): a fixed mode
// calls only the chosen one; training nil and TrainingTensor follow the learning phase.
func InTrainPhaseFn(x, alt func() (*Tensor, error), training *Tensor, mode Training) (*Tensor, error) {
	return branches("in_train_phase", x, alt, func(a, b C.uintptr_t, out **C.kb_tensor) C.kb_status {
		return C.kbgo_phase_fn(0, a, b, training.c(), C.kb_training(mode), out)
	}, training)
}

// InTestPhaseFn is Keras' in_test_phase with callables (kb_in_test_phase_fn).
func InTestPhaseFn(x, alt func() (*Tensor, error), training *Tensor, mode Training) (*Tensor, error) {
	return branches("in_test_phase", x, alt, func(a, b C.uintptr_t, out **C.kb_tensor) C.kb_status {
		return C.kbgo_phase_fn(1, a, b, training.c(), C.kb_training(mode), out)
	}, training)
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
