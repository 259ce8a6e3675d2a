// Package kbackend is the Go binding of kbackend, the Keras backend API as a native library.
//
// Every function returns an error (*Error, with the library's message and status) instead of
// panicking. A *Tensor owns one native reference: Close releases it at once, and a finalizer
// releases it when the Tensor is collected. Callbacks (MapFn, Foldl, Foldr, RNN) are Go funcs; an
// error they return, or a panic, comes back out of the building call.
//
// The package calls the C ABI through cgo (flags from `#cgo pkg-config: kbackend`). Each call
// locks the goroutine to its OS thread while it runs and reads the library's thread-local status
// before unlocking. Most functions are generated from the API description (backend.go).
package kbackend

// #include <stdlib.h>
// #include <kbackend.h>
// #include "callbacks.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// ABIVersion is the C ABI major version this package was written for.
const ABIVersion = 1

// Status and its codes (ErrInvalidArgument, ErrNotFound, ...) are in errors.go, generated from
// the header.

// statusCallbackFailed is the status a Go callback's error fails its C call with.
const statusCallbackFailed = ErrInvalidArgument

// Error is a failed kbackend call: the status and the library's message, which names the
// function and the problem.
type Error struct {
	Status  Status
	Message string
}

// Error returns the library's message, which names the function.
func (e *Error) Error() string { return e.Message }

// DType is a kb_data_type.
type DType int

// The dtypes; DefaultDType means floatx where Keras says "None means floatx".
const (
	DefaultDType DType = -1
	Float16      DType = 0
	Float32      DType = 1
	Float64      DType = 2
	Int8         DType = 3
	Int16        DType = 4
	Int32        DType = 5
	Int64        DType = 6
	Uint8        DType = 7
	Bool         DType = 8
	Bfloat16     DType = 9
)

// String is Keras' dtype name ("float32").
func (d DType) String() string {
	if s := C.kb_dtype_name(C.kb_data_type(d)); s != nil {
		return C.GoString(s)
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// DataFormat is a kb_data_format; DefaultDataFormat is the global image_data_format.
type DataFormat int

// The data formats: where the channels axis of images and volumes is.
const (
	DefaultDataFormat DataFormat = -1
	ChannelsLast      DataFormat = 0
	ChannelsFirst     DataFormat = 1
)

// Padding is a kb_padding.
type Padding int

// Keras' paddings of convolutions and pooling (Causal: conv1d only).
const (
	Valid  Padding = 0
	Same   Padding = 1
	Causal Padding = 2
)

// PoolMode is a kb_pool_mode.
type PoolMode int

// Keras' pool modes ("max", "avg").
const (
	MaxPool PoolMode = 0
	AvgPool PoolMode = 1
)

// Device is a kb_device_kind.
type Device int

// The kinds of device a function runs on.
const (
	CPU  Device = 0
	CUDA Device = 1
)

// ---- Tensor -----------------------------------------------------------------------------------

var liveTensors int64

// Tensor is a graph value: a placeholder, variable, constant or the result of an operation. It
// owns one native reference, released by Close or, as a safety net, when it is collected. A
// Tensor may be used from several goroutines.
type Tensor struct {
	h uintptr
}

// wrapHandle owns the new reference h (0: none).
func wrapHandle(h uintptr) *Tensor {
	if h == 0 {
		return nil
	}
	t := &Tensor{h: h}
	atomic.AddInt64(&liveTensors, 1)
	runtime.SetFinalizer(t, (*Tensor).Close)
	return t
}

// LiveTensors is the number of native references that Tensors hold now (for leak checks).
func LiveTensors() int64 { return atomic.LoadInt64(&liveTensors) }

func (t *Tensor) handle() uintptr {
	if t == nil {
		return 0
	}
	return atomic.LoadUintptr(&t.h)
}

// Close releases the native reference now; the Tensor is unusable afterwards. Idempotent.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	if h := atomic.SwapUintptr(&t.h, 0); h != 0 {
		C.kb_tensor_release((*C.kb_tensor)(cPointer(h)))
		atomic.AddInt64(&liveTensors, -1)
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

// ---- data in and out ----------------------------------------------------------------------

func bytesOf[T any](data []T) []byte {
	var zero T
	if len(data) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(zero)))
}

