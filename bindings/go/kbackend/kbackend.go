// Package kbackend is the Go binding of kbackend, the Keras backend API as a native library.
//
// Every function returns an error (*Error, with the library's message and status) instead of
// panicking. A *Tensor owns one native reference: Close releases it at once, and a finalizer
// releases it when the Tensor is collected. Callbacks (MapFn, Foldl, Foldr, RNN) are Go funcs; an
// error they return, or a panic, comes back out of the building call.
//
// The package sits on the SWIG-generated package raw. Each call locks the goroutine to its OS
// thread while it runs and reads the library's thread-local status before unlocking.
package kbackend

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"

	"kbackend.dev/kbackend/raw"
)

// ABIVersion is the C ABI major version this package was written for.
const ABIVersion = 1

// Status is a kb_status code.
type Status int

// The kb_status codes.
const (
	OK                   Status = 0
	ErrInvalidArgument   Status = 1
	ErrShape             Status = 2
	ErrDType             Status = 3
	ErrNotImplemented    Status = 4
	ErrOutOfMemory       Status = 5
	ErrDevice            Status = 6
	ErrInternal          Status = 7
	ErrUnavailable       Status = 8 // a part the call needs is missing (the MPI plugin or library)
	ErrDistributed       Status = 9 // a collective did not complete (deadline, ranks differ, failure)
	statusCallbackFailed        = ErrInvalidArgument
)

// Error is a failed kbackend call: the status and the library's message, which names the
// function and the problem.
type Error struct {
	Status  Status
	Message string
}

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

