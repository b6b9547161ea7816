package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// TestAddrIndex compares addrIndex with a brute-force search over a long
// random sequence of inserts and removes, enough to split and merge chunks
// many times.
func TestAddrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := newAddrIndex()
	var all []*allocation // Brute-force model: the allocations in x.
	const slots = 4000    // Address slots of 1 KiB; an allocation covers 1-3 of them.
	addrOf := func(slot int) uint64 { return 0x7f00_0000_0000 + uint64(slot)*1024 }
	bruteFind := func(addr uint64) *allocation {
		for _, a := range all {
			if addr-a.base < a.size {
				return a
			}
		}
		return nil
	}
	for step := range 200_000 {
		slot := rng.IntN(slots)
		switch r := rng.IntN(10); {
		case r < 5: // Allocate, replacing whatever overlaps, as Checker.allocate does.
			a := &allocation{base: addrOf(slot) + uint64(rng.IntN(4))*256, size: uint64(1 + rng.IntN(3*1024))}
			over, same := x.overlapping(a.base, a.size)
			got := slices.Clone(over)
			var want []*allocation
			for _, b := range all {
				if b.base < a.base+a.size && a.base < b.base+b.size {
					want = append(want, b)
				}
			}
			sortByBase(got)
			sortByBase(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: overlapping(%#x, %d) = %v, want %v", step, a.base, a.size, bases(got), bases(want))
			}
			for _, b := range got {
				all = slices.DeleteFunc(all, func(c *allocation) bool { return c == b })
			}
			all = append(all, a)
			if same != nil && (same.base != a.base || same.a != got[0]) {
				t.Fatalf("step %d: same span %#x holds %p; want the first of %v at %#x", step, same.base, same.a, bases(got), a.base)
			}
			if same == nil && len(got) > 0 && got[0].base == a.base {
				t.Fatalf("step %d: no same span, but %#x starts at the base", step, got[0].base)
			}
			for _, b := range got {
				x.remove(b)
			}
			x.insert(a)
		case r < 8 && len(all) > 0: // Remove a random allocation.
			a := all[rng.IntN(len(all))]
			x.remove(a)
			all = slices.DeleteFunc(all, func(c *allocation) bool { return c == a })
		default: // Look up an address.
			addr := addrOf(slot) + uint64(rng.IntN(1024))
			if got, want := x.find(addr), bruteFind(addr); got != want {
				t.Fatalf("step %d: find(%#x) = %v, want %v", step, addr, got, want)
			}
		}
		if x.len() != len(all) {
			t.Fatalf("step %d: len %d, want %d", step, x.len(), len(all))
		}
	}
	// The chunks stay sorted, non-empty and within bounds.
	l := &x.spans
	n := 0
	var last uint64
	for i, c := range l.chunks {
		if len(c) == 0 || len(c) > maxChunk || l.firsts[i] != c[0].base {
			t.Fatalf("chunk %d: %d spans, first %#x, recorded first %#x", i, len(c), c[0].base, l.firsts[i])
		}
		for _, sp := range c {
			if n > 0 && sp.base <= last {
				t.Fatalf("chunk %d: base %#x after %#x", i, sp.base, last)
			}
			last = sp.base
			n++
		}
	}
	if n != len(all) {
		t.Fatalf("%d spans, want %d", n, len(all))
	}
}

func sortByBase(as []*allocation) {
	slices.SortFunc(as, func(a, b *allocation) int {
		switch {
		case a.base < b.base:
			return -1
		case a.base > b.base:
			return 1
		}
		return 0
	})
}

func bases(as []*allocation) []uint64 {
	var out []uint64
	for _, a := range as {
		out = append(out, a.base)
	}
	return out
}

func TestAddrIndexEdges(t *testing.T) {
	x := newAddrIndex()
	if over, _ := x.overlapping(0, 0); x.find(0) != nil || x.find(^uint64(0)) != nil || len(over) != 0 {
		t.Fatal("empty index found something")
	}
	a := &allocation{base: 0, size: 16}
	b := &allocation{base: ^uint64(0) - 15, size: 16}
	x.insert(a)
	x.insert(b)
	if x.find(15) != a || x.find(16) != nil || x.find(^uint64(0)) != b {
		t.Fatal("find at the ends of the address space")
	}
	if got, _ := x.overlapping(^uint64(0), 1); len(got) != 1 || got[0] != b {
		t.Fatalf("overlapping at the top: %v", bases(got))
	}
	x.remove(&allocation{base: 0, size: 16}) // Not the allocation at 0: no effect.
	if x.find(3) != a {
		t.Fatal("remove of another allocation at the same base removed it")
	}
	x.remove(a)
	x.remove(b)
	if x.len() != 0 || len(x.spans.chunks) != 0 {
		t.Fatalf("index not empty: %d, %d chunks", x.len(), len(x.spans.chunks))
	}
}

// TestBaseTable compares baseTable with a Go map over random inserts,
// replacements and removes of clustered keys (aligned addresses collide in
// their low bits, which the hash must spread).
func TestBaseTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab baseTable
	want := map[uint64]*allocation{}
	key := func() uint64 { return 0x7f00_0000_0000 + uint64(rng.IntN(3000))<<12 }
	for step := range 300_000 {
		k := key()
		switch rng.IntN(3) {
		case 0:
			a := &allocation{base: k}
			tab.set(k, a)
			want[k] = a
		case 1:
			tab.remove(k)
			delete(want, k)
		default:
			if got := tab.get(k); got != want[k] {
				t.Fatalf("step %d: get(%#x) = %p, want %p", step, k, got, want[k])
			}
		}
		if tab.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(want))
		}
	}
	n := 0
	tab.all(func(a *allocation) {
		if want[a.base] != a {
			t.Fatalf("all: %#x not in the table", a.base)
		}
		n++
	})
	if n != len(want) {
		t.Fatalf("all visited %d, want %d", n, len(want))
	}
	for k := range want {
		tab.remove(k)
	}
	if tab.len() != 0 || tab.get(key()) != nil {
		t.Fatal("table not empty after removing everything")
	}
}

// TestAllocationLayout checks what the allocation record's layout comment
// promises: the fields of the common use are in its first 64 bytes.
func TestAllocationLayout(t *testing.T) {
	var a allocation
	if end := unsafe.Offsetof(a.useBuf) + unsafe.Sizeof(a.useBuf[0]); end > 64 {
		t.Errorf("useBuf[0] ends at byte %d, past the first cache line", end)
	}
}
