package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// freeWhileInFlightRule: free-while-in-flight. It is checked by checkFree
// below (with free-before-alloc) and in captures (capture.go).
var freeWhileInFlightRule = &ruleDef{
	id:       RuleFreeWhileInFlight,
	severity: SeverityError,
	doc: Documentation{
		Title: "a free is not ordered after an earlier use on another stream, which may still be running",
		Text:  "a free is not ordered after an earlier use on another stream (also `cudaFree` of async memory, `cudaFreeAsync` of `cudaMalloc` memory; not `cudaFree`/`cuMemFree` of `cudaMalloc`, pitched or managed memory, which waits for its device's work)",
		Why: "cudaFreeAsync frees the memory in the stream order of the free only, and cudaFree of stream-ordered memory does not wait for work that uses it: " +
			"work on another stream that the free is not ordered after may still be using the memory when the pool hands it to another allocation.",
		Fix: "Record an event on the using stream after the last use and make the freeing stream wait on it (cudaStreamWaitEvent) before the free, " +
			"or synchronize the host with that stream before a host-side free.",
		Ops: freeOps,
	},
	role:  "free",
	other: "earlier use",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it", what(op), x.size, what(other))
		if op.Stream == "" {
			f.Why = fmt.Sprintf("%s does not wait for work that uses the memory: the driver assumes all accesses are complete, but nothing made the host wait for %s.",
				op.API, other.Where())
			f.Fix = fmt.Sprintf("Synchronize stream %s (cudaStreamSynchronize, or cudaEventSynchronize on an event recorded after the use at %s) before the %s at %s",
				other.Stream, other.Site(), op.API, op.Site())
			if op.Op == model.OpVmmUnmap.String() {
				f.Fix += "." // a mapping has no stream-ordered unmap
			} else {
				f.Fix += fmt.Sprintf(", or free with cudaFreeAsync on stream %s.", other.Stream)
			}
		} else {
			f.Why = fmt.Sprintf("The free is ordered on stream %s only; %s is not ordered before it, so the memory can be reused while that work still runs. %s",
				op.Stream, other.Where(), c.unorderedWhy(other, op))
			if op.Op == model.OpGraphLaunch.String() {
				f.Why = "A graph launch frees the memory the graph's last launch allocated and nothing freed since (cudaGraphInstantiateFlagAutoFreeOnLaunch; without it CUDA refuses the launch). " + f.Why
			}
			f.Fix = c.handOffFix(other, op)
		}
	},
	explainCaptured: func(f *Finding, x *explainArgs, k *captureText) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it%s", what(op), x.size, what(other), k.in)
		f.Why = fmt.Sprintf("%s: nothing orders the use at %s before the free at %s, so each launch of the graph may free the memory while that work runs.", k.graph, other.Site(), op.Site())
		f.Fix = k.fix
	},
	missing: missingOther,
}

// checkFree checks the free of the live allocation a: it reports a use the
// free is not ordered after (free-while-in-flight) or else, unless the
// free synchronizes (syncs), an allocation it is not ordered after
// (free-before-alloc). An unordered use is reported in preference to an
// unordered allocation: it is the later of the two, so ordering the free
// after it fixes both.
func (c *Checker) checkFree(a *allocation, free access, st *hb.Step, syncs bool) {
	uses := a.uses()
	for i := range uses {
		if !st.Clock.Covers(c.epoch(&uses[i])) {
			c.report(freeWhileInFlightRule, a, free, &uses[i])
			return
		}
	}
	if !syncs && !st.Clock.Covers(c.epoch(&a.alloc)) {
		c.report(freeBeforeAllocRule, a, free, &a.alloc)
	}
}
