package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/cudart"
	"github.com/streamcheck/streamcheck/intercept/launch"
)

// doctorTestChildEnv makes this test binary act as "streamcheck doctor"
// when the doctor under test re-runs it (os.Executable) as the self-test
// program: see TestDoctorGPU.
const doctorTestChildEnv = "STREAMCHECK_DOCTOR_TEST_CHILD"

func init() {
	if os.Getenv(doctorTestChildEnv) == "1" && len(os.Args) > 2 && os.Args[1] == "doctor" {
		c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
		os.Exit(c.cmdDoctor(os.Args[2:]))
	}
}

func runDoctor(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	code = c.cmdDoctor(args)
	return code, out.String(), errb.String()
}

func TestDoctorNoDriver(t *testing.T) {
	// STREAMCHECK_LIBCUDA is the only place libcuda is looked for: an empty
	// directory makes "no driver" certain, GPU machine or not.
	t.Setenv(cudart.EnvLibCUDA, t.TempDir())
	code, stdout, stderr := runDoctor(t)
	if code != doctorMissing || doctorMissing != 5 {
		t.Errorf("exit code %d, want %d (5)\nstdout:\n%s\nstderr:\n%s", code, doctorMissing, stdout, stderr)
	}
	var driverLine string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "driver:") {
			driverLine = line
		}
	}
	if !strings.Contains(driverLine, "no CUDA driver found") {
		t.Errorf("driver line %q does not say %q\nstdout:\n%s", driverLine, "no CUDA driver found", stdout)
	}
	for _, want := range []string{"streamcheck doctor\n", "  go:", "  runtime:", "  CUPTI:", "  shim:", "  python:", "self-test: not run"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "PASS") || strings.Contains(stdout, "FAIL") {
		t.Errorf("self-test lines without a driver:\n%s", stdout)
	}
	if !strings.HasPrefix(stderr, "streamcheck doctor: cannot run the GPU self-test: no CUDA driver found") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestDoctorUsage(t *testing.T) {
	t.Setenv(cudart.EnvLibCUDA, t.TempDir())
	code, stdout, _ := runDoctor(t, "-h")
	if code != exitOK || !strings.Contains(stdout, "usage: streamcheck doctor") || !strings.Contains(stdout, "5  no usable CUDA driver") {
		t.Errorf("-h: code %d, stdout:\n%s", code, stdout)
	}
	for _, args := range [][]string{
		{"-run", "use-before-alloc,no-such-case"},
		{"extra"},
		{"-bogus"},
		{doctorChildArg},
		{doctorChildArg, "ok-sync", "zero"},
		{"-timeout", "0s"},
	} {
		code, _, stderr := runDoctor(t, args...)
		if code != exitUsage {
			t.Errorf("doctor %q: exit code %d, want %d (stderr %q)", args, code, exitUsage, stderr)
		}
	}
	keep := t.TempDir()
	if err := os.MkdirAll(filepath.Join(keep, "ok-sync"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keep, "ok-sync", "streamcheck-1.sctrace"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runDoctor(t, "-keep", keep); code != exitUsage || stdout != "" || !strings.Contains(stderr, "already holds files") {
		t.Errorf("-keep with old traces: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr := runDoctor(t, "-run", "nope")
	if !strings.Contains(stderr, `unknown self-test "nope"`) {
		t.Errorf("-run nope: code %d, stderr %q", code, stderr)
	}
}

func TestDoctorChildWithoutDriver(t *testing.T) {
	t.Setenv(cudart.EnvLibCUDA, t.TempDir())
	saved := doctorChildExit
	doctorChildExit = nil // Return instead of ending the test binary.
	t.Cleanup(func() { doctorChildExit = saved })
	code, _, stderr := runDoctor(t, doctorChildArg, "ok-sync", "0")
	if code != doctorFailed || !strings.Contains(stderr, "no CUDA driver found") {
		t.Errorf("child without a driver: code %d, stderr %q", code, stderr)
	}
	code, _, stderr = runDoctor(t, doctorChildArg, "no-such-case", "0")
	if code != doctorFailed || !strings.Contains(stderr, `unknown self-test "no-such-case"`) {
		t.Errorf("child with an unknown case: code %d, stderr %q", code, stderr)
	}
}

// describePython tells a CPython with perf trampolines from one without, by
// asking it.
func TestDescribePython(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		answer, want string
	}{
		{"3.12.3 1", "3.12.3: reports name Python functions and their callers"},
		{"3.11.7 0", "3.11.7: no perf trampolines"},
	} {
		fake := filepath.Join(dir, "python3")
		script := "#!/bin/sh\necho " + c.answer + "\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := describePython(fake); !strings.Contains(got, c.want) {
			t.Errorf("answer %q: %q, want it to say %q", c.answer, got, c.want)
		}
	}
	if got := describePython(filepath.Join(dir, "missing")); !strings.Contains(got, "did not answer") {
		t.Errorf("missing python: %q", got)
	}
}

func TestDoctorCheckShim(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "libstreamcheck.so")
	if err := os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := doctorCheckShim(text); err == nil || !strings.Contains(err.Error(), "not a loadable library") {
		t.Errorf("text file: %v", err)
	}
	if err := doctorCheckShim(filepath.Join(dir, "missing.so")); err == nil {
		t.Errorf("missing file accepted")
	}
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"} {
		if _, err := os.Stat(libc); err != nil {
			continue
		}
		if err := doctorCheckShim(libc); err == nil || !strings.Contains(err.Error(), "InitializeInjection") {
			t.Errorf("libc: %v", err)
		}
		break
	}
}

