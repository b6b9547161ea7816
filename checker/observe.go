package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// This file lets tools that follow the analysis of a trace (observers:
// Options.Observe; the timeline and explain) describe what it saw, event by
// event, with the same agents and names the findings use.

// Describe resolves an event into an Op the way findings show operations
// (API, kernel, stream name and kind, the program's own stack frames), given
// the step Add learned from it. The role is left empty.
//
// With Options.Symbolize set, Describe symbolizes the event's stack, which
// adds strings to the tables: call it only once the trace's reader is done
// (see Finish).
func (c *Checker) Describe(ev *model.Event, st *hb.Step) Op {
	a := c.accessOf(ev, st, ev.Ptr)
	return c.resolve("", &a)
}

// DescribeAsRecorded is Describe with the stack's frames as the trace
// recorded them: it never symbolizes, so an observer may call it while the
// trace is read, and what it resolves is kept apart from the frames
// findings get.
func (c *Checker) DescribeAsRecorded(ev *model.Event, st *hb.Step) Op {
	sym, stacks := c.opts.Symbolize, c.resolvedStacks
	c.opts.Symbolize, c.resolvedStacks = nil, c.recordedStacks
	a := c.accessOf(ev, st, ev.Ptr)
	op := c.resolve("", &a)
	c.recordedStacks = c.resolvedStacks
	c.opts.Symbolize, c.resolvedStacks = sym, stacks
	return op
}