// FromBytes is a constant of dtype and shape holding a copy of data (row-major, native order).
func FromBytes(data []byte, dtype DType, shape ...int64) (*Tensor, error) {
	if err := checkSize("tensor_from_data", len(data), dtype, shape); err != nil {
		return nil, err
	}
	var out *C.kb_tensor
	cshape, n := cInts(shape)
	err := call(func() C.kb_status {
		return C.kb_tensor_from_data(cBytes(data), C.kb_data_type(dtype), cshape, n, &out)
	}, data, shape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// Size is the number of bytes of one element (0 for DefaultDType or an unknown dtype).
func (d DType) Size() int {
	switch d {
	case Int8, Uint8, Bool:
		return 1
	case Float16, Int16, Bfloat16:
		return 2
	case Float32, Int32:
		return 4
	case Float64, Int64:
		return 8
	}
	return 0
}

// checkSize fails unless n bytes hold exactly one dtype element per entry of shape: C reads as
// many as the shape says.
func checkSize(who string, n int, dtype DType, shape []int64) error {
	count := int64(1)
	for _, d := range shape {
		if d < 0 {
			return &Error{Status: ErrInvalidArgument, Message: fmt.Sprintf("%s: negative dimension %d", who, d)}
		}
		count *= d
	}
	if dtype.Size() == 0 || int64(n) != count*int64(dtype.Size()) {
		return &Error{Status: ErrInvalidArgument, Message: fmt.Sprintf(
			"%s: %d bytes of data for shape %v of %v (%d bytes)", who, n, shape, dtype, count*int64(dtype.Size()))}
	}
	return nil
}

// FromFloat32 is a float32 constant holding a copy of data.
func FromFloat32(data []float32, shape ...int64) (*Tensor, error) {
	return FromBytes(bytesOf(data), Float32, shape...)
}

// FromFloat64 is a float64 constant holding a copy of data.
func FromFloat64(data []float64, shape ...int64) (*Tensor, error) {
	return FromBytes(bytesOf(data), Float64, shape...)
}

// FromInt32 is an int32 constant holding a copy of data.
func FromInt32(data []int32, shape ...int64) (*Tensor, error) {
	return FromBytes(bytesOf(data), Int32, shape...)
}

// FromInt64 is an int64 constant holding a copy of data.
func FromInt64(data []int64, shape ...int64) (*Tensor, error) {
	return FromBytes(bytesOf(data), Int64, shape...)
}

// Shape is the static shape (int_shape): -1 for unknown dimensions, nil for an unknown rank.
func (t *Tensor) Shape() ([]int64, error) {
	var rank C.int64_t
	if err := call(func() C.kb_status { return C.kb_int_shape(t.c(), nil, 0, &rank) }, t); err != nil {
		return nil, err
	}
	if rank < 0 {
		return nil, nil
	}
	dims := make([]int64, rank+1) // +1: a scalar's list is not NULL
	err := call(func() C.kb_status {
		return C.kb_int_shape(t.c(), (*C.int64_t)(unsafe.Pointer(&dims[0])), C.size_t(rank), &rank)
	}, t)
	return dims[:len(dims)-1], err
}

// DType is the tensor's element type.
func (t *Tensor) DType() (DType, error) {
	return DTypeOf(t)
}

// Name is the tensor's name.
func (t *Tensor) Name() (string, error) {
	return TensorName(t)
}

// ID is equal for the same graph value.
func (t *Tensor) ID() (int64, error) {
	id, err := TensorID(t)
	return int64(id), err
}

// Eval is a constant holding the tensor's value.
func (t *Tensor) Eval() (*Tensor, error) { return Eval(t) }

// CopyTo copies the value (in its own dtype) into dst, which must be exactly its size in bytes.
func (t *Tensor) CopyTo(dst []byte) error {
	return call(func() C.kb_status {
		return C.kb_tensor_copy_to(t.c(), cBytes(dst), C.size_t(len(dst)))
	}, t, dst)
}

// values converts to dtype, evaluates when the static shape is not fully known, and copies out.
func values[T any](t *Tensor, dtype DType) ([]T, error) {
	v := t
	var owned []*Tensor
	defer func() {
		for _, o := range owned {
			o.Close()
		}
	}()
	d, err := v.DType()
	if err != nil {
		return nil, err
	}
	if d != dtype {
		if v, err = Cast(v, dtype); err != nil {
			return nil, err
		}
		owned = append(owned, v)
	}
	shape, err := v.Shape()
	if err != nil {
		return nil, err
	}
	known := shape != nil
	for _, s := range shape {
		known = known && s >= 0
	}
	if !known {
		if v, err = Eval(v); err != nil {
			return nil, err
		}
		owned = append(owned, v)
		if shape, err = v.Shape(); err != nil {
			return nil, err
		}
	}
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	out := make([]T, n)
	return out, v.CopyTo(bytesOf(out))
}

// Float32s is the value as float32s (converted if needed).
func (t *Tensor) Float32s() ([]float32, error) { return values[float32](t, Float32) }

// Float64s is the value as float64s (converted if needed).
func (t *Tensor) Float64s() ([]float64, error) { return values[float64](t, Float64) }

// Int32s is the value as int32s (converted if needed).
func (t *Tensor) Int32s() ([]int32, error) { return values[int32](t, Int32) }

// Int64s is the value as int64s (converted if needed).
func (t *Tensor) Int64s() ([]int64, error) { return values[int64](t, Int64) }

// ScalarLike is a scalar constant of t's dtype.
func (t *Tensor) ScalarLike(value float64) (*Tensor, error) {
	d, err := t.DType()
	if err != nil {
		return nil, err
	}
	switch d {
	case Float32:
		return FromFloat32([]float32{float32(value)})
	case Float64:
		return FromFloat64([]float64{value})
	case Int32:
		return FromInt32([]int32{int32(value)})
	case Int64:
		return FromInt64([]int64{int64(value)})
	}
	v, err := FromFloat64([]float64{value})
	if err != nil {
		return nil, err
	}
	defer v.Close()
	return Cast(v, d)
}

func (t *Tensor) withScalar(value float64, op func(x, y *Tensor) (*Tensor, error), first bool) (*Tensor, error) {
	s, err := t.ScalarLike(value)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if first {
		return op(s, t)
	}
	return op(t, s)
}

// The operators Go does not have, as methods.

// Add is t + y.
func (t *Tensor) Add(y *Tensor) (*Tensor, error) { return Add(t, y) }

// Sub is t - y.
func (t *Tensor) Sub(y *Tensor) (*Tensor, error) { return Subtract(t, y) }

// Mul is t * y (elementwise).
func (t *Tensor) Mul(y *Tensor) (*Tensor, error) { return Multiply(t, y) }

// Div is t / y.
func (t *Tensor) Div(y *Tensor) (*Tensor, error) { return Divide(t, y) }

// Dot is Keras' dot(t, y).
func (t *Tensor) Dot(y *Tensor) (*Tensor, error) { return Dot(t, y) }

// AddScalar is t + v (v in t's dtype).
func (t *Tensor) AddScalar(v float64) (*Tensor, error) { return t.withScalar(v, Add, false) }

// MulScalar is t * v.
func (t *Tensor) MulScalar(v float64) (*Tensor, error) { return t.withScalar(v, Multiply, false) }

// SubScalar is t - v.
func (t *Tensor) SubScalar(v float64) (*Tensor, error) { return t.withScalar(v, Subtract, false) }

// DivScalar is t / v.
func (t *Tensor) DivScalar(v float64) (*Tensor, error) { return t.withScalar(v, Divide, false) }

// RSubScalar is v - t.
func (t *Tensor) RSubScalar(v float64) (*Tensor, error) { return t.withScalar(v, Subtract, true) }

// Neg is -t.
func (t *Tensor) Neg() (*Tensor, error) { return Negative(t) }

// Reshape is Keras' reshape(t, shape).
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) { return Reshape(t, shape...) }

// String describes the tensor: its name, static shape and dtype.
func (t *Tensor) String() string {
	name, err := t.Name()
	if err != nil {
		return "Tensor(closed)"
	}
	shape, _ := t.Shape()
	d, _ := t.DType()
	return fmt.Sprintf("Tensor(%s, shape=%v, %v)", name, shape, d)
}

// ---- library, config ------------------------------------------------------------------------

// Version is the library's version string.
func Version() string { return C.GoString(C.kb_version()) }

// LibraryABIVersion is the ABI version of the loaded library.
func LibraryABIVersion() int { return int(C.kb_abi_version()) }

// FloatX is the default float type.
func FloatX() (DType, error) {
	var d C.kb_data_type
	err := call(func() C.kb_status { return C.kb_floatx(&d) })
	return DType(d), err
}

// SetFloatX sets the default float type.
func SetFloatX(d DType) error {
	return call(func() C.kb_status { return C.kb_set_floatx(C.kb_data_type(d)) })
}

// Epsilon is the fuzz factor.
func Epsilon() (float64, error) {
	var e C.double
	err := call(func() C.kb_status { return C.kb_epsilon(&e) })
	return float64(e), err
}

// SetEpsilon sets the fuzz factor.
func SetEpsilon(e float64) error {
	return call(func() C.kb_status { return C.kb_set_epsilon(C.double(e)) })
}

// NumThreads is the number of threads of the CPU kernels.
func NumThreads() (int, error) {
	var n C.int32_t
	err := call(func() C.kb_status { return C.kb_num_threads(&n) })
	return int(n), err
}

// SetNumThreads sets the number of threads of the CPU kernels for the whole process (0: the
// default, KB_NUM_THREADS, else OMP_NUM_THREADS, else the cores).
func SetNumThreads(n int) error {
	return call(func() C.kb_status { return C.kb_set_num_threads(C.int32_t(n)) })
}

// SetLearningPhase sets the learning phase (0 test, 1 train).
func SetLearningPhase(v int) error {
	return call(func() C.kb_status { return C.kb_set_learning_phase(C.int32_t(v)) })
}

// ClearSession resets the global state.
func ClearSession() error { return call(func() C.kb_status { return C.kb_clear_session() }) }

// DeviceCount is the number of devices of a kind.
func DeviceCount(d Device) (int64, error) {
	var n C.int64_t
	err := call(func() C.kb_status { return C.kb_device_count(C.kb_device_kind(d), &n) })
	return int64(n), err
}

// DeviceInfo is one device this process can run on.
type DeviceInfo struct {
	Kind   Device
	Index  int64  // the N of cuda:N (0 for the CPU)
	Name   string // the product name
	Memory int64  // bytes (the machine's for the CPU)
}

// ListDevices gives the devices this process can run on: the CPU, then its GPU if it has one.
func ListDevices() ([]DeviceInfo, error) {
	var out []DeviceInfo
	for _, kind := range []Device{CPU, CUDA} {
		n, err := DeviceCount(kind)
		if err != nil {
			return nil, err
		}
		for i := int64(0); i < n; i++ {
			d := DeviceInfo{Kind: kind}
			if d.Index, err = DeviceIndex(kind, i); err != nil {
				return nil, err
			}
			if d.Name, err = DeviceName(kind, i); err != nil {
				return nil, err
			}
			if d.Memory, err = DeviceMemory(kind, i); err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// ---- data-parallel training ----------------------------------------------------------------

// ReduceOp is a kb_reduce_op: how a collective combines the processes' values.
type ReduceOp int

// The reductions.
const (
	ReduceSum     ReduceOp = 0
	ReduceAverage ReduceOp = 1 // the sum divided by the number of processes (integers truncate)
)

// DistAllReduceFloat64 replaces values by their sum or average over the processes (metrics).
func DistAllReduceFloat64(values []float64, op ReduceOp) error {
	if len(values) == 0 {
		return nil
	}
	p := unsafe.Pointer(&values[0])
	return call(func() C.kb_status {
		return C.kb_dist_all_reduce(p, p, C.size_t(len(values)), C.KB_FLOAT64, C.kb_reduce_op(op))
	}, values)
}

// ---- creation ---------------------------------------------------------------------------------

// Placeholder is a placeholder of shape (-1 for unknown dimensions).
func Placeholder(shape []int64, dtype DType, name string) (*Tensor, error) {
	cname, err := cOptString("placeholder", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	cshape, n := cInts(shape)
	var out *C.kb_tensor
	err = call(func() C.kb_status {
		return C.kb_placeholder(cshape, n, C.int64_t(len(shape)), C.kb_data_type(dtype), 0, cname, &out)
	}, shape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// Variable is a floatx variable initialized with data.
func Variable(data []float32, shape []int64, name string) (*Tensor, error) {
	if err := checkSize("variable", len(data)*4, Float32, shape); err != nil {
		return nil, err
	}
	cname, err := cOptString("variable", name)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cname))
	cshape, n := cInts(shape)
	var out *C.kb_tensor
	err = call(func() C.kb_status {
		return C.kb_variable(cBytes(bytesOf(data)), C.KB_FLOAT32, cshape, n, C.KB_DTYPE_DEFAULT, cname, &out)
	}, data, shape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// Constant is a floatx constant filled with value in shape (a scalar for no shape).
func Constant(value float64, shape ...int64) (*Tensor, error) {
	var cshape *C.int64_t
	if len(shape) > 0 {
		cshape, _ = cInts(shape)
	}
	v := []float64{value}
	var out *C.kb_tensor
	err := call(func() C.kb_status {
		return C.kb_constant(unsafe.Pointer(&v[0]), C.KB_FLOAT64, nil, 0, C.KB_DTYPE_DEFAULT, cshape,
			C.size_t(len(shape)), nil, &out)
	}, v, shape)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// ---- operations -----------------------------------------------------------------------------

// ---- gradients and functions ------------------------------------------------------------------

// Function is a compiled function (Keras' K.function).
type Function struct {
	h uintptr
}

// NewFunction compiles inputs -> outputs with update ops (Update, UpdateAdd, UpdateSub).
func NewFunction(inputs, outputs, updates []*Tensor) (*Function, error) {
	ci, ni := cTensors(inputs)
	co, no := cTensors(outputs)
	cu, nu := cTensors(updates)
	var out *C.kb_compiled_function
	err := call(func() C.kb_status { return C.kb_function(ci, ni, co, no, cu, nu, &out) },
		inputs, outputs, updates)
	if err != nil {
		return nil, err
	}
	f := &Function{h: uintptr(unsafe.Pointer(out))}
	runtime.SetFinalizer(f, (*Function).Close)
	return f, nil
}

func (f *Function) handle() uintptr {
	if f == nil {
		return 0
	}
	return atomic.LoadUintptr(&f.h)
}

// Call runs the function on constants in the order of its inputs.
func (f *Function) Call(inputs ...*Tensor) ([]*Tensor, error) {
	ci, ni := cTensors(inputs)
	var out *C.kb_tensor_list
	if err := call(func() C.kb_status { return C.kb_function_call(f.c(), ci, ni, &out) }, f, inputs); err != nil {
		return nil, err
	}
	return drainC(out)
}

// Close releases the function now. Idempotent.
func (f *Function) Close() error {
	if h := atomic.SwapUintptr(&f.h, 0); h != 0 {
		C.kb_function_release((*C.kb_compiled_function)(cPointer(h)))
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

// ---- callbacks --------------------------------------------------------------------------------

// MapFn is Keras' map_fn: fn(x) for each x along elems' first axis (dtype DefaultDType: fn's).
func MapFn(fn func(x *Tensor) (*Tensor, error), elems *Tensor, dtype DType) (*Tensor, error) {
	cb := &callback{who: "map_fn", fn: func(a []*Tensor) (*Tensor, []*Tensor, error) {
		r, err := fn(a[0])
		return r, nil, err
	}}
	var out *C.kb_tensor
	err := cb.run(func(h C.uintptr_t) C.kb_status {
		return C.kbgo_map_fn(h, elems.c(), C.kb_data_type(dtype), &out)
	}, elems)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

func fold(who string, fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor,
	right bool) (*Tensor, error) {
	cb := &callback{who: who, fn: func(a []*Tensor) (*Tensor, []*Tensor, error) {
		r, err := fn(a[0], a[1])
		return r, nil, err
	}}
	var out *C.kb_tensor
	err := cb.run(func(h C.uintptr_t) C.kb_status {
		return C.kbgo_fold(h, cBool(right), elems.c(), initializer.c(), &out)
	}, elems, initializer)
	if err != nil {
		return nil, err
	}
	return wrapC(out), nil
}

// Foldl is Keras' foldl: fn(acc, x) from the left; initializer nil: the first element.
func Foldl(fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor) (*Tensor, error) {
	return fold("foldl", fn, elems, initializer, false)
}

// Foldr is Keras' foldr: fn(acc, x) from the right; initializer nil: the last element.
func Foldr(fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor) (*Tensor, error) {
	return fold("foldr", fn, elems, initializer, true)
}

// RNNOptions are Keras' optional rnn arguments.
type RNNOptions struct {
	GoBackwards bool
	Mask        *Tensor
	Constants   []*Tensor
	Unroll      bool
}

// StepFunc is Keras' step_function: (input, states) -> (output, new states).
type StepFunc func(input *Tensor, states []*Tensor) (*Tensor, []*Tensor, error)

// RNN is Keras' rnn: it returns (last_output, outputs, new_states).
func RNN(step StepFunc, inputs *Tensor, initialStates []*Tensor, opts RNNOptions) (*Tensor, *Tensor, []*Tensor, error) {
	cb := &callback{who: "rnn", states: true, fn: func(a []*Tensor) (*Tensor, []*Tensor, error) {
		return step(a[0], a[1:])
	}}
	cs, ns := cTensors(initialStates)
	cc, nc := cTensors(opts.Constants)
	var last, outputs *C.kb_tensor
	var states *C.kb_tensor_list
	err := cb.run(func(h C.uintptr_t) C.kb_status {
		return C.kbgo_rnn(h, inputs.c(), cs, ns, cBool(opts.GoBackwards), opts.Mask.c(), cc, nc,
			cBool(opts.Unroll), &last, &outputs, &states)
	}, inputs, initialStates, opts.Mask, opts.Constants)
	if err != nil {
		return nil, nil, nil, err
	}
	l, o := wrapC(last), wrapC(outputs)
	newStates, err := drainC(states)
	if err != nil {
		l.Close()
		o.Close()
		return nil, nil, nil, err
	}
	return l, o, newStates, nil
}
