package analysis

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/streamcheck/streamcheck/internal/safefile"
	"github.com/streamcheck/streamcheck/model"
)

// TraceExts are the file name extensions a directory is searched for: the
// shim writes .sctrace, people and converters write .jsonl.
var TraceExts = []string{".sctrace", ".jsonl"}

// Stdin is the argument that stands for standard input.
const Stdin = "-"

// An Input is one trace file to analyze: one process, or several when
// binary traces were concatenated into it.
type Input struct {
	Name string // As reports and messages show it (see Shown).
	// Open opens the trace; nil when Err is set.
	Open func() (io.ReadCloser, error)
	// Err is set instead of Open for an argument that cannot be used.
	Err error
	// Path is the file, for inputs that are one: its size sets a
	// progress bar, and commands make sure no output overwrites it.
	Path string
}

// FileInput is the trace file at path, shown as name.
func FileInput(name, path string) Input {
	return Input{Name: name, Path: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// RecordedInput is a trace in a recording directory, opened as
// safefile.Open does: a file swapped for a link after the directory was
// listed is not followed.
func RecordedInput(name, path string) Input {
	return Input{Name: name, Path: path, Open: func() (io.ReadCloser, error) { return safefile.Open(path) }}
}

// ReaderInput is a trace read once from r (standard input), shown as name.
// Closing what Open returns does not close r.
func ReaderInput(name string, r io.Reader) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }}
}

// Shown is a file name as reports and messages show it: control characters
// and the characters that reorder text escaped (model.Printable), so that a
// name cannot break a line of output or forge one.
func Shown(path string) string { return model.Printable(path) }

// StdinName is how standard input is named in reports.
const StdinName = "<stdin>"

// Expand turns command-line arguments into inputs: "-" is stdin; a
// directory stands for every trace file (*.sctrace, *.jsonl) under it,
// searched recursively in name order, without entering hidden directories
// or following links to directories; any other argument is a trace file,
// whatever its name. A trace named twice (by two arguments, or a file and a
// directory holding it) is analyzed once, where it was first named. An
// argument that cannot be used becomes an input that fails, so that
// messages keep their order.
func Expand(args []string, stdin io.Reader) []Input {
	var ins []Input
	seen := map[fileID]bool{}
	stdinUsed := false
	bad := func(arg string, err error) { ins = append(ins, Input{Name: Shown(arg), Err: err}) }
	add := func(name, path string, st fs.FileInfo) {
		if id, ok := idOf(st); ok {
			if seen[id] {
				return
			}
			seen[id] = true
		}
		ins = append(ins, FileInput(Shown(name), path))
	}
	for _, arg := range args {
		if arg == Stdin {
			if !stdinUsed {
				stdinUsed = true
				ins = append(ins, ReaderInput(StdinName, stdin))
			}
			continue
		}
		st, err := os.Stat(arg)
		if err != nil {
			bad(arg, err)
			continue
		}
		if !st.IsDir() {
			add(arg, arg, st)
			continue
		}
		files, err := TraceFiles(arg)
		if err != nil {
			bad(arg, err)
			continue
		}
		if len(files) == 0 {
			bad(arg, fmt.Errorf("directory holds no trace files (*%s)", strings.Join(TraceExts, ", *")))
			continue
		}
		for _, f := range files {
			p := filepath.Join(arg, f)
			st, err := os.Stat(p)
			if err != nil {
				bad(p, err)
				continue
			}
			add(p, p, st)
		}
	}
	return ins
}

// TraceFiles returns the trace files under dir, as paths relative to it,
// in the order a recursive walk in name order meets them. Hidden files and
// directories are skipped; a link to a regular trace file counts, a link to
// a directory is not followed (no cycles).
func TraceFiles(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !IsTraceName(d.Name()) {
			return nil
		}
		regular := d.Type().IsRegular()
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			regular = err == nil && st.Mode().IsRegular()
		}
		if regular {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path != dir {
			return nil, fmt.Errorf("%s: %w", Shown(pe.Path), pe.Err)
		}
		return nil, err
	}
	return names, nil
}

// IsTraceName reports whether a directory entry named name is a trace file.
func IsTraceName(name string) bool {
	for _, ext := range TraceExts {
		if strings.HasSuffix(name, ext) && !strings.HasPrefix(name, ".") {
			return true
		}
	}
	return false
}

// fileID identifies a file whatever path names it.
type fileID struct{ dev, ino uint64 }

func idOf(st fs.FileInfo) (fileID, bool) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok && st.Mode().IsRegular() {
		return fileID{uint64(s.Dev), uint64(s.Ino)}, true
	}
	return fileID{}, false // a pipe or device: every naming is read
}

// InputError is an input that could not be read at all.
type InputError struct {
	Name string
	Err  error
}

// Error gives the "FILE: REASON" form, without repeating the file name when
// the reason already starts with it (model errors name their file).
func (e *InputError) Error() string {
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("%s: %v", e.Name, pe.Err)
	}
	if s := e.Err.Error(); strings.HasPrefix(s, e.Name+":") {
		return s
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// Input names the input (report.InputError).
func (e *InputError) Input() string { return e.Name }
