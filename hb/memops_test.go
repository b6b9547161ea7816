package hb_test

import (
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// memTrace drives an engine with two non-blocking streams A and B, for the
// stream memory operation tests.
type memTrace struct {
	t   *testing.T
	e   *hb.Engine
	seq uint64
}

const (
	memA, memB = 0xa000, 0xb000
	flag       = 0x7f00_0000_0100
)

func newMemTrace(t *testing.T) *memTrace {
	m := &memTrace{t: t, e: hb.New()}
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: memA, Flags: model.FlagNonBlocking})
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: memB, Flags: model.FlagNonBlocking})
	return m
}

func (m *memTrace) apply(ev model.Event) hb.Step {
	m.seq++
	ev.Seq, ev.TID = m.seq, 1
	st := m.e.Apply(&ev)
	st.Clock = st.Clock.Clone()
	return st
}

func (m *memTrace) launch(stream uint64) hb.Step {
	return m.apply(model.Event{Op: model.OpLaunch, Stream: stream})
}

func (m *memTrace) write(stream uint64, kind model.MemOpKind, value uint64, flags uint32) hb.Step {
	return m.apply(model.Event{Op: model.OpStreamMemOp, Stream: stream, Ptr: flag, MemOp: kind, Value: value, MemFlags: flags})
}

func (m *memTrace) wait(stream uint64, kind model.MemOpKind, value uint64, flags uint32) hb.Step {
	return m.apply(model.Event{Op: model.OpStreamMemOp, Stream: stream, Ptr: flag, MemOp: kind, Value: value, MemFlags: flags})
}

// ordered says whether a launch on B now is ordered after step before.
func (m *memTrace) ordered(before hb.Step) bool {
	return m.launch(memB).Clock.Covers(before.Epoch)
}

func TestMemoryWaitFollowsWrite(t *testing.T) {
	m := newMemTrace(t)
	work := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, 0)
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("wait for the written value: %v, want followed", st.MemWait)
	}
	if !m.ordered(work) {
		t.Error("B's work after the wait is not ordered after A's work before the write")
	}
	later := m.launch(memA)
	if m.ordered(later) {
		t.Error("B is ordered after A's work issued after the write")
	}
}

func TestMemoryWaitOtherValue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  model.MemOpKind
		value uint64
		flags uint32
	}{
		{"eq another value", model.MemOpWait32, 2, model.MemWaitEQ},
		{"geq a larger value", model.MemOpWait32, 2, model.MemWaitGEQ},
		{"and no common bit", model.MemOpWait32, 2, model.MemWaitAND},
		{"nor of all ones", model.MemOpWait32, 0xffff_fffe, model.MemWaitNOR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemTrace(t)
			work := m.launch(memA)
			m.write(memA, model.MemOpWrite32, 1, 0)
			if st := m.wait(memB, tc.kind, tc.value, tc.flags); st.MemWait != hb.MemWaitNoWrite {
				t.Fatalf("got %v, want no write", st.MemWait)
			}
			if m.ordered(work) {
				t.Error("a wait no write can meet ordered B")
			}
		})
	}
}

// A monotonic counter: A writes i after step i's work, B waits for >= i.
// Past maxMemWrites iterations the dropped writes are all overwritten by
// smaller values B is already ordered after, so each wait is still
// followed, and B is never ordered after A's next step.
func TestMemoryWaitCounter(t *testing.T) {
	m := newMemTrace(t)
	for i := uint64(1); i <= 100; i++ {
		work := m.launch(memA)
		m.write(memA, model.MemOpWrite64, i, 0)
		next := m.launch(memA)
		if st := m.wait(memB, model.MemOpWait64, i, model.MemWaitGEQ); st.MemWait != hb.MemWaitFollowed {
			t.Fatalf("step %d: %v, want followed", i, st.MemWait)
		}
		if !m.ordered(work) {
			t.Fatalf("step %d: B not ordered after A's work", i)
		}
		if m.ordered(next) {
			t.Fatalf("step %d: B ordered after A's work issued after the write", i)
		}
	}
}

// A flag set by A and reset by B after each wait: the earlier set is
// overwritten by B's reset, so the second wait is ordered after the second
// set only.
func TestMemoryWaitToggle(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ)
	m.write(memB, model.MemOpWrite32, 0, 0)
	between := m.launch(memA)
	set := m.write(memA, model.MemOpWrite32, 1, 0)
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("second wait: %v", st.MemWait)
	}
	if !m.ordered(between) || !m.ordered(set) {
		t.Error("the second wait is not ordered after the second set")
	}
}

// Without the reset, the first set can still meet the second wait: it is
// ordered only after what both sets are.
func TestMemoryWaitEarlierWriteStillMeets(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	between := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, 0)
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("wait: %v", st.MemWait)
	}
	if m.ordered(between) {
		t.Error("the wait is ordered after the second set, though the first can meet it")
	}
}

