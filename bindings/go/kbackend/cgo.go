//go:build !kbackend_no_pkgconfig

package kbackend

// Without pkg-config (go build -tags kbackend_no_pkgconfig) the flags come from the environment,
// e.g. CGO_CFLAGS=-I/path/to/include CGO_LDFLAGS="-L/path/to/lib -lkbackend".

// #cgo pkg-config: kbackend
import "C"
