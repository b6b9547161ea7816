package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// This file lets tools that replay a trace (package explain, the timeline
// command) see what the analysis saw, event by event, with the same agents
// and names the findings use.

// NewWith is New with options.
func NewWith(trace string, tables *model.Tables, opts Options) *Checker {
	c := New(trace, tables)
	c.opts = opts
	return c
}

// LastStep returns what the happens-before engine learned from the event
// most recently passed to Add. It is a view into the checker's state, valid
// until the next call of Add; copy its Clock to keep it.
func (c *Checker) LastStep() *hb.Step { return &c.step }

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
