package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEnvInjection(t *testing.T) {
	base := []string{"PATH=/bin", "CUDA_INJECTION64_PATH=/old.so", "STREAMCHECK_DIR=/old", "LD_PRELOAD=/x.so", "STREAMCHECK_PRELOAD=1"}
	orig := append([]string(nil), base...)
	got := Env(base, "/opt/libstreamcheck.so", "/tmp/traces", false)
	want := []string{"PATH=/bin", "LD_PRELOAD=/x.so", "STREAMCHECK_DIR=/tmp/traces", "STREAMCHECK_LAUNCHER=1",
		"PYTHONPERFSUPPORT=1", "CUDA_INJECTION64_PATH=/opt/libstreamcheck.so"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if !reflect.DeepEqual(base, orig) {
		t.Errorf("base modified: %q", base)
	}
}

func TestEnvPreload(t *testing.T) {
	for _, c := range []struct {
		base []string
		want string
	}{
		{[]string{"HOME=/h"}, "LD_PRELOAD=/opt/libstreamcheck.so"},
		{[]string{"HOME=/h", "LD_PRELOAD=/a.so /b.so"}, "LD_PRELOAD=/a.so /b.so:/opt/libstreamcheck.so"},
		{[]string{"LD_PRELOAD="}, "LD_PRELOAD=/opt/libstreamcheck.so"},
	} {
		got := Env(c.base, "/opt/libstreamcheck.so", "/tmp/t", true)
		if !contains(got, c.want) || !contains(got, "STREAMCHECK_PRELOAD=1") || !contains(got, "STREAMCHECK_DIR=/tmp/t") {
			t.Errorf("Env(%q) = %q, want %s", c.base, got, c.want)
		}
		for _, kv := range got {
			if strings.HasPrefix(kv, "CUDA_INJECTION64_PATH=") {
				t.Errorf("preload env sets %s", kv)
			}
		}
		if n := count(got, "LD_PRELOAD="); n != 1 {
			t.Errorf("%d LD_PRELOAD entries in %q", n, got)
		}
	}
}

// A user's own PYTHONPERFSUPPORT setting, even 0, is kept.
func TestEnvKeepsPythonPerf(t *testing.T) {
	got := Env([]string{"PYTHONPERFSUPPORT=0"}, "/opt/libstreamcheck.so", "/tmp/t", false)
	if !contains(got, "PYTHONPERFSUPPORT=0") || count(got, "PYTHONPERFSUPPORT=") != 1 {
		t.Errorf("Env = %q, want the user's PYTHONPERFSUPPORT=0 only", got)
	}
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

func count(v []string, prefix string) int {
	n := 0
	for _, x := range v {
		if strings.HasPrefix(x, prefix) {
			n++
		}
	}
	return n
}

func TestFindShim(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	lib := filepath.Join(dir, "lib")
	for _, d := range []string{bin, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(bin, "streamcheck")
	write := func(p string) {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing there: the error says how to build it.
	if _, err := findShim("", exe); err == nil || !strings.Contains(err.Error(), "go build -buildmode=c-shared") {
		t.Errorf("no shim: err = %v", err)
	}
	// ../lib beside the binary.
	write(filepath.Join(lib, ShimName))
	if p, err := findShim("", exe); err != nil || p != filepath.Join(lib, ShimName) {
		t.Errorf("../lib: %q, %v", p, err)
	}
	// Next to the binary wins over ../lib.
	write(filepath.Join(bin, ShimName))
	if p, err := findShim("", exe); err != nil || p != filepath.Join(bin, ShimName) {
		t.Errorf("next to binary: %q, %v", p, err)
	}
	// $STREAMCHECK_SHIM wins, and must exist.
	other := filepath.Join(dir, "other.so")
	if _, err := findShim(other, exe); err == nil || !strings.Contains(err.Error(), "STREAMCHECK_SHIM") {
		t.Errorf("missing $STREAMCHECK_SHIM: err = %v", err)
	}
	write(other)
	if p, err := findShim(other, exe); err != nil || p != other {
		t.Errorf("$STREAMCHECK_SHIM: %q, %v", p, err)
	}
	// The exported function works on the real executable (the test binary).
	t.Setenv("STREAMCHECK_SHIM", other)
	if p, err := FindShim(); err != nil || p != other {
		t.Errorf("FindShim: %q, %v", p, err)
	}
}

// TestRemovePythonPerfMap removes a map of CPython trampolines only: a map
// with other entries is the program's own (a JIT's) and stays.
func TestRemovePythonPerfMap(t *testing.T) {
	dir := t.TempDir()
	py := filepath.Join(dir, "perf-1.map")
	jit := filepath.Join(dir, "perf-2.map")
	os.WriteFile(py, []byte("7f0000001000 b py::main:/app/train.py\n7f0000002000 b py::step:/app/train.py\n"), 0o644)
	os.WriteFile(jit, []byte("7f0000001000 b py::main:/app/train.py\n3000 40 LazyCompile:~run app.js:1\n"), 0o644)
	if err := RemovePythonPerfMap(py); err != nil {
		t.Errorf("Python map: %v", err)
	}
	if _, err := os.Stat(py); !os.IsNotExist(err) {
		t.Errorf("Python map still there: %v", err)
	}
	if err := RemovePythonPerfMap(jit); err == nil {
		t.Error("a map with a JIT's entries was removed")
	}
	if _, err := os.Stat(jit); err != nil {
		t.Errorf("the JIT's map is gone: %v", err)
	}
}

// TestEnvPreloadKeepsInjection keeps the user's CUDA_INJECTION64_PATH when
// the shim is preloaded and does not need it, unless it names a shim.
func TestEnvPreloadKeepsInjection(t *testing.T) {
	got := Env([]string{"CUDA_INJECTION64_PATH=/opt/tool/libinject.so"}, "/opt/libstreamcheck.so", "/tmp/t", true)
	if !slices.Contains(got, "CUDA_INJECTION64_PATH=/opt/tool/libinject.so") {
		t.Errorf("preload dropped the user's injection library: %q", got)
	}
	got = Env([]string{"CUDA_INJECTION64_PATH=/old/libstreamcheck.so"}, "/opt/libstreamcheck.so", "/tmp/t", true)
	if slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "CUDA_INJECTION64_PATH=") }) {
		t.Errorf("preload kept another shim as the injection library: %q", got)
	}
}
