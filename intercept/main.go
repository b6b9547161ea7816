//go:build cgo

package main

// The recording shim is C (see the *.c files beside this one): CUPTI calls
// it from inside every CUDA call, where a call into Go would cost too much
// and where a forked child's Go runtime could hang. This file only makes the
// package a cgo program so that `go build -buildmode=c-shared` links the C
// into libstreamcheck.so; no Go code runs per call.

/*
#cgo CFLAGS: -O2 -Wall -Wextra -Wno-unused-parameter -fvisibility=hidden -std=gnu11
#cgo LDFLAGS: -ldl -lpthread
*/
import "C"
