package cudart

import (
	"os"
	"sync"

	"github.com/ebitengine/purego"
)

var libcExit = sync.OnceValue(func() uintptr {
	for _, name := range []string{"libc.so.6", "libc.so"} {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			continue
		}
		if fn, err := purego.Dlsym(h, "exit"); err == nil && fn != 0 {
			return fn
		}
	}
	return 0
})

// Exit ends the process with the given code through the C library's exit,
// so that atexit handlers run and, in a cgo build (ExitRunsDestructors),
// the destructors of loaded libraries, as when a C program returns from
// main. Go's os.Exit skips them, and the recording shim finishes its trace
// (the End record) in a destructor: a Go program recorded by the shim must
// leave through Exit, or its trace reads as truncated. Without a C library
// to call, Exit is os.Exit. Flush buffered output first; Exit does not
// return.
func Exit(code int) {
	if fn := libcExit(); fn != 0 {
		purego.SyscallN(fn, uintptr(int32(code)))
	}
	os.Exit(code)
}
