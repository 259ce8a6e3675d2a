// A Go program outside the project: y = x * 2 + 1 through the module kbackend.dev/kbackend, with
// the library found by `#cgo pkg-config: kbackend` (no CGO_ flags), run on [1, 2, 3]. Prints OK
// on success.
package main

import (
	"fmt"
	"math"
	"os"

	K "kbackend.dev/kbackend"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer_go:", err)
		os.Exit(1)
	}
}

func run() error {
	x, err := K.Placeholder([]int64{-1}, K.Float32, "x")
	if err != nil {
		return err
	}
	y, err := x.MulScalar(2)
	if err != nil {
		return err
	}
	if y, err = y.AddScalar(1); err != nil {
		return err
	}
	f, err := K.NewFunction([]*K.Tensor{x}, []*K.Tensor{y}, nil)
	if err != nil {
		return err
	}
	in, err := K.FromFloat32([]float32{1, 2, 3}, 3)
	if err != nil {
		return err
	}
	out, err := f.Call(in)
	if err != nil {
		return err
	}
	got, err := out[0].Float32s()
	if err != nil {
		return err
	}
	for i, want := range []float32{3, 5, 7} {
		if len(got) != 3 || math.Abs(float64(got[i]-want)) > 1e-6 {
			return fmt.Errorf("wrong result %v", got)
		}
	}
	fmt.Printf("OK (kbackend %s, Go)\n", K.Version())
	return nil
}
