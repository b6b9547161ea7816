package symbolize

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/model"
)

// writePythonTrace writes a trace of process pid, started at start, whose
// one stack is a CUDA library frame and then a pc outside every module, as
// the shim records a call from a Python function run through a trampoline.
func writePythonTrace(t *testing.T, path string, pid uint32, start time.Time, pc uint64) {
	t.Helper()
	tables := model.NewTables()
	tables.Process = model.Process{PID: pid, Start: start.UnixNano(), Exe: tables.Intern("/usr/bin/python3.12")}
	tables.Modules = append(tables.Modules, model.Module{ID: 1, Base: 0x7f0000000000, Size: 1 << 20, Path: tables.Intern("/nonexistent/libcuda.so.1")})
	tables.Stacks = append(tables.Stacks, []model.Frame{{PC: 0x7f0000000100, Module: 1}, {PC: pc}})
	data, err := model.EncodeBinary(tables, []model.Event{{Op: model.OpDeviceSync, API: tables.Intern("cuCtxSynchronize"), Stack: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPythonFrames(t *testing.T) {
	dir := t.TempDir()
	maps := filepath.Join(dir, "maps")
	os.Mkdir(maps, 0o700)
	work, _ := filepath.Abs(".")
	script := filepath.Join(work, "train.py")
	perfMap := "7f1000000000 b py::<module>:" + script + "\n" +
		"7f1000001000 b py::train_step:" + script + "\n" +
		"garbage line\n" +
		"7f1000002000 b cfunction::len\n"
	const pid = 4242
	if err := os.WriteFile(PerfMapPath(maps, pid), []byte(perfMap), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name      string
		pc        uint64 // A return address: the call is at pc-1.
		start     time.Time
		dir       string
		fn        string
		file      string
		mapIsRead bool
	}{
		{"python function", 0x7f1000001005, time.Now().Add(-time.Minute), maps, "py::train_step", "train.py", true},
		{"not Python code", 0x7f1000002005, time.Now().Add(-time.Minute), maps, "", "", true},
		{"outside the map", 0x7f1000009005, time.Now().Add(-time.Minute), maps, "", "", true},
		{"map older than the process", 0x7f1000001005, time.Now().Add(time.Hour), maps, "", "", false},
		{"maps not asked for", 0x7f1000001005, time.Now().Add(-time.Minute), "", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.sctrace")
			writePythonTrace(t, path, pid, c.start, c.pc)
			s := New()
			s.RelativeTo = work
			s.PerfMapDir = c.dir
			if err := s.Rewrite(path); err != nil {
				t.Fatal(err)
			}
			events, tables, err := readAll(t, path)
			if err != nil || len(events) != 1 {
				t.Fatalf("%d events, %v", len(events), err)
			}
			f := tables.Stack(events[0].Stack)[1]
			if got, file := tables.String(f.Func), tables.String(f.File); got != c.fn || file != c.file {
				t.Errorf("frame = %q in %q, want %q in %q", got, file, c.fn, c.file)
			}
			if read := len(s.PerfMapsRead) == 1; read != c.mapIsRead {
				t.Errorf("perf maps read: %q", s.PerfMapsRead)
			}
		})
	}
}
