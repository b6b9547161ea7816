package hb_test

import (
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// applier returns a function that applies events to a new engine, with
// sequence numbers, on thread 1 unless the event names another.
func applier() func(model.Event) hb.Step {
	e := hb.New()
	seq := uint64(0)
	return func(ev model.Event) hb.Step {
		seq++
		ev.Seq = seq
		if ev.TID == 0 {
			ev.TID = 1
		}
		return e.Apply(&ev)
	}
}

// TestHostFnRun: a host function that ran orders the host after the work
// its stream had before the enqueue, not after work issued after it; a
// run with no known enqueue, or a second run of one, orders nothing.
func TestHostFnRun(t *testing.T) {
	apply := applier()
	const s1, s2 = 0x1000, 0x2000
	a1 := apply(model.Event{Op: model.OpStreamCreate, Stream: s1}).Agent
	apply(model.Event{Op: model.OpStreamCreate, Stream: s2})
	before := apply(model.Event{Op: model.OpLaunch, Stream: s1}).Epoch
	fn := apply(model.Event{Op: model.OpHostFunc, Stream: s1, Value: 7}).Epoch
	after := apply(model.Event{Op: model.OpLaunch, Stream: s1}).Epoch
	other := apply(model.Event{Op: model.OpLaunch, Stream: s2}).Epoch

	if st := apply(model.Event{Op: model.OpHostFnRun, Value: 8}); len(st.Joins()) != 0 || st.Clock.Covers(before) {
		t.Errorf("run of an unknown token: joins %v, host covers the launch %v", st.Joins(), st.Clock.Covers(before))
	}
	st := apply(model.Event{Op: model.OpHostFnRun, Value: 7, TID: 2})
	j, ok := st.Joined(hb.JoinHostFunc)
	if !ok || j.Into != hb.HostAgent || j.From.Agent != a1 || j.From.Clock != fn.Clock {
		t.Errorf("run: joins %+v, want the host after s1's host function", st.Joins())
	}
	if st.Agent != hb.HostAgent || !st.Clock.Covers(before) || !st.Clock.Covers(fn) {
		t.Errorf("run: host clock %v does not cover the work before the host function", st.Clock)
	}
	if st.Clock.Covers(after) || st.Clock.Covers(other) {
		t.Errorf("run: host clock %v covers work not before the host function", st.Clock)
	}
	// A free on another thread after the run is ordered after that work.
	free := apply(model.Event{Op: model.OpFreeAsync, Stream: s2, TID: 3})
	if !free.Clock.Covers(before) || free.Clock.Covers(after) {
		t.Errorf("free after the run: clock %v, want it after the launch before the host function only", free.Clock)
	}
	if st := apply(model.Event{Op: model.OpHostFnRun, Value: 7}); len(st.Joins()) != 0 {
		t.Errorf("second run of one enqueue: joins %v, want none", st.Joins())
	}
	// A host function with no token (recorded without one) has no run.
	apply(model.Event{Op: model.OpHostFunc, Stream: s2})
	if st := apply(model.Event{Op: model.OpHostFnRun}); len(st.Joins()) != 0 {
		t.Errorf("run of token 0: joins %v, want none", st.Joins())
	}
}

// TestHostFnRunFailedOrCaptured: a host function CUDA rejected, or one
// captured into a graph, does not run when issued: a run of its token
// orders nothing.
func TestHostFnRunFailedOrCaptured(t *testing.T) {
	apply := applier()
	const s1 = 0x1000
	apply(model.Event{Op: model.OpStreamCreate, Stream: s1})
	k := apply(model.Event{Op: model.OpLaunch, Stream: s1}).Epoch
	apply(model.Event{Op: model.OpHostFunc, Stream: s1, Value: 1, Result: 1})
	apply(model.Event{Op: model.OpCaptureBegin, Stream: s1})
	apply(model.Event{Op: model.OpHostFunc, Stream: s1, Value: 2})
	apply(model.Event{Op: model.OpCaptureEnd, Stream: s1})
	for _, token := range []uint64{1, 2} {
		if st := apply(model.Event{Op: model.OpHostFnRun, Value: token}); len(st.Joins()) != 0 || st.Clock.Covers(k) {
			t.Errorf("run of token %d: joins %v, want none", token, st.Joins())
		}
	}
}

// TestHostFnPendingBounded: host functions whose runs never come are kept
// to a bound, oldest dropped first; the newest still order the host.
func TestHostFnPendingBounded(t *testing.T) {
	apply := applier()
	const s1, n = 0x1000, 20000
	apply(model.Event{Op: model.OpStreamCreate, Stream: s1})
	for token := uint64(1); token <= n; token++ {
		apply(model.Event{Op: model.OpHostFunc, Stream: s1, Value: token})
	}
	if st := apply(model.Event{Op: model.OpHostFnRun, Value: 1}); len(st.Joins()) != 0 {
		t.Errorf("run of the oldest of %d pending host functions: joins %v, want it dropped", n, st.Joins())
	}
	if st := apply(model.Event{Op: model.OpHostFnRun, Value: n}); len(st.Joins()) != 1 {
		t.Errorf("run of the newest host function: joins %v, want one", st.Joins())
	}
}
