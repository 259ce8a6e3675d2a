package kbackend

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func near(t *testing.T, got []float32, want ...float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestArithmeticAndShapes(t *testing.T) {
	T := must[*Tensor](t)
	x := T(FromFloat32([]float32{1, 2, 3, 4}, 2, 2))
	y := T(T(x.MulScalar(2)).AddScalar(1))
	near(t, must[[]float32](t)(y.Float32s()), 3, 5, 7, 9)
	shape := must[[]int64](t)(y.Shape())
	if len(shape) != 2 || shape[0] != 2 || shape[1] != 2 {
		t.Fatalf("shape %v", shape)
	}
	near(t, must[[]float32](t)(T(Sum(x, nil, false)).Float32s()), 10)
	near(t, must[[]float32](t)(T(Mean(x, []int64{0}, false)).Float32s()), 2, 3)
	near(t, must[[]float32](t)(T(x.Dot(x)).Float32s()), 7, 10, 15, 22)
	near(t, must[[]float32](t)(T(Softmax(T(FromFloat32([]float32{0, 0}, 2)), -1)).Float32s()), 0.5, 0.5)
	r := T(Reshape(x, 4))
	near(t, must[[]float32](t)(T(StridedSlice(r, []int64{1}, []int64{4}, []int64{2}, 0, 0, 0, 0)).Float32s()), 2, 4)
	ints := must[[]int64](t)(T(Argmax(x, -1)).Int64s())
	if ints[0] != 1 || ints[1] != 1 {
		t.Fatalf("argmax %v", ints)
	}
	d := must[DType](t)(T(FromInt32([]int32{1, 2}, 2)).DType())
	if d != Int32 || d.String() != "int32" {
		t.Fatalf("dtype %v", d)
	}
}

func TestErrorsAreErrors(t *testing.T) {
	x, _ := FromFloat32([]float32{1, 2, 3, 4}, 2, 2)
	_, err := Reshape(x, 3, 3)
	var e *Error
	if !errors.As(err, &e) || e.Status != ErrShape || !strings.Contains(e.Message, "reshape") {
		t.Fatalf("want a shape error naming reshape, got %v", err)
	}
	if _, err := FromFloat32([]float32{1, 2, 3}, 2, 2); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("a short buffer must fail, got %v", err)
	}
	if _, err := Slice(x, []int64{0}, []int64{1, 1}); err == nil || !strings.Contains(err.Error(), "one length") {
		t.Fatalf("mismatched slice arguments must fail, got %v", err)
	}
	x.Close()
	if _, err := Square(x); err == nil {
		t.Fatal("a closed tensor must fail")
	}
	// the next call on the thread succeeds: no stale error
	if _, err := FromFloat32([]float32{1}); err != nil {
		t.Fatal(err)
	}
}

func TestNumThreads(t *testing.T) {
	def, err := NumThreads()
	if err != nil || def < 1 {
		t.Fatalf("NumThreads: %d, %v", def, err)
	}
	if err := SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	if n, _ := NumThreads(); n != 1 {
		t.Fatalf("want 1 thread, got %d", n)
	}
	var e *Error
	if err := SetNumThreads(-1); !errors.As(err, &e) || e.Status != ErrInvalidArgument ||
		!strings.HasPrefix(e.Message, "set_num_threads") {
		t.Fatalf("want an invalid-argument error naming set_num_threads, got %v", err)
	}
	if err := SetNumThreads(0); err != nil {
		t.Fatal(err)
	}
	if n, _ := NumThreads(); n != def {
		t.Fatalf("want the default %d back, got %d", def, n)
	}
}

func TestGradientsAndFunction(t *testing.T) {
	T := must[*Tensor](t)
	w := T(Variable([]float32{3}, []int64{1}, "w"))
	loss := T(Sum(T(Square(w)), nil, false))
	g := must[[]*Tensor](t)(Gradients(loss, []*Tensor{w}))
	near(t, must[[]float32](t)(g[0].Float32s()), 6)
	step := T(UpdateSub(w, T(g[0].MulScalar(0.25))))
	x := T(Placeholder([]int64{-1}, Float32, "x"))
	f, err := NewFunction([]*Tensor{x}, []*Tensor{T(x.Add(w))}, []*Tensor{step})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := must[[]*Tensor](t)(f.Call(T(FromFloat32([]float32{1, 2}, 2))))
	near(t, must[[]float32](t)(out[0].Float32s()), 4, 5)
	near(t, must[[]float32](t)(w.Float32s()), 1.5) // 3 - 0.25 * 6
}

