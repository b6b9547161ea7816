package checker

import (
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleFreedArgumentWord is the id of the rule this file defines.
const RuleFreedArgumentWord RuleID = "freed-argument-word"

// freedArgumentWordRule: freed-argument-word. It is checked by weakUses
// below, at each launch with weak words (model.Event.Weak).
var freedArgumentWordRule = &ruleDef{
	rank:     140,
	id:       RuleFreedArgumentWord,
	severity: SeverityNote,
	doc: Documentation{
		Title: "a word inside a launch's aggregate parameter, not a pointer slot, holds an address of freed memory: a use after free only if the kernel reads it as a pointer",
		Text:  "a word inside a launch's aggregate parameter, not a pointer slot, holds an address of freed memory: a use after free only if the kernel reads it as a pointer (goldens `launch_weak_*`; notes never fail a run, are listed after every error and warning within `--print-limit`, and are counted apart in the summary)",
		Why: "A word inside a by-value struct or table is often padding, an unused entry or bytes the host never filled, " +
			"so an address of freed memory there is weak evidence: a use after free only if the kernel reads that word as a pointer.",
		Fix: "If the kernel dereferences that member, move the free after the launch; if the word is padding or unused, nothing is wrong " +
			"(zeroing the parameter's unused bytes makes the note go away).",
		Ops: []model.Op{model.OpLaunch},
	},
	other: "free",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s has a word inside an aggregate parameter equal to 0x%x, in %s, which was freed", what(op), op.Ptr, x.size)
		f.Why = fmt.Sprintf("Only a word inside a by-value struct or table, not its first, matched memory freed by %s (call #%d), and no pointer slot of the launch (an 8-byte parameter, or the first word of an aggregate) names it. Such words are often padding, unused table entries or bytes the host never filled, so this is a use after free only if the kernel reads that word as a pointer.",
			other.Where(), other.Seq)
		f.Fix = fmt.Sprintf("If the kernel dereferences that member, move the free at %s after the launch at %s; if the word is padding or unused, nothing is wrong (zeroing the parameter's unused bytes makes the note go away).", other.Site(), op.Site())
	},
}

var _ = register(freedArgumentWordRule)

// weakUses checks a launch's weak addresses (model.Event.Weak): words of
// its parameters that are not pointer slots, such as the later words of a
// by-value struct, which may be padding or bytes the host never filled. One
// in a live allocation is a use, as a slot's is (a struct may hold a real
// pointer anywhere). One that names only freed memory is a note, not a use
// after free: nothing says the kernel reads that word as an address
// (docs/launch-arguments.md). Addresses also among the strong ones are
// skipped; they were checked as strong.
func (c *Checker) weakUses(ev *model.Event, st *hb.Step) {
	strong, weak := ev.StrongPtrs(), ev.WeakPtrs()
	if len(strong)+len(weak) > maxScannedPtrs {
		// Sorted copies: deduplication and membership by search.
		c.ptrs = append(append(c.ptrs[:0], strong...), weak...)
		strong, weak = c.ptrs[:len(strong)], c.ptrs[len(strong):]
		slices.Sort(strong)
		slices.Sort(weak)
		for i, p := range weak {
			if _, dup := slices.BinarySearch(strong, p); !dup && (i == 0 || p != weak[i-1]) {
				c.weakUse(ev, st, p)
			}
		}
		return
	}
	for i, p := range weak {
		if !seenBefore(weak[:i], p) && !seenBefore(strong, p) {
			c.weakUse(ev, st, p)
		}
	}
}

// weakUse checks one weak address: see weakUses.
func (c *Checker) weakUse(ev *model.Event, st *hb.Step, addr uint64) {
	if a := c.allocs.find(addr); a != nil && a.freed {
		// A word in a range the driver may have handed out again is no
		// evidence of anything (see mayBeReallocated).
		if !c.mayBeReallocated(a, ev) {
			c.stats.Uses++
			c.report(freedArgumentWordRule, a, c.accessOf(ev, st, addr), &a.free)
		}
		return
	}
	c.use(ev, st, addr)
}
