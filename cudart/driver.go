package cudart

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Driver API handle types. They are the driver's opaque values; the zero
// value is no handle (except Stream, where 0 is the legacy default stream).
type (
	Device    int32   // CUdevice: an ordinal-derived handle from Driver.Device.
	Context   uintptr // CUcontext.
	Module    uintptr // CUmodule.
	Function  uintptr // CUfunction.
	Stream    uintptr // CUstream.
	Event     uintptr // CUevent.
	DevicePtr uint64  // CUdeviceptr.
)

// Special stream handles.
const (
	StreamLegacy    Stream = 0x1 // CU_STREAM_LEGACY.
	StreamPerThread Stream = 0x2 // CU_STREAM_PER_THREAD.
)

// StreamFlags for Driver.StreamCreate.
type StreamFlags uint32

const (
	StreamDefault     StreamFlags = 0 // Synchronizes with the legacy default stream.
	StreamNonBlocking StreamFlags = 1 // Does not synchronize with the legacy default stream.
)

// EventFlags for Driver.EventCreate.
type EventFlags uint32

const (
	EventDefault       EventFlags = 0
	EventBlockingSync  EventFlags = 1
	EventDisableTiming EventFlags = 2
)

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

const (
	AttrComputeCapabilityMajor DeviceAttribute = 75
	AttrComputeCapabilityMinor DeviceAttribute = 76
	AttrMemoryPoolsSupported   DeviceAttribute = 115
)

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z uint32 }

// driverSearch is where libcuda is looked for. The CUDA toolkit's stub
// library (lib64/stubs) is never on the list: it only fails.
var driverSearch = search{
	lib:     "libcuda",
	env:     EnvLibCUDA,
	envOnly: true,
	names:   []string{"libcuda.so.1", "libcuda.so"},
	dirs: []string{
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib64",
		"/usr/local/nvidia/lib64",
		"/usr/lib/wsl/lib",
	},
	sentinel: ErrNoDriver,
}

// Driver is the loaded CUDA driver API (libcuda). Its methods are safe to
// call from several goroutines, but the current context is per OS thread:
// see the package documentation.
type Driver struct {
	// Path is the file libcuda was loaded from.
	Path string

	handle uintptr
	fn     driverFuncs
}

type driverFuncs struct {
	cuInit, cuDriverGetVersion, cuDeviceGet, cuDeviceGetCount, cuDeviceGetName        uintptr
	cuDevicePrimaryCtxRetain, cuCtxSetCurrent, cuCtxSynchronize                       uintptr
	cuModuleLoadData, cuModuleGetFunction                                             uintptr
	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize                              uintptr
	cuEventCreate, cuEventRecord, cuStreamWaitEvent, cuEventDestroy                   uintptr
	cuMemAllocAsync, cuMemFreeAsync, cuLaunchKernel, cuGetErrorName                   uintptr
	cuDeviceGetAttribute, cuDeviceTotalMem, cuDevicePrimaryCtxRelease, cuModuleUnload uintptr // Optional.
}

func (f *driverFuncs) required() map[string]*uintptr {
	return map[string]*uintptr{
		"cuInit":                   &f.cuInit,
		"cuDriverGetVersion":       &f.cuDriverGetVersion,
		"cuDeviceGet":              &f.cuDeviceGet,
		"cuDeviceGetCount":         &f.cuDeviceGetCount,
		"cuDeviceGetName":          &f.cuDeviceGetName,
		"cuDevicePrimaryCtxRetain": &f.cuDevicePrimaryCtxRetain,
		"cuCtxSetCurrent":          &f.cuCtxSetCurrent,
		"cuCtxSynchronize":         &f.cuCtxSynchronize,
		"cuModuleLoadData":         &f.cuModuleLoadData,
		"cuModuleGetFunction":      &f.cuModuleGetFunction,
		"cuStreamCreate":           &f.cuStreamCreate,
		"cuStreamDestroy_v2":       &f.cuStreamDestroy,
		"cuStreamSynchronize":      &f.cuStreamSynchronize,
		"cuEventCreate":            &f.cuEventCreate,
		"cuEventRecord":            &f.cuEventRecord,
		"cuStreamWaitEvent":        &f.cuStreamWaitEvent,
		"cuEventDestroy_v2":        &f.cuEventDestroy,
		"cuMemAllocAsync":          &f.cuMemAllocAsync,
		"cuMemFreeAsync":           &f.cuMemFreeAsync,
		"cuLaunchKernel":           &f.cuLaunchKernel,
		"cuGetErrorName":           &f.cuGetErrorName,
	}
}