// Writes on two streams that can each meet the wait: it is ordered after
// what both are ordered after, not after either alone.
func TestMemoryWaitTwoWriters(t *testing.T) {
	m := newMemTrace(t)
	const c = 0xc000
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: c, Flags: model.FlagNonBlocking})
	a := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 5, 0)
	cw := m.launch(c)
	m.write(c, model.MemOpWrite32, 7, 0)
	if st := m.wait(memB, model.MemOpWait32, 5, model.MemWaitGEQ); st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("wait: %v", st.MemWait)
	}
	if m.ordered(a) || m.ordered(cw) {
		t.Error("ordered after one of two writers that can each meet the wait")
	}
}

func TestMemoryWaitNoBarrier(t *testing.T) {
	m := newMemTrace(t)
	work := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, model.MemWriteNoBarrier)
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitNoBarrier {
		t.Fatalf("got %v, want no barrier", st.MemWait)
	}
	if m.ordered(work) {
		t.Error("a write without a memory barrier ordered B")
	}
}

func TestMemoryWaitWidthAndCondition(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	// A 64-bit wait on a 32-bit write: the write can meet it (it sets part
	// of the value), and nothing overwrites it; followed.
	if st := m.wait(memB, model.MemOpWait64, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitFollowed {
		t.Errorf("64-bit wait on a 32-bit write: %v", st.MemWait)
	}
	if st := m.wait(memB, model.MemOpWait32, 1, 7); st.MemWait != hb.MemWaitUnknown {
		t.Errorf("unknown condition: %v, want unknown", st.MemWait)
	}
	// The 32-bit comparison is cyclic and ignores the high bits.
	m.write(memA, model.MemOpWrite32, 0x1_0000_0002, 0)
	if st := m.wait(memB, model.MemOpWait32, 0xffff_fff0, model.MemWaitGEQ); st.MemWait != hb.MemWaitFollowed {
		t.Errorf("cyclic geq: %v", st.MemWait)
	}
}

// When older writes were dropped and nothing before the wait overwrote
// them, whether they meet it is unknown.
func TestMemoryWaitDroppedWrites(t *testing.T) {
	m := newMemTrace(t)
	for i := range 40 {
		m.write(memA, model.MemOpWrite32, uint64(i%2), 0) // 0, 1, 0, 1...
	}
	// B is ordered after none of them: the dropped ones may have been the
	// last to land.
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitUnknown {
		t.Fatalf("got %v, want unknown", st.MemWait)
	}
}

func TestForgetMemory(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	if !m.e.HasMemoryWrites() {
		t.Fatal("no write known")
	}
	if got := m.e.ForgetMemory(flag, flag+4, nil); len(got) != 1 || got[0] != flag {
		t.Fatalf("forgot blocks %#x, want [%#x]", got, uint64(flag))
	}
	if m.e.HasMemoryWrites() {
		t.Fatal("write kept after its memory was forgotten")
	}
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitNoWrite {
		t.Fatalf("got %v, want no write", st.MemWait)
	}
}

// A write captured into a graph is made at the graph's launches, which
// the engine does not follow for values: waits at its block are not
// followed, even to writes made outside the graph.
func TestMemoryWriteCaptured(t *testing.T) {
	m := newMemTrace(t)
	const c = 0xc000
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: c, Flags: model.FlagNonBlocking})
	m.apply(model.Event{Op: model.OpCaptureBegin, Stream: c})
	m.write(c, model.MemOpWrite32, 1, 0)
	m.apply(model.Event{Op: model.OpCaptureEnd, Stream: c})
	work := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, 0)
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitGraphWrite {
		t.Fatalf("got %v, want graph write", st.MemWait)
	}
	if m.ordered(work) {
		t.Error("a wait a graph's write can meet ordered B after A")
	}
}

// A write recorded after a followed wait that can meet it, made by a
// stream not ordered after what the wait was joined with, may have met it
// first: the write says so. One ordered after the first write (the next
// step of a counter on the same stream) changes nothing.
func TestMemoryLateWrite(t *testing.T) {
	m := newMemTrace(t)
	const c = 0xc000
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: c, Flags: model.FlagNonBlocking})
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.wait(memB, model.MemOpWait32, 1, model.MemWaitGEQ)
	if st := m.write(memA, model.MemOpWrite32, 2, 0); st.MemLateWrite {
		t.Error("the counter's next step on the same stream was taken as a late write")
	}
	if st := m.write(c, model.MemOpWrite32, 0, 0); st.MemLateWrite {
		t.Error("a write that cannot meet the wait was taken as a late write")
	}
	if st := m.write(c, model.MemOpWrite32, 5, 0); !st.MemLateWrite {
		t.Error("a write by an unordered stream that can meet the wait was not reported")
	}
	// Ordered after the wait: it cannot have released it.
	m.apply(model.Event{Op: model.OpEventRecord, Stream: memB, Event: 0xe1})
	m.apply(model.Event{Op: model.OpStreamWait, Stream: c, Event: 0xe1})
	if st := m.write(c, model.MemOpWrite32, 7, 0); st.MemLateWrite {
		t.Error("a write ordered after the wait was taken as a late write")
	}
}

