package main

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/streamcheck/streamcheck/intercept/launch"
	"github.com/streamcheck/streamcheck/internal/shimbuild"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/golden) and the cmp files of testdata/script")

// TestMain lets the scripts run "streamcheck": testscript re-executes this
// test binary under that name, which calls main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"streamcheck": main})
}

// TestScripts runs testdata/script/*.txtar.
//
// Besides the standard commands, scripts have:
//
//	status CODE PROGRAM [ARG...]   run PROGRAM and want exit code CODE
//	truncate FILE N                cut FILE to N bytes (N < 0: drop -N bytes from the end)
//	jsonschema stdout|stderr|FILE  the JSON report there is valid by docs/json-report.schema.json
//	fakecuda                       build the real shim and the fake CUDA of intercept's tests: $FAKEAPP
//	                               then records through the shim (scripts skip first without bash or cc)
//
// $STREAMCHECK_SHIM names a stand-in for the recording shim, an ELF header
// with no code (see standInShim): the
// programs the scripts run make no CUDA calls, so nothing loads it, and a
// script plays the shim by writing into $STREAMCHECK_DIR itself.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			shim := filepath.Join(env.WorkDir, ".shim", "libstreamcheck.so")
			if err := writeStandInShim(shim); err != nil {
				return err
			}
			env.Setenv("STREAMCHECK_SHIM", shim)
			// The stand-in cannot be preloaded: scripts record with the
			// backend the driver would load, unless they name another.
			env.Setenv("STREAMCHECK_BACKEND", "cupti")
			// A shim built from the embedded sources goes here, not to $HOME.
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":     cmdStatus,
			"truncate":   cmdTruncate,
			"jsonschema": cmdJSONSchema,
			"fakecuda":   cmdFakeCUDA,
		},
	})
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdFakeCUDA builds the shim and the fake CUPTI, driver and program of
// intercept's tests into the script's work directory, and points the
// environment at them: $STREAMCHECK_SHIM is the real shim, which the fake
// program ($FAKEAPP) loads as the driver would, and which records its calls.
func cmdFakeCUDA(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: fakecuda")
	}
	if m := shimbuild.Missing(); m != "" {
		ts.Fatalf("%s (skip the script with [!exec:cc] skip)", m)
	}
	dir := ts.MkAbs(".fakecuda")
	ts.Check(os.MkdirAll(dir, 0o755))
	shim := filepath.Join(dir, launch.ShimName)
	ts.Check(shimbuild.Build(shim))
	lib, app, err := shimbuild.BuildFake(dir)
	ts.Check(err)
	for k, v := range map[string]string{
		"STREAMCHECK_SHIM": shim, "FAKE_INJECT": shim, "FAKEAPP": app,
		"STREAMCHECK_CUPTI": lib, "STREAMCHECK_LIBCUDA": lib,
	} {
		ts.Setenv(k, v)
	}
}

func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE N")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	file := ts.MkAbs(args[0])
	if n < 0 {
		st, err := os.Stat(file)
		ts.Check(err)
		n += st.Size()
	}
	ts.Check(os.Truncate(file, n))
}

// writeVersion names the module version, the commit (marked when the tree
// was modified) and the Go release; a binary without build info says so.
func TestWriteVersion(t *testing.T) {
	var b strings.Builder
	writeVersion(&b, &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}})
	if got, want := b.String(), "streamcheck v0.3.0 commit 0123456789ab (modified) go1.26.8\ntrace format: binary version 1, JSON Lines\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b.Reset()
	writeVersion(&b, nil)
	if !strings.HasPrefix(b.String(), "streamcheck (unknown)\n") {
		t.Errorf("without build info: %q", b.String())
	}
}

// standInShim writes a stand-in for the recording shim: an ELF shared
// object header for this machine, which passes the launcher's checks but
// holds no code (nothing in the tests loads it).
func standInShim(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "libstreamcheck.so")
	if err := writeStandInShim(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeStandInShim(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, elfHeader(elf.ET_DYN, launch.Machine()), 0o644)
}

// elfHeader is a 64-bit little-endian ELF header with no program or
// section headers.
func elfHeader(typ elf.Type, m elf.Machine) []byte {
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(h[16:], uint16(typ))
	le.PutUint16(h[18:], uint16(m))
	le.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	le.PutUint16(h[52:], 64) // e_ehsize
	le.PutUint16(h[54:], 56) // e_phentsize
	le.PutUint16(h[58:], 64) // e_shentsize
	return h
}
