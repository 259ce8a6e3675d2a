package kbackend

// The helpers the generated functions (backend.go) call C through: handles, slices and strings
// in C's form, and the status read on the thread that made the call.

// #include <stdlib.h>
// #include <kbackend.h>
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// call runs f with the goroutine locked to its OS thread, so that the thread-local message read
// for a failed status is this call's. keep stays reachable until f has returned.
func call(f func() C.kb_status, keep ...interface{}) error {
	runtime.LockOSThread()
	var err error
	if st := f(); st != C.KB_OK {
		err = &Error{Status: Status(st), Message: C.GoString(C.kb_last_error_message())}
	}
	runtime.UnlockOSThread()
	runtime.KeepAlive(keep)
	return err
}

// cPointer is a C address kept as an integer (a handle's field, atomic) as a pointer again.
func cPointer(h uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&h)) }

func (t *Tensor) c() *C.kb_tensor { return (*C.kb_tensor)(cPointer(t.handle())) }

func (m *Model) c() *C.kb_model { return (*C.kb_model)(cPointer(m.handle())) }

func (f *Function) c() *C.kb_compiled_function {
	return (*C.kb_compiled_function)(cPointer(f.handle()))
}

// cBytes is data's address for C (nil for no data).
func cBytes(data []byte) unsafe.Pointer {
	if len(data) == 0 {
		return nil
	}
	return unsafe.Pointer(&data[0])
}

// wrapC owns the new reference p.
func wrapC(p *C.kb_tensor) *Tensor { return wrapHandle(uintptr(unsafe.Pointer(p))) }

// drainC turns a native list into Tensors and releases the list.
func drainC(l *C.kb_tensor_list) ([]*Tensor, error) {
	defer C.kb_tensor_list_release(l)
	n := int(C.kb_tensor_list_size(l))
	out := make([]*Tensor, 0, n)
	for i := 0; i < n; i++ {
		var p *C.kb_tensor
		if err := call(func() C.kb_status { return C.kb_tensor_list_get(l, C.size_t(i), &p) }); err != nil {
			for _, t := range out {
				t.Close()
			}
			return nil, err
		}
		out = append(out, wrapC(p))
	}
	return out, nil
}

// cTensors is a list of tensors as C's array and count (NULL for nil, Keras' None).
func cTensors(ts []*Tensor) (**C.kb_tensor, C.size_t) {
	if ts == nil {
		return nil, 0
	}
	hs := make([]*C.kb_tensor, len(ts)+1) // +1: an empty list is not NULL
	for i, t := range ts {
		hs[i] = t.c()
	}
	return &hs[0], C.size_t(len(ts))
}

var noInts [1]C.int64_t

// cInts is a list C must see as given, empty included.
func cInts(v []int64) (*C.int64_t, C.size_t) {
	if len(v) == 0 {
		return &noInts[0], 0
	}
	return (*C.int64_t)(unsafe.Pointer(&v[0])), C.size_t(len(v))
}

// cOptInts is a list Keras lets be None: nil is None, an empty slice an empty tuple.
func cOptInts(v []int64) (*C.int64_t, C.size_t) {
	if v == nil {
		return nil, 0
	}
	return cInts(v)
}

// cDefaulted is a tuple with a Keras default (strides=(1, 1)): empty means that default.
func cDefaulted(v []int64) (*C.int64_t, C.size_t) {
	if len(v) == 0 {
		return nil, 0
	}
	return cInts(v)
}

// cPair is nil (Keras' None), one integer for both or two integers.
func cPair(function, name string, v []int64) (*C.int64_t, error) {
	switch len(v) {
	case 0:
		if v == nil {
			return nil, nil
		}
	case 1:
		return cPair(function, name, []int64{v[0], v[0]})
	case 2:
		return (*C.int64_t)(unsafe.Pointer(&v[0])), nil
	}
	return nil, &Error{Status: ErrInvalidArgument,
		Message: fmt.Sprintf("%s: %s must be nil, 1 or 2 integers, got %d", function, name, len(v))}
}

// cSameLength is the one count of lists that C reads with one length.
func cSameLength(function string, lists ...[]int64) (C.size_t, error) {
	for _, l := range lists[1:] {
		if len(l) != len(lists[0]) {
			return 0, &Error{Status: ErrInvalidArgument,
				Message: fmt.Sprintf("%s: the lists must have one length, got %d and %d", function,
					len(lists[0]), len(l))}
		}
	}
	return C.size_t(len(lists[0])), nil
}

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// cString is a C copy of s to free; C would end a string with a NUL byte early, so it is refused.
func cString(function, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, &Error{Status: ErrInvalidArgument,
			Message: fmt.Sprintf("%s: a string argument holds a NUL byte", function)}
	}
	return C.CString(s), nil
}

// cOptString is NULL for "" (Keras' None), else as cString.
func cOptString(function, s string) (*C.char, error) {
	if s == "" {
		return nil, nil
	}
	return cString(function, s)
}

// OptInt is an optional integer argument set to v (nil leaves it None).
func OptInt(v int64) *int64 { return &v }

// OptFloat is an optional float argument set to v (nil leaves it None).
func OptFloat(v float64) *float64 { return &v }
