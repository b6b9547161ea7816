package checker

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// TestGraveEviction frees more allocations than the grave holds, reusing
// some addresses on the way, and checks that exactly the oldest frees are
// forgotten: a use of memory freed long ago is not reported, a use of memory
// freed recently is.
func TestGraveEviction(t *testing.T) {
	c := New("t", model.NewTables())
	seq := uint64(0)
	add := func(ev model.Event) {
		seq++
		ev.Seq, ev.TID = seq, 1
		c.Add(&ev)
	}
	const stream = 0x1000
	addr := func(i int) uint64 { return 0x7f00_0000_0000 + uint64(i)<<12 }
	add(model.Event{Op: model.OpStreamCreate, Stream: stream})
	n := graveLimit + 1000
	for i := range n {
		add(model.Event{Op: model.OpMallocAsync, Stream: stream, Ptr: addr(i), Size: 4096})
		add(model.Event{Op: model.OpFreeAsync, Stream: stream, Ptr: addr(i)})
		if i%7 == 3 { // Reuse an earlier address: its old free leaves the grave.
			add(model.Event{Op: model.OpMallocAsync, Stream: stream, Ptr: addr(i / 2), Size: 4096})
			add(model.Event{Op: model.OpFreeAsync, Stream: stream, Ptr: addr(i / 2)})
		}
	}
	if c.graveLen != graveLimit {
		t.Fatalf("grave holds %d, want %d", c.graveLen, graveLimit)
	}
	// Which addresses are remembered: those of the graveLimit most recent
	// frees among the last free of each address (an earlier free of an
	// address left the grave when the address was allocated again).
	lastFree := map[uint64]int{} // Address -> order of its last free.
	order := 0
	for i := range n {
		lastFree[addr(i)] = order
		order++
		if i%7 == 3 {
			lastFree[addr(i/2)] = order
			order++
		}
	}
	var orders []int
	for _, o := range lastFree {
		orders = append(orders, o)
	}
	slices.Sort(orders)
	cutoff := orders[len(orders)-graveLimit]
	forgotten, remembered := 0, 0
	for a, o := range lastFree {
		got := c.allocs.at(a)
		want := o >= cutoff
		if (got != nil) != want {
			t.Fatalf("address %#x (free %d of %d, cutoff %d): remembered %v, want %v", a, o, order, cutoff, got != nil, want)
		}
		if want {
			remembered++
		} else {
			forgotten++
		}
	}
	if forgotten == 0 || remembered != graveLimit {
		t.Fatalf("%d forgotten, %d remembered", forgotten, remembered)
	}
	// A use of the last freed memory is a use after free; of the first, which
	// was forgotten, nothing is known.
	add(model.Event{Op: model.OpLaunch, Stream: stream, Ptrs: []uint64{addr(0)}})
	if len(c.order)+len(c.pending) != 0 {
		t.Fatal("use of forgotten memory reported")
	}
	add(model.Event{Op: model.OpLaunch, Stream: stream, Ptrs: []uint64{addr(n - 1)}})
	res := c.Finish(nil)
	if len(res.Findings) != 1 || res.Findings[0].Rule != string(RuleUseAfterFree) {
		t.Fatalf("findings %+v, want one use-after-free", res.Findings)
	}
}

