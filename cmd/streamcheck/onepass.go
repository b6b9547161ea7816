package main

import (
	"os"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

// explain and timeline follow the analysis of one trace as it reads the
// trace, once: an observer (checker.Options.Observe) sees each event with
// what the analysis learned from it. A trace from a pipe is read as a file
// is, and nothing is copied.

// loadedTrace is one trace analyzed for explain or timeline.
type loadedTrace struct {
	name string // As shown (see shown).
	res  *checker.Result
}

// observer makes the observer of a trace's analysis, given its tables.
type observer func(tables *model.Tables) (func(*checker.Checker, *model.Event, *hb.Step), error)

// loadTrace analyzes one input (a trace file, or standard input) as check
// does (stacks symbolized, paths relative to the current directory), with
// observe's observer watching (observe is called once the trace is open;
// not for one cut inside its header, which has no events). A damaged trace
// is a result; the error is for input that is not a trace or cannot be
// read, or the observer's.
func loadTrace(in analysis.Input, observe observer) (*loadedTrace, error) {
	if in.Err != nil {
		return nil, &analysis.InputError{Name: in.Name, Err: in.Err}
	}
	sym := symbolize.New()
	if wd, err := os.Getwd(); err == nil {
		sym.RelativeTo = wd
	}
	t := &loadedTrace{name: in.Name}
	f, err := in.Open()
	if err != nil {
		return nil, &analysis.InputError{Name: t.name, Err: err}
	}
	defer f.Close()
	r, err := model.NewReader(f, t.name)
	if err != nil {
		if model.IsDamage(err) {
			// Cut inside the header: a trace, with nothing to analyze.
			t.res = checker.New(t.name, model.NewTables()).Finish(err)
			return t, nil
		}
		return nil, &analysis.InputError{Name: t.name, Err: err}
	}
	opts := checker.Options{Symbolize: sym.Stack}
	if opts.Observe, err = observe(r.Tables()); err != nil {
		return nil, err
	}
	t.res, err = checker.CheckWith(t.name, r, opts)
	if err != nil {
		return nil, &analysis.InputError{Name: t.name, Err: err}
	}
	checker.LinkImports([]*checker.Result{t.res}) // the findings check gives this trace alone
	if t.res.Damage == nil {
		if off := analysis.Following(r); off >= 0 {
			return nil, &analysis.InputError{Name: t.name, Err: analysis.ErrConcatenated(off)}
		}
	}
	return t, nil
}
