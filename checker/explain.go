package checker

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/hb"
)

// explainArgs are what a rule's explanation of a finding is made from:
// its operations (other is nil without a second), the size and address of
// its allocation ("" without one) and its note.
type explainArgs struct {
	op, other *Op
	size      string
	note      memNote
	family    family      // The allocation's.
	perf      *perfDetail // A performance lint's finding.
}

// captureText is what the explanations of races inside a captured graph
// share: the message's ending, the start of the Why, and the fix.
type captureText struct {
	in, graph, fix string
}

// explain fills a finding's Message, Why and Fix from its resolved
// operations, as its rule says.
func (c *Checker) explain(f *Finding, d *ruleDef, p *pendingFinding) {
	x := &explainArgs{op: &f.Ops[0], note: p.memNote, family: p.family, perf: p.perf}
	if len(f.Ops) > 1 {
		x.other = &f.Ops[1]
	}
	if f.Alloc != nil {
		x.size = fmt.Sprintf("%d bytes at 0x%x", f.Alloc.Size, f.Alloc.Ptr)
	}
	if f.Capture != "" {
		if d.explainCaptured != nil {
			d.explainCaptured(f, x, captureTexts(f, x.op, x.other))
		}
		return
	}
	d.explain(c, f, x)
}

// captureTexts returns the texts the explanations of a race between two
// operations captured into one graph share: at each launch the graph runs
// its nodes in the order the capture gave them, whatever orders the launch
// itself.
func captureTexts(f *Finding, op, other *Op) *captureText {
	return &captureText{
		in:    fmt.Sprintf(", in the graph captured from %s", f.captureRef),
		graph: fmt.Sprintf("Both were captured into the graph begun on %s, which runs its nodes in the order that stream order and the event waits made during the capture gave them", f.captureRef),
		fix: fmt.Sprintf("During the capture, record an event on %s after the %s at %s and make %s wait on it (cudaStreamWaitEvent) before the %s at %s.",
			other.StreamRef, other.API, other.Site(), op.StreamRef, op.API, op.Site()),
	}
}

// explainAlso says in a finding's Why which other rules' occurrences were
// folded into it (see unorderedUse) and lists them in Also.
func (c *Checker) explainAlso(f *Finding, d *ruleDef, also map[RuleID]int) {
	if f.Allocations > 1 && d.unorderedUse && f.Capture == "" {
		all := fmt.Sprintf("all %d", f.Allocations)
		if f.Allocations == 2 {
			all = "both"
		}
		f.Fix += fmt.Sprintf(" The same wait covers %s allocations this use hit, when the event is recorded after the last of them is made and filled.", all)
	}
	for _, r := range ruleDefs { // a stable order
		n := also[r.id]
		if n == 0 {
			continue
		}
		f.Also = append(f.Also, string(r.id))
		times := "once"
		if n > 1 {
			times = fmt.Sprintf("%d times", n)
		}
		f.Why += fmt.Sprintf(" The same use, unordered after the same stream, also occurred as %s (%s, %s, counted in this finding): one wait before it fixes both.",
			r.id, r.alsoForm, times)
	}
}

// what names an operation briefly: "cudaLaunchKernel of scale on stream
// `s2`".
func what(o *Op) string {
	s := o.API
	if o.Kernel != "" {
		s += " of " + o.Kernel
	} else if o.Bytes != 0 {
		s += " of " + humanBytes(o.Bytes)
	}
	if o.Stream != "" {
		return s + " on " + o.StreamRef
	}
	return s
}

// unorderedWhy says why nothing orders before (on its stream) before after.
func (c *Checker) unorderedWhy(before, after *Op) string {
	if before == nil || after == nil {
		return ""
	}
	if before.Stream == "" {
		return fmt.Sprintf("%s ran on the host after %s was issued.", before.API, what(after))
	}
	if after.Stream == "" {
		return fmt.Sprintf("The host did not synchronize with %s (stream, event or device synchronize, or a successful query) between %s and %s.",
			before.StreamRef, before.Site(), after.Site())
	}
	ba, aa := c.engine.Agent(before.Agent), c.engine.Agent(after.Agent)
	if legacyPair(ba, aa) {
		nb := before
		if ba.Kind != hb.KindNonBlocking {
			nb = after
		}
		return fmt.Sprintf("%s is non-blocking, so it does not synchronize with the legacy default stream, and no event or host synchronization orders %s before %s.",
			capitalize(nb.StreamRef), before.Site(), after.Site())
	}
	return fmt.Sprintf("They run on different streams, %s and %s, and no event recorded on %s after %s was waited on by %s before %s, nor did the host synchronize with %s in between.",
		before.StreamRef, after.StreamRef, before.StreamRef, before.Site(), after.StreamRef, after.Site(), before.StreamRef)
}

func legacyPair(a, b *hb.Agent) bool {
	return (a.Kind == hb.KindLegacy && b.Kind == hb.KindNonBlocking) || (b.Kind == hb.KindLegacy && a.Kind == hb.KindNonBlocking)
}

// handOffFix proposes the event hand-off that orders before before after.
func (c *Checker) handOffFix(before, after *Op) string {
	if before == nil || after == nil {
		return ""
	}
	if before.Stream == "" || after.Stream == "" {
		return fmt.Sprintf("Synchronize the host with the work of %s before %s at %s.", before.Where(), after.API, after.Site())
	}
	if fix, ok := collectiveFix(before, after); ok {
		return fix
	}
	if fix := frameworkHandOff(before, after); fix != "" {
		return fix // in the program's language: PyTorch's or CuPy's
	}
	return fmt.Sprintf("Record an event on %s after the %s at %s and make %s wait on it (cudaStreamWaitEvent) before the %s at %s.",
		before.StreamRef, before.API, before.Site(), after.StreamRef, after.API, after.Site())
}

// capitalize starts a sentence with s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
