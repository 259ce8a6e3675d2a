// Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the bundled 8x8 digits with SGD, the
// way Keras' training loop uses a backend: placeholders, variables, gradients, update ops and a
// compiled function.
//
// Usage: go run ./examples/train_mlp [examples/data/digits.csv]  (exit status 0 when accuracy > 90%)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	K "kbackend.dev/kbackend"
)

func check[T any](v T, err error) T {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return v
}

func load(path string) ([][]float32, []int) {
	f := check(os.Open(path))
	defer f.Close()
	var xs [][]float32
	var ys []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Split(line, ",")
		y := check(strconv.Atoi(fields[0]))
		x := make([]float32, 64)
		for j := range x {
			x[j] = float32(check(strconv.ParseFloat(fields[j+1], 32))) / 16
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

// shuffle is the C example's fixed permutation, so that the split is the same on every run.
func shuffle(idx []int, state *uint32) {
	for i := len(idx) - 1; i > 0; i-- {
		*state = *state*1103515245 + 12345
		j := int((*state >> 8) % uint32(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
}

func batch(xs [][]float32, ys []int, idx []int) (*K.Tensor, *K.Tensor) {
	x := make([]float32, 0, len(idx)*64)
	y := make([]float32, len(idx)*10)
	for i, k := range idx {
		x = append(x, xs[k]...)
		y[i*10+ys[k]] = 1
	}
	n := int64(len(idx))
	return check(K.FromFloat32(x, n, 64)), check(K.FromFloat32(y, n, 10))
}

func main() {
	path := "examples/data/digits.csv"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	xs, ys := load(path)
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	state := uint32(42)
	shuffle(idx, &state)
	nTest := len(xs) / 5
	train, test := idx[:len(xs)-nTest], idx[len(xs)-nTest:]
	fmt.Printf("kbackend %s: %d training and %d test digits\n", K.Version(), len(train), len(test))

	x := check(K.Placeholder([]int64{-1, 64}, K.Float32, "x"))
	y := check(K.Placeholder([]int64{-1, 10}, K.Float32, "y"))
	w1 := check(K.RandomNormalVariable([]int64{64, 64}, 0, 0.125, K.DefaultDType, "", K.OptInt(1)))
	b1 := check(K.Zeros([]int64{64}, K.Float32, ""))
	w2 := check(K.RandomNormalVariable([]int64{64, 10}, 0, 0.125, K.DefaultDType, "", K.OptInt(2)))
	b2 := check(K.Zeros([]int64{10}, K.Float32, ""))
	hidden := check(K.Relu(check(K.BiasAdd(check(x.Dot(w1)), b1, K.ChannelsLast)), 0, nil, 0))
	probs := check(K.Softmax(check(K.BiasAdd(check(hidden.Dot(w2)), b2, K.ChannelsLast)), -1))
	loss := check(K.Mean(check(K.CategoricalCrossentropy(y, probs, false, -1)), nil, false))

	params := []*K.Tensor{w1, b1, w2, b2}
	grads := check(K.Gradients(loss, params))
	var updates []*K.Tensor
	for i, p := range params {
		updates = append(updates, check(K.UpdateSub(p, check(grads[i].MulScalar(0.5)))))
	}
	trainStep := check(K.NewFunction([]*K.Tensor{x, y}, []*K.Tensor{loss}, updates))
	predict := check(K.NewFunction([]*K.Tensor{x}, []*K.Tensor{probs}, nil))

	for epoch := 1; epoch <= 30; epoch++ {
		shuffle(train, &state)
		total, batches := 0.0, 0
		for s := 0; s < len(train); s += 32 {
			e := s + 32
			if e > len(train) {
				e = len(train)
			}
			bx, by := batch(xs, ys, train[s:e])
			out := check(trainStep.Call(bx, by))
			total += float64(check(out[0].Float32s())[0])
			batches++
			bx.Close()
			by.Close()
			out[0].Close()
		}
		if epoch == 1 || epoch%5 == 0 {
			fmt.Printf("epoch %2d  loss %.4f\n", epoch, total/float64(batches))
		}
	}

	tx, _ := batch(xs, ys, test)
	p := check(check(predict.Call(tx))[0].Float32s())
	correct := 0
	for i, k := range test {
		best := 0
		for c := 1; c < 10; c++ {
			if p[i*10+c] > p[i*10+best] {
				best = c
			}
		}
		if best == ys[k] {
			correct++
		}
	}
	acc := float64(correct) / float64(len(test))
	fmt.Printf("test accuracy %.2f%% (%d/%d)\n", 100*acc, correct, len(test))
	if acc <= 0.9 {
		os.Exit(2)
	}
}
