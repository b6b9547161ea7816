package main

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

// TestSymbolizedStacks: a binary trace as the shim writes it, with return
// addresses and a module map but no source locations, is reported with
// function, file and line read from the program's debug information.
func TestSymbolizedStacks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	// The test binary itself has no symbols or DWARF (go test strips them),
	// so build a small program that has.
	dir, err := filepath.EvalSymlinks(t.TempDir()) // As the compiler will see it.
	if err != nil {
		t.Fatal(err)
	}
	src := "package main\n\n//go:noinline\nfunc target() {}\n\nfunc main() { target() }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "prog")
	goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Skip(err)
	}
	build := exec.Command(goCmd, "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build a test program: %v\n%s", err, out)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Skip(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var pc uint64
	for _, s := range syms {
		if s.Name == "main.target" {
			pc = s.Value + 1 // A return address points after the call.
		}
	}
	if pc == 0 {
		t.Skip("main.target not in the symbol table")
	}

	size, err := symbolize.ModuleSize(exe)
	if err != nil {
		t.Fatal(err)
	}
	frameWith := func(size uint64) checker.Frame {
		tab := model.NewTables()
		tab.Modules = append(tab.Modules, model.Module{ID: 1, Base: 0, Size: size, Path: tab.Intern(exe)})
		tab.Stacks = append(tab.Stacks, []model.Frame{{PC: pc, Module: 1}})
		const s1, s2, ptr = 0x1000, 0x2000, 0x7f0000000000
		events := []model.Event{
			{Op: model.OpStreamCreate, Stream: s1},
			{Op: model.OpStreamCreate, Stream: s2},
			{Op: model.OpMallocAsync, Stream: s1, Ptr: ptr, Size: 4096},
			{Op: model.OpLaunch, Stream: s2, Ptrs: []uint64{ptr}, Stack: 1},
			{Op: model.OpDeviceSync},
			{Op: model.OpFreeAsync, Stream: s1, Ptr: ptr},
		}
		for i := range events {
			events[i].TID = 1
		}
		data, err := model.EncodeBinary(tab, events)
		if err != nil {
			t.Fatal(err)
		}
		a := analysis.Run([]analysis.Input{{Name: "shim.sctrace", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}}, analysis.Options{SourceRoot: dir})
		if len(a.Unreadable) > 0 || len(a.Results) != 1 || len(a.Results[0].Findings) != 1 {
			t.Fatalf("want one finding; got %d results, unreadable %v", len(a.Results), a.Unreadable)
		}
		use := a.Results[0].Findings[0].Ops[0]
		if len(use.Stack) != 1 {
			t.Fatalf("use has %d frames", len(use.Stack))
		}
		return use.Stack[0]
	}
	// A module named by path only (a JSON Lines frame): no load address to
	// place the pc with, so the frame stays as recorded.
	if fr := frameWith(0); fr.Func != "" || fr.File != "" {
		t.Errorf("frame of a module without size = %+v, want it unresolved", fr)
	}
	fr := frameWith(size) // a non-PIE executable: loaded at bias 0
	if fr.Func != "main.target" || fr.File != "main.go" || fr.Line != 4 {
		t.Errorf("frame = %+v, want main.target at main.go:4 (relative to the source root)", fr)
	}
}

// TestPerfMapsRemoved: after a recording, the Python perf maps the launcher
// asked for are read into the traces and removed; ones the user asked for
// (PYTHONPERFSUPPORT set before streamcheck ran) are read and kept.
func TestPerfMapsRemoved(t *testing.T) {
	maps := t.TempDir()
	old := pythonPerfMapDir
	pythonPerfMapDir = maps
	defer func() { pythonPerfMapDir = old }()

	for _, remove := range []bool{true, false} {
		dir := t.TempDir()
		const pid = 31337
		tab := model.NewTables()
		tab.Process = model.Process{PID: pid, Start: time.Now().Add(-time.Minute).UnixNano()}
		tab.Stacks = append(tab.Stacks, []model.Frame{{PC: 0x7f0000000105}})
		data, err := model.EncodeBinary(tab, []model.Event{{Op: model.OpDeviceSync, API: tab.Intern("cuCtxSynchronize"), Stack: 1}})
		if err != nil {
			t.Fatal(err)
		}
		trace := filepath.Join(dir, "streamcheck-31337.sctrace")
		if err := os.WriteFile(trace, data, 0o600); err != nil {
			t.Fatal(err)
		}
		perfMap := filepath.Join(maps, "perf-31337.map")
		if err := os.WriteFile(perfMap, []byte("7f0000000100 20 py::step:/work/train.py\n"), 0o600); err != nil {
			t.Fatal(err)
		}

		c := &cli{stdout: io.Discard, stderr: io.Discard}
		c.symbolizeTraces(dir, remove, nil)

		r, closer, err := model.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		events, err := model.Collect(r)
		closer.Close()
		if err != nil || len(events) != 1 {
			t.Fatalf("%d events, %v", len(events), err)
		}
		f := r.Tables().Stack(events[0].Stack)[0]
		if got := r.Tables().String(f.Func); got != "py::step" {
			t.Errorf("remove=%v: frame %q, want py::step", remove, got)
		}
		if _, err := os.Stat(perfMap); remove != os.IsNotExist(err) {
			t.Errorf("remove=%v: perf map still there: %v", remove, err == nil)
		}
	}
}
