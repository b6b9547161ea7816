package checker

import (
	"math"
	"slices"
)

// addrIndex finds allocations by address. Exact base lookups (the common
// case: kernels usually get the pointer cudaMallocAsync returned) hit a hash
// table; interior pointers and range queries use spans, the same
// allocations ordered by base.
//
// The checker keeps the ranges of one index disjoint (an allocation removes
// whatever it overlaps), so the allocation holding an address is the one
// with the greatest base at or below it.
type addrIndex struct {
	byBase  baseTable
	spans   spanList
	scratch []*allocation // Result buffer of overlapping.
}

func newAddrIndex() *addrIndex {
	return &addrIndex{}
}

func (x *addrIndex) len() int { return x.byBase.len() }

// at returns the allocation starting at base, or nil.
func (x *addrIndex) at(base uint64) *allocation { return x.byBase.get(base) }

func (x *addrIndex) insert(a *allocation) {
	if old := x.byBase.get(a.base); old != nil {
		x.spans.remove(old.base, old)
	}
	x.byBase.set(a.base, a)
	x.spans.insert(span{base: a.base, a: a})
}

func (x *addrIndex) remove(a *allocation) {
	if x.byBase.get(a.base) == a {
		x.byBase.remove(a.base)
		x.spans.remove(a.base, a)
	}
}

// find returns the allocation whose range holds addr, or nil.
func (x *addrIndex) find(addr uint64) *allocation {
	if a := x.byBase.get(addr); a != nil {
		return a
	}
	if sp := x.spans.atOrBelow(addr); sp != nil && addr-sp.base < sp.a.size {
		return sp.a
	}
	return nil
}

// overlapping returns the allocations that intersect [base, base+size), in
// order of base, and the span of the one that starts at base if one does.
// Both are valid until the index changes.
func (x *addrIndex) overlapping(base, size uint64) (_ []*allocation, same *span) {
	out := x.scratch[:0]
	if len(x.spans.chunks) == 0 {
		return out, nil
	}
	end := base + max(size, 1)
	if end < base {
		end = math.MaxUint64 // A range past the top of the address space ends there.
	}
	i, j := x.spans.position(base)
	if j > 0 { // The span starting at or below base may reach into the range.
		if sp := &x.spans.chunks[i][j-1]; base-sp.base < sp.a.size {
			out = append(out, sp.a)
			if sp.base == base {
				same = sp
			}
		}
	}
	for ; i < len(x.spans.chunks); i, j = i+1, 0 {
		for _, sp := range x.spans.chunks[i][j:] {
			if sp.base >= end {
				x.scratch = out
				return out, same
			}
			out = append(out, sp.a)
		}
	}
	x.scratch = out
	return out, same
}

// span is one entry of a spanList: an allocation's base, held by value so
// that searches read contiguous memory, and the allocation. Its size is read
// from the allocation, which may change it in place (see Checker.allocate).
type span struct {
	base uint64
	a    *allocation
}

// maxChunk is the most spans one chunk of a spanList holds.
const maxChunk = 128

// spanList keeps spans sorted by base (bases are unique), cut into chunks of
// at most maxChunk. A search is a binary search over the chunks' first bases
// and another inside one chunk; an insert or a remove moves at most one
// chunk's worth of spans. It does the job of a balanced tree with less
// indirection and no comparison callbacks.
type spanList struct {
	chunks [][]span // Each sorted and non-empty; chunk i's spans all precede chunk i+1's.
	firsts []uint64 // firsts[i] == chunks[i][0].base.
}

// chunkFor returns the chunk that holds, or would hold, base: the last chunk
// whose first base is <= base, or the first chunk. There must be one.
func (l *spanList) chunkFor(base uint64) int {
	// Binary search without branches in the loop body: the comparisons are
	// unpredictable, and mispredicted branches would cost more than the
	// memory reads.
	f := l.firsts
	i, n := 0, len(f)
	for n > 1 {
		half := n / 2
		i += half & -below(f[i+half], base)
		n -= half
	}
	return i
}

// position returns the chunk for base and how many of its spans have a base
// <= base.
func (l *spanList) position(base uint64) (int, int) {
	i := l.chunkFor(base)
	c := l.chunks[i]
	j, n := 0, len(c)
	for n > 1 {
		half := n / 2
		j += half & -below(c[j+half].base, base)
		n -= half
	}
	return i, j + below(c[j].base, base)
}

// below returns 1 if x <= y, else 0. The searches above use it to step
// without a branch, which compiles to a flag-setting instruction.
func below(x, y uint64) int {
	b := 0
	if x <= y {
		b = 1
	}
	return b
}

// atOrBelow returns the span with the greatest base <= addr, or nil.
func (l *spanList) atOrBelow(addr uint64) *span {
	if len(l.chunks) == 0 {
		return nil
	}
	i, j := l.position(addr)
	if j == 0 {
		return nil // Only possible in the first chunk: addr is below every base.
	}
	return &l.chunks[i][j-1]
}

func (l *spanList) insert(sp span) {
	if len(l.chunks) == 0 {
		l.chunks = append(l.chunks, append(make([]span, 0, maxChunk+1), sp))
		l.firsts = append(l.firsts, sp.base)
		return
	}
	i, j := l.position(sp.base)
	c := slices.Insert(l.chunks[i], j, sp)
	l.firsts[i] = c[0].base
	if len(c) > maxChunk { // Split in halves.
		half := len(c) / 2
		right := append(make([]span, 0, maxChunk+1), c[half:]...)
		clear(c[half:])
		c = c[:half]
		l.chunks = slices.Insert(l.chunks, i+1, right)
		l.firsts = slices.Insert(l.firsts, i+1, right[0].base)
	}
	l.chunks[i] = c
}

// remove removes the span at base if it holds a.
func (l *spanList) remove(base uint64, a *allocation) {
	if len(l.chunks) == 0 {
		return
	}
	i, j := l.position(base)
	c := l.chunks[i]
	if j == 0 || c[j-1].base != base || c[j-1].a != a {
		return
	}
	c = slices.Delete(c, j-1, j) // Zeroes the vacated slot.
	if len(c) == 0 {
		l.chunks = slices.Delete(l.chunks, i, i+1)
		l.firsts = slices.Delete(l.firsts, i, i+1)
		return
	}
	l.chunks[i] = c
	l.firsts[i] = c[0].base
	// Keep chunks from thinning out: merge a small chunk into its successor's
	// space when both fit in one.
	if len(c) < maxChunk/4 && i+1 < len(l.chunks) && len(c)+len(l.chunks[i+1]) <= maxChunk {
		l.chunks[i] = append(c, l.chunks[i+1]...)
		l.chunks = slices.Delete(l.chunks, i+1, i+2)
		l.firsts = slices.Delete(l.firsts, i+1, i+2)
	}
}
