package cudart

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
)

// EnvLibNCCL names libnccl (a file or a directory) for doctor, searched first.
const EnvLibNCCL = "STREAMCHECK_LIBNCCL"

// ErrNoNCCL is the error of LoadNCCL when no libnccl was found.
var ErrNoNCCL = errors.New("no NCCL found")

var ncclSearch = search{
	lib:      "libnccl",
	env:      EnvLibNCCL,
	names:    []string{"libnccl.so.2", "libnccl.so"},
	dirs:     []string{"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"},
	sentinel: ErrNoNCCL,
}

// NCCL is a loaded NCCL library. streamcheck only reports it: programs
// load their own, whose calls the shim records.
type NCCL struct {
	Path string // The file it was loaded from.

	getVersion uintptr // ncclGetVersion
}

// LoadNCCL finds and opens libnccl. The error matches ErrNoNCCL when none
// was found.
func LoadNCCL() (*NCCL, error) {
	n := &NCCL{}
	lib, err := ncclSearch.open(os.Getenv, func(h uintptr) error {
		return symbols(h, map[string]*uintptr{"ncclGetVersion": &n.getVersion})
	})
	if err != nil {
		return nil, err
	}
	n.Path = lib.path
	return n, nil
}

// Version returns NCCL's version code (NCCL_VERSION_CODE: 22703 for 2.27.3).
func (n *NCCL) Version() (int, error) {
	var v int32
	r1, _, _ := purego.SyscallN(n.getVersion, uintptr(unsafe.Pointer(&v)))
	if r := int32(uint32(r1)); r != 0 {
		return 0, fmt.Errorf("ncclGetVersion: ncclResult %d", r)
	}
	return int(v), nil
}

// FormatNCCLVersion writes an NCCL version code as "2.27.3": X*10000 +
// Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
func FormatNCCLVersion(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}
