package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleReuseWhileInFlight is the id of the rule this file defines.
const RuleReuseWhileInFlight RuleID = "reuse-while-in-flight"

// reuseWhileInFlightRule: reuse-while-in-flight. It is checked by its
// hook below, in preference to use-before-alloc (its precedence), and by
// relaunchAfterFree below.
var reuseWhileInFlightRule = &ruleDef{
	rank:     40,
	id:       RuleReuseWhileInFlight,
	severity: SeverityError,
	doc: Documentation{
		Title: "a new allocation is used while work on the freed allocation at the same addresses may still be running",
		Text:  "a new allocation is used while work on the freed allocation at the same addresses may still run (reported instead of `use-before-alloc` when it applies)",
		Why: "A pool may hand a freed allocation's addresses to a new one as soon as the free is ordered: " +
			"a use of the new memory on a stream that nothing orders after the old memory's last use may overwrite what that work still reads, or read what it still writes.",
		Fix: "Make the stream that uses the new allocation wait (cudaStreamWaitEvent) on an event recorded after the old memory's last use, " +
			"or order the free after that use so that the pool's reuse is ordered too.",
		Ops: useOps,
	},
	other:        "use of the freed allocation",
	unorderedUse: true,
	alsoForm:     "on memory the pool handed back while work on its earlier allocation may still have run",
	precedence:   -1,
	state:        func(c *Checker) any { return reuseWhileInFlight{c} },
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s uses %s while work on the freed allocation at the same addresses may still run", what(op), x.size)
		f.Why = fmt.Sprintf("The pool gave these addresses to the allocation made by %s, but %s used them before they were freed and nothing orders that use before %s. %s",
			f.Alloc.Where(), other.Where(), what(op), c.unorderedWhy(&f.Alloc.Op, op))
		f.Fix = c.handOffFix(&f.Alloc.Op, op)
		if f.Alloc.Op.Seq == op.Seq { // a graph launch allocating its own memory again
			f.Why = fmt.Sprintf("The graph allocates these addresses again at each launch (they are the graph's), and %s used the last launch's memory before it was freed; nothing orders that use before %s. %s",
				other.Where(), what(op), c.unorderedWhy(other, op))
			f.Fix = c.handOffFix(other, op)
		}
	},
	missing: func(f *Finding) (uint64, bool, bool) {
		if f.Alloc == nil {
			return 0, false, false
		}
		if f.Alloc.Seq == f.Ops[0].Seq && len(f.Ops) > 1 {
			// A graph launch that allocates its memory again: it must wait
			// for the old memory's use.
			return f.Ops[1].Seq, false, true
		}
		return f.Alloc.Seq, true, true
	},
}

var _ = register(reuseWhileInFlightRule)

// reuseWhileInFlight is the rule's hooks.
type reuseWhileInFlight struct{ c *Checker }

// onUnorderedUse reports a use not ordered after the allocation that is
// not ordered after a use of the freed memory the allocation reuses either.
func (r reuseWhileInFlight) onUnorderedUse(ev *model.Event, st *hb.Step, a *allocation, addr uint64) bool {
	c := r.c
	if old := c.unorderedInherited(a, st); old != nil {
		c.report(reuseWhileInFlightRule, a, c.accessOf(ev, st, addr), old)
		return true
	}
	return false
}

// relaunchAfterFree checks a launch that allocates its graph's memory at
// addr again after the program freed the last launch's: the address is the
// graph's, not one a pool picked, so the graph's work on the new memory
// races with the old memory's uses that the launch is not ordered after
// (a stream read it, then freed it, and the relaunch did not wait).
func (c *Checker) relaunchAfterFree(ev *model.Event, st *hb.Step, addr uint64) {
	a := c.allocs.at(addr)
	if a == nil {
		return
	}
	if old := c.unorderedInherited(a, st); old != nil {
		c.report(reuseWhileInFlightRule, a, c.accessOf(ev, st, addr), old)
	}
}

// unorderedInherited returns a use a inherited from freed memory at its
// addresses that st is not ordered after, or nil.
func (c *Checker) unorderedInherited(a *allocation, st *hb.Step) *access {
	for i := range a.inherited {
		if !st.Clock.Covers(c.epoch(&a.inherited[i])) {
			return &a.inherited[i]
		}
	}
	return nil
}
