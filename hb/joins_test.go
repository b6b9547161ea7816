package hb_test

import (
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// whys lists the reasons of a step's joins, in order.
func whys(st *hb.Step) []hb.JoinReason {
	var out []hb.JoinReason
	for _, j := range st.Joins() {
		out = append(out, j.Why)
	}
	return out
}

// TestJoinsOfSynchronization: a step lists the joins its synchronization
// made, and from which stream's work: stream and event synchronization
// always, queries only when they returned success, waits only for a
// recorded event.
func TestJoinsOfSynchronization(t *testing.T) {
	e := hb.New()
	seq := uint64(0)
	apply := func(op model.Op, stream, event uint64, result int32) hb.Step {
		seq++
		return e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, Event: event, TID: 1, Result: result})
	}
	const s1, s2, ev = 0x1000, 0x2000, 0x10
	a1 := apply(model.OpStreamCreate, s1, 0, 0).Agent
	a2 := apply(model.OpStreamCreate, s2, 0, 0).Agent
	apply(model.OpEventCreate, 0, ev, 0)
	if st := apply(model.OpStreamWait, s2, ev, 0); len(st.Joins()) != 0 || !st.UnrecordedWait {
		t.Errorf("wait for an unrecorded event: joins %v, UnrecordedWait %v", st.Joins(), st.UnrecordedWait)
	}
	k := apply(model.OpLaunch, s1, 0, 0).Epoch
	apply(model.OpEventRecord, s1, ev, 0)
	st := apply(model.OpStreamWait, s2, ev, 0)
	if j, ok := st.Joined(hb.JoinEventWait); !ok || j.Into != a2 || j.From.Agent != a1 || j.From.Clock != k.Clock+1 {
		t.Errorf("event wait: joins %+v, want s2 after s1's record", st.Joins())
	}
	for _, c := range []struct {
		op     model.Op
		stream uint64
		result int32
		want   []hb.JoinReason
	}{
		{model.OpStreamQuery, s1, model.ResultNotReady, nil},
		{model.OpStreamQuery, s1, model.ResultSuccess, []hb.JoinReason{hb.JoinStreamQuery}},
		{model.OpStreamSync, s1, model.ResultSuccess, []hb.JoinReason{hb.JoinStreamSync}},
		{model.OpEventQuery, 0, model.ResultNotReady, nil},
		{model.OpEventQuery, 0, model.ResultSuccess, []hb.JoinReason{hb.JoinEventQuery}},
		{model.OpEventSync, 0, model.ResultSuccess, []hb.JoinReason{hb.JoinEventSync}},
	} {
		st := apply(c.op, c.stream, ev, c.result)
		if got := whys(&st); !slices.Equal(got, c.want) {
			t.Errorf("%v returning %v: joins %v, want %v", c.op, c.result, got, c.want)
		}
		for _, j := range st.Joins() {
			if j.Into != hb.HostAgent || j.From.Agent != a1 || !j.Why.HostSync() {
				t.Errorf("%v: join %+v, want the host after s1", c.op, j)
			}
		}
	}
	// The next event's step has its own joins.
	if st := apply(model.OpLaunch, s1, 0, 0); len(st.Joins()) != 0 {
		t.Errorf("launch on a created stream: joins %v", st.Joins())
	}
}

// TestJoinsOfDeviceAndLegacy: a device synchronization lists a join for
// every stream of its device; the legacy stream's implicit synchronization
// lists the blocking streams it joined, and the blocking stream's next
// operation the legacy stream.
func TestJoinsOfDeviceAndLegacy(t *testing.T) {
	ev := stepper(hb.New())
	const n = 40 // more than any small fixed array would hold
	var streams []hb.AgentID
	for i := range n {
		s := uint64(0x1000 + i*0x100)
		flags := uint32(0)
		if i%2 == 1 {
			flags = model.FlagNonBlocking
		}
		streams = append(streams, ev(model.OpStreamCreate, s, 0, flags).Agent)
		ev(model.OpLaunch, s, 0, 0)
	}
	st := ev(model.OpLaunch, model.StreamLegacy, 0, 0)
	l := st.Agent
	var legacy []hb.AgentID
	for _, j := range st.Joins() {
		if j.Why != hb.JoinLegacy || j.Into != st.Agent {
			t.Errorf("legacy launch: join %+v", j)
		}
		legacy = append(legacy, j.From.Agent)
	}
	if len(legacy) != n/2 {
		t.Errorf("legacy launch joined %d streams, want the %d blocking ones", len(legacy), n/2)
	}
	st = ev(model.OpLaunch, 0x1000, 0, 0)
	if j, ok := st.Joined(hb.JoinLegacy); !ok || j.From.Agent != l || j.Into != streams[0] {
		t.Errorf("blocking launch after legacy work: joins %+v", st.Joins())
	}
	st = ev(model.OpDeviceSync, 0, 0, 0)
	var synced []hb.AgentID
	for _, j := range st.Joins() {
		if j.Why != hb.JoinDeviceSync || j.Into != hb.HostAgent {
			t.Errorf("device sync: join %+v", j)
		}
		synced = append(synced, j.From.Agent)
	}
	if len(synced) != n+1 { // the legacy stream too
		t.Errorf("device sync joined %d streams, want %d", len(synced), n+1)
	}
}

// TestApplyAllocatesNothing: applying an event kept on the caller's stack
// allocates nothing, through the dispatch table too: an indirect call
// there made the event and the Step escape to the heap.
func TestApplyAllocatesNothing(t *testing.T) {
	e := hb.New()
	const s1, ev1 = 0x1000, 0x10
	for _, op := range []model.Op{model.OpStreamCreate, model.OpEventCreate, model.OpLaunch, model.OpEventRecord, model.OpStreamSync} {
		e.Apply(&model.Event{Op: op, Stream: s1, Event: ev1, TID: 1})
	}
	for _, op := range []model.Op{model.OpLaunch, model.OpStreamSync, model.OpEventSync, model.OpEventQuery, model.OpDeviceSync} {
		allocs := testing.AllocsPerRun(100, func() {
			ev := model.Event{Op: op, Stream: s1, Event: ev1, TID: 1}
			st := e.Apply(&ev)
			_ = st.Joins()
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations an event, want 0", op, allocs)
		}
	}
}