// Load finds and opens libcuda and resolves the functions this package
// binds. It does not initialize the driver: call Init. The error matches
// ErrNoDriver when no usable libcuda was found.
func Load() (*Driver, error) {
	return loadDriver(os.Getenv)
}

func loadDriver(getenv func(string) string) (*Driver, error) {
	d := &Driver{}
	lib, err := driverSearch.open(getenv, func(h uintptr) error {
		return symbols(h, d.fn.required())
	})
	if err != nil {
		return nil, err
	}
	d.Path, d.handle = lib.path, lib.handle
	d.fn.cuDeviceGetAttribute = optionalSymbol(lib.handle, "cuDeviceGetAttribute")
	d.fn.cuDeviceTotalMem = optionalSymbol(lib.handle, "cuDeviceTotalMem_v2")
	d.fn.cuDevicePrimaryCtxRelease = optionalSymbol(lib.handle, "cuDevicePrimaryCtxRelease_v2")
	d.fn.cuModuleUnload = optionalSymbol(lib.handle, "cuModuleUnload")
	return d, nil
}

// check turns a driver function's return value into an *Error. Callers
// convert pointer arguments to uintptr inside the purego.SyscallN call
// expression itself: SyscallN is go:uintptrescapes, which keeps what they
// point to on the heap and alive for the call.
func (d *Driver) check(op string, r1 uintptr) error {
	r := Result(int32(uint32(r1)))
	if r == Success {
		return nil
	}
	return &Error{Op: op, Code: r, Name: d.ErrorName(r)}
}

// ErrNotExported is the error of a call to an optional driver function
// this libcuda does not export (an older driver).
var ErrNotExported = errors.New("symbol not exported by this libcuda")

func unsupported(op string) error { return fmt.Errorf("%s: %w", op, ErrNotExported) }

// ErrorName returns the driver's name for r (cuGetErrorName), falling back
// to r.Name() when the driver does not know it.
func (d *Driver) ErrorName(r Result) string {
	if d == nil || d.fn.cuGetErrorName == 0 {
		return r.Name()
	}
	var p *byte
	r1, _, _ := purego.SyscallN(d.fn.cuGetErrorName, uintptr(uint32(r)), uintptr(unsafe.Pointer(&p)))
	if Result(int32(uint32(r1))) != Success || p == nil {
		return r.Name()
	}
	return cString(p)
}

// cString copies a NUL-terminated C string that the driver owns.
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// Init initializes the driver (cuInit(0)). Under the recording shim this is
// where the driver loads CUDA_INJECTION64_PATH.
func (d *Driver) Init() error {
	r1, _, _ := purego.SyscallN(d.fn.cuInit, 0)
	return d.check("cuInit", r1)
}

// Version returns the CUDA version the driver supports, as 1000*major +
// 10*minor (13000 for CUDA 13.0).
func (d *Driver) Version() (int, error) {
	var v int32
	r1, _, _ := purego.SyscallN(d.fn.cuDriverGetVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), d.check("cuDriverGetVersion", r1)
}

// FormatVersion turns a CUDA version number (13000) into "13.0".
func FormatVersion(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// DeviceCount returns the number of CUDA devices.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	r1, _, _ := purego.SyscallN(d.fn.cuDeviceGetCount, uintptr(unsafe.Pointer(&n)))
	return int(n), d.check("cuDeviceGetCount", r1)
}

// Device returns the handle of the device with the given ordinal.
func (d *Driver) Device(ordinal int) (Device, error) {
	var dev int32
	r1, _, _ := purego.SyscallN(d.fn.cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(int32(ordinal)))
	return Device(dev), d.check("cuDeviceGet", r1)
}

