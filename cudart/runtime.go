package cudart

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
)

var runtimeSearch = search{
	lib:      "libcudart",
	env:      EnvLibCUDART,
	names:    []string{"libcudart.so", "libcudart.so.13", "libcudart.so.12"},
	dirs:     []string{"$CUDA_HOME/lib64", "/usr/local/cuda/lib64"},
	sentinel: ErrNoRuntime,
}

// Runtime is a loaded CUDA runtime library (libcudart). streamcheck only
// reports it: its own GPU work uses the driver API.
type Runtime struct {
	Path string // The file it was loaded from.

	getVersion uintptr // cudaRuntimeGetVersion
}

// LoadRuntime finds and opens libcudart. The error matches ErrNoRuntime
// when none was found.
func LoadRuntime() (*Runtime, error) { return loadRuntime(os.Getenv) }

func loadRuntime(getenv func(string) string) (*Runtime, error) {
	rt := &Runtime{}
	lib, err := runtimeSearch.open(getenv, func(h uintptr) error {
		return symbols(h, map[string]*uintptr{"cudaRuntimeGetVersion": &rt.getVersion})
	})
	if err != nil {
		return nil, err
	}
	rt.Path = lib.path
	return rt, nil
}

// Version returns the runtime's CUDA version as 1000*major + 10*minor.
func (rt *Runtime) Version() (int, error) {
	var v int32
	r1, _, _ := purego.SyscallN(rt.getVersion, uintptr(unsafe.Pointer(&v)))
	if r := int32(uint32(r1)); r != 0 {
		return 0, fmt.Errorf("cudaRuntimeGetVersion: cudaError %d", r)
	}
	return int(v), nil
}
