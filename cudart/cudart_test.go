package cudart

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func fakeEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadNoDriverInEmptyDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvLibCUDA, dir)
	d, err := Load()
	if d != nil || err == nil {
		t.Fatalf("Load() = %v, %v; want ErrNoDriver", d, err)
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("Load() error %v does not match ErrNoDriver", err)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load() error %T is not a *LoadError", err)
	}
	want := []string{filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "libcuda.so")}
	var got []string
	for _, a := range le.Tried {
		got = append(got, a.Path)
		if a.Err == nil {
			t.Errorf("attempt %s has no error", a.Path)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("tried %v, want only %v (STREAMCHECK_LIBCUDA is the only place searched)", got, want)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "no CUDA driver found (libcuda; tried ") || !strings.Contains(msg, want[0]) {
		t.Errorf("message %q", msg)
	}
}

func TestLoadNotALibrary(t *testing.T) {
	f := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(f, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := loadDriver(fakeEnv(map[string]string{EnvLibCUDA: f}))
	if d != nil || !errors.Is(err, ErrNoDriver) {
		t.Fatalf("loadDriver = %v, %v; want ErrNoDriver", d, err)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Tried) != 1 || le.Tried[0].Path != f || le.Tried[0].Err == nil {
		t.Fatalf("tried %+v, want one failed attempt at %s", le, f)
	}
	// The message says why the file was refused, not only that it was tried.
	if msg := err.Error(); !strings.Contains(msg, "; "+le.Tried[0].Err.Error()) && !strings.Contains(msg, "; "+f+": ") {
		t.Errorf("message %q does not give the reason %q", msg, le.Tried[0].Err)
	}
}

func TestLoadLibraryWithoutDriverSymbols(t *testing.T) {
	// A real shared library that is not libcuda: it opens, but lacks the
	// driver's functions, so it must be refused and not panic.
	libc := ""
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6"} {
		if _, err := os.Stat(p); err == nil {
			libc = p
			break
		}
	}
	if libc == "" {
		t.Skip("no libc.so.6 at a known path")
	}
	_, err := loadDriver(fakeEnv(map[string]string{EnvLibCUDA: libc}))
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("loadDriver(libc) error %v, want ErrNoDriver", err)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Tried) != 1 || !strings.Contains(le.Tried[0].Err.Error(), "missing symbol cu") {
		t.Fatalf("attempts %+v, want a missing-symbol error", le)
	}
}

func TestCandidates(t *testing.T) {
	envDir := t.TempDir()
	env := fakeEnv(map[string]string{
		EnvCUPTI:    envDir,
		"CUDA_HOME": "/opt/cuda",
	})
	got := cuptiSearch.candidates(env)
	want := []string{
		filepath.Join(envDir, "libcupti.so"), filepath.Join(envDir, "libcupti.so.13"), filepath.Join(envDir, "libcupti.so.12"),
		"libcupti.so", "libcupti.so.13", "libcupti.so.12",
		"/opt/cuda/lib64/libcupti.so", "/opt/cuda/lib64/libcupti.so.13", "/opt/cuda/lib64/libcupti.so.12",
		// $CUDA_PATH is unset: skipped.
		"/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.12",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12",
	}
	if !slices.Equal(got, want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}

	// A variable naming a file is tried as that file, first.
	got = runtimeSearch.candidates(fakeEnv(map[string]string{EnvLibCUDART: "/x/libcudart.so.13.0.1"}))
	if len(got) == 0 || got[0] != "/x/libcudart.so.13.0.1" || !slices.Contains(got, "libcudart.so.12") || !slices.Contains(got, "/usr/local/cuda/lib64/libcudart.so") {
		t.Errorf("runtime candidates %q", got)
	}

	// The driver search without the variable: bare names first, then
	// directories; never the toolkit's stub library.
	got = driverSearch.candidates(fakeEnv(nil))
	if got[0] != "libcuda.so.1" || got[1] != "libcuda.so" {
		t.Errorf("driver candidates start %q", got[:2])
	}
	for _, p := range got {
		if strings.Contains(p, "stubs") {
			t.Errorf("driver candidate %s is a stub", p)
		}
	}
}

func TestSearchNotFound(t *testing.T) {
	s := search{lib: "libnothing", env: "STREAMCHECK_TEST_NOTHING", names: []string{"libstreamcheck-no-such-library.so.0"}, dirs: []string{"$STREAMCHECK_TEST_UNSET/lib"}, sentinel: ErrNoCUPTI}
	lib, err := s.open(fakeEnv(nil), nil)
	if lib != nil || !errors.Is(err, ErrNoCUPTI) {
		t.Fatalf("open = %v, %v", lib, err)
	}
	var le *LoadError
	errors.As(err, &le)
	if len(le.Tried) != 1 || le.Tried[0].Path != "libstreamcheck-no-such-library.so.0" {
		t.Errorf("tried %+v", le.Tried)
	}
	if empty := (&LoadError{Lib: "libx", err: ErrNoRuntime}).Error(); empty != "no CUDA runtime found (libx: nowhere to look)" {
		t.Errorf("empty LoadError says %q", empty)
	}
}

