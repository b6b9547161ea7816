package checker

import "github.com/google/btree"

// addrIndex finds allocations by address. Exact base lookups (the common
// case: kernels usually get the pointer cudaMallocAsync returned) hit a map;
// interior pointers fall back to an ordered tree.
type addrIndex struct {
	byBase map[uint64]*allocation
	tree   *btree.BTreeG[*allocation]
}

func newAddrIndex() *addrIndex {
	return &addrIndex{
		byBase: map[uint64]*allocation{},
		tree:   btree.NewG(32, func(a, b *allocation) bool { return a.base < b.base }),
	}
}

func (x *addrIndex) len() int { return len(x.byBase) }

func (x *addrIndex) insert(a *allocation) {
	x.byBase[a.base] = a
	x.tree.ReplaceOrInsert(a)
}

func (x *addrIndex) remove(a *allocation) {
	if x.byBase[a.base] == a {
		delete(x.byBase, a.base)
		x.tree.Delete(a)
	}
}

// find returns the allocation whose range holds addr, or nil.
func (x *addrIndex) find(addr uint64) *allocation {
	if a := x.byBase[addr]; a != nil {
		return a
	}
	var hit *allocation
	x.tree.DescendLessOrEqual(&allocation{base: addr}, func(a *allocation) bool {
		if addr-a.base < a.size {
			hit = a
		}
		return false
	})
	return hit
}

// overlapping returns the allocations that intersect [base, base+size).
func (x *addrIndex) overlapping(base, size uint64) []*allocation {
	if size == 0 {
		size = 1
	}
	var out []*allocation
	if a := x.find(base); a != nil {
		out = append(out, a)
	}
	x.tree.AscendRange(&allocation{base: base + 1}, &allocation{base: base + size}, func(a *allocation) bool {
		out = append(out, a)
		return true
	})
	return out
}
