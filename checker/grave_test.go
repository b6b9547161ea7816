package checker

import (
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
	if len(res.Findings) != 1 || res.Findings[0].Rule != RuleUseAfterFree {
		t.Fatalf("findings %+v, want one use-after-free", res.Findings)
	}
}