func TestDoctorSetEnv(t *testing.T) {
	env := []string{"A=1", "STREAMCHECK_LIBCUDA=/dir", "B=2", "STREAMCHECK_LIBCUDA_X=keep"}
	got := doctorSetEnv(env, "STREAMCHECK_LIBCUDA", "/lib/libcuda.so.1")
	want := []string{"A=1", "B=2", "STREAMCHECK_LIBCUDA_X=keep", "STREAMCHECK_LIBCUDA=/lib/libcuda.so.1"}
	if !slices.Equal(got, want) {
		t.Errorf("doctorSetEnv = %q, want %q", got, want)
	}
	if env[1] != "STREAMCHECK_LIBCUDA=/dir" {
		t.Errorf("doctorSetEnv changed its input")
	}
}

// TestDoctorGPU runs the whole doctor, self-test included, where a GPU,
// CUPTI and the shim are found ($STREAMCHECK_SHIM or beside the binary);
// elsewhere it skips.
func TestDoctorGPU(t *testing.T) {
	d, err := cudart.Load()
	if errors.Is(err, cudart.ErrNoDriver) {
		t.Skipf("no CUDA driver: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Init(); err != nil {
		t.Skipf("no usable GPU: %v", err)
	}
	if _, err := launch.FindShim(); err != nil {
		t.Skipf("no shim: %v", err)
	}
	t.Setenv(doctorTestChildEnv, "1")
	keep := t.TempDir()
	code, stdout, stderr := runDoctor(t, "-v", "-keep", keep)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != doctorOK {
		t.Fatalf("exit code %d, want %d", code, doctorOK)
	}
	if n := strings.Count(stdout, "\nPASS  "); n != 4 {
		t.Errorf("%d PASS lines, want 4", n)
	}
	if !strings.Contains(stdout, "self-test: 4 of 4 cases passed") {
		t.Errorf("no summary line")
	}
}

// TestDoctorFailure: a failed self-test is reported by its cause, the first
// line of the program's error, not by a cleanup error joined after it.
func TestDoctorFailure(t *testing.T) {
	out := "selftest ok-sync: ran on device 0\n" +
		"streamcheck doctor " + doctorChildArg + ": cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)\n" +
		"cuModuleUnload: CUDA_ERROR_ILLEGAL_ADDRESS (700)\n"
	if got, want := doctorFailure(out), "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)"; got != want {
		t.Errorf("doctorFailure = %q, want %q", got, want)
	}
	if got := doctorFailure("killed\n"); got != "killed" {
		t.Errorf("without an error line: %q, want the last line", got)
	}
}

func TestSettingUnused(t *testing.T) {
	for _, c := range []struct {
		setting, found string
		want           bool
	}{
		{"", "/usr/lib/libcupti.so", false},
		{"/opt/cupti/libcupti.so.13", "/opt/cupti/libcupti.so.13", false},
		{"/opt/cupti/", "/opt/cupti/libcupti.so", false},
		{"/nonexistent", "/usr/local/cuda/lib64/libcupti.so", true},
		{"/opt/cupti/libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so", true},
	} {
		if got := settingUnused(c.setting, c.found); got != c.want {
			t.Errorf("settingUnused(%q, %q) = %v, want %v", c.setting, c.found, got, c.want)
		}
	}
}

// TestDoctorJSON: --json prints the result as one object: every check with
// its status and detail, what the self-test lacks, and no self-test.
func TestDoctorJSON(t *testing.T) {
	t.Setenv(cudart.EnvLibCUDA, t.TempDir())
	code, stdout, stderr := runDoctor(t, "--json")
	if code != doctorMissing {
		t.Errorf("exit code %d, want %d\nstderr:\n%s", code, doctorMissing, stderr)
	}
	var res struct {
		Checks []struct {
			Name, Status, Detail string
			Notes                []string
		}
		Missing  []string
		SelfTest *json.RawMessage `json:"self_test"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("not the result object: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Errorf("more than one JSON value:\n%s", stdout)
	}
	checks := map[string]string{}
	for _, c := range res.Checks {
		if c.Detail == "" {
			t.Errorf("check %q has no detail", c.Name)
		}
		checks[c.Name] = c.Status
		if c.Name == "driver" && !strings.Contains(c.Detail, "no CUDA driver found") {
			t.Errorf("driver detail %q does not say %q", c.Detail, "no CUDA driver found")
		}
	}
	for name, want := range map[string]string{"go": "ok", "os": "ok", "driver": "missing"} {
		if checks[name] != want {
			t.Errorf("check %q: status %q, want %q (checks %v)", name, checks[name], want, checks)
		}
	}
	for _, name := range []string{"runtime", "CUPTI", "shim", "python"} {
		if _, ok := checks[name]; !ok {
			t.Errorf("no %q check: %v", name, checks)
		}
	}
	if len(res.Missing) == 0 || !strings.HasPrefix(res.Missing[0], "no CUDA driver found") {
		t.Errorf("missing %q", res.Missing)
	}
	if res.SelfTest != nil && string(*res.SelfTest) != "null" {
		t.Errorf("self_test %s, want null", *res.SelfTest)
	}
	if !strings.HasPrefix(stderr, "streamcheck doctor: cannot run the GPU self-test: no CUDA driver found") {
		t.Errorf("stderr %q", stderr)
	}
}
