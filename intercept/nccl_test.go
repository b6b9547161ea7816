package intercept

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/streamcheck/streamcheck/internal/shimbuild"
)

var (
	ncclOnce sync.Once
	ncclLib  string // the fake libnccl.so.2
	ncclErr  error
)

// fakeNCCL builds testdata/fakenccl.c as libnccl.so.2 next to the fake
// CUPTI, once per test binary.
func fakeNCCL(t *testing.T) string {
	t.Helper()
	b := build(t)
	ncclOnce.Do(func() {
		ncclLib = filepath.Join(b.dir, "libnccl.so.2")
		args := []string{"-O1", "-g", "-Wall", "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", "-o", ncclLib,
			"testdata/fakenccl.c", "-L" + b.dir, "-lfakecupti", "-Wl,-rpath," + b.dir}
		if out, err := exec.Command(shimbuild.CC(), args...).CombinedOutput(); err != nil {
			ncclErr = fmt.Errorf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if ncclErr != nil {
		t.Fatal(ncclErr)
	}
	return ncclLib
}

// ncclSetup links a case's program with the fake NCCL and runs it with the
// shim preloaded, as `streamcheck run` and `record` start programs, besides
// injected: the preloaded shim's wrappers stand in for NCCL's functions.
func ncclSetup(t *testing.T) caseSetup {
	lib := fakeNCCL(t)
	return caseSetup{
		cflags:  []string{"-include", "testdata/fakenccl.h"},
		ldflags: []string{lib},
		env:     []string{build(t).ldPreload(build(t).shim)},
	}
}

// TestNCCLCases runs testdata/nccl/*.txtar as TestShimCases runs its cases,
// with NCCL (the fake) linked in and the shim preloaded.
func TestNCCLCases(t *testing.T) {
	files, err := filepath.Glob("testdata/nccl/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	if err := shimbuild.Consult("testdata/fakenccl.[ch]"); err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) { runCaseWith(t, file, ncclSetup(t)) })
	}
}

// Preloaded while nothing records (no injection), the wrappers are NCCL's
// calls: the program sees NCCL's results and errno, and no trace is written.
func TestNCCLPreloadedInert(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/nccl/ncclAllReduce.txtar")
	if err != nil {
		t.Fatal(err)
	}
	b := build(t)
	setup := ncclSetup(t)
	b.app = buildCase(t, b, ar.Files[0].Data, setup)
	r := run(t, b, "case", noShim, setup.env...)
	if r.state.ExitCode() != 0 {
		t.Fatalf("fakeapp: %s\nstderr:\n%s", exitDesc(r.state), r.stderr)
	}
	if tr := r.traces(t); len(tr) != 0 {
		t.Errorf("traces written with nothing recording: %v", tr)
	}
}
