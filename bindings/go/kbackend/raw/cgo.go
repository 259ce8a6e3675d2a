//go:build !kbackend_no_pkgconfig

// Package raw is the SWIG-generated layer under package kbackend (raw.go and raw_wrap.cxx are
// generated from bindings/swig/kbackend.i by the CMake build). Use package kbackend instead: raw
// functions report failures only through Last_error_code on the same OS thread.
package raw

// #cgo pkg-config: kbackend
// #cgo CXXFLAGS: -std=c++17
import "C"
