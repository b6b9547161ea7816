package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/safefile"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

// traceExts are the file name extensions a directory argument is searched
// for: the shim writes .sctrace, people and converters write .jsonl.
var traceExts = []string{".sctrace", ".jsonl"}

// input is one trace to analyze: one process.
type input struct {
	name string // As shown in the report and in messages.
	open func() (io.ReadCloser, error)
	err  error  // Set instead of open for an argument that cannot be used.
	path string // The file, for inputs that are one: its size sets the progress bar.
}

func fileInput(name, path string) input {
	return input{name: name, path: path, open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// recordedInput is a trace in a recording directory, opened as
// safefile.Open does: a file swapped for a link after the directory was
// listed is not followed.
func recordedInput(name, path string) input {
	return input{name: name, path: path, open: func() (io.ReadCloser, error) { return safefile.Open(path) }}
}

// shown is a file name as reports and messages show it: control
// characters and the characters that reorder text escaped (model.Printable),
// so that a name cannot break a line of output or forge one.
func shown(path string) string { return model.Printable(path) }

// inputError is an input that could not be read at all (exit 2).
type inputError struct {
	name string
	err  error
}

// Error gives the "FILE: REASON" form, without repeating the file name when
// the reason already starts with it (model errors name their file).
func (e *inputError) Error() string {
	var pe *fs.PathError
	if errors.As(e.err, &pe) {
		return fmt.Sprintf("%s: %v", e.name, pe.Err)
	}
	if s := e.err.Error(); strings.HasPrefix(s, e.name+":") {
		return s
	}
	return fmt.Sprintf("%s: %v", e.name, e.err)
}

func (e *inputError) Unwrap() error { return e.err }

// expandArgs turns command-line arguments into inputs: a directory stands
// for its trace files (a process tree recorded by the shim), sorted by name;
// any other argument is a trace file, whatever its name. An argument that
// cannot be used becomes an input that fails, so messages keep their order.
func expandArgs(args []string) []input {
	var ins []input
	bad := func(arg string, err error) { ins = append(ins, input{name: shown(arg), err: err}) }
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			bad(arg, err)
			continue
		}
		if !st.IsDir() {
			ins = append(ins, fileInput(shown(arg), arg))
			continue
		}
		files, err := traceFiles(arg)
		if err != nil {
			bad(arg, err)
			continue
		}
		if len(files) == 0 {
			bad(arg, fmt.Errorf("directory holds no trace files (*%s)", strings.Join(traceExts, ", *")))
			continue
		}
		for _, f := range files {
			p := filepath.Join(arg, f)
			ins = append(ins, fileInput(shown(p), p))
		}
	}
	return ins
}

