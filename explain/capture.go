package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// addCaptured hands a captured operation to the collectors of races in
// captures: its event records and waits order the capture's work (the
// graph's edges), as the capture's own clocks say. record is the event's
// most recent captured record before it.
func (rp *replay) addCaptured(ev *model.Event, st *hb.Step, record *recorded) {
	var keep *recorded
	get := func() *recorded {
		if keep == nil {
			keep = &recorded{ev: ev.Clone(), step: copyStep(st)}
		}
		return keep
	}
	if _, isFixed := rp.fixed[ev.Seq]; isFixed {
		rp.fixed[ev.Seq] = get()
		return
	}
	var touched []hb.AgentID
	switch ev.Op {
	case model.OpEventRecord:
		rp.lastCaptured[ev.Event] = get()
		touched = append(touched, st.Agent)
	case model.OpStreamWait:
		touched = append(touched, st.Agent)
		if record != nil && record.step.capture == st.Capture {
			r := get()
			r.record, r.target = record, record.step.agent
			touched = append(touched, record.step.agent)
		}
	default:
		return
	}
	for _, c := range rp.cols {
		if c.f.Capture != "" && ev.Seq > c.lo && ev.Seq < c.hi && slices.ContainsFunc(touched, c.involves) {
			c.win.add(get())
		}
	}
}
