package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/explain"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

const explainUsage = `
usage: streamcheck explain [flags] TRACE

Explain shows why each finding of one trace is a bug, as a small
happens-before graph: the finding's operations, the synchronization between
their streams around them (event records and waits, stream, event and device
synchronization, successful queries, the legacy stream's implicit joins), the
orderings that exist between them, and the one that is missing.

Without --dot it prints every finding, numbered, with its graph as text (or
only finding N with --finding N). With --dot it writes the graph of finding N
(default 1) in Graphviz DOT; render it with 'dot -Tsvg -o finding.svg'. The
output is the same, byte for byte, for the same trace.

Exit codes:
  0  no error findings (warnings allowed)
  1  error findings
  2  bad usage, an input that could not be read (missing, not a trace), or
     no finding N
  3  the trace was truncated or corrupt, and no error findings
`

// cmdExplain implements "streamcheck explain". See explainUsage.
func (c *cli) cmdExplain(args []string) int {
	fs := newFlags("explain")
	dot := fs.Bool("dot", false, "write the graph of one finding (--finding, default 1) in Graphviz DOT")
	output := fs.String("o", "", "write to `FILE` instead of stdout")
	number := fs.Int("finding", 0, "explain only finding `N` (numbered from 1, as listed)")
	pos, code, done := c.parseFlags(fs, explainUsage, args, true)
	if done {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "streamcheck explain: want exactly one TRACE")
		printUsage(c.stderr, fs, explainUsage)
		return exitUsage
	}
	set := false // --finding 0 is a mistake, not "every finding"
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "finding" })
	if *number < 0 || (set && *number == 0) {
		return c.usageErrorf("explain: --finding must be 1 or more")
	}
	path := pos[0]
	if sameFile(path, *output) {
		return c.usageErrorf("explain: output %s is the input", *output)
	}
	tr, err := loadTrace(path)
	if err != nil {
		return c.usageErrorf("%v", err)
	}
	defer tr.close()
	graphs, err := tr.graphs()
	if err != nil {
		return c.usageErrorf("%v", &inputError{path, err})
	}
	res := tr.res
	if *number > len(graphs) {
		return c.usageErrorf("explain: %s has no finding %d (it has %s)", path, *number, plural(len(graphs), "finding"))
	}
	if *number > 0 {
		graphs = graphs[*number-1 : *number]
	}

	var buf bytes.Buffer
	if *dot {
		c.replayNotes(res)
		if len(graphs) == 0 {
			fmt.Fprintf(c.stderr, "streamcheck: %s: no findings to draw\n", path)
			return traceExitCode(res) // No file either.
		}
		if err := explain.DOT(&buf, graphs[0]); err != nil {
			return c.usageErrorf("explain: %v", err)
		}
	} else {
		if *output != "" {
			c.replayNotes(res)
		}
		for i, g := range graphs {
			if i > 0 {
				buf.WriteByte('\n')
			}
			if err := explain.Text(&buf, g); err != nil {
				return c.usageErrorf("explain: %v", err)
			}
		}
		if len(graphs) > 0 {
			buf.WriteByte('\n')
		}
		writeReplayNotes(&buf, res)
		fmt.Fprintf(&buf, "%s in %s (%s, %s)\n", findingsSummary(res), path,
			plural(res.Stats.Events, "event"), plural(res.Stats.Streams, "stream"))
	}
	if err := c.writeOutput(*output, buf.Bytes()); err != nil {
		return c.usageErrorf("explain: %v", err)
	}
	return traceExitCode(res)
}

// replayedTrace is one trace analyzed for a command that replays it.
type replayedTrace struct {
	path string
	// copied is where the second pass reads a trace that can be read
	// only once (a pipe, /dev/stdin): a copy the first pass made.
	copied string
	res    *checker.Result
	sym    *symbolize.Symbolizer
}

// close removes the copy of a trace read from a pipe.
func (t *replayedTrace) close() {
	if t.copied != "" {
		os.Remove(t.copied)
	}
}