func TestErrorFormatting(t *testing.T) {
	var err error = &Error{Op: "cuMemAllocAsync", Code: ErrorOutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY"}
	if got, want := err.Error(), "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY (2)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, ErrorOutOfMemory) || errors.Is(err, ErrorNotReady) {
		t.Errorf("errors.Is does not follow the Result")
	}
	var r Result
	if !errors.As(err, &r) || r != ErrorOutOfMemory {
		t.Errorf("errors.As(Result) = %v", r)
	}
	// Without a driver name, the table's.
	if got, want := (&Error{Op: "cuInit", Code: ErrorNoDevice}).Error(), "cuInit: CUDA_ERROR_NO_DEVICE (100)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := Result(12345).Name(), "CUresult(12345)"; got != want {
		t.Errorf("unknown Name() = %q, want %q", got, want)
	}
	if got, want := ErrorNotReady.Error(), "CUDA_ERROR_NOT_READY (600)"; got != want {
		t.Errorf("Result.Error() = %q, want %q", got, want)
	}
	var d *Driver
	if got := d.ErrorName(ErrorIllegalAddress); got != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("nil driver ErrorName = %q", got)
	}
	if d := (&Driver{}); d.check("cuX", 0) != nil {
		t.Errorf("check(0) is an error")
	} else if err := d.check("cuX", uintptr(0xffffffff00000000)|701); !errors.Is(err, ErrorLaunchOutOfResources) {
		// Only the low 32 bits of the return register are the CUresult.
		t.Errorf("check ignores high bits: got %v", err)
	}
}

func TestFormatVersion(t *testing.T) {
	for v, want := range map[int]string{13000: "13.0", 12080: "12.8", 12090: "12.9", 11020: "11.2"} {
		if got := FormatVersion(v); got != want {
			t.Errorf("FormatVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestCString(t *testing.T) {
	b := []byte("CUDA_SUCCESS\x00junk")
	if got := cString(&b[0]); got != "CUDA_SUCCESS" {
		t.Errorf("cString = %q", got)
	}
}

func TestLaunchKernelRejectsNilArgument(t *testing.T) {
	d := &Driver{}
	err := d.LaunchKernel(0, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0, unsafe.Pointer(new(uint64)), nil)
	if !errors.Is(err, ErrorInvalidValue) {
		t.Fatalf("LaunchKernel with a nil argument: %v", err)
	}
}

// gpuDriver returns an initialized driver, or skips the test.
func gpuDriver(t *testing.T) *Driver {
	t.Helper()
	d, err := Load()
	if errors.Is(err, ErrNoDriver) {
		t.Skipf("no CUDA driver: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Init(); err != nil {
		if errors.Is(err, ErrorNoDevice) || errors.Is(err, ErrorStubLibrary) {
			t.Skipf("no usable CUDA device: %v", err)
		}
		t.Fatal(err)
	}
	return d
}

func TestGPUDriverBasics(t *testing.T) {
	d := gpuDriver(t)
	v, err := d.Version()
	if err != nil || v < 11020 {
		t.Fatalf("Version() = %d, %v", v, err)
	}
	n, err := d.DeviceCount()
	if err != nil || n < 1 {
		t.Fatalf("DeviceCount() = %d, %v", n, err)
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	name, err := d.DeviceName(dev)
	if err != nil || name == "" {
		t.Fatalf("DeviceName = %q, %v", name, err)
	}
	major, err := d.DeviceAttribute(AttrComputeCapabilityMajor, dev)
	if err != nil || major < 3 {
		t.Fatalf("compute capability major = %d, %v", major, err)
	}
	t.Logf("libcuda %s: CUDA %s, %d device(s), device 0 %q sm_%d", d.Path, FormatVersion(v), n, name, major)
	if _, err := d.Device(n + 100); !errors.Is(err, ErrorInvalidDevice) {
		t.Errorf("Device(%d) error %v, want CUDA_ERROR_INVALID_DEVICE", n+100, err)
	} else if !strings.HasPrefix(err.Error(), "cuDeviceGet: CUDA_ERROR_INVALID_DEVICE (101)") {
		t.Errorf("error text %q", err)
	}
	if got := d.ErrorName(ErrorIllegalAddress); got != "CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("driver ErrorName = %q", got)
	}
}

func TestGPUFindRuntimeAndCUPTI(t *testing.T) {
	gpuDriver(t)
	if rt, err := LoadRuntime(); err != nil {
		t.Logf("runtime: %v", err)
	} else if v, err := rt.Version(); err != nil {
		t.Errorf("runtime %s: %v", rt.Path, err)
	} else {
		t.Logf("runtime %s: %s", rt.Path, FormatVersion(v))
	}
	if c, err := FindCUPTI(); err != nil {
		t.Logf("CUPTI: %v", err)
	} else if v, err := c.Version(); err != nil {
		t.Errorf("CUPTI %s: %v", c.Path, err)
	} else {
		t.Logf("CUPTI %s: API version %d", c.Path, v)
	}
}

func TestExitCode(t *testing.T) {
	if os.Getenv("STREAMCHECK_CUDART_TEST_EXIT") == "1" {
		Exit(7)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitCode$")
	cmd.Env = append(os.Environ(), "STREAMCHECK_CUDART_TEST_EXIT=1")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("child: %v, want exit status 7", err)
	}
	if libcExit() == 0 {
		t.Logf("no libc exit here: Exit fell back to os.Exit")
	}
}

func TestFormatNCCLVersion(t *testing.T) {
	for code, want := range map[int]string{22703: "2.27.3", 20905: "2.9.5", 2804: "2.8.4"} {
		if got := FormatNCCLVersion(code); got != want {
			t.Errorf("FormatNCCLVersion(%d) = %q, want %q", code, got, want)
		}
	}
}
