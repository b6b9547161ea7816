package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

// explain reads a trace twice: once to analyze it, then again to replay
// the events the findings need. This file loads such a trace, copying one
// that can be read only once (a pipe) for the second reading. timeline
// follows the analysis's one pass instead (an observer: see loadTrace),
// and needs no copy.

// replayedTrace is one trace analyzed for a command that replays it.
type replayedTrace struct {
	path string    // "" for src
	src  io.Reader // A trace read from standard input.
	name string    // path as shown (see shown)
	// copied is where the second pass reads a trace that can be read
	// only once (a pipe, /dev/stdin): a copy the first pass made.
	copied string
	forget func() // ends removeOnSignal's watch of copied
	res    *checker.Result
	sym    *symbolize.Symbolizer
}

// close removes the copy of a trace read from a pipe.
func (t *replayedTrace) close() {
	if t.copied != "" {
		os.Remove(t.copied)
		t.forget()
	}
}

// openOnce opens a trace that cannot be read twice (not a regular file)
// for the first pass, which copies what it reads into a temporary file for
// the second. The copy is only as long as what the first pass read: up to
// the end, or to the damage it stops at, which the second pass then meets
// at the same place.
func (t *replayedTrace) openOnce() (model.Reader, io.Closer, error) {
	var f io.ReadCloser = io.NopCloser(t.src)
	if t.src == nil {
		of, err := os.Open(t.path)
		if err != nil {
			return nil, nil, fmt.Errorf("open trace: %w", err)
		}
		f = of
	}
	// The extension keeps the sniffing of a cut .sctrace file.
	tmp, err := os.CreateTemp("", "streamcheck-replay-*"+filepath.Ext(t.path))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %v", errCopy, err)
	}
	t.copied = tmp.Name()
	t.forget = removeOnSignal(t.copied)
	cr := &copyingReader{src: f, dst: tmp}
	r, err := model.NewReader(cr, t.name)
	if err != nil {
		cr.Close()
		if cr.err != nil {
			return nil, nil, cr.err
		}
		return nil, nil, err
	}
	return r, cr, nil
}

// errCopy is the failure to copy a trace read from a pipe: a fault of the
// temporary directory, not of the trace.
var errCopy = errors.New("cannot copy the trace to a temporary file (TMPDIR) for its second reading")

// copyingReader reads src and writes what it read to dst. A failed write
// is kept apart (err), not passed to the trace reader, which would take it
// for damage to the trace.
type copyingReader struct {
	src io.ReadCloser
	dst *os.File
	err error
}

func (c *copyingReader) Read(p []byte) (int, error) {
	n, err := c.src.Read(p)
	if n > 0 && c.err == nil {
		if _, werr := c.dst.Write(p[:n]); werr != nil {
			c.err = fmt.Errorf("%w: %v", errCopy, werr)
		}
	}
	return n, err
}

// Close closes both files; it returns the copy's failure if there was one.
func (c *copyingReader) Close() error {
	c.src.Close()
	if err := c.dst.Close(); err != nil && c.err == nil {
		c.err = fmt.Errorf("%w: %v", errCopy, err)
	}
	return c.err
}

// loadTrace analyzes one input (a trace file, or standard input) as check
// does (stacks symbolized, paths relative to the current directory). A
// damaged trace is a result; the error is for input that is not a trace or
// cannot be read.
//
// With observe set, the trace is read once: observe is called with the
// trace's tables once it is open, and the checker option it returns sees
// each event of the analysis (checker.Options.Observe); nothing is copied
// for a second reading.
func loadTrace(in analysis.Input, stdin io.Reader, observe observer) (*replayedTrace, error) {
	if in.Err != nil {
		return nil, &analysis.InputError{Name: in.Name, Err: in.Err}
	}
	sym := symbolize.New()
	if wd, err := os.Getwd(); err == nil {
		sym.RelativeTo = wd
	}
	t := &replayedTrace{path: in.Path, name: in.Name, sym: sym}
	once := true // standard input
	if in.Path == "" {
		t.src = stdin
	} else {
		st, err := os.Stat(in.Path)
		once = err == nil && !st.Mode().IsRegular()
	}
	if err := t.analyze(once && observe == nil, observe); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// observer makes the observer of a trace's analysis, given its tables.
type observer func(tables *model.Tables) (func(*checker.Checker, *model.Event, *hb.Step), error)

// analyze is loadTrace's pass over the trace; once says that the trace
// can be read only once (a pipe) and will be read again, so the pass
// copies it for the second.
func (t *replayedTrace) analyze(once bool, observe observer) error {
	var (
		r      model.Reader
		closer io.Closer
		err    error
	)
	switch {
	case once:
		r, closer, err = t.openOnce()
	case t.src != nil:
		closer = io.NopCloser(nil)
		r, err = model.NewReader(t.src, t.name)
	default:
		r, closer, err = openCopy(t.path, t.name)
	}
	if err != nil {
		if model.IsDamage(err) {
			// Cut inside the header: a trace, with nothing to analyze.
			t.res = checker.New(t.name, model.NewTables()).Finish(err)
			return nil
		}
		return &analysis.InputError{Name: t.name, Err: err}
	}
	opts := checker.Options{Symbolize: t.sym.Stack}
	if observe != nil {
		if opts.Observe, err = observe(r.Tables()); err != nil {
			closer.Close()
			return err
		}
	}
	t.res, err = checker.CheckWith(t.name, r, opts)
	if err == nil {
		checker.LinkImports([]*checker.Result{t.res}) // the findings check gives this trace alone
	}
	if err == nil && t.res.Damage == nil {
		if off := analysis.Following(r); off >= 0 {
			closer.Close()
			return &analysis.InputError{Name: t.name, Err: analysis.ErrConcatenated(off)}
		}
	}
	if cerr := closer.Close(); cerr != nil && once {
		return &analysis.InputError{Name: t.name, Err: cerr} // a failed copy: the second reading would read less
	}
	if err != nil {
		return &analysis.InputError{Name: t.name, Err: err}
	}
	return nil
}

// reopen reads the trace again from its start, for a second pass; it
// returns nil if the trace has no events to read (cut inside its header).
func (t *replayedTrace) reopen() (model.Reader, io.Closer, error) {
	var (
		r      model.Reader
		closer io.Closer
		err    error
	)
	if t.copied != "" {
		r, closer, err = openCopy(t.copied, t.name)
		if err != nil && !model.IsDamage(err) {
			return nil, nil, fmt.Errorf("%w: %v", errCopy, err)
		}
	} else {
		r, closer, err = openCopy(t.path, t.name)
	}
	if err != nil {
		if model.IsDamage(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return r, closer, nil
}

// openCopy opens the trace file at copied (the copy of a trace read once,
// or the trace itself), named name in errors.
func openCopy(copied, name string) (model.Reader, io.Closer, error) {
	f, err := os.Open(copied)
	if err != nil {
		return nil, nil, fmt.Errorf("open the copy of the trace: %w", err)
	}
	r, err := model.NewReader(f, name)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}
