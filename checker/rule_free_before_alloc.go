package checker

import "fmt"

// RuleFreeBeforeAlloc is the id of the rule this file defines.
const RuleFreeBeforeAlloc RuleID = "free-before-alloc"

// freeBeforeAllocRule: free-before-alloc. It is checked by checkFree
// (rule_free_while_in_flight.go) and in captures (capture.go).
var freeBeforeAllocRule = &ruleDef{
	rank:     50,
	id:       RuleFreeBeforeAlloc,
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
