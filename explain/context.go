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
// record a wait, event synchronize or query would join.
func (rc *Recorder) sync(ev *model.Event, st *hb.Step, target hb.AgentID, record *recorded) syncs {
	eng := rc.chk.Engine()
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
			if a.ID != hb.HostAgent && !a.Pruned() && host.Get(a.Slot) > rc.hostBefore(a.Slot) {
				touched = append(touched, a.ID)
			}
		}
	}
	if a := eng.Agent(st.Agent); a.Kind == hb.KindLegacy {
		legacy = true
	}
	return syncs{touched: touched, device: device, legacy: legacy, target: target, record: record}
}

// legacyJoins reports whether an operation on the legacy stream joins
// streams of c's finding: the legacy stream joins the blocking streams of
// its device, and they join it: it orders them among themselves. nAgents
// is the number of agents the engine had at the operation.
func (rc *Recorder) legacyJoins(ev *model.Event, nAgents int, c *collector) bool {
	eng := rc.chk.Engine()
	return slices.ContainsFunc(c.involved, func(id hb.AgentID) bool {
		if int(id) >= nAgents {
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