// DeviceName returns the device's product name.
func (d *Driver) DeviceName(dev Device) (string, error) {
	buf := make([]byte, 256)
	r1, _, _ := purego.SyscallN(d.fn.cuDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(int32(dev)))
	if err := d.check("cuDeviceGetName", r1); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf), nil
}

// DeviceAttribute returns one attribute of a device.
func (d *Driver) DeviceAttribute(attr DeviceAttribute, dev Device) (int, error) {
	if d.fn.cuDeviceGetAttribute == 0 {
		return 0, unsupported("cuDeviceGetAttribute")
	}
	var v int32
	r1, _, _ := purego.SyscallN(d.fn.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(int32(attr)), uintptr(int32(dev)))
	return int(v), d.check("cuDeviceGetAttribute", r1)
}

// DeviceTotalMem returns the device's memory in bytes.
func (d *Driver) DeviceTotalMem(dev Device) (uint64, error) {
	if d.fn.cuDeviceTotalMem == 0 {
		return 0, unsupported("cuDeviceTotalMem_v2")
	}
	var v uint64
	r1, _, _ := purego.SyscallN(d.fn.cuDeviceTotalMem, uintptr(unsafe.Pointer(&v)), uintptr(int32(dev)))
	return v, d.check("cuDeviceTotalMem_v2", r1)
}

// PrimaryCtxRetain retains the device's primary context.
func (d *Driver) PrimaryCtxRetain(dev Device) (Context, error) {
	var c uintptr
	r1, _, _ := purego.SyscallN(d.fn.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(int32(dev)))
	return Context(c), d.check("cuDevicePrimaryCtxRetain", r1)
}

// PrimaryCtxRelease releases a reference taken by PrimaryCtxRetain.
func (d *Driver) PrimaryCtxRelease(dev Device) error {
	if d.fn.cuDevicePrimaryCtxRelease == 0 {
		return unsupported("cuDevicePrimaryCtxRelease_v2")
	}
	r1, _, _ := purego.SyscallN(d.fn.cuDevicePrimaryCtxRelease, uintptr(int32(dev)))
	return d.check("cuDevicePrimaryCtxRelease_v2", r1)
}

// SetCurrent binds ctx to the calling OS thread (lock it first with
// runtime.LockOSThread).
func (d *Driver) SetCurrent(ctx Context) error {
	r1, _, _ := purego.SyscallN(d.fn.cuCtxSetCurrent, uintptr(ctx))
	return d.check("cuCtxSetCurrent", r1)
}

// CtxSynchronize waits for all work in the current context. Its error is
// the first asynchronous error of that work, if any (a kernel fault).
func (d *Driver) CtxSynchronize() error {
	r1, _, _ := purego.SyscallN(d.fn.cuCtxSynchronize)
	return d.check("cuCtxSynchronize", r1)
}

// ModuleLoadData loads a module from an image in memory: PTX text, a cubin
// or a fatbin. PTX is JIT-compiled for the current context's device.
func (d *Driver) ModuleLoadData(image []byte) (Module, error) {
	img := image
	if len(img) == 0 || img[len(img)-1] != 0 {
		// PTX is read as a C string.
		img = append(append(make([]byte, 0, len(image)+1), image...), 0)
	}
	var m uintptr
	r1, _, _ := purego.SyscallN(d.fn.cuModuleLoadData, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&img[0])))
	runtime.KeepAlive(img)
	return Module(m), d.check("cuModuleLoadData", r1)
}

// ModuleUnload unloads a module.
func (d *Driver) ModuleUnload(m Module) error {
	if d.fn.cuModuleUnload == 0 {
		return unsupported("cuModuleUnload")
	}
	r1, _, _ := purego.SyscallN(d.fn.cuModuleUnload, uintptr(m))
	return d.check("cuModuleUnload", r1)
}

// ModuleGetFunction returns the kernel named name (its .entry name).
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	cname := append([]byte(name), 0)
	var f uintptr
	r1, _, _ := purego.SyscallN(d.fn.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0])))
	runtime.KeepAlive(cname)
	return Function(f), d.check("cuModuleGetFunction", r1)
}

