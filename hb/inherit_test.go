package hb

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// TestHandoffChainInheritsSlots: a program hands work from stream to
// stream by events, destroying each stream once it has handed off, and
// the host never waits. Each new stream, whose first operation waits for
// all the destroyed one did, counts on the destroyed one's slot: clocks
// stay as wide as the streams alive, not as all the streams made (they
// grew with their number, and time with its square). Ordering is kept:
// the last stream's work follows every stream's, a stream made apart from
// the chain follows none of it, and a device synchronization all of it.
func TestHandoffChainInheritsSlots(t *testing.T) {
	e := New()
	apply := eventApplier(e)
	const n = 3000
	var epochs []Epoch
	var last Clock
	for i := range n {
		s := 0x500 + uint64(i)*0x10
		apply(model.OpStreamCreate, s, 0)
		if i > 0 {
			apply(model.OpStreamWait, s, 0x10)
		}
		st := apply(model.OpLaunch, s, 0)
		epochs, last = append(epochs, st.Epoch), st.Clock.Clone()
		apply(model.OpEventRecord, s, 0x10)
		apply(model.OpStreamDestroy, s, 0)
	}
	if w := last.Len(); w > 4 {
		t.Errorf("the last stream's clock is %d slots wide after %d streams, one alive at a time", w, n)
	}
	apply(model.OpStreamCreate, 0x900, 0)
	apply(model.OpStreamWait, 0x900, 0x10)
	c := apply(model.OpLaunch, 0x900, 0).Clock
	for i, ep := range epochs {
		if !c.Covers(ep) {
			t.Fatalf("work after the chain's last event is not ordered after stream %d's launch", i)
		}
	}
	apply(model.OpStreamCreate, 0xa00, 0)
	if c := apply(model.OpLaunch, 0xa00, 0).Clock; c.Covers(epochs[0]) || c.Covers(epochs[n-1]) {
		t.Fatal("a stream apart from the chain is ordered after the chain's unfinished work")
	}
	apply(model.OpDeviceSync, 0, 0)
	c = apply(model.OpLaunch, 0xa00, 0).Clock
	for i, ep := range epochs {
		if !c.Covers(ep) {
			t.Fatalf("after a device synchronization, work is not ordered after stream %d's launch", i)
		}
	}
}

// TestNoInheritanceWithoutAllTheWork: a stream whose first operation waits
// for an event recorded before the destroyed stream's last work does not
// take its slot: that work would look ordered before the new stream's.
func TestNoInheritanceWithoutAllTheWork(t *testing.T) {
	e := New()
	apply := applier(e)
	seq := uint64(100)
	wait := func(stream, event uint64) Step {
		seq++
		return e.Apply(&model.Event{Seq: seq, Op: model.OpStreamWait, Stream: stream, Event: event, TID: 1})
	}
	apply(model.OpStreamCreate, 0x500)
	e.Apply(&model.Event{Seq: 50, Op: model.OpEventRecord, Stream: 0x500, Event: 0x10, TID: 1})
	late := apply(model.OpLaunch, 0x500).Epoch
	apply(model.OpStreamDestroy, 0x500)
	apply(model.OpStreamCreate, 0x600)
	wait(0x600, 0x10)
	if c := apply(model.OpLaunch, 0x600).Clock; c.Covers(late) {
		t.Fatal("a stream that waited for an event recorded before a destroyed stream's launch is ordered after the launch")
	}
}
