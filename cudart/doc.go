// Package cudart binds the few parts of the CUDA driver API, the CUDA
// runtime and CUPTI that streamcheck itself needs, loading the libraries at
// run time with purego (no cgo, no CUDA at build time).
//
// Three libraries are looked for, each independently:
//
//   - libcuda (the driver API), loaded by Load. streamcheck's own GPU work
//     (the doctor's self-test) uses only the driver API, so it needs no
//     CUDA runtime. STREAMCHECK_LIBCUDA, when set, is the only place
//     searched: a file, or a directory holding libcuda.so.1 or libcuda.so.
//     Otherwise the dynamic linker's search for libcuda.so.1 and
//     libcuda.so comes first, then the usual driver directories.
//   - libcudart (the CUDA runtime), loaded by LoadRuntime, only to report
//     where it is and its version: STREAMCHECK_LIBCUDART, then libcudart.so,
//     libcudart.so.13 and libcudart.so.12 through the dynamic linker, then
//     $CUDA_HOME/lib64 and /usr/local/cuda/lib64.
//   - libcupti, located by FindCUPTI the same way the recording shim
//     (intercept/) finds it, only to report its path and cuptiGetVersion:
//     STREAMCHECK_CUPTI, then libcupti.so, libcupti.so.13, libcupti.so.12
//     through the dynamic linker, then $CUDA_HOME/lib64, $CUDA_PATH/lib64,
//     /usr/local/cuda/lib64 and /usr/local/cuda/extras/CUPTI/lib64.
//
// A library that is not found gives an error matching ErrNoDriver,
// ErrNoRuntime or ErrNoCUPTI (errors.Is); a *LoadError lists what was tried.
// A failing CUDA call gives an *Error that names the call and the CUDA
// error (for instance "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY (2)") and
// unwraps to its Result, so errors.Is(err, cudart.ErrorNotReady) works.
//
// The driver keeps the current context per OS thread. A goroutine that sets
// a context (Driver.SetCurrent) and then makes calls that need one must
// hold its thread with runtime.LockOSThread for the whole sequence.
package cudart
