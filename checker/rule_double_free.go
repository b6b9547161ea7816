package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/model"
)

// RuleDoubleFree is the id of the rule this file defines.
const RuleDoubleFree RuleID = "double-free"

// doubleFreeRule: double-free. It is checked by its hook below, before
// invalid-free's, for frees that CUDA accepted (release, lifetime.go) and
// that it rejected (rejectedFree, lifetime.go).
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
	state: func(c *Checker) any { return doubleFree{c} },
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

// doubleFree is the rule's hooks.
type doubleFree struct{ c *Checker }

// onBadFree reports a free of the start of a freed allocation.
func (r doubleFree) onBadFree(ev *model.Event, _ *allocation, free access) bool {
	if a := r.c.allocs.at(free.ptr); a != nil && a.freed && a.base == a.alloc.ptr {
		r.c.report(doubleFreeRule, a, free, &a.free)
		return true
	}
	return false
}
