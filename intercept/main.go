//go:build cgo

// The Go runtime in the shim would otherwise keep two cgroup files open, to
// re-read the CPU limit every second: work in the traced program for
// nothing (no Go runs per call), and descriptors that take 0-2 if the
// program closed them before the driver loaded the shim.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
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
