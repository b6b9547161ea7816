package checker

import (
	"fmt"
	"sort"

	"github.com/streamcheck/streamcheck/model"
)

// RuleLeak is the id of the rule this file defines.
const RuleLeak RuleID = "leak"

// leakRule: leak. It is checked by its end hook below, at the end of a
// complete trace.
var leakRule = &ruleDef{
	rank:     90,
	endRank:  20,
	state:    func(c *Checker) any { return leaks{c} },
	id:       RuleLeak,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "stream-ordered memory is never freed (reported with --leak-check full; by default only counted)",
		Text:  "stream-ordered memory is never freed; reported only with `--leak-check full` (by default one summary line counts the allocations and bytes live at exit: programs keep what they use until exit, as Python programs do their models)",
		Why: "Stream-ordered memory stays reserved in its pool until it is freed: " +
			"an allocation that is never freed, made again and again, grows the pool until allocations fail.",
		Fix: "Free the allocation with cudaFreeAsync on a stream ordered after its last use.",
		Ops: []model.Op{model.OpMallocAsync, model.OpPtrImport, model.OpGraphLaunch},
	},
	role: "allocation",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op := x.op
		f.Message = fmt.Sprintf("%s allocates %s that is never freed", what(op), x.size)
		f.Why = "The trace ended with the allocation still live; stream-ordered memory stays reserved in its pool until freed."
		f.Fix = fmt.Sprintf("Free it with cudaFreeAsync on %s after its last use.", op.StreamRef)
	},
}

var _ = register(leakRule)

// leaks is the leak rule's state: none but the checker's memory.
type leaks struct{ c *Checker }

// atEnd counts the stream-ordered memory still live at the end of a
// complete trace and, with Options.Leaks, reports each allocation of it,
// in the order they were made.
func (l leaks) atEnd(complete bool) {
	if !complete {
		return
	}
	c := l.c
	var leaks []*allocation
	c.allocs.byBase.all(func(a *allocation) {
		if a.async && !a.freed {
			leaks = append(leaks, a)
		}
	})
	sort.Slice(leaks, func(i, j int) bool { return leaks[i].alloc.seq < leaks[j].alloc.seq })
	for _, a := range leaks {
		c.stats.LiveAtExit++
		c.stats.LiveBytesAtExit += a.size
		if c.opts.Leaks {
			c.report(leakRule, a, a.alloc, nil)
		}
	}
}
