package checker

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// BenchmarkGraphReplay: a graph captured from 1,000 kernels, each passing
// five of 2,000 live allocations (PyTorch-sized), replayed 1,000 times on
// one stream. Each launch checks every address its captured work used (2,000
// here, once each); one op is the whole trace, setup included (3,000
// events), and the metrics divide it by the launches and their addresses.
// Numbers: bench/README.md.
func BenchmarkGraphReplay(b *testing.B) {
	const (
		allocs    = 2000
		kernels   = 1000
		perLaunch = 5
		replays   = 1000
		s1        = 0x5000
	)
	var evs []model.Event
	add := func(ev model.Event) { ev.Seq = uint64(len(evs) + 1); evs = append(evs, ev) }
	add(model.Event{Op: model.OpStreamCreate, Stream: s1, Flags: model.FlagNonBlocking})
	for i := range allocs {
		add(model.Event{Op: model.OpMallocAsync, Stream: s1, Ptr: 0x7f0000000000 + uint64(i)<<20, Size: 1 << 20})
	}
	add(model.Event{Op: model.OpCaptureBegin, Stream: s1})
	for k := range kernels {
		ptrs := make([]uint64, perLaunch)
		for j := range ptrs {
			ptrs[j] = 0x7f0000000000 + uint64((k*7+j*13)%allocs)<<20
		}
		add(model.Event{Op: model.OpLaunch, Stream: s1, Ptrs: ptrs})
	}
	add(model.Event{Op: model.OpCaptureEnd, Stream: s1, Graph: 0x9a00})
	add(model.Event{Op: model.OpGraphInstantiate, Graph: 0x9a00, Exec: 0x9b00, Flags: model.FlagLifetime})
	for range replays {
		add(model.Event{Op: model.OpGraphLaunch, Stream: s1, Exec: 0x9b00})
	}
	var uses int
	for b.Loop() {
		c := New("bench", model.NewTables())
		for i := range evs {
			c.Add(&evs[i])
		}
		uses = len(c.graphs.Launched(0x9b00))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*replays), "ns/launch")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*replays*uses), "ns/address")
	b.ReportMetric(float64(uses), "addresses/launch")
}

// BenchmarkCaptureInner: one capture the size of a captured training step:
// 20,000 captured allocations (each used by a kernel on its stream and by
// one on a forked stream after an event, then freed after the join), and
// 2,000 weights from outside the capture that every fourth kernel reads.
// The capture's own order is checked as it is captured; one op is the whole
// trace. Numbers: bench/README.md.
func BenchmarkCaptureInner(b *testing.B) {
	const (
		allocs  = 20000
		weights = 2000
		s1, s2  = 0x5000, 0x5001
	)
	var evs []model.Event
	add := func(ev model.Event) { ev.Seq = uint64(len(evs) + 1); evs = append(evs, ev) }
	add(model.Event{Op: model.OpStreamCreate, Stream: s1, Flags: model.FlagNonBlocking})
	add(model.Event{Op: model.OpStreamCreate, Stream: s2, Flags: model.FlagNonBlocking})
	weight := func(i int) uint64 { return 0x7e0000000000 + uint64(i)<<20 }
	for i := range weights {
		add(model.Event{Op: model.OpMallocAsync, Stream: s1, Ptr: weight(i), Size: 1 << 20})
	}
	add(model.Event{Op: model.OpStreamSync, Stream: s1})
	add(model.Event{Op: model.OpCaptureBegin, Stream: s1})
	for i := range allocs {
		p := 0x7f0000000000 + uint64(i)<<16
		add(model.Event{Op: model.OpMallocAsync, Stream: s1, Ptr: p, Size: 1 << 16})
		ptrs := []uint64{p}
		if i%4 == 0 {
			ptrs = append(ptrs, weight((i/4)%weights))
		}
		add(model.Event{Op: model.OpLaunch, Stream: s1, Ptrs: ptrs})
		add(model.Event{Op: model.OpEventRecord, Stream: s1, Event: 0x10})
		add(model.Event{Op: model.OpStreamWait, Stream: s2, Event: 0x10})
		add(model.Event{Op: model.OpLaunch, Stream: s2, Ptrs: []uint64{p}})
		add(model.Event{Op: model.OpEventRecord, Stream: s2, Event: 0x20})
		add(model.Event{Op: model.OpStreamWait, Stream: s1, Event: 0x20})
		add(model.Event{Op: model.OpFreeAsync, Stream: s1, Ptr: p})
	}
	add(model.Event{Op: model.OpCaptureEnd, Stream: s1, Graph: 0x9a00})
	var res *Result
	for b.Loop() {
		c := New("bench", model.NewTables())
		for i := range evs {
			c.Add(&evs[i])
		}
		res = c.Finish(nil)
	}
	for _, f := range res.Findings {
		if f.Severity == SeverityError { // the weights never freed are a leak warning
			b.Fatalf("a correct capture reported: %s", f.Message)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
