//go:build cgo

package cudart

// ExitRunsDestructors reports whether Exit runs the destructors of loaded
// shared libraries (the recording shim's among them). It does in a cgo
// build, which starts through the C library's start-up code; that registers
// the dynamic loader's finalizer, which exit() then calls.
const ExitRunsDestructors = true
