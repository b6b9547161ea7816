package symbolize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/streamcheck/streamcheck/model"
)

// writeTrace writes a binary trace whose one stack points into bin's target
// function, as the shim records it: a return address and a module.
func writeTrace(t *testing.T, bin string) []byte {
	t.Helper()
	tables := model.NewTables()
	const bias = 0x7f0000000000
	size, err := ModuleSize(bin)
	if err != nil {
		t.Fatal(err)
	}
	tables.Modules = append(tables.Modules, model.Module{ID: 1, Base: bias, Size: size, Path: tables.Intern(bin)})
	tables.Stacks = append(tables.Stacks, []model.Frame{{PC: bias + symbolAddr(t, bin, "target") + 1, Module: 1}})
	sync := model.Event{Op: model.OpDeviceSync, API: tables.Intern("cudaDeviceSynchronize"), Stack: 1}
	data, err := model.EncodeBinary(tables, []model.Event{sync, sync, sync})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readAll(t *testing.T, path string) ([]model.Event, *model.Tables, error) {
	t.Helper()
	r, c, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	events, err := model.Collect(r)
	return events, r.Tables(), err
}

func TestRewrite(t *testing.T) {
	abs, _ := filepath.Abs("testdata/prog.c")
	bin := build(t, "cc", abs, "-g", "-O0")
	data := writeTrace(t, bin)
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.sctrace")
	cut := filepath.Join(dir, "cut.sctrace")
	if err := os.WriteFile(whole, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, data[:len(data)-4], 0o600); err != nil {
		t.Fatal(err)
	}
	wantEvents, _, cutErr := readAll(t, cut)
	if !errors.Is(cutErr, model.ErrTruncated) {
		t.Fatalf("cut trace reads with %v, want truncated", cutErr)
	}

	s := New()
	s.RelativeTo, _ = filepath.Abs(".")
	for _, path := range []string{whole, cut} {
		if err := s.Rewrite(path); err != nil {
			t.Fatalf("Rewrite(%s): %v", path, err)
		}
		events, tables, err := readAll(t, path)
		if path == whole && (err != nil || len(events) != 3) {
			t.Errorf("%s: %d events, err %v; want 3 and a complete trace", path, len(events), err)
		}
		if path == cut && (!errors.Is(err, model.ErrTruncated) || len(events) != len(wantEvents)) {
			t.Errorf("%s: %d events, err %v; want %d and still truncated", path, len(events), err, len(wantEvents))
		}
		if path == cut && strings.Count(err.Error(), "cut.sctrace") != 1 {
			t.Errorf("%s: damage %q names the trace more than once", path, err)
		}
		f := tables.Stack(events[0].Stack)[0]
		if tables.String(f.Func) != "target" || tables.String(f.File) != "testdata/prog.c" || f.Line != 2 {
			t.Errorf("%s: frame = %s %s:%d, want target testdata/prog.c:2", path, tables.String(f.Func), tables.String(f.File), f.Line)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600 kept", path, info.Mode(), err)
		}
	}
}

// TestRewriteBusy: a trace a running process may still write is left as it
// is: one another open file description holds locked (as the shim does
// while it writes), and one without its End record whose writer's pid
// runs.
func TestRewriteBusy(t *testing.T) {
	abs, _ := filepath.Abs("testdata/prog.c")
	bin := build(t, "cc", abs, "-g", "-O0")
	data := writeTrace(t, bin)
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked.sctrace")
	if err := os.WriteFile(locked, data, 0o600); err != nil {
		t.Fatal(err)
	}
	writer, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := unix.Flock(int(writer.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	// A trace cut before its End record, of a process that runs: this one.
	tables := model.NewTables()
	tables.Process.PID = uint32(os.Getpid())
	running, err := model.EncodeBinary(tables, []model.Event{{Op: model.OpDeviceSync}})
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "running.sctrace")
	if err := os.WriteFile(cut, running[:len(running)-2], 0o600); err != nil {
		t.Fatal(err)
	}

	s := New()
	for path, want := range map[string][]byte{locked: data, cut: running[:len(running)-2]} {
		if err := s.Rewrite(path); !errors.Is(err, ErrBusy) {
			t.Errorf("Rewrite(%s) = %v, want ErrBusy", path, err)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s was changed (%v)", path, err)
		}
	}
	writer.Close() // The writer is done: the trace is rewritten now.
	if err := s.Rewrite(locked); err != nil {
		t.Errorf("Rewrite after the lock was dropped: %v", err)
	}
}
