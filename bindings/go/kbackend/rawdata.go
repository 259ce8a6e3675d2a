package kbackend

// The functions that take or give raw data: values of any dtype as bytes, sparse tensors from
// COO and CSR arrays, floatx conversion, variables' values and shapes, and the print sink.

// #include <stdint.h>
// #include <stdlib.h>
// #include <kbackend.h>
// #include "callbacks.h"
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Number is an element type of a dtype: its values cross as Go slices.
type Number interface {
	~float32 | ~float64 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8
}

// dtypeOf is the dtype of T's values.
func dtypeOf[T Number]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	default:
		return Uint8
	}
}

// CastToFloatx is Keras' cast_to_floatx: values converted to floatx, returned as bytes of
// floatx's element type (Float32s-like decoding is the caller's: see Floatx).
func CastToFloatx[T Number](values []T) ([]byte, error) {
	fx, err := Floatx()
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(values)*fx.Size()+1) // +1: never empty, never nil
	src := bytesOf(values)
	err = call(func() C.kb_status {
		return C.kb_cast_to_floatx(cBytes(src), C.kb_data_type(dtypeOf[T]()), C.size_t(len(values)),
			unsafe.Pointer(&out[0]))
	}, src, out)
	if err != nil {
		return nil, err
	}
	return out[:len(values)*fx.Size()], nil
}

// VariableShape is Keras' get_variable_shape: a variable's shape.
func (t *Tensor) VariableShape() ([]int64, error) {
	dims := make([]int64, 64)
	var rank C.int64_t
	get := func() error {
		return call(func() C.kb_status {
			return C.kb_get_variable_shape(t.c(), (*C.int64_t)(unsafe.Pointer(&dims[0])),
				C.size_t(len(dims)), &rank)
		}, t, dims)
	}
	if err := get(); err != nil {
		return nil, err
	}
	if int(rank) > len(dims) {
		dims = make([]int64, int(rank))
		if err := get(); err != nil {
			return nil, err
		}
	}
	return dims[:int(rank)], nil
}

// SetValueBytes is Keras' set_value from data: a variable takes data (row-major, native order)
// of dtype and shape.
func (t *Tensor) SetValueBytes(data []byte, dtype DType, shape ...int64) error {
	if err := checkSize("set_value", len(data), dtype, shape); err != nil {
		return err
	}
	cshape, n := cInts(shape)
	return call(func() C.kb_status {
		return C.kb_set_value_data(t.c(), cBytes(data), C.kb_data_type(dtype), cshape, n)
	}, t, data, shape)
}

// SetValueFloat32 is SetValueBytes for float32 data.
func (t *Tensor) SetValueFloat32(data []float32, shape ...int64) error {
	return t.SetValueBytes(bytesOf(data), Float32, shape...)
}

// BatchSetValue is Keras' batch_set_value: each variable of xs takes the value beside it.
func BatchSetValue(xs, values []*Tensor) error {
	if len(xs) != len(values) {
		return &Error{Status: ErrInvalidArgument, Message: "batch_set_value: xs and values differ in length"}
	}
	cx, n := cTensors(xs)
	cv, _ := cTensors(values)
	return call(func() C.kb_status { return C.kb_batch_set_value(cx, cv, n) }, xs, values)
}

// SparseFromCOO is a sparse tensor from COO data: indices holds nnz x rank coordinates
// (row-major), values nnz values converted to dtype (DefaultDType: floatx). Functions see its
// dense value except Dot (sparse x dense matrix) and Concatenate (all sparse).
func SparseFromCOO[T Number](indices []int64, values []T, denseShape []int64, dtype DType) (*Tensor, error) {
	if len(indices) != len(values)*len(denseShape) {
		return nil, &Error{Status: ErrInvalidArgument,
			Message: "sparse_from_coo: indices must hold nnz x rank coordinates"}
	}
	ci, _ := cInts(indices)
	cs, ndim := cInts(denseShape)
	data := bytesOf(values)
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		return C.kb_sparse_from_coo(ci, cBytes(data), C.kb_data_type(dtypeOf[T]()), C.size_t(len(values)),
			cs, ndim, C.kb_data_type(dtype), nil, &out)
	}, indices, data, denseShape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// SparseFromCSR is a (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix): indptr
// has rows + 1 offsets, row r's entries are colIndices / values from indptr[r] to indptr[r+1].
func SparseFromCSR[T Number](indptr, colIndices []int64, values []T, cols int64, dtype DType) (*Tensor, error) {
	if len(indptr) == 0 || len(colIndices) != len(values) || indptr[len(indptr)-1] != int64(len(values)) {
		return nil, &Error{Status: ErrInvalidArgument, Message: "sparse_from_csr: indptr must hold rows + 1 " +
			"offsets ending at the entries' count, and colIndices one index per value"}
	}
	cp, _ := cInts(indptr)
	cc, _ := cInts(colIndices)
	data := bytesOf(values)
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		return C.kb_sparse_from_csr(cp, cc, cBytes(data), C.kb_data_type(dtypeOf[T]()),
			C.int64_t(len(indptr)-1), C.int64_t(cols), C.kb_data_type(dtype), nil, &out)
	}, indptr, colIndices, data)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// printSink keeps the sink's handle: compiled functions print from any goroutine at any later
// time, so a sink lives until another replaces it (and its handle then until the process ends,
// as a print may still be running).
var printSink struct {
	sync.Mutex
	handles []cgo.Handle
}

// SetPrintSink makes PrintTensor write through sink (nil restores stderr).
func SetPrintSink(sink func(text string)) error {
	printSink.Lock()
	defer printSink.Unlock()
	if sink == nil {
		return call(func() C.kb_status { return C.kbgo_set_print_sink(0) })
	}
	h := cgo.NewHandle(sink)
	printSink.handles = append(printSink.handles, h)
	return call(func() C.kb_status { return C.kbgo_set_print_sink(C.uintptr_t(h)) })
}

//export kbgoPrint
func kbgoPrint(h C.uintptr_t, text *C.char) {
	defer func() {
		if p := recover(); p != nil { // print_tensor has no status to report a panic by
			fmt.Printf("kbackend: the print sink panicked: %v\n", p)
		}
	}()
	cgo.Handle(h).Value().(func(string))(C.GoString(text))
}

// FitWeighted is Keras' fit with sample_weight (one vector per output) and validation_data
// (validationX, validationY and their sample weights; nil for none).
func (m *Model) FitWeighted(x, y, sampleWeights, validationX, validationY, validationSampleWeights []*Tensor,
	batchSize, epochs int64, verbose int32, options string) (string, error) {
	coptions, err := cOptString("model_fit_weighted", options)
	if err != nil {
		return "", err
	}
	defer C.free(unsafe.Pointer(coptions))
	cx, nx := cTensors(x)
	cy, ny := cTensors(y)
	csw, nsw := cTensors(sampleWeights)
	cvx, nvx := cTensors(validationX)
	cvy, nvy := cTensors(validationY)
	cvs, nvs := cTensors(validationSampleWeights)
	var history *C.char
	err = call(func() C.kb_status {
		return C.kb_model_fit_weighted(m.c(), cx, nx, cy, ny, csw, nsw, cvx, nvx, cvy, nvy, cvs, nvs,
			C.int64_t(batchSize), C.int64_t(epochs), C.int32_t(verbose), coptions, nil, nil, &history)
	}, m, x, y, sampleWeights, validationX, validationY, validationSampleWeights)
	if err != nil {
		return "", err
	}
	return C.GoString(history), nil
}
