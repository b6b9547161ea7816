package cudart

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cuptiSearch mirrors the recording shim's search (intercept/).
var cuptiSearch = search{
	lib:   "libcupti",
	env:   EnvCUPTI,
	names: []string{"libcupti.so", "libcupti.so.13", "libcupti.so.12"},
	dirs: []string{
		"$CUDA_HOME/lib64",
		"$CUDA_PATH/lib64",
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/extras/CUPTI/lib64",
	},
	sentinel: ErrNoCUPTI,
}

// CUPTI is the CUPTI library the recording shim would use.
type CUPTI struct {
	Path string // The file it was loaded from.

	getVersion uintptr // cuptiGetVersion
}

// FindCUPTI finds and opens libcupti, only to report it: it subscribes to
// nothing. The error matches ErrNoCUPTI when none was found.
func FindCUPTI() (*CUPTI, error) { return findCUPTI(os.Getenv) }

func findCUPTI(getenv func(string) string) (*CUPTI, error) {
	c := &CUPTI{}
	lib, err := cuptiSearch.open(getenv, func(h uintptr) error {
		return symbols(h, map[string]*uintptr{"cuptiGetVersion": &c.getVersion})
	})
	if err != nil {
		return nil, err
	}
	c.Path = lib.path
	return c, nil
}

// Version returns cuptiGetVersion: the CUPTI API version, not the CUDA
// version.
func (c *CUPTI) Version() (uint32, error) {
	var v uint32
	r1, _, _ := purego.SyscallN(c.getVersion, uintptr(unsafe.Pointer(&v)))
	if r := int32(uint32(r1)); r != 0 {
		return 0, fmt.Errorf("cuptiGetVersion: CUptiResult %d", r)
	}
	return v, nil
}
