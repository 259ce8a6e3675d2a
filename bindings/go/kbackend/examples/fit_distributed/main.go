// Trains a Keras MLP (64 -> 32 relu -> 10 softmax, Adam) on the 8x8 digits across the processes
// of an MPI job: every process reads all the digits and fits with Distributed, taking 16 rows of
// each step of 16 x processes, from weights of its own that fit replaces with rank 0's. Each then
// checks its weights and validation losses against the same training in this process alone
// with the global batch, and its weights against rank 0's.
//
// Usage: mpirun -np 2 go run ./examples/fit_distributed digits.csv  (or alone; exit status 0
// when the checks hold and the test accuracy is above 90%)
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	K "kbackend.dev/kbackend"
)

const mlp = `{"class_name": "Sequential", "config": {"name": "mlp", "layers": [` +
	`{"class_name": "Dense", "config": {"name": "hidden", "units": 32, "activation": "relu", ` +
	`"batch_input_shape": [null, 64]}}, ` +
	`{"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}`

func check[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return v
}

func model(seed int64) *K.Model {
	check(0, K.SetRandomSeed(seed))
	m := check(K.ModelFromJSON(mlp))
	check(0, m.Compile("adam", []string{"categorical_crossentropy"}, []string{"accuracy"}, ""))
	return m
}

func main() {
	check(0, K.DistInit())
	rank, size := check(K.DistRank()), check(K.DistSize())
	f := check(os.Open(os.Args[1]))
	defer f.Close()
	var xtr, ytr, xte, yte []float32
	i := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Split(line, ",")
		label := check(strconv.Atoi(fields[0]))
		x, y := &xtr, &ytr
		if i%5 == 4 { // every fifth digit tests
			x, y = &xte, &yte
		}
		for _, s := range fields[1:] {
			*x = append(*x, float32(check(strconv.ParseFloat(s, 64)))/16)
		}
		for c := 0; c < 10; c++ {
			v := float32(0)
			if c == label {
				v = 1
			}
			*y = append(*y, v)
		}
		i++
	}
	ntr, nte := int64(len(ytr)/10), int64(len(yte)/10)
	x := []*K.Tensor{check(K.FromFloat32(xtr, ntr, 64))}
	y := []*K.Tensor{check(K.FromFloat32(ytr, ntr, 10))}
	shared, alone := model(1+int64(rank)), model(1)
	defer shared.Close()
	defer alone.Close()
	o := K.DefaultFitOptions()
	o.Epochs, o.Seed, o.ValidationSplit, o.Verbose = 15, 1, 0.1, 0
	o.BatchSize, o.Distributed = 16, true
	if rank == 0 {
		o.Verbose = 2
	}
	h := check(shared.FitWith(x, y, o, nil))
	o.BatchSize, o.Distributed, o.Verbose = 16*int64(size), false, 0
	one := check(alone.FitWith(x, y, o, nil))

	worst, same := 0.0, true
	mine, reference := check(shared.Weights()), check(alone.Weights())
	for k := range mine {
		a, b := check(mine[k].Float32s()), check(reference[k].Float32s())
		average := make([]float64, len(a))
		for j := range a {
			worst = math.Max(worst, math.Abs(float64(a[j]-b[j])))
			average[j] = float64(a[j])
		}
		check(0, K.DistAllReduceFloat64(average, K.ReduceAverage))
		for j := range a {
			same = same && average[j] == float64(a[j])
		}
	}
	for e := range h["val_loss"] {
		worst = math.Max(worst, math.Abs(h["val_loss"][e]-one["val_loss"][e]))
	}
	quiet := K.EvaluateOptions{BatchSize: 128, Verbose: 0}
	xTest, yTest := check(K.FromFloat32(xte, nte, 64)), check(K.FromFloat32(yte, nte, 10))
	accuracy := check(shared.EvaluateWith([]*K.Tensor{xTest}, []*K.Tensor{yTest}, quiet))[1]
	ok := worst < 1e-4 && same && accuracy > 0.9
	verdict := "ok"
	if !ok {
		verdict = "FAILED"
	}
	// One write per line: the processes share the launcher's output.
	fmt.Print(fmt.Sprintf("rank %d of %d: %s (largest difference from one process %.2e, the same "+
		"weights as every rank: %t, test accuracy %.2f%%)\n", rank, size, verdict, worst, same,
		100*accuracy))
	if !ok {
		os.Exit(1)
	}
	check(0, K.DistFinalize()) // every process leaves the job together
}
