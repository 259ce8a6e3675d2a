// Loads a Keras model file (examples/data/digits_mlp.h5, saved by Keras 2.2.4, or
// digits_mlp.keras, saved by Keras 3), fine-tunes it on
// the 8x8 digits and prints its test accuracy before and after.
//
// Usage: go run ./examples/finetune_keras_model model.h5 digits.csv  (exit status 0 when > 90%)
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

func main() {
	model, digits := os.Args[1], os.Args[2]
	f := check(os.Open(digits))
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
		if i%5 == 4 { // every fifth digit tests, as the model file's script left them out
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
	xTrain := check(K.FromFloat32(xtr, ntr, 64))
	yTrain := check(K.FromFloat32(ytr, ntr, 10))
	xTest := check(K.FromFloat32(xte, nte, 64))
	yTest := check(K.FromFloat32(yte, nte, 10))
	m := check(K.LoadModel(model, true))
	defer m.Close()
	fmt.Print(check(m.Summary()))
	quiet := K.EvaluateOptions{BatchSize: 128, Verbose: 0}
	before := check(m.EvaluateWith([]*K.Tensor{xTest}, []*K.Tensor{yTest}, quiet))[1]
	o := K.DefaultFitOptions()
	o.Epochs, o.Seed, o.ValidationSplit = 5, 1, 0.1
	history := check(m.FitWith([]*K.Tensor{xTrain}, []*K.Tensor{yTrain}, o, nil))
	fmt.Printf("validation loss by epoch: %.4f\n", history["val_loss"])
	after := check(m.EvaluateWith([]*K.Tensor{xTest}, []*K.Tensor{yTest}, quiet))[1]
	fmt.Printf("test accuracy: %.2f%% before fine-tuning, %.2f%% after (%d test digits)\n",
		100*before, 100*after, nte)
	if after < 0.9 {
		os.Exit(1)
	}
}
