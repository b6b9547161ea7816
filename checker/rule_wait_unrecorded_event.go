package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// waitUnrecordedEventRule: wait-unrecorded-event. The engine finds such
// waits (hb.Step.UnrecordedWait); reportUnrecordedWait below reports them,
// naming the event record node noteRecordNode kept, if any.
var waitUnrecordedEventRule = &ruleDef{
	id:       RuleWaitUnrecordedEvent,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "a wait on an event that was never recorded orders nothing",
		Text:  "a wait on an event that was never recorded orders nothing",
		Why: "A wait on an event with no cudaEventRecord before it returns at once: " +
			"the work after it is not ordered after anything, which the program probably meant it to be.",
		Fix: "Record the event (cudaEventRecord) on the producing stream before the wait.",
		Ops: []model.Op{model.OpStreamWait, model.OpEventSync},
	},
	role:  "wait",
	other: "event record node",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s waits on an event that was never recorded", what(op))
		f.Why = "A wait on an event with no cudaEventRecord before it returns at once and orders nothing."
		f.Fix = fmt.Sprintf("Record the event with cudaEventRecord on the producing stream before the wait at %s.", op.Site())
		if other != nil { // only a graph's event record node records it
			f.Why = fmt.Sprintf("The event is recorded only by a graph's event record node (%s), and no launch recorded it before the wait: an executable graph instantiated before that call does not have it (cudaGraphInstantiate copies the graph), so its launches never record the event, and the wait orders nothing.", other.Where())
			f.Fix = fmt.Sprintf("Make the event record node before cudaGraphInstantiate, or instantiate again (or cudaGraphExecUpdate) after %s, so that the launch before the wait at %s records the event.", other.Site(), op.Site())
		}
	},
}

// reportUnrecordedWait reports a wait on an event that was never recorded
// (hb.Step.UnrecordedWait), with the graph event record node that records
// it, if there is one.
func (c *Checker) reportUnrecordedWait(ev *model.Event, st *hb.Step) {
	var node *access
	if n, ok := c.recordNodes[ev.Event]; ok {
		node = &n
	}
	c.report(waitUnrecordedEventRule, nil, c.accessOf(ev, st, 0), node)
}

// noteRecordNode keeps an event record node added to a graph (not an
// executable graph), for a report of a wait on its event.
func (c *Checker) noteRecordNode(ev *model.Event, st *hb.Step) {
	if ev.Exec != 0 {
		return // an executable graph's: its launches do record the event
	}
	if c.recordNodes == nil {
		c.recordNodes = map[uint64]access{}
	}
	c.recordNodes[ev.Event] = c.accessOf(ev, st, 0)
}
