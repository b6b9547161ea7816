package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleMismatchedFree is the id of the rule this file defines.
const RuleMismatchedFree RuleID = "mismatched-free"

// mismatchedFreeRule: mismatched-free. It is checked by its hooks below,
// first of the free hooks (its precedence), for frees that CUDA accepted
// (release, lifetime.go) and that it rejected (rejectedFree, lifetime.go): a
// mismatched free is reported instead of the double-free or invalid-free
// it may also look like, once.
var mismatchedFreeRule = &ruleDef{
	rank:       80,
	precedence: -1,
	state:      func(c *Checker) any { return mismatchedFree{c} },
	id:         RuleMismatchedFree,
	severity:   SeverityError,
	doc: Documentation{
		Title: "memory is freed by another allocation family's API",
		Text: "memory is freed by another allocation family's API: `cudaFree`/`cuMemFree` of pinned host memory (`cudaMallocHost`, `cudaHostAlloc`, `cuMemAllocHost`), of registered host memory or of a range mapped with `cuMemMap`; " +
			"`cudaFreeHost` of device, managed or stream-ordered memory; `cudaFreeAsync` of pinned, registered or managed memory; `cudaHostUnregister` of memory never registered; `cuMemUnmap` of memory it did not map; any free of a module's global variable (`cudaGetSymbolAddress`, `cuModuleGetGlobal`), which only its module's unload frees " +
			"(also when CUDA rejected the call: reported instead of double-free or invalid-free)",
		Why: "Each family of memory has its own free: the driver keeps device, pinned host, registered, managed, pool and mapped memory apart, and a free by another family's API fails, " +
			"or releases the memory without the bookkeeping its own API does. A program that ignores the error keeps the memory allocated (a leak) or goes on to use memory it believes freed.",
		Fix: "Free memory with its own family's API: cudaFree for cudaMalloc, cudaMallocPitch and cudaMallocManaged memory; cudaFreeHost for cudaMallocHost and cudaHostAlloc memory; " +
			"cudaHostUnregister for memory cudaHostRegister registered; cudaFreeAsync (or cudaFree) for cudaMallocAsync memory; cuMemUnmap, then cuMemRelease of the handle, for a cuMemMap mapping.",
		Ops: []model.Op{model.OpFree, model.OpFreeAsync, model.OpVmmUnmap},
	},
	role: "free",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op := x.op
		if f.Alloc == nil {
			f.Message = fmt.Sprintf("%s unregisters 0x%x, which no cudaHostRegister registered", what(op), op.Ptr)
			f.Why = "Only host memory that cudaHostRegister (cuMemHostRegister) page-locked can be unregistered; no registration of this address was recorded."
			f.Fix = fmt.Sprintf("Remove the %s at %s, or register the memory first; memory from cudaMallocHost or cudaHostAlloc is freed with cudaFreeHost.", op.API, op.Site())
		} else if x.family == famModule {
			f.Message = fmt.Sprintf("%s frees %s of a module global variable", what(op), x.size)
			f.Why = fmt.Sprintf("%s gave this address: the module's load allocated it, and only the unload of the module (cuModuleUnload, cuLibraryUnload) frees it.", f.Alloc.Where())
			f.Fix = fmt.Sprintf("Remove the %s at %s.", op.API, op.Site())
		} else {
			mem := x.family.describe(f.Alloc.API)
			right := x.family.frees(f.Alloc.API)
			f.Message = fmt.Sprintf("%s frees %s of %s", what(op), x.size, mem)
			f.Why = fmt.Sprintf("The memory was allocated by %s, and %s is not the free of %s: only %s frees it.", f.Alloc.Where(), op.API, mem, right)
			f.Fix = fmt.Sprintf("Free it with %s at %s, instead of %s.", right, op.Site(), op.API)
		}
		if op.Rejected {
			f.Message += " (CUDA rejected the call)"
			f.Why += " CUDA rejected this free with an error, so it did nothing, but the program still has the bug."
		}
	},
}

var _ = register(mismatchedFreeRule)

// mismatchedFree is the rule's hooks.
type mismatchedFree struct{ c *Checker }

// onBadFree reports another family's free of an address where no live
// allocation starts, and settles the free if it does.
func (r mismatchedFree) onBadFree(ev *model.Event, a *allocation, free access) bool {
	return r.c.mismatchedFree(ev, a, free)
}

// onLiveFree reports another family's free of a live allocation; CUDA
// accepted it, so the memory is released all the same, and the other free
// rules are asked too.
func (r mismatchedFree) onLiveFree(ev *model.Event, st *hb.Step, a *allocation, free access, syncs bool) bool {
	r.c.mismatchedFree(ev, a, free)
	return false
}

// onRefusedFree reports another family's free of a live allocation that
// CUDA refused: that, not the address, is the bug.
func (r mismatchedFree) onRefusedFree(ev *model.Event, a *allocation, free access) bool {
	return r.c.mismatchedFree(ev, a, free)
}

// mismatchedFree reports the free ev makes of the allocation a at its
// address when ev is another family's free, and says whether it did; a is
// nil when no allocation starts there, or may be a freed one. A
// cudaHostUnregister of an address that no registration made is a
// mismatched free too.
func (c *Checker) mismatchedFree(ev *model.Event, a *allocation, free access) bool {
	if a != nil && !a.freed {
		if a.family.freedBy(ev) {
			return false
		}
		c.report(mismatchedFreeRule, a, free, nil)
		return true
	}
	if ev.Op == model.OpFree && ev.Family == model.FamilyRegistered && (a == nil || a.family != famRegistered) {
		c.report(mismatchedFreeRule, nil, free, nil)
		return true
	}
	return false
}

// unmap releases the ranges mapped in [ev.Ptr, ev.Ptr+ev.Size) that an
// unmap (cuMemUnmap) ends: every live mapping that starts in it. An unmap
// that ends none is a free of its address, which reports it.
func (c *Checker) unmap(ev *model.Event, st *hb.Step) {
	var bases []uint64
	old, _ := c.allocs.overlapping(ev.Ptr, ev.Size)
	for _, a := range old {
		if !a.freed && a.base >= ev.Ptr && a.family == famVMM {
			bases = append(bases, a.base)
		}
	}
	if len(bases) == 0 {
		c.release(ev, st, ev.Ptr)
		return
	}
	for _, b := range bases {
		c.release(ev, st, b)
	}
}
