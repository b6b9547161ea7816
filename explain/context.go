package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// syncs is what an event synchronizes with, as the collectors' tests need
// it.
type syncs struct {
	touched []hb.AgentID // The streams it orders or is ordered after.
	device  bool         // A device synchronization.
	legacy  bool         // An operation on the legacy stream.
	// target and record are the stream and event record it joined (see
	// recorded), or 0 and nil.
	target hb.AgentID
	record *recorded
}

// sync says what the event synchronizes with: the stream or event record a
// synchronization or successful query joined, as the engine says
// (hb.Step.Joins). target and record are the record's stream and the
// record a wait, event synchronize or query would join; hostBefore is the
// host's clock before a synchronous copy or set.
func (rp *replay) sync(ev *model.Event, st *hb.Step, target hb.AgentID, record *recorded, hostBefore hb.Clock) syncs {
	eng := rp.chk.Engine()
	var touched []hb.AgentID
	device := false
	legacy := false
	switch ev.Op {
	case model.OpEventRecord, model.OpStreamWait, model.OpHostFunc:
		touched = append(touched, st.Agent)
		if ev.Op == model.OpStreamWait && target != 0 {
			touched = append(touched, target)
		}
	case model.OpStreamSync, model.OpStreamQuery:
		if j, ok := syncJoin(st); ok {
			target = j.From.Agent
			touched = append(touched, target)
		}
	case model.OpEventSync, model.OpEventQuery, model.OpHostFnRun:
		if _, ok := syncJoin(st); ok && record != nil {
			touched = append(touched, target)
		} else {
			record, target = nil, 0
		}
	case model.OpDeviceSync:
		device = true
	case model.OpStreamMemOp:
		// A write of a value, or a wait for one: a wait that was followed
		// orders its stream after writes shown on theirs.
		if ev.MemOp.IsWait() || ev.MemOp.Changes() {
			touched = append(touched, st.Agent)
		}
	case model.OpMemcpy, model.OpMemset:
		host := eng.HostClock()
		for _, a := range eng.Agents() {
			if a.ID != hb.HostAgent && !a.Pruned() && host.Get(a.Slot) > hostBefore.Get(a.Slot) {
				touched = append(touched, a.ID)
			}
		}
	}
	if a := eng.Agent(st.Agent); a.Kind == hb.KindLegacy {
		legacy = true
	}
	return syncs{touched: touched, device: device, legacy: legacy, target: target, record: record}
}

// hand gives the event to the collectors whose findings it synchronizes
// with. get returns the event's kept copy.
func (rp *replay) hand(ev *model.Event, s syncs, isFixed bool, get func() *recorded) {
	for _, c := range rp.cols {
		if ev.Seq <= c.lo || ev.Seq >= c.hi || isFixed && slices.Contains(c.fixed, ev.Seq) {
			continue
		}
		// Device synchronizations are all shown: one on another device than
		// the finding's streams is a bug worth seeing.
		want := s.device || slices.ContainsFunc(s.touched, c.involves)
		join := false
		if !want && s.legacy {
			join = rp.legacyJoins(ev, c)
			want = join
		}
		if want {
			r := get()
			r.target, r.record = s.target, s.record
			r.join = r.join || join
			c.win.add(r)
		}
	}
}

// legacyJoins reports whether an operation on the legacy stream joins
// streams of c's finding: the legacy stream joins the blocking streams of
// its device, and they join it: it orders them among themselves.
func (rp *replay) legacyJoins(ev *model.Event, c *collector) bool {
	eng := rp.chk.Engine()
	return slices.ContainsFunc(c.involved, func(id hb.AgentID) bool {
		if int(id) >= len(eng.Agents()) {
			return false // a stream created later in the trace
		}
		a := eng.Agent(id)
		// A synchronous peer copy joins those of its other devices too.
		onDevice := a.Device == ev.Device ||
			ev.Flags&model.FlagPeer != 0 && (a.Device == ev.PeerSrc || a.Device == ev.PeerDst)
		return onDevice && (a.Kind == hb.KindBlocking || a.Kind == hb.KindPerThread)
	})
}

// syncJoin returns the join of a stream or event synchronization, or a
// successful query, that ordered the host after a stream's work.
func syncJoin(st *hb.Step) (hb.Join, bool) {
	for _, j := range st.Joins() {
		if j.Why.HostSync() {
			return j, true
		}
	}
	return hb.Join{}, false
}
