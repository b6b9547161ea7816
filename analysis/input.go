package analysis

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamcheck/streamcheck/internal/safefile"
	"github.com/streamcheck/streamcheck/model"
)

// TraceExts are the file name extensions a directory is searched for: the
// shim writes .sctrace, people and converters write .jsonl.
var TraceExts = []string{".sctrace", ".jsonl"}

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

// Shown is a file name as reports and messages show it: control characters
// and the characters that reorder text escaped (model.Printable), so that a
// name cannot break a line of output or forge one.
func Shown(path string) string { return model.Printable(path) }

// Expand turns command-line arguments into inputs: a directory stands for
// its trace files (a process tree recorded by the shim), sorted by name;
// any other argument is a trace file, whatever its name. An argument that
// cannot be used becomes an input that fails, so messages keep their order.
func Expand(args []string) []Input {
	var ins []Input
	bad := func(arg string, err error) { ins = append(ins, Input{Name: Shown(arg), Err: err}) }
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			bad(arg, err)
			continue
		}
		if !st.IsDir() {
			ins = append(ins, FileInput(Shown(arg), arg))
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
			ins = append(ins, FileInput(Shown(p), p))
		}
	}
	return ins
}

// TraceFiles returns the names of the trace files in dir, sorted.
func TraceFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir) // Sorted by name.
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !IsTraceName(e.Name()) {
			continue
		}
		regular := e.Type().IsRegular()
		if e.Type()&fs.ModeSymlink != 0 { // a trace linked in from elsewhere counts too
			st, err := os.Stat(filepath.Join(dir, e.Name()))
			regular = err == nil && st.Mode().IsRegular()
		}
		if regular {
			names = append(names, e.Name())
		}
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
