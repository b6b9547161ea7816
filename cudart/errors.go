package cudart

import "fmt"

// Result is a CUresult, the status every driver API call returns.
type Result int32

// Results streamcheck tests for or is likely to meet. The values are the
// driver API's (cuda.h); names for the others come from cuGetErrorName.
const (
	Success                    Result = 0
	ErrorInvalidValue          Result = 1
	ErrorOutOfMemory           Result = 2
	ErrorNotInitialized        Result = 3
	ErrorDeinitialized         Result = 4
	ErrorStubLibrary           Result = 34
	ErrorDeviceUnavailable     Result = 46
	ErrorNoDevice              Result = 100
	ErrorInvalidDevice         Result = 101
	ErrorInvalidImage          Result = 200
	ErrorInvalidContext        Result = 201
	ErrorNoBinaryForGPU        Result = 209
	ErrorInvalidPTX            Result = 218
	ErrorUnsupportedPTXVersion Result = 222
	ErrorInvalidHandle         Result = 400
	ErrorNotFound              Result = 500
	ErrorNotReady              Result = 600
	ErrorIllegalAddress        Result = 700
	ErrorLaunchOutOfResources  Result = 701
	ErrorLaunchFailed          Result = 719
	ErrorNotSupported          Result = 801
	ErrorSystemDriverMismatch  Result = 803
	ErrorUnknown               Result = 999
)

var resultNames = map[Result]string{
	Success:                    "CUDA_SUCCESS",
	ErrorInvalidValue:          "CUDA_ERROR_INVALID_VALUE",
	ErrorOutOfMemory:           "CUDA_ERROR_OUT_OF_MEMORY",
	ErrorNotInitialized:        "CUDA_ERROR_NOT_INITIALIZED",
	ErrorDeinitialized:         "CUDA_ERROR_DEINITIALIZED",
	ErrorStubLibrary:           "CUDA_ERROR_STUB_LIBRARY",
	ErrorDeviceUnavailable:     "CUDA_ERROR_DEVICE_UNAVAILABLE",
	ErrorNoDevice:              "CUDA_ERROR_NO_DEVICE",
	ErrorInvalidDevice:         "CUDA_ERROR_INVALID_DEVICE",
	ErrorInvalidImage:          "CUDA_ERROR_INVALID_IMAGE",
	ErrorInvalidContext:        "CUDA_ERROR_INVALID_CONTEXT",
	ErrorNoBinaryForGPU:        "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrorInvalidPTX:            "CUDA_ERROR_INVALID_PTX",
	ErrorUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrorInvalidHandle:         "CUDA_ERROR_INVALID_HANDLE",
	ErrorNotFound:              "CUDA_ERROR_NOT_FOUND",
	ErrorNotReady:              "CUDA_ERROR_NOT_READY",
	ErrorIllegalAddress:        "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrorLaunchOutOfResources:  "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrorLaunchFailed:          "CUDA_ERROR_LAUNCH_FAILED",
	ErrorNotSupported:          "CUDA_ERROR_NOT_SUPPORTED",
	ErrorSystemDriverMismatch:  "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	ErrorUnknown:               "CUDA_ERROR_UNKNOWN",
}

// Name returns the CUDA name of r ("CUDA_ERROR_NO_DEVICE") from a built-in
// table, or "CUresult(N)" for a value not in it. Driver.ErrorName asks the
// driver, which knows every value.
func (r Result) Name() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", int32(r))
}

// Error makes a Result usable as an error value and errors.Is target.
func (r Result) Error() string { return fmt.Sprintf("%s (%d)", r.Name(), int32(r)) }

// Error is a failed driver API call.
type Error struct {
	Op   string // The function called: "cuMemAllocAsync".
	Code Result
	Name string // The driver's name for Code, or Code.Name() when it gave none.
}

func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = e.Code.Name()
	}
	return fmt.Sprintf("%s: %s (%d)", e.Op, name, int32(e.Code))
}

// Unwrap returns the Result, for errors.Is(err, cudart.ErrorNotReady).
func (e *Error) Unwrap() error { return e.Code }
