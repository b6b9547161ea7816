package checker

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// runtimeModules are libraries whose frames a user cannot act on: CUDA's
// own (NCCL's too), the C library's start-up, and streamcheck's shim.
var runtimeModules = []string{"libcuda.so", "libcudart", "libcupti", "libnccl", "librccl", "libstreamcheck", "libc.so", "ld-linux"}

// pythonModule matches the file names of CPython interpreters and their
// shared library: python3.12, python3.13t, libpython3.12.so.1.0.
var pythonModule = regexp.MustCompile(`^(lib)?python\d+(\.\d+)*[a-z]*(\.so(\.[\d.]+)?)?$`)

// runtimeFrame reports whether a frame belongs to CUDA, the C runtime or
// streamcheck rather than to the program: such frames are folded away so
// that a report's call site is the user's line.
func runtimeFrame(f Frame) bool {
	mod := filepath.Base(f.Module)
	for _, p := range runtimeModules {
		if strings.HasPrefix(mod, p) {
			return true
		}
	}
	if strings.Contains(f.Module, "/site-packages/nvidia/") || strings.HasPrefix(f.File, "/usr/local/cuda") {
		return true
	}
	// The Python interpreter's own frames (the eval loop, call helpers) say
	// nothing about the script; the process line of a report names it.
	if pythonModule.MatchString(mod) {
		return true
	}
	fn := f.Func
	switch {
	case strings.HasPrefix(fn, "libcudart_static_"), strings.HasPrefix(fn, "__cuda"),
		strings.HasPrefix(fn, "__device_stub_"), fn == "_start", strings.HasPrefix(fn, "__libc_start"):
		return true
	}
	// The runtime API linked statically into the program (nvcc's default):
	// cudaMallocAsync and friends, without debug information.
	return f.File == "" && isCUDAEntryPoint(fn)
}

// isCUDAEntryPoint reports whether fn is named like a CUDA runtime or driver
// API function: "cuda" or "cu" followed by an upper-case letter.
func isCUDAEntryPoint(fn string) bool {
	for _, p := range []string{"cuda", "cu"} {
		if rest, ok := strings.CutPrefix(fn, p); ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z' {
			return true
		}
	}
	return false
}

// userFrames returns the frames that are the program's own, and how many
// were folded away. When every frame is the runtime's, all are kept.
func userFrames(frames []Frame) ([]Frame, int) {
	// A finding keeps its frames until the report is written: allocate
	// exactly what is kept, never frames itself (it may be scratch).
	n := 0
	for _, f := range frames {
		if !runtimeFrame(f) {
			n++
		}
	}
	if n == 0 {
		return slices.Clone(frames), 0
	}
	user := make([]Frame, 0, n)
	for _, f := range frames {
		if !runtimeFrame(f) {
			user = append(user, f)
		}
	}
	return user, len(frames) - n
}

// dropLaunchStub drops the innermost frames of a launch that are the
// host-side stub nvcc generates for the kernel (a function named like the
// kernel, often inlined at the <<<>>> line), so the launch's site is the
// line with the <<<>>>.
func dropLaunchStub(frames []Frame, kernel string, folded int) ([]Frame, int) {
	if kernel == "" {
		return frames, folded
	}
	n := 0
	for n < len(frames)-1 && (frames[n].Func == kernel || strings.HasSuffix(frames[n].Func, "::"+kernel)) {
		n++
	}
	return frames[n:], folded + n
}

// isDriverAPI reports whether api names a driver API function
// (cuMemAllocAsync), as opposed to a runtime one (cudaMallocAsync).
func isDriverAPI(api string) bool {
	return isCUDAEntryPoint(api) && !strings.HasPrefix(api, "cuda")
}

// runtimeSuffix matches the variant suffixes of runtime entry points:
// per-thread default stream builds (_ptsz, _ptds) and versions (_v11020).
var runtimeSuffix = regexp.MustCompile(`(_ptsz|_ptds|_v[0-9]+)+$`)

// runtimeAPI returns the runtime API function a call went through: the
// innermost frame named like one ("cudaMallocAsync", or CUDA 13's
// "__cudaLaunchKernel" behind <<<>>>), or "" when the stack has none (a
// program using the driver API directly, or no stack).
func runtimeAPI(frames []Frame) string {
	for _, f := range frames {
		name := strings.TrimPrefix(f.Func, "__")
		if !strings.HasPrefix(name, "cuda") || !isCUDAEntryPoint(name) {
			continue
		}
		if i := strings.IndexAny(name, "<( "); i >= 0 {
			name = name[:i] // A C++ wrapper template: cudaMallocAsync<float>.
		}
		return runtimeSuffix.ReplaceAllString(name, "")
	}
	return ""
}
