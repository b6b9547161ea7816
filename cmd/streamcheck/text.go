package main

import (
	"fmt"
	"io"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
)

// maxFrames bounds the stack frames printed per operation; the innermost
// ones say where the call was made, the rest is usually main's callers.
const maxFrames = 6

// writeText writes the human-readable report: each finding, then notes on
// damaged traces, then a one-line summary.
func writeText(w io.Writer, a *analysis, p *palette) {
	multi := len(a.results) > 1
	first := true
	for _, res := range a.results {
		for _, f := range res.Findings {
			if !first {
				fmt.Fprintln(w)
			}
			first = false
			writeFinding(w, f, multi, p)
		}
	}
	if len(a.results) == 0 {
		return // Nothing could be read; stderr says why.
	}
	if !first {
		fmt.Fprintln(w)
	}
	for _, res := range a.results {
		if res.Damage != nil {
			fmt.Fprintf(w, "%s %s\n", p.note.Sprint("damaged:"), damageNote(res))
		}
		if n := droppedNote(res); n != "" {
			fmt.Fprintf(w, "%s %s\n", p.note.Sprint("incomplete:"), n)
		}
	}
	t := a.totals()
	stats := fmt.Sprintf("in %s (%s, %s, %s)", plural(t.traces, "trace"), plural(t.events, "event"),
		plural(t.allocations, "allocation"), plural(t.streams, "stream"))
	switch {
	case t.errors+t.warnings == 0:
		fmt.Fprintf(w, "no findings %s\n", stats)
	case t.errors > 0:
		fmt.Fprintf(w, "%s, %s %s\n", p.error.Sprint(plural(t.errors, "error")), plural(t.warnings, "warning"), stats)
	default:
		fmt.Fprintf(w, "0 errors, %s %s\n", p.warning.Sprint(plural(t.warnings, "warning")), stats)
	}
}

func writeFinding(w io.Writer, f *checker.Finding, withTrace bool, p *palette) {
	sev := p.warning.Sprint(f.Severity.String())
	if f.Severity == checker.SeverityError {
		sev = p.error.Sprint(f.Severity.String())
	}
	fmt.Fprintf(w, "%s%s %s", sev, p.rule.Sprintf("[%s]", f.Rule), f.Message)
	if f.Count > 1 {
		fmt.Fprintf(w, " (x%d)", f.Count)
	}
	fmt.Fprintln(w)
	if withTrace {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("trace:"), f.Trace)
	}
	if f.Alloc != nil {
		fmt.Fprintf(w, "  %s %d bytes at 0x%x by %s\n", p.label.Sprint("allocation:"), f.Alloc.Size, f.Alloc.Ptr, describeOp(&f.Alloc.Op))
		writeFrames(w, &f.Alloc.Op, p)
	}
	for i := range f.Ops {
		op := &f.Ops[i]
		if f.Alloc != nil && op.Seq == f.Alloc.Seq {
			continue // The allocation line above is this call.
		}
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint(op.Role+":"), describeOp(op))
		writeFrames(w, op, p)
	}
	if f.Why != "" {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("why:"), f.Why)
	}
	if f.Fix != "" {
		fmt.Fprintf(w, "  %s %s\n", p.label.Sprint("fix:"), f.Fix)
	}
}

// describeOp says what a call was, where it ran and where it was made:
// "cudaLaunchKernel of scale on stream s2 (non-blocking stream created at
// app.cu:6), tid 1, at app.cu:14".
func describeOp(o *checker.Op) string {
	s := o.API
	if o.Kernel != "" {
		s += " of " + o.Kernel
	}
	switch o.StreamKind {
	case "":
		if o.Stream != "" {
			s += " on stream " + o.Stream
		} else {
			s += " on the host"
		}
	case hb.KindLegacy.String(), hb.KindPerThread.String():
		s += " on the " + o.StreamKind // Its name would only repeat this.
	default:
		if o.StreamCreatedAt != "" {
			s += fmt.Sprintf(" on stream %s (%s created at %s)", o.Stream, o.StreamKind, o.StreamCreatedAt)
		} else {
			s += fmt.Sprintf(" on stream %s (%s)", o.Stream, o.StreamKind)
		}
	}
	return fmt.Sprintf("%s, tid %d, at %s", s, o.TID, o.Site())
}

// writeFrames prints an operation's callers, innermost first, below its
// site (already printed on the operation's line).
func writeFrames(w io.Writer, o *checker.Op, p *palette) {
	frames := o.Stack
	if len(frames) > 0 && frames[0].String() == o.Site() {
		frames = frames[1:]
	}
	for i, fr := range frames {
		if i == maxFrames {
			fmt.Fprintln(w, p.dim.Sprintf("      ... %s", plural(len(frames)-maxFrames, "more frame")))
			return
		}
		fmt.Fprintln(w, p.dim.Sprintf("      from %s", fr))
	}
}