func (d DType) String() string {
	if s := raw.Dtype_name(raw.Kb_data_type(d)); s != "" {
		return s
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// DataFormat is a kb_data_format; DefaultDataFormat is the global image_data_format.
type DataFormat int

const (
	DefaultDataFormat DataFormat = -1
	ChannelsLast      DataFormat = 0
	ChannelsFirst     DataFormat = 1
)

// Padding is a kb_padding.
type Padding int

const (
	Valid  Padding = 0
	Same   Padding = 1
	Causal Padding = 2
)

// PoolMode is a kb_pool_mode.
type PoolMode int

const (
	MaxPool PoolMode = 0
	AvgPool PoolMode = 1
)

// Device is a kb_device_kind.
type Device int

const (
	CPU  Device = 0
	CUDA Device = 1
)

// ---- the call policy ----------------------------------------------------------------------

// do runs f with the goroutine locked to its OS thread and returns the library's status for it.
// keep stays reachable until f has returned (a finalizer must not release an argument mid-call).
func do(f func(), keep ...interface{}) error {
	runtime.LockOSThread()
	f()
	code := raw.Last_error_code()
	var err error
	if code != 0 {
		err = &Error{Status: Status(code), Message: raw.Last_error_message()}
	}
	runtime.UnlockOSThread()
	runtime.KeepAlive(keep)
	return err
}

func tensorCall(f func() raw.Tensor, keep ...interface{}) (*Tensor, error) {
	var r raw.Tensor
	if err := do(func() { r = f() }, keep...); err != nil {
		return nil, err
	}
	return wrap(r), nil
}

func listCall(f func() raw.TensorList, keep ...interface{}) ([]*Tensor, error) {
	var l raw.TensorList
	if err := do(func() { l = f() }, keep...); err != nil {
		return nil, err
	}
	return drain(l)
}

// drain turns a native list into Tensors and releases the list.
func drain(l raw.TensorList) ([]*Tensor, error) {
	defer raw.DeleteTensorList(l)
	n := raw.Tensor_list_size(l)
	out := make([]*Tensor, 0, n)
	for i := int64(0); i < n; i++ {
		t, err := tensorCall(func() raw.Tensor { return raw.Tensor_list_get(l, i) })
		if err != nil {
			for _, u := range out {
				u.Close()
			}
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// ---- Tensor -----------------------------------------------------------------------------------

var liveTensors int64

// Tensor is a graph value: a placeholder, variable, constant or the result of an operation. It
// owns one native reference, released by Close or, as a safety net, when it is collected. A
// Tensor may be used from several goroutines.
type Tensor struct {
	h uintptr
}

func wrap(r raw.Tensor) *Tensor {
	if r == nil {
		return nil
	}
	return wrapHandle(r.Swigcptr())
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

func (t *Tensor) ptr() raw.SwigcptrTensor {
	if t == nil {
		return 0
	}
	return raw.SwigcptrTensor(atomic.LoadUintptr(&t.h))
}

// Close releases the native reference now; the Tensor is unusable afterwards. Idempotent.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	if h := atomic.SwapUintptr(&t.h, 0); h != 0 {
		raw.DeleteTensor(raw.SwigcptrTensor(h))
		atomic.AddInt64(&liveTensors, -1)
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

func handles(ts []*Tensor) []uintptr {
	if ts == nil {
		return nil
	}
	out := make([]uintptr, len(ts))
	for i, t := range ts {
		out[i] = uintptr(t.ptr())
	}
	return out
}

// ---- data in and out ----------------------------------------------------------------------

func bytesOf[T any](data []T) []byte {
	var zero T
	if len(data) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(zero)))
}

func shapeArg(shape []int64) []int64 {
	if shape == nil {
		return []int64{} // a scalar, not None
	}
	return shape
}

// FromBytes is a constant of dtype and shape holding a copy of data (row-major, native order).
func FromBytes(data []byte, dtype DType, shape ...int64) (*Tensor, error) {
	return tensorCall(func() raw.Tensor {
		return raw.Tensor_from_data(data, raw.Kb_data_type(dtype), shapeArg(shape))
	})
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
	var rank int64
	if err := do(func() { rank = raw.Int_shape_rank(t.ptr()) }, t); err != nil {
		return nil, err
	}
	if rank < 0 {
		return nil, nil
	}
	dims := make([]int64, rank)
	for i := range dims {
		if err := do(func() { dims[i] = raw.Int_shape_dim(t.ptr(), int64(i)) }, t); err != nil {
			return nil, err
		}
	}
	return dims, nil
}

// DType is the tensor's element type.
func (t *Tensor) DType() (DType, error) {
	var d raw.Kb_data_type
	err := do(func() { d = raw.Dtype(t.ptr()) }, t)
	return DType(d), err
}

// Name is the tensor's name.
func (t *Tensor) Name() (string, error) {
	var s string
	err := do(func() { s = raw.Tensor_name(t.ptr()) }, t)
	return s, err
}

// ID is equal for the same graph value.
func (t *Tensor) ID() (int64, error) {
	var id int64
	err := do(func() { id = raw.Tensor_id(t.ptr()) }, t)
	return id, err
}

// Eval is a constant holding the tensor's value.
func (t *Tensor) Eval() (*Tensor, error) { return Eval(t) }

// CopyTo copies the value (in its own dtype) into dst, which must be exactly its size in bytes.
func (t *Tensor) CopyTo(dst []byte) error {
	return do(func() { raw.Tensor_copy_to(t.ptr(), dst) }, t)
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

// Methods for the operators Go does not have.
func (t *Tensor) Add(y *Tensor) (*Tensor, error)          { return Add(t, y) }
func (t *Tensor) Sub(y *Tensor) (*Tensor, error)          { return Subtract(t, y) }
func (t *Tensor) Mul(y *Tensor) (*Tensor, error)          { return Multiply(t, y) }
func (t *Tensor) Div(y *Tensor) (*Tensor, error)          { return Divide(t, y) }
func (t *Tensor) Dot(y *Tensor) (*Tensor, error)          { return Dot(t, y) }
func (t *Tensor) AddScalar(v float64) (*Tensor, error)    { return t.withScalar(v, Add, false) }
func (t *Tensor) MulScalar(v float64) (*Tensor, error)    { return t.withScalar(v, Multiply, false) }
func (t *Tensor) SubScalar(v float64) (*Tensor, error)    { return t.withScalar(v, Subtract, false) }
func (t *Tensor) DivScalar(v float64) (*Tensor, error)    { return t.withScalar(v, Divide, false) }
func (t *Tensor) RSubScalar(v float64) (*Tensor, error)   { return t.withScalar(v, Subtract, true) }
func (t *Tensor) Neg() (*Tensor, error)                   { return Negative(t) }
func (t *Tensor) Reshape(shape ...int64) (*Tensor, error) { return Reshape(t, shape...) }

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
func Version() string { return raw.Version() }

// LibraryABIVersion is the ABI version of the loaded library.
func LibraryABIVersion() int { return int(raw.Abi_version()) }

// FloatX is the default float type.
func FloatX() (DType, error) {
	var d raw.Kb_data_type
	err := do(func() { d = raw.Floatx() })
	return DType(d), err
}

// SetFloatX sets the default float type.
func SetFloatX(d DType) error { return do(func() { raw.Set_floatx(raw.Kb_data_type(d)) }) }

// Epsilon is the fuzz factor.
func Epsilon() (float64, error) {
	var e float64
	err := do(func() { e = raw.Epsilon() })
	return e, err
}

// SetEpsilon sets the fuzz factor.
func SetEpsilon(e float64) error { return do(func() { raw.Set_epsilon(e) }) }

// NumThreads is the number of threads of the CPU kernels.
func NumThreads() (int, error) {
	var n int
	err := do(func() { n = raw.Num_threads() })
	return n, err
}

// SetNumThreads sets the number of threads of the CPU kernels for the whole process (0: the
// default, KB_NUM_THREADS, else OMP_NUM_THREADS, else the cores).
func SetNumThreads(n int) error { return do(func() { raw.Set_num_threads(n) }) }

// SetLearningPhase sets the learning phase (0 test, 1 train).
func SetLearningPhase(v int) error { return do(func() { raw.Set_learning_phase(v) }) }

// ClearSession resets the global state.
func ClearSession() error { return do(func() { raw.Clear_session() }) }

// DeviceCount is the number of devices of a kind.
func DeviceCount(d Device) (int64, error) {
	var n int64
	err := do(func() { n = raw.Device_count(raw.Kb_device_kind(d)) })
	return n, err
}

// ---- data-parallel training ----------------------------------------------------------------

// ReduceOp is a kb_reduce_op: how a collective combines the processes' values.
type ReduceOp int

// The reductions.
const (
	ReduceSum     ReduceOp = 0
	ReduceAverage ReduceOp = 1 // the sum divided by the number of processes (integers truncate)
)

// DistInit joins the job an MPI launcher started (kb_dist_init). Without MPI it returns an *Error
// with ErrUnavailable, and the process trains alone: rank 0 of 1, every collective the identity.
func DistInit() error { return do(func() { raw.Dist_init() }) }

// DistRank is this process' rank in the job (0 without one).
func DistRank() (int32, error) {
	var r int32
	err := do(func() { r = int32(raw.Dist_rank()) })
	return r, err
}

// DistSize is the number of processes of the job (1 without one).
func DistSize() (int32, error) {
	var n int32
	err := do(func() { n = int32(raw.Dist_size()) })
	return n, err
}

// DistLocalRank is the rank among the processes of this host.
func DistLocalRank() (int32, error) {
	var r int32
	err := do(func() { r = int32(raw.Dist_local_rank()) })
	return r, err
}

// DistBarrier waits for every process.
func DistBarrier() error { return do(func() { raw.Dist_barrier() }) }

// DistFinalize waits for every process, then leaves the job (MPI cannot start again).
func DistFinalize() error { return do(func() { raw.Dist_finalize() }) }

// DistSetTimeout sets how long a collective waits for the other processes.
func DistSetTimeout(seconds float64) error { return do(func() { raw.Dist_set_timeout(seconds) }) }

// AllReduce is the sum or average of x over the processes, each time a function computes it.
func AllReduce(x *Tensor, op ReduceOp) (*Tensor, error) {
	return tensorCall(func() raw.Tensor { return raw.All_reduce(x.ptr(), raw.Kb_reduce_op(op)) }, x)
}

// Broadcast is rank root's x on every process.
func Broadcast(x *Tensor, root int32) (*Tensor, error) {
	return tensorCall(func() raw.Tensor { return raw.Broadcast(x.ptr(), int(root)) }, x)
}

// AllGather is the processes' x concatenated along axis 0 in rank order.
func AllGather(x *Tensor) (*Tensor, error) {
	return tensorCall(func() raw.Tensor { return raw.All_gather(x.ptr()) }, x)
}

// DistBroadcastVariables gives every variable rank root's value (initial weights).
func DistBroadcastVariables(variables []*Tensor, root int32) error {
	return do(func() { raw.Dist_broadcast_variables(handles(variables), int(root)) }, variables)
}

// DistAllReduceFloat64 replaces values by their sum or average over the processes (metrics).
func DistAllReduceFloat64(values []float64, op ReduceOp) error {
	if len(values) == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*8)
	return do(func() { raw.Dist_all_reduce(b, raw.Kb_data_type(Float64), raw.Kb_reduce_op(op)) }, values)
}

// ---- creation ---------------------------------------------------------------------------------

// Placeholder is a placeholder of shape (-1 for unknown dimensions).
func Placeholder(shape []int64, dtype DType, name string) (*Tensor, error) {
	return tensorCall(func() raw.Tensor {
		return raw.Placeholder(shapeArg(shape), int64(len(shape)), raw.Kb_data_type(dtype), false, name)
	})
}

// Variable is a floatx variable initialized with data.
func Variable(data []float32, shape []int64, name string) (*Tensor, error) {
	return tensorCall(func() raw.Tensor {
		return raw.Variable_from_data(bytesOf(data), raw.KB_FLOAT32, shapeArg(shape),
			raw.KB_DTYPE_DEFAULT, name)
	})
}

// Constant is a floatx constant filled with value in shape (a scalar for no shape).
func Constant(value float64, shape ...int64) (*Tensor, error) {
	var s []int64
	if len(shape) > 0 {
		s = shape
	}
	return tensorCall(func() raw.Tensor {
		return raw.Constant_from_data(bytesOf([]float64{value}), raw.KB_FLOAT64, []int64{},
			raw.KB_DTYPE_DEFAULT, s, "")
	})
}

// ---- operations -----------------------------------------------------------------------------

// ---- gradients and functions ------------------------------------------------------------------

// Function is a compiled function (Keras' K.function).
type Function struct {
	h uintptr
}

// NewFunction compiles inputs -> outputs with update ops (Update, UpdateAdd, UpdateSub).
func NewFunction(inputs, outputs, updates []*Tensor) (*Function, error) {
	var r raw.CompiledFunction
	err := do(func() { r = raw.Function(handles(inputs), handles(outputs), handles(updates)) }, inputs, outputs, updates)
	if err != nil {
		return nil, err
	}
	f := &Function{h: r.Swigcptr()}
	runtime.SetFinalizer(f, (*Function).Close)
	return f, nil
}

func (f *Function) ptr() raw.SwigcptrCompiledFunction {
	return raw.SwigcptrCompiledFunction(atomic.LoadUintptr(&f.h))
}

// Call runs the function on constants in the order of its inputs.
func (f *Function) Call(inputs ...*Tensor) ([]*Tensor, error) {
	return listCall(func() raw.TensorList { return raw.Function_call(f.ptr(), handles(inputs)) }, f, inputs)
}

// SetDevice moves the function to a device.
func (f *Function) SetDevice(d Device) error {
	return do(func() { raw.Function_set_device(f.ptr(), raw.Kb_device_kind(d)) }, f)
}

// Close releases the function now. Idempotent.
func (f *Function) Close() error {
	if h := atomic.SwapUintptr(&f.h, 0); h != 0 {
		raw.DeleteCompiledFunction(raw.SwigcptrCompiledFunction(h))
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

// ---- callbacks --------------------------------------------------------------------------------

// callback adapts a Go func to raw.Callback: borrowed pointers become Tensors; fn returns new
// references for the library. The first error or panic is kept in *failed and reported.
func callback(who string, failed *error, fn func(args []*Tensor) ([]uintptr, error)) raw.Callback {
	return func(ptrs []uintptr) (results []uintptr, status int32) {
		defer func() {
			if p := recover(); p != nil {
				*failed = fmt.Errorf("%s: the callback panicked: %v", who, p)
				results, status = nil, int32(raw.Set_callback_error((*failed).Error()))
			}
		}()
		args := make([]*Tensor, len(ptrs))
		for i, p := range ptrs {
			args[i] = wrap(raw.Borrow(int64(p)))
		}
		out, err := fn(args)
		if err != nil {
			*failed = err
			return nil, int32(raw.Set_callback_error(fmt.Sprintf("%s: the callback failed: %v", who, err)))
		}
		return out, 0
	}
}

// retained is a new reference to t for the library.
func retained(who string, t *Tensor) ([]uintptr, error) {
	if t == nil || t.ptr() == 0 {
		return nil, fmt.Errorf("%s: the callback returned a nil or closed tensor", who)
	}
	p := uintptr(raw.Retained(t.ptr()))
	runtime.KeepAlive(t)
	return []uintptr{p}, nil
}

// withCallback runs build with a cgo.Handle of cb; a callback's own error wins over the library's.
func withCallback(cb raw.Callback, failed *error, build func(h uintptr) raw.Tensor, keep ...interface{}) (*Tensor, error) {
	h := cgo.NewHandle(cb)
	defer h.Delete()
	t, err := tensorCall(func() raw.Tensor { return build(uintptr(h)) }, keep...)
	if err != nil && *failed != nil {
		return nil, *failed
	}
	return t, err
}

// MapFn is Keras' map_fn: fn(x) for each x along elems' first axis (dtype DefaultDType: fn's).
func MapFn(fn func(x *Tensor) (*Tensor, error), elems *Tensor, dtype DType) (*Tensor, error) {
	var failed error
	cb := callback("map_fn", &failed, func(a []*Tensor) ([]uintptr, error) {
		r, err := fn(a[0])
		if err != nil {
			return nil, err
		}
		return retained("map_fn", r)
	})
	return withCallback(cb, &failed, func(h uintptr) raw.Tensor {
		return raw.Map_fn_raw(h, elems.ptr(), "", raw.Kb_data_type(dtype))
	}, elems)
}

func fold(who string, fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor,
	f func(uintptr, raw.Tensor, raw.Tensor, string) raw.Tensor) (*Tensor, error) {
	var failed error
	cb := callback(who, &failed, func(a []*Tensor) ([]uintptr, error) {
		r, err := fn(a[0], a[1])
		if err != nil {
			return nil, err
		}
		return retained(who, r)
	})
	return withCallback(cb, &failed, func(h uintptr) raw.Tensor {
		return f(h, elems.ptr(), initializer.ptr(), "")
	}, elems, initializer)
}

// Foldl is Keras' foldl: fn(acc, x) from the left; initializer nil: the first element.
func Foldl(fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor) (*Tensor, error) {
	return fold("foldl", fn, elems, initializer, raw.Foldl_raw)
}

// Foldr is Keras' foldr: fn(acc, x) from the right; initializer nil: the last element.
func Foldr(fn func(acc, x *Tensor) (*Tensor, error), elems, initializer *Tensor) (*Tensor, error) {
	return fold("foldr", fn, elems, initializer, raw.Foldr_raw)
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
	var failed error
	cb := callback("rnn", &failed, func(a []*Tensor) ([]uintptr, error) {
		out, states, err := step(a[0], a[1:])
		if err != nil {
			return nil, err
		}
		for _, st := range states {
			if st == nil || st.ptr() == 0 {
				return nil, fmt.Errorf("rnn: the step function returned a nil or closed state")
			}
		}
		if out == nil || out.ptr() == 0 {
			return nil, fmt.Errorf("rnn: the step function returned a nil or closed output")
		}
		var list int64
		if err := do(func() { list = raw.List_new_raw(handles(states)) }, states); err != nil {
			return nil, err
		}
		r, _ := retained("rnn", out)
		return []uintptr{r[0], uintptr(list)}, nil // output, then the list of new states
	})
	h := cgo.NewHandle(cb)
	defer h.Delete()
	all, err := listCall(func() raw.TensorList {
		return raw.Rnn_raw(uintptr(h), inputs.ptr(), handles(initialStates), opts.GoBackwards,
			opts.Mask.ptr(), handles(opts.Constants), opts.Unroll)
	}, inputs, initialStates, opts.Mask, opts.Constants)
	if err != nil {
		if failed != nil {
			return nil, nil, nil, failed
		}
		return nil, nil, nil, err
	}
	return all[0], all[1], all[2:], nil
}
