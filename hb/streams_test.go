package hb_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// manyStreams applies to e a program with n streams alive at once, as a
// process with large stream pools has: every stream created with an event
// and used, event records and waits between random pairs of streams, and
// host synchronizations (streams, events, now and then the device), then
// every stream used again after the host has learned of most of the others.
func manyStreams(e *hb.Engine, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	seq := uint64(0)
	apply := func(op model.Op, stream, event uint64, flags uint32) {
		seq++
		e.Apply(&model.Event{Seq: seq, Op: op, Stream: stream, Event: event, TID: 1, Flags: flags})
	}
	stream := func(i int) uint64 { return 0x7000_0000 + uint64(i)*0x100 }
	event := func(i int) uint64 { return 0x9000_0000 + uint64(i)*0x40 }
	for i := range n {
		flags := uint32(0)
		if i%3 != 0 {
			flags = model.FlagNonBlocking
		}
		apply(model.OpStreamCreate, stream(i), 0, flags)
		apply(model.OpEventCreate, 0, event(i), 0)
	}
	for pass := range 2 {
		for i := range n {
			apply(model.OpLaunch, stream(i), 0, 0)
			switch r := rng.IntN(16); {
			case r < 4: // a hand-off from a random stream
				j := rng.IntN(n)
				apply(model.OpEventRecord, stream(j), event(j), 0)
				apply(model.OpStreamWait, stream(i), event(j), 0)
			case r < 8:
				apply(model.OpStreamSync, stream(rng.IntN(n)), 0, 0)
			case r < 10:
				apply(model.OpEventRecord, stream(i), event(i), 0)
				apply(model.OpEventSync, 0, event(i), 0)
			case r == 10 && pass == 0 && i%1000 == 999:
				apply(model.OpDeviceSync, 0, 0, 0)
			}
		}
	}
}

// TestManyStreamsMemory: 10,000 streams alive at once fit in a bounded
// heap. With a dense clock per stream and event record, each as wide as
// the streams, they took about 800 MB.
func TestManyStreamsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 streams")
	}
	const n, bound = 10_000, 128 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e := hb.New()
	manyStreams(e, n, 1)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(e)
	if used := int64(after.HeapInuse) - int64(before.HeapInuse); used > bound {
		t.Errorf("%d streams hold %d MB of heap, want under %d MB", n, used>>20, bound>>20)
	} else {
		t.Logf("%d streams hold %.1f MB of heap", n, float64(used)/(1<<20))
	}
}

// BenchmarkManyStreams times the engine alone on manyStreams' program
// with 10,000 streams.
func BenchmarkManyStreams(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		manyStreams(hb.New(), 10_000, 1)
	}
}
