package launch

import (
	"fmt"
	"strings"
)

// The recording backends of the shim (STREAMCHECK_BACKEND):
//
//   - "interpose" (the default): the shim stands in for the driver's entry
//     points that it records (direct calls, cuGetProcAddress, dlsym on
//     libcuda) and records around each call, leaving CUPTI to the
//     profilers. It needs the shim preloaded, so Env is asked to preload
//     it. It costs less than CUPTI's callbacks (bench/README.md).
//   - "cupti": the shim subscribes to CUPTI's driver callbacks. It records
//     whether the shim is injected or preloaded, and holds CUPTI's one
//     subscriber slot, so no profiler (compute-sanitizer, ncu, Nsight
//     Systems) can run beside it.
const (
	BackendCUPTI     = "cupti"
	BackendInterpose = "interpose"
	// DefaultBackend is the backend used when neither --backend nor
	// STREAMCHECK_BACKEND names one.
	DefaultBackend = BackendInterpose
	// BackendVar is the shim's environment variable that names the backend.
	BackendVar = "STREAMCHECK_BACKEND"
)

// Backend returns the backend to record with: flag if set, else
// STREAMCHECK_BACKEND in env, else DefaultBackend; and, in words, why.
func Backend(flag string, env []string) (backend, why string, err error) {
	backend, why = flag, "--backend"
	if backend == "" {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, BackendVar+"="); ok && v != "" {
				backend, why = v, BackendVar
			}
		}
	}
	if backend == "" {
		return DefaultBackend, "the default", nil
	}
	if backend != BackendCUPTI && backend != BackendInterpose {
		return "", "", fmt.Errorf("%s %q: the backend is interpose or cupti", why, backend)
	}
	return backend, why, nil
}

// NeedsPreload reports whether backend records only with the shim
// preloaded (LD_PRELOAD).
func NeedsPreload(backend string) bool { return backend == BackendInterpose }

// WithBackend returns env with STREAMCHECK_BACKEND=backend in place of any
// earlier setting.
func WithBackend(env []string, backend string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, BackendVar+"=") {
			out = append(out, kv)
		}
	}
	return append(out, BackendVar+"="+backend)
}
