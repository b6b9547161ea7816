package explain

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// before reports whether u happens before v, as the engine decided it:
// among the work of one capture, as the capture's own clocks do; between
// captured work and other work, never (the graph's work runs at its
// launches, which the graph shows nothing of).
func before(u, v *Vertex) bool {
	if !u.hasStep || !v.hasStep || u.Seq >= v.Seq || u.step.capture != v.step.capture {
		return false
	}
	if u.step.capture != 0 {
		return v.step.localClock.Covers(u.step.local)
	}
	if u.step.epoch.Clock != 0 {
		return v.step.clock.Covers(u.step.epoch)
	}
	// A host call that no one is ordered after by epoch (a synchronization):
	// what it knew is known to everything that follows it.
	return v.step.clock.CoversAll(u.step.clock)
}

// orderings returns the edges among vs (sorted by seq): stream and host
// order between consecutive operations of a lane, and the other orderings
// that no shown operation implies.
func orderings(vs []*Vertex) []Edge {
	var out []Edge
	last := map[hb.AgentID]*Vertex{}
	for _, v := range vs {
		if !v.hasStep {
			continue
		}
		if u := last[v.Lane.Agent]; u != nil && u.step.capture == v.step.capture {
			kind := EdgeStream
			if v.Lane.Host() {
				kind = EdgeHost
			}
			out = append(out, Edge{From: u.ID, To: v.ID, Kind: kind, Label: string(kind)})
		}
		last[v.Lane.Agent] = v
	}
	for _, u := range vs {
		for _, v := range vs {
			if u.Lane.Agent == v.Lane.Agent || !before(u, v) {
				continue
			}
			implied := false
			for _, w := range vs {
				if w != u && w != v && before(u, w) && before(w, v) {
					implied = true
					break
				}
			}
			if !implied {
				kind, label := classify(u, v)
				out = append(out, Edge{From: u.ID, To: v.ID, Kind: kind, Label: label})
			}
		}
	}
	return out
}

// classify says why u, on one lane, is ordered directly before v, on another.
func classify(u, v *Vertex) (EdgeKind, string) {
	if u.Op == model.OpEventRecord.String() && v.joined == u.Seq {
		return EdgeEvent, "event " + v.event
	}
	if u.Op == model.OpHostFunc.String() && v.joined == u.Seq {
		return EdgeSync, "host function ran"
	}
	if u.memWrite && v.memFollowed && u.memAddr&^7 == v.memAddr&^7 {
		return EdgeValue, fmt.Sprintf("value at 0x%x", v.memAddr)
	}
	switch u.Op {
	case model.OpMemcpy.String(), model.OpMemset.String():
		if !v.Lane.Host() {
			return EdgeSync, "host waited for " + u.API + ", then issued"
		}
	}
	uk, vk := u.Lane.Kind, v.Lane.Kind
	legacy := hb.KindLegacy.String()
	blocking := func(k string) bool { return k == hb.KindBlocking.String() || k == hb.KindPerThread.String() }
	switch {
	case v.Lane.Host() && hostSync(v.Op):
		return EdgeSync, "host waits (" + v.API + ")"
	case u.Lane.Host():
		return EdgeIssue, "issued after"
	case (uk == legacy && blocking(vk)) || (vk == legacy && blocking(uk)):
		return EdgeJoin, string(EdgeJoin)
	}
	return EdgeOrder, string(EdgeOrder)
}

// hostSync reports whether a host call of the given op makes the host wait
// for stream work (a query when it answers success).
func hostSync(op string) bool {
	switch op {
	case model.OpStreamSync.String(), model.OpEventSync.String(), model.OpDeviceSync.String(),
		model.OpStreamQuery.String(), model.OpEventQuery.String(), model.OpHostFnRun.String():
		return true
	}
	return false
}
