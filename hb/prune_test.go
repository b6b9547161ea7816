package hb

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// applier returns a function that applies an operation on a non-blocking
// stream of host thread 1 to e, numbering the events.
func applier(e *Engine) func(op model.Op, stream uint64) Step {
	seq := uint64(0)
	return func(op model.Op, stream uint64) Step {
		seq++
		return e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, TID: 1, Flags: model.FlagNonBlocking})
	}
}

// TestDestroyedStreamsPruned creates, uses, synchronizes and destroys a
// stream over and over, as a program with a stream per step does: the
// engine must keep the clocks of the live streams only, and clocks as wide
// as the streams alive (a clock per stream ever created, each as wide as
// their number, made memory and time grow with its square).
func TestDestroyedStreamsPruned(t *testing.T) {
	e := New()
	apply := applier(e)
	for range 2000 {
		apply(model.OpStreamCreate, 0x500)
		apply(model.OpLaunch, 0x500)
		apply(model.OpStreamSync, 0x500)
		apply(model.OpStreamDestroy, 0x500)
	}
	clocks := 0
	for _, a := range e.Agents() {
		if a.clock != nil {
			clocks++
		}
		if a.ID != HostAgent && a.Ops() != 1 {
			t.Fatalf("agent %d: %d operations, want 1", a.ID, a.Ops())
		}
	}
	if clocks > 2 {
		t.Errorf("%d agents of %d keep a clock, want the host's at most", clocks, len(e.Agents()))
	}
	// The slots of the streams gone are handed on: clocks stay narrow.
	if w := len(e.HostClock()); w > 3 {
		t.Errorf("the host clock is %d slots wide after 2000 streams, one alive at a time", w)
	}
}

// TestDestroyedStreamKeptUntilOrdered destroys a stream with work the host
// was not ordered after: that work may still run, so a new stream's work
// must not be ordered after it, until a device synchronization.
func TestDestroyedStreamKeptUntilOrdered(t *testing.T) {
	e := New()
	apply := applier(e)
	apply(model.OpStreamCreate, 0x500)
	old := apply(model.OpLaunch, 0x500).Epoch
	apply(model.OpStreamDestroy, 0x500)
	apply(model.OpStreamCreate, 0x600)
	if st := apply(model.OpLaunch, 0x600); st.Clock.Covers(old) {
		t.Fatal("work on a new stream is ordered after a destroyed stream's unfinished work")
	}
	apply(model.OpDeviceSync, 0)
	if st := apply(model.OpLaunch, 0x600); !st.Clock.Covers(old) {
		t.Fatal("after a device synchronization, work is not ordered after the destroyed stream's")
	}
	if len(e.dying) != 0 {
		t.Errorf("%d destroyed streams still kept after the device synchronization", len(e.dying))
	}
}
