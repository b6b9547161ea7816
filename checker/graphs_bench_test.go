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
