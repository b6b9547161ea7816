package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleUseBeforeAlloc is the id of the rule this file defines.
const RuleUseBeforeAlloc RuleID = "use-before-alloc"

// useBeforeAllocRule: use-before-alloc. It is checked by its hook below,
// after reuse-while-in-flight's, and in captures (capture.go).
var useBeforeAllocRule = &ruleDef{
	rank:     10,
	id:       RuleUseBeforeAlloc,
	severity: SeverityError,
	doc: Documentation{
		Title: "a use of stream-ordered memory is not ordered after its allocation",
		Text:  "a use of stream-ordered memory is not ordered after its allocation",
		Why: "cudaMallocAsync returns the pointer at once, but the memory is valid only in the stream order of the allocation: " +
			"work on another stream that nothing orders after the allocation may run before the memory is the program's.",
		Fix: "Record an event on the allocating stream after the allocation and make the using stream wait on it " +
			"(cudaStreamWaitEvent) before the use, or allocate on the stream that uses the memory.",
		Ops: useOps,
	},
	unorderedUse: true,
	alsoForm:     "before the allocation was ordered before it",
	state:        func(c *Checker) any { return useBeforeAlloc{c} },
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		f.Message = fmt.Sprintf("%s uses %s before its allocation is ordered before it", what(x.op), x.size)
		f.Why = c.unorderedWhy(x.other, x.op)
		f.Fix = c.handOffFix(x.other, x.op)
	},
	explainCaptured: func(f *Finding, x *explainArgs, k *captureText) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s uses %s before its allocation is ordered before it%s", what(op), x.size, k.in)
		f.Why = fmt.Sprintf("%s: nothing orders the allocation at %s before the use at %s, so each launch of the graph may run the use first.", k.graph, other.Site(), op.Site())
		f.Fix = k.fix
	},
	missing: missingOther,
}

var _ = register(useBeforeAllocRule)

// useBeforeAlloc is the rule's hooks.
type useBeforeAlloc struct{ c *Checker }

// onUnorderedUse reports a use not ordered after the allocation.
func (r useBeforeAlloc) onUnorderedUse(ev *model.Event, st *hb.Step, a *allocation, addr uint64) bool {
	r.c.report(useBeforeAllocRule, a, r.c.accessOf(ev, st, addr), &a.alloc)
	return true
}
