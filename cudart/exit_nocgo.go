//go:build !cgo

package cudart

// ExitRunsDestructors reports whether Exit runs the destructors of loaded
// shared libraries (the recording shim's among them). A build without cgo
// starts at Go's own entry point, so the dynamic loader's finalizer is never
// registered: exit() runs atexit handlers, but no library destructor, and a
// trace recorded in such a process lacks its End record.
const ExitRunsDestructors = false
