package launch

import (
	"debug/elf"
	"encoding/binary"
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
		if err := os.WriteFile(p, elfHeader(elf.ET_DYN, Machine()), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing there: the error says how to build it.
	if _, err := findShim("", exe); err == nil || !strings.Contains(err.Error(), "scripts/build.sh shim") {
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

// elfHeader is a 64-bit little-endian ELF header with no program or
// section headers.
func elfHeader(typ elf.Type, m elf.Machine) []byte {
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.LittleEndian.PutUint16(h[16:], uint16(typ))
	binary.LittleEndian.PutUint16(h[18:], uint16(m))
	binary.LittleEndian.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	binary.LittleEndian.PutUint16(h[52:], 64)
	binary.LittleEndian.PutUint16(h[54:], 56)
	binary.LittleEndian.PutUint16(h[58:], 64)
	return h
}

// TestCheckShim accepts only an ELF shared object for this machine: the
// loader would skip anything else and the program would run unrecorded.
func TestCheckShim(t *testing.T) {
	dir := t.TempDir()
	other := elf.EM_AARCH64
	if Machine() == elf.EM_AARCH64 {
		other = elf.EM_X86_64
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"ok.so", elfHeader(elf.ET_DYN, Machine()), ""},
		{"script.so", []byte("#!/bin/sh\n"), "not an ELF shared object"},
		{"empty.so", nil, "not an ELF shared object"},
		{"exec.so", elfHeader(elf.ET_EXEC, Machine()), "not an ELF shared object (ELF type ET_EXEC)"},
		{"other.so", elfHeader(elf.ET_DYN, other), "not for this machine"},
	} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := CheckShim(p)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.want != "" {
			if _, err := findShim(p, ""); err == nil || !strings.Contains(err.Error(), "STREAMCHECK_SHIM") {
				t.Errorf("findShim(%s): %v", c.name, err)
			}
		}
	}
}

// TestPrivateCopy: a shim path LD_PRELOAD would split or expand is copied
// into a 0700 directory under a plain name.
func TestPrivateCopy(t *testing.T) {
	for p, want := range map[string]bool{"/opt/sc-1.2/lib/libstreamcheck.so": true, "/a b/x.so": false, "/a:b/x.so": false,
		"/opt/$LIB/x.so": false, "/a\tb/x.so": false, "": false} {
		if PlainPath(p) != want {
			t.Errorf("PlainPath(%q) = %v", p, !want)
		}
	}
	odd := filepath.Join(t.TempDir(), "odd dir:x")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(odd, ShimName)
	data := elfHeader(elf.ET_DYN, Machine())
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dst, remove, err := PrivateCopy(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != string(data) || !PlainPath(dst) || filepath.Base(dst) != ShimName {
		t.Errorf("copy %q: %q, %v", dst, got, err)
	}
	if st, err := os.Stat(filepath.Dir(dst)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("copy's directory: %v, %v", st.Mode(), err)
	}
	remove()
	if _, err := os.Stat(filepath.Dir(dst)); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
	if _, _, err := PrivateCopy(src, odd); err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("a temporary directory that is not plain either: %v", err)
	}
}

// TestRemovePythonPerfMapPlanted: a perf map path in /tmp that is a link
// (to /dev/zero, or to a file of the user's) is neither read nor removed.
func TestRemovePythonPerfMapPlanted(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "mine")
	os.WriteFile(target, []byte("7f0000001000 b py::main:/app/train.py\n"), 0o600)
	for _, to := range []string{"/dev/zero", target} {
		link := filepath.Join(dir, "perf-3.map")
		os.Remove(link)
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
		if err := RemovePythonPerfMap(link); err == nil {
			t.Errorf("a link to %s was taken for a perf map", to)
		}
		if _, err := os.Lstat(link); err != nil {
			t.Errorf("the link to %s is gone: %v", to, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target is gone: %v", err)
	}
}