// traceFiles returns the names of the trace files in dir, sorted.
func traceFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir) // Sorted by name.
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !isTraceName(e.Name()) {
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

func isTraceName(name string) bool {
	for _, ext := range traceExts {
		if strings.HasSuffix(name, ext) && !strings.HasPrefix(name, ".") {
			return true
		}
	}
	return false
}

// analysis is the outcome of checking a set of traces.
type analysis struct {
	results    []*checker.Result // One per readable trace, in input order.
	unreadable []error           // Inputs that could not be read (exit 2).
	// suppressed and baselined are the findings taken out of results by
	// --suppressions and by the baseline (see filterFindings).
	suppressed, baselined []*checker.Finding
	// program is what run saw of the program it ran; nil for check.
	program *programOutcome
	// leakCheck is --leak-check: "full" made leak findings, "summary" (or
	// "") says how much memory was live at exit, "none" says nothing.
	leakCheck string
}

// programOutcome is how the program that run recorded ended, for reports
// that CI reads instead of the terminal: a failed program or one that made
// no CUDA call must not read as a clean run.
type programOutcome struct {
	ExitCode int `json:"exit_code"` // The program's (128+N for signal N).
	// Recorded is false when no process of the tree wrote a trace: no
	// CUDA activity, or (with NotRecorded) the shim could not record.
	Recorded    bool     `json:"recorded"`
	NotRecorded []string `json:"not_recorded,omitempty"` // The shim's reasons.
}

// noCUDAActivity is what run says when no process wrote a trace.
const noCUDAActivity = "no CUDA activity was recorded"

// failure says how the program failed, or "" if it did not.
func (p *programOutcome) failure() string {
	if p.ExitCode == 0 {
		return ""
	}
	return fmt.Sprintf("the program failed: exit code %d", p.ExitCode)
}

// notes says, one line each, what a report should carry besides findings.
func (p *programOutcome) notes() []string {
	var n []string
	if f := p.failure(); f != "" {
		n = append(n, f)
	}
	n = append(n, p.NotRecorded...)
	if !p.Recorded && len(p.NotRecorded) == 0 {
		n = append(n, noCUDAActivity)
	}
	return n
}

// analyzeAll checks every input; an unreadable input does not stop the
// others. Recorded stacks are symbolized from the program's files (the shim
// records only return addresses and the module map); source paths under
// sourceRoot are shown relative to it.
func analyzeAll(ins []input, sourceRoot string) *analysis {
	return analyzeInputs(ins, sourceRoot, "summary", 0, nil)
}

// analyzeInputs is analyzeAll with a --leak-check mode and an
// --alloc-loop-threshold (0: the default), advancing prog (if not nil) as
// the inputs are read.
func analyzeInputs(ins []input, sourceRoot, leakCheck string, loopThreshold int, prog *progress) *analysis {
	a := &analysis{leakCheck: leakCheck}
	sym := symbolize.New() // Shared: the processes of a tree share most files.
	sym.RelativeTo = sourceRoot
	opts := checker.Options{Symbolize: sym.Stack, Leaks: leakCheck == "full", AllocLoopThreshold: loopThreshold}
	if prog != nil {
		prog.start(ins)
		defer prog.finish()
	}
	for _, in := range ins {
		if prog != nil && in.open != nil {
			in.open = prog.wrap(in.name, in.open)
		}
		res, err := analyzeOne(in, opts)
		a.results = append(a.results, res...)
		if err != nil {
			a.unreadable = append(a.unreadable, err)
		}
	}
	checker.LinkImports(a.results) // memory one process of the tree exported and another imported
	return a
}

// analyzeOne checks one trace file: one result, or one per trace when
// binary traces were concatenated into it (each is a process of its own,
// named by its place in the file). A damaged trace is a result (with
// Damage set), not an error; the error is for input that is not a trace at
// all or cannot be read.
func analyzeOne(in input, opts checker.Options) ([]*checker.Result, error) {
	if in.err != nil {
		return nil, &inputError{in.name, in.err}
	}
	rc, err := in.open()
	if err != nil {
		return nil, &inputError{in.name, err}
	}
	defer rc.Close()
	r, err := model.NewReader(rc, in.name)
	if err != nil {
		if model.IsDamage(err) {
			// Cut inside the header: a trace, with nothing to analyze.
			return []*checker.Result{checker.New(in.name, model.NewTables()).Finish(err)}, nil
		}
		return nil, &inputError{in.name, err}
	}
	var results []*checker.Result
	name := in.name
	for {
		res, err := checker.CheckWith(name, r, opts)
		if err != nil {
			return results, &inputError{name, err}
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
		name = concatenatedName(in.name, len(results)+1, off)
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

// errConcatenated is for commands that take one trace and were given a
// file of several.
func errConcatenated(off int64) error {
	return fmt.Errorf("another trace follows the first, at offset %d (traces concatenated); this command takes one trace: split the file, or analyze it with 'streamcheck check'", off)
}

// following reports where another trace follows the one r has read to its
// end (io.EOF), or -1.
func following(r model.Reader) int64 {
	if br, ok := r.(*model.BinaryReader); ok {
		if next, off, err := br.Following(); next != nil || err != nil {
			return off
		}
	}
	return -1
}

// damageNote says where a damaged trace stopped and how much of it was
// analyzed: "t.sctrace: offset 1234: trace truncated: ...; analyzed 812
// events before it".
func damageNote(res *checker.Result) string {
	return formatDamage(res.Trace, res.Damage, "analyzed", res.Stats.Events)
}

// formatDamage gives the damage note; verb says what was done to the events
// before the damage.
func formatDamage(trace string, damage error, verb string, events uint64) string {
	where := damage.Error()
	if !strings.HasPrefix(where, trace) {
		where = trace + ": " + where
	}
	return fmt.Sprintf("%s; %s %s before it", where, verb, plural(events, "event"))
}

// droppedNote warns that the recorder could not record every call.
func droppedNote(res *checker.Result) string {
	if res.Tables == nil || res.Tables.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the recorder dropped %s; findings may be incomplete", res.Trace, plural(res.Tables.Dropped, "event"))
}

func plural[N int | uint64](n N, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// totals sums the findings and statistics of all results.
type totals struct {
	errors, warnings, notes, traces, damaged int
	events, allocations                      uint64
	streams, threads                         int
	suppressed, baselined                    int
	live, liveBytes                          uint64 // Stream-ordered memory live at exit.
}

func (a *analysis) totals() totals {
	var t totals
	for _, r := range a.results {
		t.traces++
		if r.Damage != nil {
			t.damaged++
		}
		for _, f := range r.Findings {
			switch f.Severity {
			case checker.SeverityError:
				t.errors++
			case checker.SeverityNote:
				t.notes++
			default:
				t.warnings++
			}
		}
		t.events += r.Stats.Events
		t.allocations += r.Stats.Allocations
		t.streams += r.Stats.Streams
		t.threads += r.Stats.Threads
		t.live += r.Stats.LiveAtExit
		t.liveBytes += r.Stats.LiveBytesAtExit
	}
	t.suppressed, t.baselined = len(a.suppressed), len(a.baselined)
	return t
}

// leakMode returns the --leak-check mode ("summary" when none was set).
func (a *analysis) leakMode() string {
	if a.leakCheck == "" {
		return "summary"
	}
	return a.leakCheck
}

// liveNote says how much stream-ordered memory was live at the end of the
// complete traces, when --leak-check summary asks and there was some; ""
// otherwise.
func (a *analysis) liveNote() string {
	if a.leakMode() != "summary" {
		return ""
	}
	t := a.totals()
	if t.live == 0 {
		return ""
	}
	return fmt.Sprintf("live at exit: %s, %s (no leak findings: --leak-check full lists them)",
		plural(t.live, "stream-ordered allocation"), plural(t.liveBytes, "byte"))
}

// exitCode applies the exit code table (see the const block in main.go).
func (a *analysis) exitCode() int {
	t := a.totals()
	switch {
	case len(a.unreadable) > 0:
		return exitUsage
	case t.errors > 0:
		return exitFindings
	case t.damaged > 0:
		return exitDamaged
	}
	return exitOK
}
