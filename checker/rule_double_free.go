package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleDoubleFree is the id of the rule this file defines.
const RuleDoubleFree RuleID = "double-free"

// doubleFreeRule: double-free. It is checked by reportBadFree below, with
// invalid-free, for frees that CUDA accepted (release, lifetime.go) and that
// it rejected (rejectedFree below).
var doubleFreeRule = &ruleDef{
	rank:     60,
	id:       RuleDoubleFree,
	severity: SeverityError,
	doc: Documentation{
		Title: "memory is freed twice",
		Text:  "memory is freed twice (also when CUDA rejected the second free: the program still has the bug)",
		Why: "After the first free the pool may have handed the addresses to another allocation: " +
			"a second free can release memory that other work now owns, and CUDA rejects it only when the addresses are still unused.",
		Fix: "Remove one of the two frees.",
		Ops: freeOps,
	},
	role:  "free",
	other: "free",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s a second time", what(op), x.size)
		f.Why = fmt.Sprintf("The allocation was already freed by %s (call #%d), and no allocation at this address was made in between.", other.Where(), other.Seq)
		if op.Rejected {
			f.Message += " (CUDA rejected the call)"
			f.Why += " CUDA rejected this free with an error, so it did nothing, but the program still has the bug."
		}
		f.Fix = fmt.Sprintf("Remove the free at %s or the one at %s.", op.Site(), other.Site())
	},
}

var _ = register(doubleFreeRule)

// reportBadFree reports a free of an address that is not the start of a
// live allocation: freed before (double-free), inside one, or unknown.
func (c *Checker) reportBadFree(free access) {
	if a := c.allocs.at(free.ptr); a != nil && a.freed && a.base == a.alloc.ptr {
		c.report(doubleFreeRule, a, free, &a.free)
		return
	}
	if in := c.allocs.find(free.ptr); in != nil && !in.freed {
		c.report(invalidFreeRule, in, free, nil)
		return
	}
	c.report(invalidFreeRule, nil, free, nil)
}

// rejectedFree checks a free that CUDA refused. It changed nothing, but a
// program that frees twice or frees an interior pointer has a bug even when
// the driver catches it and the program ignores the error.
func (c *Checker) rejectedFree(ev *model.Event) {
	if ev.Ptr == 0 {
		return
	}
	a := c.allocs.at(ev.Ptr)
	if _, graphs := c.graphAllocs[ev.Ptr]; a == nil && graphs && ev.Result == model.ResultCaptureInvalidated {
		return // A graph's allocation, freed in a capture an illegal call invalidated: CUDA says so.
	}
	var st hb.Step
	if ev.Op == model.OpFreeAsync {
		st.Agent = c.engine.Stream(ev.Stream, ev.Device, ev.TID).ID
	}
	free := c.accessOf(ev, &st, ev.Ptr)
	if c.mismatchedFree(ev, a, free) {
		return // Another family's free: that, not a bad address, is the bug.
	}
	if a != nil && !a.freed {
		return // The free failed for another reason (a bad stream, say).
	}
	c.reportBadFree(free)
}
