package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleUseAfterFree is the id of the rule this file defines.
const RuleUseAfterFree RuleID = "use-after-free"

// useAfterFreeRule: use-after-free. It is checked by its hooks below (a
// use of freed memory; a use CUDA refused) and in captures (capture.go). A
// use of a range a synchronous free gave back to the driver is one only
// when nothing can have handed the range out again (mayBeReallocated).
var useAfterFreeRule = &ruleDef{
	rank:     20,
	id:       RuleUseAfterFree,
	severity: SeverityError,
	doc: Documentation{
		Title: "memory is used after it was freed",
		Text:  "memory is used after it was freed (also when CUDA rejected the launch, copy or set: the program still used freed memory; a rejected call that names live memory is no use). After a synchronous free that gives the memory back to the driver (`cudaFree` of `cudaMalloc`, pitched or managed memory, `cudaFreeHost`, `cuMemUnmap`), only the freeing thread's next call is one: a library's allocator may have been handed the range since, unseen; later uses are counted as unknown addresses ([docs/rules.md](docs/rules.md))",
		Why: "Once freed, stream-ordered memory goes back to its pool, which may hand it to another allocation at once: " +
			"the use reads or writes memory that may belong to other work.",
		Fix: "Move the free after the last use, or the use before the free.",
		Ops: useOps,
	},
	other: "free",
	state: func(c *Checker) any { return useAfterFree{c} },
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s uses %s after it was freed", what(op), x.size)
		f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was issued (call #%d); the pool may already have handed it to another allocation.",
			other.Where(), other.Seq, what(op), op.Seq)
		f.Fix = fmt.Sprintf("Move the free at %s after the last use, at %s or later.", other.Site(), op.Site())
		if op.Rejected {
			f.Message = fmt.Sprintf("%s uses %s after it was freed (CUDA rejected the call)", what(op), x.size)
			f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was issued (call #%d). CUDA rejected the call with an error, so it did nothing, but the program still used memory it had freed: with another pool, driver or timing the call can be accepted and use memory handed to another allocation.",
				other.Where(), other.Seq, what(op), op.Seq)
		}
	},
	explainCaptured: func(f *Finding, x *explainArgs, k *captureText) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s uses %s after it was freed%s", what(op), x.size, k.in)
		f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was captured (call #%d); at each launch the graph may hand it to another of its allocations.",
			other.Where(), other.Seq, what(op), op.Seq)
		f.Fix = fmt.Sprintf("Move the free at %s after the last use, at %s or later, in the capture.", other.Site(), op.Site())
	},
	// The use was issued after the free; no ordering added between them
	// would make it right (an edge from the use back to the free would
	// close a cycle).
}

var _ = register(useAfterFreeRule)

// useAfterFree is the rule's hooks.
type useAfterFree struct{ c *Checker }

// onFreedUse reports a use of freed memory, unless its range may have been
// handed out again unseen: then the address is counted as unknown.
func (r useAfterFree) onFreedUse(ev *model.Event, st *hb.Step, a *allocation, addr uint64) bool {
	c := r.c
	if c.mayBeReallocated(a, ev) {
		c.stats.UnknownAddressUses++
		return true
	}
	c.report(useAfterFreeRule, a, c.accessOf(ev, st, addr), &a.free)
	return true
}

// onRejected checks a use CUDA refused (rejectedUse).
func (r useAfterFree) onRejected(ev *model.Event) { r.c.rejectedUse(ev) }

// rejectedUse checks a launch, copy or set that CUDA refused. It changed
// nothing and is no use of live memory, but one that names freed memory
// (CUDA answers a copy from a pointer passed to cudaFreeAsync with
// cudaErrorInvalidValue) is the program's use after free all the same.
func (c *Checker) rejectedUse(ev *model.Event) {
	switch ev.Op {
	case model.OpLaunch, model.OpMemcpy, model.OpMemcpyAsync, model.OpMemset, model.OpMemsetAsync:
	default:
		return
	}
	var st hb.Step
	i := 0 // eachUse gives a launch's pointers in order: i is p's index
	eachUse(ev, func(p uint64) {
		first := ev.Op != model.OpLaunch || !seenBefore(ev.Ptrs[:i], p)
		i++
		a := c.allocs.find(p)
		if p == 0 || !first || a == nil || !a.freed {
			return
		}
		if st.Agent == hb.HostAgent {
			// Named only for the report, as a rejected cudaFreeAsync's is.
			st.Agent = c.engine.Stream(ev.Stream, ev.Device, ev.TID).ID
		}
		c.report(useAfterFreeRule, a, c.accessOf(ev, &st, p), &a.free)
	})
}