// TestPartialReuseAgreesWithMemory allocates and frees at random overlapping
// places, as a pool that splits and merges blocks does, and checks after
// each step that the address index agrees with a plain map of the memory:
// ranges never overlap, the grave list holds exactly the freed records, and
// an address the index places in a live or freed allocation is live in, or
// was last freed from, that allocation. (The index may know less than the
// map: the rest of a block a smaller allocation reused from its start is
// forgotten.)
func TestPartialReuseAgreesWithMemory(t *testing.T) {
	const granule, granules = 256, 64
	type cell struct {
		base  uint64 // Base of the allocation that last held the cell; 0 never.
		freed bool
	}
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c, add := checkerOnOneStream()
		add(model.Event{Op: model.OpStreamCreate})
		const origin = 0x7f00_0000_0000
		mem := make([]cell, granules)
		live := map[uint64]int{} // base -> granules
		for step := range 400 {
			if len(live) > 0 && rng.IntN(2) == 0 {
				bases := slices.Sorted(maps.Keys(live))
				b := bases[rng.IntN(len(bases))]
				add(model.Event{Op: model.OpFreeAsync, Ptr: b})
				first := int((b - origin) / granule)
				for g := first; g < first+live[b]; g++ {
					mem[g].freed = true
				}
				delete(live, b)
			} else {
				first, n := rng.IntN(granules), 1+rng.IntN(8)
				n = min(n, granules-first)
				free := true
				for g := first; g < first+n; g++ {
					free = free && (mem[g].base == 0 || mem[g].freed)
				}
				if !free {
					continue // a real pool never hands out live memory
				}
				b := origin + uint64(first)*granule
				add(model.Event{Op: model.OpMallocAsync, Ptr: b, Size: uint64(n) * granule})
				for g := first; g < first+n; g++ {
					mem[g] = cell{base: b}
				}
				live[b] = n
			}
			// The index's ranges are disjoint and sorted.
			var prevEnd uint64
			records := 0
			for _, chunk := range c.allocs.spans.chunks {
				for _, sp := range chunk {
					if sp.base < prevEnd {
						t.Fatalf("seed %d step %d: range at %#x starts before the previous one ends (%#x)", seed, step, sp.base, prevEnd)
					}
					prevEnd = sp.base + sp.a.size
					records++
				}
			}
			// The grave list holds exactly the freed records.
			graved := 0
			for a := c.graveQ.oldest; a != nil; a = a.newer {
				if !a.freed || c.allocs.at(a.base) != a {
					t.Fatalf("seed %d step %d: grave lists a record that is not a freed one in the index", seed, step)
				}
				graved++
			}
			if graved != c.graveLen {
				t.Fatalf("seed %d step %d: grave list %d long, graveLen %d", seed, step, graved, c.graveLen)
			}
			// What the index says of each cell is true.
			for g := range granules {
				addr := origin + uint64(g)*granule
				a := c.allocs.find(addr)
				if a == nil {
					continue
				}
				whole, _ := a.wholeOf()
				if m := mem[g]; m.base == 0 || m.freed != a.freed || m.base != whole {
					t.Fatalf("seed %d step %d: cell %d: index says allocation at %#x (freed %v), memory says %#x (freed %v)",
						seed, step, g, whole, a.freed, m.base, m.freed)
				}
			}
		}
	}
}

// TestGraveLimitWithRests: rests of freed blocks kept by allocations in
// their middles count against the grave's limit at once, not at the next
// free.
func TestGraveLimitWithRests(t *testing.T) {
	c, add := checkerOnOneStream()
	add(model.Event{Op: model.OpStreamCreate})
	addr := func(i int) uint64 { return 0x7f00_0000_0000 + uint64(i)<<16 }
	for i := range graveLimit {
		add(model.Event{Op: model.OpMallocAsync, Ptr: addr(i), Size: 1 << 16})
		add(model.Event{Op: model.OpFreeAsync, Ptr: addr(i)})
	}
	for i := range 1000 {
		add(model.Event{Op: model.OpMallocAsync, Ptr: addr(i) + 1<<12, Size: 1 << 12})
		if c.graveLen > graveLimit {
			t.Fatalf("after %d allocations in freed blocks the grave holds %d, limit %d", i+1, c.graveLen, graveLimit)
		}
	}
}

// TestCaptureBeginEndsCapture: a trace that begins captures over and over
// on one stream without ending them (CUDA refuses all but the first) keeps
// no state for the captures each begin ended.
func TestCaptureBeginEndsCapture(t *testing.T) {
	c, add := checkerOnOneStream()
	for i := range 100 {
		add(model.Event{Op: model.OpCaptureBegin})
		add(model.Event{Op: model.OpMallocAsync, Ptr: 0x7f00_0000_0000 + uint64(i)<<12, Size: 4096})
	}
	add(model.Event{Op: model.OpCaptureEnd})
	if n := len(c.captureMem.open); n != 0 {
		t.Fatalf("%d captures' state kept after every capture ended", n)
	}
}

// checkerOnOneStream returns a checker and a function that numbers an
// event, puts it on stream 0x1000 of host thread 1, and adds it.
func checkerOnOneStream() (*Checker, func(model.Event)) {
	c := New("t", model.NewTables())
	seq := uint64(0)
	return c, func(ev model.Event) {
		seq++
		ev.Seq, ev.TID, ev.Stream = seq, 1, 0x1000
		c.Add(&ev)
	}
}
