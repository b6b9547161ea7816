package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleFreeBeforeAlloc is the id of the rule this file defines.
const RuleFreeBeforeAlloc RuleID = "free-before-alloc"

// freeBeforeAllocRule: free-before-alloc. It is checked by its hook below,
// after free-while-in-flight's, and in captures (capture.go).
var freeBeforeAllocRule = &ruleDef{
	rank:     50,
	id:       RuleFreeBeforeAlloc,
	state:    func(c *Checker) any { return freeBeforeAlloc{c} },
	severity: SeverityError,
	doc: Documentation{
		Title: "a free is not ordered after its allocation",
		Text:  "a free is not ordered after its allocation",
		Why: "A free on a stream that nothing orders after the allocation may run before the allocation does: " +
			"the pool can be handed back memory it has not given out yet, and work between the two has no memory of its own.",
		Fix: "Record an event on the allocating stream after the allocation and make the freeing stream wait on it (cudaStreamWaitEvent) before the free, " +
			"or free on the allocating stream.",
		Ops: freeOps,
	},
	role: "free",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		f.Message = fmt.Sprintf("%s frees %s before its allocation is ordered before the free", what(x.op), x.size)
		f.Why = c.unorderedWhy(x.other, x.op)
		f.Fix = c.handOffFix(x.other, x.op)
	},
	explainCaptured: func(f *Finding, x *explainArgs, k *captureText) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s before its allocation is ordered before the free%s", what(op), x.size, k.in)
		f.Why = fmt.Sprintf("%s: nothing orders the allocation at %s before the free at %s.", k.graph, other.Site(), op.Site())
		f.Fix = k.fix
	},
	missing: missingOther,
}

var _ = register(freeBeforeAllocRule)

// freeBeforeAlloc is the rule's hooks.
type freeBeforeAlloc struct{ c *Checker }

// onLiveFree reports a free not ordered after the allocation, unless the
// free synchronizes (syncs): it waited for the allocation too.
func (r freeBeforeAlloc) onLiveFree(ev *model.Event, st *hb.Step, a *allocation, free access, syncs bool) bool {
	if !syncs && !st.Clock.Covers(r.c.epoch(&a.alloc)) {
		r.c.report(freeBeforeAllocRule, a, free, &a.alloc)
	}
	return true
}
