package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// handCaptured gives a captured event record or wait to the collectors of
// races in captures: they order the capture's work (the graph's edges), as
// the capture's own clocks say. A wait joined its event's latest captured
// record before it in the same capture; a record that is a finding's own
// operation (fixed) is not context, and joins nothing here.
func (rc *Recorder) handCaptured(cd *candidate, cols []*collector, fixed map[uint64]*recorded) {
	r := cd.r
	touched := []hb.AgentID{r.step.agent}
	if r.ev.Op == model.OpStreamWait {
		var record *recorded
		recs := rc.captured[r.ev.Event][:cd.prior]
		for i := len(recs) - 1; i >= 0 && record == nil; i-- {
			if _, isFixed := fixed[recs[i].ev.Seq]; !isFixed {
				record = recs[i]
			}
		}
		if record != nil && record.step.capture == r.step.capture {
			r.record, r.target = record, record.step.agent
			touched = append(touched, record.step.agent)
		}
	}
	for _, c := range cols {
		if c.f.Capture != "" && r.ev.Seq > c.lo && r.ev.Seq < c.hi && slices.ContainsFunc(touched, c.involves) {
			c.win.add(r)
		}
	}
}
