package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/explain"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/report"
)

const explainUsage = `
usage: streamcheck explain [flags] TRACE|DIR|-...

Explain shows why each finding is a bug, as a small happens-before graph:
the finding's operations, the synchronization between their streams around
them (event records and waits, stream, event and device synchronization,
successful queries, the legacy stream's implicit joins), the orderings that
exist between them, and the one that is missing. A directory stands for
every trace under it, as for check; - is standard input.

Without --dot it prints every finding, numbered through all the traces,
with its graph as text, and a summary line per trace (or only finding N
with --finding N). With --dot it writes the graph of finding N (default:
the first error, else finding 1) in Graphviz DOT; render it with 'dot -Tsvg
-o finding.svg'. The output is the same, byte for byte, for the same
traces. Each trace is read once, as it is analyzed.

Exit codes:
  0  no error findings (warnings allowed)
  1  error findings
  2  bad usage, an input that could not be read (missing, not a trace), or
     no finding N
  3  a trace was truncated or corrupt, and no error findings
`

// explained is one trace's findings with their graphs.
type explained struct {
	tr     *loadedTrace
	graphs []*explain.Graph
}

// cmdExplain implements "streamcheck explain". See explainUsage.
func (c *cli) cmdExplain(args []string) int {
	fs := newFlags("explain")
	dot := fs.Bool("dot", false, "write the graph of one finding (--finding; default the first error, else 1) in Graphviz DOT")
	output := outputFlag(fs, "write to `FILE` (default and -: stdout)")
	number := fs.Int("finding", 0, "explain only finding `N` (numbered from 1, as listed)")
	pos, code, done := c.parseFlags(fs, explainUsage, args, true)
	if done {
		return code
	}
	if len(pos) == 0 {
		return c.usageLine(fs, "explain: no TRACE given")
	}
	set := false // --finding 0 is a mistake, not "every finding"
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "finding" })
	if *number < 0 || (set && *number == 0) {
		return c.usageErrorf("explain: --finding must be 1 or more")
	}
	ins := analysis.Expand(pos, c.stdin)
	for _, in := range ins {
		if in.Path != "" && sameFile(in.Path, *output) {
			return c.usageErrorf("explain: output %s is the input", *output)
		}
	}
	var traces []explained
	total := 0
	for _, in := range ins {
		var rec *explain.Recorder
		tr, err := loadTrace(in, func(tables *model.Tables) (func(*checker.Checker, *model.Event, *hb.Step), error) {
			rec = explain.NewRecorder(tables)
			return rec.Observe, nil
		})
		if err != nil {
			return c.usageErrorf("%v", err)
		}
		var graphs []*explain.Graph
		if rec != nil { // nil for a trace cut inside its header: no findings
			graphs, err = rec.Graphs(tr.res, explain.Options{})
		}
		traces = append(traces, explained{tr, graphs})
		if err != nil {
			return c.usageErrorf("%v", &analysis.InputError{Name: tr.name, Err: err})
		}
		total += len(graphs)
	}
	exit := exitOK
	for _, e := range traces {
		exit = worseExit(exit, traceExitCode(e.tr.res))
	}
	// Number the findings through all the traces, then keep those asked for.
	var picked []*explain.Graph
	for _, e := range traces {
		for _, g := range e.graphs {
			g.Number = len(picked) + 1
			picked = append(picked, g)
		}
	}
	if *number > total {
		which := shown(pos[0])
		if len(ins) > 1 {
			which = "the traces"
		}
		return c.usageErrorf("explain: %s has no finding %d (it has %s)", which, *number, report.Plural(total, "finding"))
	}
	if *number > 0 {
		picked = picked[*number-1 : *number]
	} else if *dot {
		// One graph: the first error's, rather than a warning listed
		// before it (a stream memory operation's, say).
		if i := slices.IndexFunc(picked, func(g *explain.Graph) bool { return g.Finding.Severity == checker.SeverityError }); i > 0 {
			picked = picked[i:]
		}
	}

	var buf bytes.Buffer
	if *dot {
		for _, e := range traces {
			c.replayNotes(e.tr.res)
		}
		if len(picked) == 0 {
			for _, e := range traces {
				fmt.Fprintf(c.stderr, "streamcheck: %s: no findings to draw\n", e.tr.name)
			}
			return exit // No file either.
		}
		if err := explain.DOT(&buf, picked[0]); err != nil {
			return c.usageErrorf("explain: %v", err)
		}
	} else {
		if *output != "" {
			for _, e := range traces {
				c.replayNotes(e.tr.res)
			}
		}
		for i, g := range picked {
			if i > 0 {
				buf.WriteByte('\n')
			}
			if len(traces) > 1 {
				fmt.Fprintf(&buf, "trace %s\n", g.Finding.Trace)
			}
			if err := explain.Text(&buf, g); err != nil {
				return c.usageErrorf("explain: %v", err)
			}
		}
		if len(picked) > 0 {
			buf.WriteByte('\n')
		}
		for _, e := range traces {
			res := e.tr.res
			writeReplayNotes(&buf, res)
			fmt.Fprintf(&buf, "%s in %s (%s, %s)\n", findingsSummary(res), e.tr.name,
				report.Plural(res.Stats.Events, "event"), report.Plural(res.Stats.Streams, "stream"))
		}
	}
	if err := c.writeResult(*output, buf.Bytes()); err != nil {
		return c.usageErrorf("explain: %v", err)
	}
	return exit
}

// worseExit is the exit code of two traces' together: error findings
// before damage, damage before none.
func worseExit(a, b int) int {
	rank := func(c int) int { return map[int]int{exitOK: 0, exitDamaged: 1, exitFindings: 2}[c] }
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// replayNotes prints the notes on a damaged or incomplete trace to stderr.
func (c *cli) replayNotes(res *checker.Result) {
	if res.Damage != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", report.DamageNote(res))
	}
	if n := report.DroppedNote(res); n != "" {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", n)
	}
}

// writeReplayNotes writes the notes on a damaged or incomplete trace into
// a text report.
func writeReplayNotes(w io.Writer, res *checker.Result) {
	if res.Damage != nil {
		fmt.Fprintf(w, "damaged: %s\n", report.DamageNote(res))
	}
	if n := report.DroppedNote(res); n != "" {
		fmt.Fprintf(w, "incomplete: %s\n", n)
	}
}

func findingsSummary(res *checker.Result) string {
	errs := res.Errors()
	warns := len(res.Findings) - errs
	if errs+warns == 0 {
		return "no findings"
	}
	return fmt.Sprintf("%s, %s", report.Plural(errs, "error"), report.Plural(warns, "warning"))
}

// writeResult writes data to the file named output, or to stdout.
func (c *cli) writeResult(output string, data []byte) error {
	if output == "" {
		_, err := c.stdout.Write(data)
		return err
	}
	return writeOutput(output, 0o666, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// sameFile reports whether output names the existing file input, and is
// a regular file: a FIFO or device is written through (/dev/stdout may be
// the terminal /dev/stdin is), never replaced.
func sameFile(input, output string) bool {
	if output == "" {
		return false
	}
	a, err := os.Stat(input)
	if err != nil {
		return false
	}
	b, err := os.Stat(output)
	return err == nil && b.Mode().IsRegular() && os.SameFile(a, b)
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
