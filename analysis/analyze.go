package analysis

import (
	"fmt"
	"io"
	"time"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/report"
	"github.com/streamcheck/streamcheck/symbolize"
)

// Options adjust Run.
type Options struct {
	// SourceRoot is the directory stack paths are shown relative to; ""
	// leaves them as symbolized.
	SourceRoot string
	// LeakCheck is --leak-check: "full" makes leak findings, "summary"
	// (or "") has reports say how much memory was live at exit, "none"
	// says nothing.
	LeakCheck string
	// AllocLoopThreshold is checker.Options.AllocLoopThreshold (0: the
	// default).
	AllocLoopThreshold int
	// Progress, if set, is told of the inputs as they are read.
	Progress Progress
}

// A Progress follows an analysis as it reads its inputs (a progress bar).
type Progress interface {
	// Start is called once, with every input, before any is read.
	Start(ins []Input)
	// Wrap returns open with what it opens counted.
	Wrap(name string, open func() (io.ReadCloser, error)) func() (io.ReadCloser, error)
	// Finish is called once every input was read.
	Finish()
}

// Run checks every input; an unreadable input does not stop the others.
// Recorded stacks are symbolized from the program's files (the shim records
// only return addresses and the module map); memory one process of the
// tree exported and another imported is linked across their results.
func Run(ins []Input, o Options) *report.Analysis {
	start := time.Now()
	a := &report.Analysis{LeakCheck: o.LeakCheck}
	defer func() { a.Elapsed = time.Since(start) }()
	sym := symbolize.New() // Shared: the processes of a tree share most files.
	sym.RelativeTo = o.SourceRoot
	opts := checker.Options{Symbolize: sym.Stack, Leaks: o.LeakCheck == "full", AllocLoopThreshold: o.AllocLoopThreshold}
	if o.Progress != nil {
		o.Progress.Start(ins)
		defer o.Progress.Finish()
	}
	for _, in := range ins {
		if o.Progress != nil && in.Open != nil {
			in.Open = o.Progress.Wrap(in.Name, in.Open)
		}
		res, err := analyzeOne(in, opts)
		a.Results = append(a.Results, res...)
		if err != nil {
			a.Unreadable = append(a.Unreadable, err)
		}
	}
	checker.LinkImports(a.Results)
	return a
}

// analyzeOne checks one trace file: one result, or one per trace when
// binary traces were concatenated into it (each is a process of its own,
// named by its place in the file). A damaged trace is a result (with
// Damage set), not an error; the error is for input that is not a trace at
// all or cannot be read.
func analyzeOne(in Input, opts checker.Options) ([]*checker.Result, error) {
	if in.Err != nil {
		return nil, &InputError{in.Name, in.Err}
	}
	rc, err := in.Open()
	if err != nil {
		return nil, &InputError{in.Name, err}
	}
	defer rc.Close()
	r, err := model.NewReader(rc, in.Name)
	if err != nil {
		if model.IsDamage(err) {
			// Cut inside the header: a trace, with nothing to analyze.
			return []*checker.Result{checker.New(in.Name, model.NewTables()).Finish(err)}, nil
		}
		return nil, &InputError{in.Name, err}
	}
	var results []*checker.Result
	name := in.Name
	for {
		res, err := checker.CheckWith(name, r, opts)
		if err != nil {
			return results, &InputError{name, err}
		}
		results = append(results, res)
		br, ok := r.(*model.BinaryReader)
		if !ok || res.Damage != nil {
			return results, nil
		}
		next, off, err := br.Following()
		if next == nil && err == nil {
			return results, nil
		}
		name = concatenatedName(in.Name, len(results)+1, off)
		if err != nil {
			return append(results, checker.New(name, model.NewTables()).Finish(err)), nil
		}
		r = next
	}
}

// concatenatedName names the n-th trace of a file that holds several, at
// byte offset off.
func concatenatedName(file string, n int, off int64) string {
	return fmt.Sprintf("%s (trace %d, at offset %d)", file, n, off)
}

// ErrConcatenated is for commands that take one trace and were given a
// file of several.
func ErrConcatenated(off int64) error {
	return fmt.Errorf("another trace follows the first, at offset %d (traces concatenated); this command takes one trace: split the file, or analyze it with 'streamcheck check'", off)
}

// Following reports where another trace follows the one r has read to its
// end (io.EOF), or -1.
func Following(r model.Reader) int64 {
	if br, ok := r.(*model.BinaryReader); ok {
		if next, off, err := br.Following(); next != nil || err != nil {
			return off
		}
	}
	return -1
}
