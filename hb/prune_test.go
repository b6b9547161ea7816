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

// eventApplier is applier for ops that also name an event.
func eventApplier(e *Engine) func(op model.Op, stream, event uint64) Step {
	seq := uint64(0)
	return func(op model.Op, stream, event uint64) Step {
		seq++
		return e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, Event: event, TID: 1, Flags: model.FlagNonBlocking})
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
		if !a.clock.isNil() {
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
	if w := e.HostClock().Len(); w > 3 {
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

// TestUnorderedDestroyedStreamsKeepResidue: a program makes a stream per
// step and never waits for them until the end. Each destroyed stream keeps
// only what its clock knew beyond the host's (its own count, and what it
// waited for), not a clock as wide as every stream before it; a device
// synchronization still orders the host after all of their work, including
// the work one of them only knew of through an event.
func TestUnorderedDestroyedStreamsKeepResidue(t *testing.T) {
	e := New()
	apply := eventApplier(e)
	const n = 3000
	var epochs []Epoch
	for i := range n {
		s := 0x500 + uint64(i%3)
		apply(model.OpStreamCreate, s, 0)
		if i > 0 {
			apply(model.OpStreamWait, s, 0x10) // the previous step's record
		}
		epochs = append(epochs, apply(model.OpLaunch, s, 0).Epoch)
		apply(model.OpEventRecord, s, 0x10)
		apply(model.OpStreamDestroy, s, 0)
	}
	for _, a := range e.Agents()[1:] {
		if !a.clock.isNil() || len(a.residue) > 3 {
			t.Fatalf("destroyed agent %d keeps a %d-slot clock and %d residue entries", a.ID, a.clock.Len(), len(a.residue))
		}
	}
	// Each stream took over the slot of the one before (Engine.inherit),
	// which is then done with; the last is dying.
	if len(e.dying) != 1 {
		t.Fatalf("%d destroyed streams listed as dying, want 1", len(e.dying))
	}
	apply(model.OpStreamCreate, 0x900, 0)
	if c := apply(model.OpLaunch, 0x900, 0).Clock; c.Covers(epochs[0]) || c.Covers(epochs[n-1]) {
		t.Fatal("a new stream's work is ordered after destroyed streams' unfinished work")
	}
	apply(model.OpDeviceSync, 0, 0)
	c := apply(model.OpLaunch, 0x900, 0).Clock
	for i, ep := range epochs {
		if !c.Covers(ep) {
			t.Fatalf("after a device synchronization, work is not ordered after destroyed stream %d's launch", i)
		}
	}
	if len(e.dying) != 0 {
		t.Errorf("%d destroyed streams still dying after the device synchronization", len(e.dying))
	}
}

// TestResidueJoinedByDeviceSync: a destroyed stream that waited on an event
// of a stream the host never waited for passes that work on: a device
// synchronization covers it through the destroyed stream's residue, even
// after the other stream is gone too and its own device entry pruned.
func TestResidueJoinedByDeviceSync(t *testing.T) {
	e := New()
	seq := uint64(0)
	apply := func(op model.Op, stream, event uint64, device int32) Step {
		seq++
		return e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, Event: event, Device: device, TID: 1, Flags: model.FlagNonBlocking})
	}
	// Stream a on device 1 does work; stream b on device 0 waits for it.
	apply(model.OpStreamCreate, 0xa, 0, 1)
	work := apply(model.OpLaunch, 0xa, 0, 1).Epoch
	apply(model.OpEventRecord, 0xa, 0x10, 1)
	apply(model.OpStreamCreate, 0xb, 0, 0)
	apply(model.OpStreamWait, 0xb, 0x10, 0)
	apply(model.OpLaunch, 0xb, 0, 0)
	apply(model.OpStreamDestroy, 0xb, 0, 0)
	apply(model.OpStreamDestroy, 0xa, 0, 1)
	// Synchronizing device 0 waits for b, which waited for a's work.
	apply(model.OpDeviceSync, 0, 0, 0)
	apply(model.OpStreamCreate, 0xc, 0, 0)
	if c := apply(model.OpLaunch, 0xc, 0, 0).Clock; !c.Covers(work) {
		t.Fatal("device 0's synchronization does not cover the work its destroyed stream waited for")
	}
}