// Writes are matched to waits by the memory they overlap: a 64-bit write
// covering a 32-bit wait's word can give it its value (unknown), so the
// wait is ordered only after what both writes are.
func TestMemoryWaitOverlap(t *testing.T) {
	m := newMemTrace(t)
	const c = 0xc000
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: c, Flags: model.FlagNonBlocking})
	m.apply(model.Event{Op: model.OpStreamMemOp, Stream: c, Ptr: flag, MemOp: model.MemOpWrite64, Value: 1 << 32})
	work := m.launch(memA)
	m.apply(model.Event{Op: model.OpStreamMemOp, Stream: memA, Ptr: flag + 4, MemOp: model.MemOpWrite32, Value: 1})
	st := m.apply(model.Event{Op: model.OpStreamMemOp, Stream: memB, Ptr: flag + 4, MemOp: model.MemOpWait32, Value: 1, MemFlags: model.MemWaitEQ})
	if st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("got %v", st.MemWait)
	}
	if m.ordered(work) {
		t.Error("ordered after A's write though C's 64-bit write can meet the wait first")
	}
	// A 32-bit write of the block's other word does not.
	m2 := newMemTrace(t)
	m2.apply(model.Event{Op: model.OpStreamMemOp, Stream: memB, Ptr: flag, MemOp: model.MemOpWrite32, Value: 1})
	work = m2.launch(memA)
	m2.apply(model.Event{Op: model.OpStreamMemOp, Stream: memA, Ptr: flag + 4, MemOp: model.MemOpWrite32, Value: 1})
	m2.apply(model.Event{Op: model.OpStreamMemOp, Stream: memB, Ptr: flag + 4, MemOp: model.MemOpWait32, Value: 1, MemFlags: model.MemWaitEQ})
	if !m2.ordered(work) {
		t.Error("a write of the other word kept the wait from following A's write")
	}
}

// An atomic reduction changes the value to one the trace does not know:
// it can meet a wait (unknown), and overwrites nothing.
func TestMemoryWaitAtomic(t *testing.T) {
	m := newMemTrace(t)
	const c = 0xc000
	m.apply(model.Event{Op: model.OpStreamCreate, Stream: c, Flags: model.FlagNonBlocking})
	work := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.apply(model.Event{Op: model.OpStreamMemOp, Stream: c, Ptr: flag, MemOp: model.MemOpAtomic, Value: 1, MemFlags: 4})
	m.wait(memB, model.MemOpWait32, 1, model.MemWaitGEQ)
	if m.ordered(work) {
		t.Error("ordered after A's write though C's atomic add can meet the wait first")
	}
}

// After an operation the trace does not describe, no wait is followed.
func TestMemoryWaitAfterUnknownOp(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.apply(model.Event{Op: model.OpStreamMemOp, Stream: memA, Value: 99})
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitUnknownOp {
		t.Fatalf("got %v, want unknown op", st.MemWait)
	}
}

// Dropped writes the waiting stream is ordered after do not make the wait
// unknown: whatever they give, the wait is ordered after them already.
func TestMemoryWaitDroppedButOrdered(t *testing.T) {
	m := newMemTrace(t)
	for range 40 {
		m.write(memA, model.MemOpWrite32, 1, 0)
	}
	m.apply(model.Event{Op: model.OpEventRecord, Stream: memA, Event: 0xe1})
	m.apply(model.Event{Op: model.OpStreamWait, Stream: memB, Event: 0xe1})
	if st := m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ); st.MemWait != hb.MemWaitFollowed {
		t.Fatalf("got %v, want followed", st.MemWait)
	}
}

// A write without a memory barrier may land before the writes issued
// before it on its stream, so it overwrites none of them.
func TestMemoryNoBarrierOverwritesNothing(t *testing.T) {
	m := newMemTrace(t)
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.write(memA, model.MemOpWrite32, 0, model.MemWriteNoBarrier)
	m.apply(model.Event{Op: model.OpEventRecord, Stream: memA, Event: 0xe1})
	m.apply(model.Event{Op: model.OpStreamWait, Stream: memB, Event: 0xe1})
	work := m.launch(memA)
	m.write(memA, model.MemOpWrite32, 1, 0)
	m.wait(memB, model.MemOpWait32, 1, model.MemWaitEQ)
	if m.ordered(work) {
		t.Error("the first write, possibly not overwritten, did not keep the wait from following the third")
	}
}
