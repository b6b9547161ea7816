package symbolize

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/streamcheck/streamcheck/internal/safefile"
	"github.com/streamcheck/streamcheck/model"
)

// ErrBusy is returned by Rewrite for a trace that a running process may
// still be writing.
var ErrBusy = errors.New("a running process is still writing it")

// alive reports whether a process pid runs (or has not been waited for).
func alive(pid uint32) bool {
	if pid == 0 || pid > math.MaxInt32 {
		return false
	}
	err := unix.Kill(int(pid), 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Rewrite symbolizes the stacks of the binary trace at path in place, so the
// trace names source locations even where the program's files are gone (a
// trace committed from a GPU machine and checked in CI). A damaged trace is
// rewritten up to the damage and stays damaged. The file is replaced only
// when the rewrite succeeded; its permissions are kept, at most 0600. Only a
// regular file the current user owns is rewritten, and a symbolic link is
// not followed (see package safefile): the directory may be writable by
// others. A trace a running process may still be writing is left as it is
// (ErrBusy): one the shim holds locked, or one without its End record whose
// writer's pid is alive.
//
// Reading twice keeps memory bounded: the first pass collects the complete
// tables and symbolizes them, the second copies the events, whose ids are
// the same in both passes.
func (s *Symbolizer) Rewrite(path string) error {
	in, err := safefile.Open(path)
	if err != nil {
		return err
	}
	defer in.Close() // Drops the lock too.
	// The shim holds a lock on its trace while it has it open. A process
	// still writing would go on writing into the file the rename below
	// unlinks, and every event it writes from now on would be lost.
	if err := unix.Flock(int(in.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return ErrBusy
	}
	tables, damage, err := readTables(in, path)
	if err != nil {
		return err
	}
	if damage != nil && alive(tables.Process.PID) {
		// Without its End record, and its writer runs: a shim that took no
		// lock (an older one), or a file system without locks.
		return ErrBusy
	}
	var jit perfMap
	if s.PerfMapDir != "" && tables.Process.PID != 0 {
		started := time.Unix(0, tables.Process.Start).Add(-time.Second) // Clocks round.
		path := PerfMapPath(s.PerfMapDir, tables.Process.PID)
		if jit = readPerfMap(path, started); jit != nil {
			s.mu.Lock()
			s.PerfMapsRead = append(s.PerfMapsRead, path)
			s.mu.Unlock()
		}
	}
	for id := range tables.Stacks {
		s.stack(tables, model.StackID(id), jit)
	}

	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r, err := model.NewBinaryReader(in, path)
	if err != nil {
		return err
	}
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".sym*")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name()) // After a successful rename this finds nothing.
	if err := copyEvents(model.NewBinaryWriter(out), r, tables, damage != nil); err != nil {
		out.Close()
		return fmt.Errorf("symbolize %s: %w", path, err)
	}
	if err := out.Chmod(info.Mode().Perm() & 0o600); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(out.Name(), path)
}

// copyEvents copies r's events to w, resolving their definitions in tables,
// and ends w as complete or, when the source is damaged, as damaged.
func copyEvents(w model.Writer, r model.Reader, tables *model.Tables, damaged bool) error {
	// The tables are known before the first event: a trace without events
	// keeps its process and dropped count.
	if err := w.Source(tables); err != nil {
		return err
	}
	var ev model.Event
	for {
		err := r.Next(&ev)
		switch {
		case err == nil:
			if err := w.WriteEvent(&ev, tables); err != nil {
				return err
			}
		case err == io.EOF:
			return w.Close()
		case damaged:
			// The rewritten trace replaces the recording: keep the
			// damage, not the recording's name and offset, which readers
			// would print after the trace's own (under streamcheck run,
			// naming a temporary directory about to be removed).
			var pe *model.PositionError
			if errors.As(err, &pe) {
				return w.CloseDamaged(pe.Err.Error())
			}
			return w.CloseDamaged(err.Error())
		default:
			return err
		}
	}
}

// readTables reads a binary trace to its end and returns its tables and the
// damage that ended reading, if any.
func readTables(f *os.File, path string) (*model.Tables, error, error) {
	r, err := model.NewBinaryReader(f, path)
	if err != nil {
		return nil, nil, err
	}
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return r.Tables(), nil, nil
		}
		if model.IsDamage(err) {
			return r.Tables(), err, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}