// openOnce opens a trace that cannot be read twice (not a regular file)
// for the first pass, which copies what it reads into a temporary file for
// the second. The copy is only as long as what the first pass read: up to
// the end, or to the damage it stops at, which the second pass then meets
// at the same place.
func (t *replayedTrace) openOnce() (model.Reader, *copyingReader, error) {
	f, err := os.Open(t.path)
	if err != nil {
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	// The extension keeps the sniffing of a cut .sctrace file.
	tmp, err := os.CreateTemp("", "streamcheck-replay-*"+filepath.Ext(t.path))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %v", errCopy, err)
	}
	t.copied = tmp.Name()
	cr := &copyingReader{src: f, dst: tmp}
	r, err := model.NewReader(cr, t.path)
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
	src, dst *os.File
	err      error
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

// loadTrace analyzes one trace file as check does (stacks symbolized, paths
// relative to the current directory). A damaged trace is a result; the
// error is for input that is not a trace or cannot be read.
func loadTrace(path string) (*replayedTrace, error) {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		return nil, &inputError{path, fmt.Errorf("is a directory; name one of its trace files")}
	}
	sym := symbolize.New()
	if wd, err := os.Getwd(); err == nil {
		sym.RelativeTo = wd
	}
	t := &replayedTrace{path: path, sym: sym}
	if err == nil && !st.Mode().IsRegular() {
		if err := t.analyzeOnce(); err != nil {
			t.close()
			return nil, err
		}
		return t, nil
	}
	r, closer, err := model.Open(path)
	if err != nil {
		if model.IsDamage(err) {
			// Cut inside the header: a trace, with nothing to analyze.
			t.res = checker.New(path, model.NewTables()).Finish(err)
			return t, nil
		}
		return nil, &inputError{path, err}
	}
	defer closer.Close()
	t.res, err = checker.CheckWith(path, r, checker.Options{Symbolize: sym.Stack})
	if err != nil {
		return nil, &inputError{path, err}
	}
	return t, nil
}

// analyzeOnce is loadTrace's first pass over a trace that can be read only
// once, copying it for the second.
func (t *replayedTrace) analyzeOnce() error {
	r, cr, err := t.openOnce()
	if errors.Is(err, errCopy) {
		return &inputError{t.path, err}
	}
	if err != nil {
		if model.IsDamage(err) {
			t.res = checker.New(t.path, model.NewTables()).Finish(err)
			return nil
		}
		return &inputError{t.path, err}
	}
	t.res, err = checker.CheckWith(t.path, r, checker.Options{Symbolize: t.sym.Stack})
	if cerr := cr.Close(); cerr != nil {
		return &inputError{t.path, cerr} // the second pass would read less
	}
	if err != nil {
		return &inputError{t.path, err}
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
		r, closer, err = openCopy(t.copied, t.path)
		if err != nil && !model.IsDamage(err) {
			return nil, nil, fmt.Errorf("%w: %v", errCopy, err)
		}
	} else {
		r, closer, err = model.Open(t.path)
	}
	if err != nil {
		if model.IsDamage(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return r, closer, nil
}

// openCopy opens the copy of a trace read once, named in errors as the
// original.
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

// graphs builds the explanation graph of each finding.
func (t *replayedTrace) graphs() ([]*explain.Graph, error) {
	if len(t.res.Findings) == 0 {
		return nil, nil
	}
	r, closer, err := t.reopen()
	if err != nil || r == nil {
		return nil, err
	}
	defer closer.Close()
	return explain.Build(r, t.res, explain.Options{Symbolize: t.sym.Stack})
}

// replayNotes prints the notes on a damaged or incomplete trace to stderr.
func (c *cli) replayNotes(res *checker.Result) {
	if res.Damage != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", damageNote(res))
	}
	if n := droppedNote(res); n != "" {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", n)
	}
}

// writeReplayNotes writes the notes on a damaged or incomplete trace into
// a text report.
func writeReplayNotes(w io.Writer, res *checker.Result) {
	if res.Damage != nil {
		fmt.Fprintf(w, "damaged: %s\n", damageNote(res))
	}
	if n := droppedNote(res); n != "" {
		fmt.Fprintf(w, "incomplete: %s\n", n)
	}
}

func findingsSummary(res *checker.Result) string {
	errs := res.Errors()
	warns := len(res.Findings) - errs
	if errs+warns == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%s, %s", plural(errs, "error"), plural(warns, "warning"))
}

// writeOutput writes data to the file named output, or to stdout.
func (c *cli) writeOutput(output string, data []byte) error {
	if output == "" {
		_, err := c.stdout.Write(data)
		return err
	}
	return os.WriteFile(output, data, 0o644)
}

// sameFile reports whether output names the existing file input.
func sameFile(input, output string) bool {
	if output == "" {
		return false
	}
	a, err := os.Stat(input)
	if err != nil {
		return false
	}
	b, err := os.Stat(output)
	return err == nil && os.SameFile(a, b)
}

// traceExitCode applies check's exit codes to one analyzed trace.
func traceExitCode(res *checker.Result) int {
	switch {
	case res.Errors() > 0:
		return exitFindings
	case res.Damage != nil:
		return exitDamaged
	}
	return exitOK
}
