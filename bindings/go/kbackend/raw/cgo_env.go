//go:build kbackend_no_pkgconfig

package raw

// Without pkg-config (go build -tags kbackend_no_pkgconfig) the flags come from the environment,
// e.g. CGO_CXXFLAGS=-I/path/to/include CGO_LDFLAGS="-L/path/to/lib -lkbackend".

// #cgo CXXFLAGS: -std=c++17
import "C"