// StreamCreate creates a stream.
func (d *Driver) StreamCreate(flags StreamFlags) (Stream, error) {
	var s uintptr
	r1, _, _ := purego.SyscallN(d.fn.cuStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags))
	return Stream(s), d.check("cuStreamCreate", r1)
}

// StreamDestroy destroys a stream (cuStreamDestroy_v2).
func (d *Driver) StreamDestroy(s Stream) error {
	r1, _, _ := purego.SyscallN(d.fn.cuStreamDestroy, uintptr(s))
	return d.check("cuStreamDestroy_v2", r1)
}

// StreamSynchronize waits for the work issued to s so far.
func (d *Driver) StreamSynchronize(s Stream) error {
	r1, _, _ := purego.SyscallN(d.fn.cuStreamSynchronize, uintptr(s))
	return d.check("cuStreamSynchronize", r1)
}

// EventCreate creates an event.
func (d *Driver) EventCreate(flags EventFlags) (Event, error) {
	var e uintptr
	r1, _, _ := purego.SyscallN(d.fn.cuEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags))
	return Event(e), d.check("cuEventCreate", r1)
}

// EventRecord captures the work issued to s so far in e.
func (d *Driver) EventRecord(e Event, s Stream) error {
	r1, _, _ := purego.SyscallN(d.fn.cuEventRecord, uintptr(e), uintptr(s))
	return d.check("cuEventRecord", r1)
}

// StreamWaitEvent makes later work on s wait for e's last record.
func (d *Driver) StreamWaitEvent(s Stream, e Event) error {
	r1, _, _ := purego.SyscallN(d.fn.cuStreamWaitEvent, uintptr(s), uintptr(e), 0)
	return d.check("cuStreamWaitEvent", r1)
}

// EventDestroy destroys an event (cuEventDestroy_v2).
func (d *Driver) EventDestroy(e Event) error {
	r1, _, _ := purego.SyscallN(d.fn.cuEventDestroy, uintptr(e))
	return d.check("cuEventDestroy_v2", r1)
}

// MemAllocAsync allocates size bytes from the device's default memory pool,
// in the order of stream s.
func (d *Driver) MemAllocAsync(size uint64, s Stream) (DevicePtr, error) {
	var p uint64
	r1, _, _ := purego.SyscallN(d.fn.cuMemAllocAsync, uintptr(unsafe.Pointer(&p)), uintptr(size), uintptr(s))
	return DevicePtr(p), d.check("cuMemAllocAsync", r1)
}

// MemFreeAsync frees p in the order of stream s.
func (d *Driver) MemFreeAsync(p DevicePtr, s Stream) error {
	r1, _, _ := purego.SyscallN(d.fn.cuMemFreeAsync, uintptr(p), uintptr(s))
	return d.check("cuMemFreeAsync", r1)
}

// LaunchKernel launches f on s. Each element of args points to the value
// of one kernel parameter, in order, laid out as the kernel declares it
// (for a PTX ".param .u64" a *uint64, for ".param .u32" a *uint32). The
// values and the pointer array are pinned for the call; the driver copies
// them before it returns.
func (d *Driver) LaunchKernel(f Function, grid, block Dim3, sharedMem uint32, s Stream, args ...unsafe.Pointer) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	params := make([]unsafe.Pointer, len(args)+1) // Never empty, so &params[0] is valid.
	for i, a := range args {
		if a == nil {
			return &Error{Op: "cuLaunchKernel", Code: ErrorInvalidValue, Name: fmt.Sprintf("argument %d is a nil pointer", i)}
		}
		pin.Pin(a)
		params[i] = a
	}
	pin.Pin(&params[0])
	var kp *unsafe.Pointer // kernelParams: NULL for a kernel without parameters.
	if len(args) > 0 {
		kp = &params[0]
	}
	r1, _, _ := purego.SyscallN(d.fn.cuLaunchKernel, uintptr(f),
		uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z),
		uintptr(sharedMem), uintptr(s), uintptr(unsafe.Pointer(kp)), 0)
	runtime.KeepAlive(params)
	runtime.KeepAlive(args)
	return d.check("cuLaunchKernel", r1)
}
