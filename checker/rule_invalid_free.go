package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/model"
)

// RuleInvalidFree is the id of the rule this file defines.
const RuleInvalidFree RuleID = "invalid-free"

// invalidFreeRule: invalid-free. It is checked by its hook below, after
// double-free's.
var invalidFreeRule = &ruleDef{
	rank:     70,
	id:       RuleInvalidFree,
	state:    func(c *Checker) any { return invalidFree{c} },
	severity: SeverityError,
	doc: Documentation{
		Title: "a free names an address that is not the start of a live allocation",
		Text:  "a free names an address that is not the start of a live allocation",
		Why: "Only the address an allocation call returned can be freed: a free of a pointer into an allocation, " +
			"or of an address no allocation returned, fails or releases memory the program did not mean to.",
		Fix: "Free the address the allocation call returned, once.",
		Ops: freeOps,
	},
	role: "free",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op := x.op
		if f.Alloc != nil {
			f.Message = fmt.Sprintf("%s frees 0x%x, which points %d bytes into the allocation of %s", what(op), op.Ptr, op.Ptr-f.Alloc.Ptr, x.size)
			f.Why = fmt.Sprintf("Only the address returned by %s can be freed.", f.Alloc.Where())
			f.Fix = fmt.Sprintf("Free 0x%x, the start of the allocation, at %s.", f.Alloc.Ptr, op.Site())
		} else {
			f.Message = fmt.Sprintf("%s frees 0x%x, which is not a live allocation", what(op), op.Ptr)
			f.Why = "No allocation starting at this address was recorded, or it was freed so long ago that it is no longer remembered."
			f.Fix = fmt.Sprintf("Free only addresses returned by an allocation call, at %s.", op.Site())
		}
		if op.Rejected {
			f.Message += " (CUDA rejected the call)"
			f.Why += " CUDA rejected this free with an error, so it did nothing, but the program still has the bug."
		}
	},
}

var _ = register(invalidFreeRule)

// invalidFree is the rule's hooks.
type invalidFree struct{ c *Checker }

// onBadFree reports a free of an address inside a live allocation, or of
// one no allocation holds.
func (r invalidFree) onBadFree(ev *model.Event, _ *allocation, free access) bool {
	if in := r.c.allocs.find(free.ptr); in != nil && !in.freed {
		r.c.report(invalidFreeRule, in, free, nil)
		return true
	}
	r.c.report(invalidFreeRule, nil, free, nil)
	return true
}
