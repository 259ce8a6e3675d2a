package raw

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// Callback is what the C trampolines of map_fn, foldl, foldr and rnn call, through a
// cgo.Handle: borrowed tensor pointers in; new references out (for rnn: the output and a
// tensor list of the new states), or a non-zero kb_status after Set_callback_error.
type Callback func(args []uintptr) (results []uintptr, status int32)

func call(h C.uintptr_t, args []uintptr) ([]uintptr, C.int) {
	r, st := cgo.Handle(h).Value().(Callback)(args)
	return r, C.int(st)
}

//export kbgoMap
func kbgoMap(h C.uintptr_t, x C.uintptr_t, out *C.uintptr_t) C.int {
	r, st := call(h, []uintptr{uintptr(x)})
	if st == 0 {
		*out = C.uintptr_t(r[0])
	}
	return st
}

//export kbgoFold
func kbgoFold(h C.uintptr_t, acc C.uintptr_t, x C.uintptr_t, out *C.uintptr_t) C.int {
	r, st := call(h, []uintptr{uintptr(acc), uintptr(x)})
	if st == 0 {
		*out = C.uintptr_t(r[0])
	}
	return st
}

//export kbgoStep
func kbgoStep(h C.uintptr_t, input C.uintptr_t, states *C.uintptr_t, n C.size_t,
	output *C.uintptr_t, newStates *C.uintptr_t) C.int {
	args := make([]uintptr, 1, 1+int(n))
	args[0] = uintptr(input)
	if n > 0 {
		for _, s := range unsafe.Slice(states, int(n)) {
			args = append(args, uintptr(s))
		}
	}
	r, st := call(h, args)
	if st == 0 {
		*output = C.uintptr_t(r[0])
		*newStates = C.uintptr_t(r[1])
	}
	return st
}
