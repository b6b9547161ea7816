// Package heapmeter measures the heap a piece of code needs: the most heap
// in use while it runs, above what was in use before, and the bytes it
// allocated; and the largest heap figures seen over a run (Peaks).
// Benchmarks and tests of memory use it.
package heapmeter

import (
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Usage is what Measure saw.
type Usage struct {
	// Peak is the most heap held by objects (live or not yet collected)
	// while the code ran, above what live objects held before it.
	Peak uint64
	// Live is the most heap the garbage collector found live at the end
	// of a cycle while the code ran, above what was live before: what the
	// code held, garbage aside. It is 0 when no cycle ran, which happens
	// when the code allocates little.
	Live uint64
	// Alloc is the bytes the code allocated, freed or not.
	Alloc uint64
}

// Peaks is the largest heap seen over a run of Sample calls: heap objects
// (live ones and garbage not yet collected: what the process holds), the
// live heap measured by the last completed garbage collection, and the heap
// goal the collector sets from it (with the default GOGC=100, twice the live
// heap: the bound heap objects stay under). The zero value is ready; Sample
// is not safe for concurrent use.
type Peaks struct {
	Objects, Live, Goal uint64
	samples             []metrics.Sample
}

// Sample reads the heap's figures and keeps each one's largest.
func (p *Peaks) Sample() {
	if p.samples == nil {
		p.samples = []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/heap/goal:bytes"},
		}
	}
	metrics.Read(p.samples)
	p.Objects = max(p.Objects, p.samples[0].Value.Uint64())
	p.Live = max(p.Live, p.samples[1].Value.Uint64())
	p.Goal = max(p.Goal, p.samples[2].Value.Uint64())
}

// Reset forgets the figures seen so far.
func (p *Peaks) Reset() { p.Objects, p.Live, p.Goal = 0, 0, 0 }

// meter is Peaks shared between Measure's ticker and the writer it gives f.
type meter struct {
	mu    sync.Mutex
	peaks Peaks
}

func (m *meter) read() {
	m.mu.Lock()
	m.peaks.Sample()
	m.mu.Unlock()
}

// Measure runs f after a garbage collection, sampling the heap every
// 100µs and whenever f writes to the writer it is given (which discards
// what it is given), and returns what f used. Only one Measure should run
// at a time, with nothing else allocating.
func Measure(f func(w io.Writer) error) (Usage, error) {
	m := &meter{}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	m.peaks.Sample()
	base, baseLive := m.peaks.Objects, m.peaks.Live

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				m.read()
			}
		}
	}()
	err := f(sampler{m})
	m.read()
	close(done)
	wg.Wait()

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return Usage{Peak: m.peaks.Objects - base, Live: m.peaks.Live - baseLive, Alloc: after.TotalAlloc - before.TotalAlloc}, err
}

// sampler is the writer Measure gives: a write is a moment the output
// exists in memory, so it samples the heap then.
type sampler struct{ m *meter }

func (s sampler) Write(p []byte) (int, error) {
	s.m.read()
	return len(p), nil
}

var _ io.Writer = sampler{}