func TestCallbacks(t *testing.T) {
	T := must[*Tensor](t)
	x := T(FromFloat32([]float32{1, 2, 3, 4}, 2, 2))
	sq := T(MapFn(func(r *Tensor) (*Tensor, error) { return Square(r) }, x, DefaultDType))
	near(t, must[[]float32](t)(sq.Float32s()), 1, 4, 9, 16)
	s := T(Foldl(func(acc, r *Tensor) (*Tensor, error) { return Add(acc, r) }, x, nil))
	near(t, must[[]float32](t)(s.Float32s()), 4, 6)
	s = T(Foldr(func(acc, r *Tensor) (*Tensor, error) { return Subtract(acc, r) }, x, nil))
	near(t, must[[]float32](t)(s.Float32s()), 2, 2) // [3,4] - [1,2]

	// rnn: a running sum over time, against a loop
	in := T(FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 1, 3, 2))
	last, outs, states, err := RNN(func(i *Tensor, st []*Tensor) (*Tensor, []*Tensor, error) {
		o, err := Add(i, st[0])
		return o, []*Tensor{o}, err
	}, in, []*Tensor{T(Zeros([]int64{1, 2}, Float32, ""))}, RNNOptions{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, must[[]float32](t)(last.Float32s()), 9, 12)
	near(t, must[[]float32](t)(outs.Float32s()), 1, 2, 4, 6, 9, 12)
	near(t, must[[]float32](t)(states[0].Float32s()), 9, 12)

	// an error and a panic inside the callback come back out of the call
	mine := errors.New("mine")
	_, _, _, err = RNN(func(*Tensor, []*Tensor) (*Tensor, []*Tensor, error) { return nil, nil, mine },
		in, []*Tensor{T(Zeros([]int64{1, 2}, Float32, ""))}, RNNOptions{})
	if err != mine {
		t.Fatalf("want the callback's error, got %v", err)
	}
	_, err = MapFn(func(*Tensor) (*Tensor, error) { panic("boom") }, x, DefaultDType)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("want the panic as an error, got %v", err)
	}
}

func TestGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				x, err := FromFloat32([]float32{float32(g), float32(i)}, 2)
				if err != nil {
					errs <- err
					return
				}
				if i%10 == 0 { // errors on some goroutines must stay theirs
					if _, err := Reshape(x, 3); err == nil {
						errs <- errors.New("reshape to 3 must fail")
						return
					}
				}
				s, err := Sum(x, nil, false)
				if err != nil {
					errs <- err
					return
				}
				v, err := s.Float32s()
				if err != nil || v[0] != float32(g+i) {
					errs <- errors.New("wrong sum")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A C function with several tensor outputs returns them as several results.
func TestSeveralOutputsComeBackAsResults(t *testing.T) {
	T := must[*Tensor](t)
	x := T(FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 3, 2))
	gamma := T(FromFloat32([]float32{1, 1}, 2))
	beta := T(FromFloat32([]float32{0, 0}, 2))
	_, mean, variance, err := NormalizeBatchInTraining(x, gamma, beta, []int64{0}, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	near(t, must[[]float32](t)(mean.Float32s()), 3, 4)
	near(t, must[[]float32](t)(variance.Float32s()), 8.0/3, 8.0/3)
}

// One process without DistInit: rank 0 of 1, collectives the identity (tests/dist runs them on
// two processes through the C ABI).
func TestOneProcessIsRankZeroOfOne(t *testing.T) {
	if r := must[int32](t)(DistRank()); r != 0 {
		t.Fatalf("rank %d", r)
	}
	if n := must[int32](t)(DistSize()); n != 1 {
		t.Fatalf("size %d", n)
	}
	x := must[*Tensor](t)(FromFloat32([]float32{1, -2, 3}, 3))
	for _, y := range []*Tensor{
		must[*Tensor](t)(AllReduce(x, ReduceAverage)),
		must[*Tensor](t)(Broadcast(x, 0)),
		must[*Tensor](t)(AllGather(x)),
	} {
		near(t, must[[]float32](t)(y.Float32s()), 1, -2, 3)
	}
	values := []float64{4, 5}
	if err := DistAllReduceFloat64(values, ReduceSum); err != nil || values[0] != 4 || values[1] != 5 {
		t.Fatalf("dist all-reduce: %v %v", values, err)
	}
	if err := DistBarrier(); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, err := Broadcast(x, 1); !errors.As(err, &e) || e.Status != ErrInvalidArgument ||
		!strings.Contains(e.Message, "root 1 is not a rank") {
		t.Fatalf("root 1 of 1 process: %v", err)
	}
}

func TestDevicesAreListedAndChosenByName(t *testing.T) {
	devices, err := ListDevices()
	if err != nil {
		t.Fatal(err)
	}
	gpus, _ := DeviceCount(CUDA)
	if int64(len(devices)) != 1+gpus || devices[0].Kind != CPU || devices[0].Index != 0 ||
		devices[0].Name == "" || devices[0].Memory < 1<<26 {
		t.Fatalf("devices: %+v", devices)
	}
	x, _ := Placeholder([]int64{2}, Float32, "x")
	y, _ := x.MulScalar(2)
	f, err := NewFunction([]*Tensor{x}, []*Tensor{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.SetDeviceName("cpu"); err != nil {
		t.Fatal(err)
	}
	if name, err := f.DeviceName(); err != nil || name != "cpu" {
		t.Fatalf("DeviceName: %q %v", name, err)
	}
	var e *Error
	if err := f.SetDeviceName("tpu"); !errors.As(err, &e) || e.Status != ErrInvalidArgument {
		t.Fatalf("tpu: %v", err)
	}
}

func TestBranchesAsFuncs(t *testing.T) {
	x := f32(t, []float32{1, 2}, 2)
	alt := f32(t, []float32{5, 6}, 2)
	xCalls, altCalls := 0, 0
	xFn := func() (*Tensor, error) { xCalls++; return x.MulScalar(2) }
	altFn := func() (*Tensor, error) { altCalls++; return alt, nil }
	r, err := InTrainPhaseFn(xFn, altFn, nil, TrainingTrue)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Float32s(); len(got) != 2 || got[0] != 2 || got[1] != 4 || xCalls != 1 || altCalls != 0 {
		t.Fatalf("in_train_phase: %v, calls %d %d", got, xCalls, altCalls)
	}
	if r, err = InTestPhaseFn(xFn, altFn, nil, TrainingTrue); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Float32s(); got[0] != 5 {
		t.Fatalf("in_test_phase: %v", got)
	}
	c, _ := Placeholder([]int64{}, Float32, "c") // a scalar condition, cast to bool
	chosen, err := SwitchFn(c, xFn, altFn)
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFunction([]*Tensor{c}, []*Tensor{chosen}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	yes, _ := FromFloat32([]float32{1}) // a scalar
	out, err := f.Call(yes)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := out[0].Float32s(); got[0] != 2 {
		t.Fatalf("switch true: %v", got)
	}
	boom := errors.New("boom")
	if _, err := SwitchFn(c, func() (*Tensor, error) { return nil, boom }, altFn); !errors.Is(err, boom) {
		t.Fatalf("a failing branch: %v", err)
	}
	if _, err := SwitchFn(c, nil, altFn); err == nil {
		t.Fatal("a nil branch was accepted")
	}
}

func TestRawDataForms(t *testing.T) {
	b, err := CastToFloatx([]int32{1, -2})
	if err != nil {
		t.Fatal(err)
	}
	if got := unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), 2); got[0] != 1 || got[1] != -2 {
		t.Fatalf("cast_to_floatx: %v", got)
	}
	v, err := Variable(make([]float32, 6), []int64{2, 3}, "v")
	if err != nil {
		t.Fatal(err)
	}
	if shape, err := v.VariableShape(); err != nil || len(shape) != 2 || shape[0] != 2 || shape[1] != 3 {
		t.Fatalf("variable_shape: %v %v", shape, err)
	}
	if err := v.SetValueFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3); err != nil {
		t.Fatal(err)
	}
	w, _ := Variable([]float32{0}, []int64{1}, "w")
	if err := BatchSetValue([]*Tensor{w}, []*Tensor{f32(t, []float32{7}, 1)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Float32s(); got[5] != 6 {
		t.Fatalf("set_value: %v", got)
	}
	if got, _ := w.Float32s(); got[0] != 7 {
		t.Fatalf("batch_set_value: %v", got)
	}
	// [[1, 0, 2], [0, 0, 3]] as COO and as CSR
	want := []float32{1, 0, 2, 0, 0, 3}
	coo, err := SparseFromCOO([]int64{0, 0, 0, 2, 1, 2}, []float32{1, 2, 3}, []int64{2, 3}, DefaultDType)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := SparseFromCSR([]int64{0, 2, 3}, []int64{0, 2, 2}, []float32{1, 2, 3}, 3, DefaultDType)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Tensor{coo, csr} {
		d, err := ToDense(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := d.Float32s(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("sparse: %v", got)
		}
	}
	if _, err := SparseFromCSR([]int64{0, 2}, []int64{0, 2, 2}, []float32{1, 2, 3}, 3, DefaultDType); err == nil {
		t.Fatal("bad offsets accepted")
	}
}

func TestPrintSink(t *testing.T) {
	var mu sync.Mutex
	var seen strings.Builder
	if err := SetPrintSink(func(text string) { mu.Lock(); seen.WriteString(text); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	defer SetPrintSink(nil)
	x, _ := Placeholder([]int64{2}, Float32, "x")
	p, err := PrintTensor(x, "x is ")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFunction([]*Tensor{x}, []*Tensor{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Call(f32(t, []float32{1.5, 2}, 2)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(seen.String(), "x is ") || !strings.Contains(seen.String(), "1.5") {
		t.Fatalf("printed: %q", seen.String())
	}
}

func TestFitWeighted(t *testing.T) {
	json := `{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense",` +
		` "config": {"name": "d", "units": 1, "activation": "linear", "batch_input_shape": [null, 2]}}]}}`
	m, err := ModelFromJSON(json)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Compile("sgd", []string{"mse"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	x := f32(t, []float32{1, 0, 0, 1, 1, 1, 0, 0}, 4, 2)
	y := f32(t, []float32{1, 2, 3, 0}, 4, 1)
	sw := f32(t, []float32{1, 1, 0, 0}, 4) // the last two samples do not count
	history, err := m.FitWeighted([]*Tensor{x}, []*Tensor{y}, []*Tensor{sw}, []*Tensor{x}, []*Tensor{y}, nil,
		4, 2, 0, `{"shuffle": false}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(history, `"val_loss"`) {
		t.Fatalf("history: %s", history)
	}
}
