package kbackend

// DLPack (include/kbackend.h): a tensor's value lent to another library without a copy, and
// another library's memory taken as a constant, as the managed tensors a C API passes.

// #include <kbackend.h>
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// DLPack is a DLPack managed tensor this program owns: DLPack 1.x's DLManagedTensorVersioned,
// or the older DLManagedTensor. Its deleter runs on Release (or when it is collected), unless
// Take handed it to another library or FromDLPack to kbackend first.
type DLPack struct {
	p         uintptr
	versioned bool
}

func wrapDLPack(p unsafe.Pointer, versioned bool) *DLPack {
	d := &DLPack{p: uintptr(p), versioned: versioned}
	runtime.SetFinalizer(d, (*DLPack).Release)
	return d
}

// ToDLPack lends the tensor's value (a constant's read-only, a variable's memory the
// variable's) as a DLPack 1.x managed tensor, copied only when copy is DlpackCopyAlways.
func (t *Tensor) ToDLPack(copy DlpackCopy) (*DLPack, error) { return t.lend(copy, true) }

// ToDLPackUnversioned is ToDLPack as DLPack's unversioned struct, for older consumers.
func (t *Tensor) ToDLPackUnversioned(copy DlpackCopy) (*DLPack, error) {
	return t.lend(copy, false)
}

func (t *Tensor) lend(copy DlpackCopy, versioned bool) (*DLPack, error) {
	var v *C.DLManagedTensorVersioned
	var u *C.DLManagedTensor
	if err := call(func() C.kb_status {
		if versioned {
			return C.kb_tensor_to_dlpack(t.c(), C.kb_dlpack_copy(copy), &v)
		}
		return C.kb_tensor_to_dlpack_unversioned(t.c(), C.kb_dlpack_copy(copy), &u)
	}, t); err != nil {
		return nil, err
	}
	if versioned {
		return wrapDLPack(unsafe.Pointer(v), true), nil
	}
	return wrapDLPack(unsafe.Pointer(u), false), nil
}

// Versioned says which struct Pointer points to: DLManagedTensorVersioned or DLManagedTensor.
func (d *DLPack) Versioned() bool { return d.versioned }

// Pointer is the managed tensor, for another library's C API; nil once released or taken.
func (d *DLPack) Pointer() unsafe.Pointer { return cPointer(atomic.LoadUintptr(&d.p)) }

// Take gives the managed tensor up: whoever it is handed to calls its deleter from now on.
func (d *DLPack) Take() unsafe.Pointer {
	p := atomic.SwapUintptr(&d.p, 0)
	runtime.SetFinalizer(d, nil)
	return cPointer(p)
}

// Release calls the managed tensor's deleter, once (nothing after Take). Idempotent.
func (d *DLPack) Release() error {
	if d == nil {
		return nil
	}
	if p := atomic.SwapUintptr(&d.p, 0); p != 0 {
		if d.versioned {
			C.kb_dlpack_release((*C.DLManagedTensorVersioned)(cPointer(p)))
		} else {
			C.kb_dlpack_release_unversioned((*C.DLManagedTensor)(cPointer(p)))
		}
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// FromDLPack makes a constant over the memory of a managed tensor this program owns, without a
// copy unless copy asks for one or allows one it needs (strides other than row-major,
// misaligned data). On success kbackend takes it (d is emptied); on failure it stays d's.
func FromDLPack(d *DLPack, copy DlpackCopy) (*Tensor, error) {
	t, err := FromDLPackPointer(d.Pointer(), d.versioned, copy)
	if err == nil {
		d.Take()
	}
	return t, err
}

// FromDLPackPointer is FromDLPack for a managed tensor another library's C API gave
// (DLManagedTensorVersioned* when versioned, else DLManagedTensor*): on success kbackend
// calls its deleter when it is done with the memory; on failure it is still the caller's.
func FromDLPackPointer(p unsafe.Pointer, versioned bool, copy DlpackCopy) (*Tensor, error) {
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		if versioned {
			return C.kb_tensor_from_dlpack((*C.DLManagedTensorVersioned)(p), C.kb_dlpack_copy(copy),
				&out)
		}
		return C.kb_tensor_from_dlpack_unversioned((*C.DLManagedTensor)(p), C.kb_dlpack_copy(copy),
			&out)
	})
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}
