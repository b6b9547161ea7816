// Package heapmeter measures the heap a piece of code needs: the most heap
// in use while it runs, above what was in use before, and the bytes it
// allocated. Benchmarks and tests of memory use it.
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

const (
	heapObjects = "/memory/classes/heap/objects:bytes"
	heapLive    = "/gc/heap/live:bytes"
)

// meter samples the heap; the zero value is ready once base is set.
type meter struct {
	mu         sync.Mutex
	sample     []metrics.Sample
	peak, live uint64
}

func (m *meter) read() {
	m.mu.Lock()
	metrics.Read(m.sample)
	m.peak = max(m.peak, m.sample[0].Value.Uint64())
	m.live = max(m.live, m.sample[1].Value.Uint64())
	m.mu.Unlock()
}

// Measure runs f after a garbage collection, sampling the heap every
// 100µs and whenever f writes to the writer it is given (which discards
// what it is given), and returns what f used. Only one Measure should run
// at a time, with nothing else allocating.
func Measure(f func(w io.Writer) error) (Usage, error) {
	m := &meter{sample: []metrics.Sample{{Name: heapObjects}, {Name: heapLive}}}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	metrics.Read(m.sample)
	base, baseLive := m.sample[0].Value.Uint64(), m.sample[1].Value.Uint64()
	m.peak, m.live = base, baseLive

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
	return Usage{Peak: m.peak - base, Live: m.live - baseLive, Alloc: after.TotalAlloc - before.TotalAlloc}, err
}

// sampler is the writer Measure gives: a write is a moment the output
// exists in memory, so it samples the heap then.
type sampler struct{ m *meter }

func (s sampler) Write(p []byte) (int, error) {
	s.m.read()
	return len(p), nil
}

var _ io.Writer = sampler{}
