package hb_test

import (
	"runtime"
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// handoffChain applies to e a program of n streams that each wait for the
// previous one's event, launch and record their own; with destroy, each
// is destroyed once it has handed off (a stream per step), else all stay
// alive.
func handoffChain(e *hb.Engine, n int, destroy bool) {
	seq := uint64(0)
	apply := func(op model.Op, stream, event uint64) {
		seq++
		e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, Event: event, TID: 1, Flags: model.FlagNonBlocking})
	}
	for i := range n {
		s, ev := 0x7000_0000+uint64(i)*0x100, 0x9000_0000+uint64(i)*0x40
		apply(model.OpStreamCreate, s, 0)
		apply(model.OpEventCreate, 0, ev)
		if i > 0 {
			apply(model.OpStreamWait, s, ev-0x40)
			apply(model.OpEventDestroy, 0, ev-0x40)
		}
		apply(model.OpLaunch, s, 0)
		apply(model.OpEventRecord, s, ev)
		if destroy {
			apply(model.OpStreamDestroy, s, 0)
		}
	}
}

// heapOf returns the heap that run leaves in use.
func heapOf(run func() *hb.Engine) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := run()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(e)
	return int64(after.HeapInuse) - int64(before.HeapInuse)
}

// TestHandoffChainMemory: n streams alive at once, each ordered after all
// the streams before it, hold clocks that differ from their predecessor's
// in one place. With a flat list of 128-entry chunks per clock they held
// n*n/128 chunk pointers, and 20,000 took 54 MB; shared trees take
// a path each.
func TestHandoffChainMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 streams")
	}
	const n, bound = 20_000, 24 << 20
	used := heapOf(func() *hb.Engine { e := hb.New(); handoffChain(e, n, false); return e })
	if used > bound {
		t.Errorf("%d chained streams hold %d MB of heap, want under %d MB", n, used>>20, bound>>20)
	} else {
		t.Logf("%d chained streams hold %.1f MB of heap", n, float64(used)/(1<<20))
	}
}

// TestStreamLifetimesMemory: a stream per step, each handing off to the
// next and destroyed. Each stream retired keeps what reports ask of it,
// not its engine state: 260 bytes a stream before.
func TestStreamLifetimesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 streams")
	}
	const n, perStream = 200_000, 48
	used := heapOf(func() *hb.Engine { e := hb.New(); handoffChain(e, n, true); return e })
	if used > n*perStream {
		t.Errorf("%d stream lifetimes hold %d bytes of heap a stream, want under %d", n, used/n, perStream)
	} else {
		t.Logf("%d stream lifetimes hold %d bytes of heap a stream", n, used/n)
	}
	e := hb.New()
	handoffChain(e, 3, true)
	if a := e.Agent(1); !a.Pruned() || a.Ops() != 2 || a.Kind != hb.KindNonBlocking || a.Handle != 0x7000_0000 || a.Slot == 0 {
		t.Errorf("retired stream rebuilt as %+v", *a)
	}
}
