package checker

// baseTable maps allocation base addresses to allocations. It does the job
// of a map[uint64]*allocation on the checker's hottest path (every address
// an operation names is looked up here first) at a fraction of the cost:
// open addressing with linear probing over a power-of-two array kept at most
// 3/4 full, so a lookup is a multiply, a shift and usually one probe within
// one cache line.
type baseTable struct {
	slots []baseSlot // len is 0 or a power of two.
	n     int        // Occupied slots.
	shift uint       // 64 - log2(len(slots)): the hash keeps the top bits.
}

// baseSlot is one slot; a nil allocation marks it empty.
type baseSlot struct {
	base uint64
	a    *allocation
}

// home returns the slot where a probe for base starts. Fibonacci hashing
// spreads bases that share their low bits (allocations are aligned).
func (t *baseTable) home(base uint64) int {
	return int((base * 0x9e3779b97f4a7c15) >> t.shift)
}

func (t *baseTable) len() int { return t.n }

// get returns the allocation at base, or nil.
func (t *baseTable) get(base uint64) *allocation {
	if t.n == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.home(base); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == nil {
			return nil
		}
		if s.base == base {
			return s.a
		}
	}
}

// set makes a the allocation at base.
func (t *baseTable) set(base uint64, a *allocation) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(base); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == nil {
			*s = baseSlot{base, a}
			t.n++
			return
		}
		if s.base == base {
			s.a = a
			return
		}
	}
}

// remove removes base from the table, if it is there.
func (t *baseTable) remove(base uint64) {
	if t.n == 0 {
		return
	}
	mask := len(t.slots) - 1
	i := t.home(base)
	for ; t.slots[i].base != base || t.slots[i].a == nil; i = (i + 1) & mask {
		if t.slots[i].a == nil {
			return
		}
	}
	// Close the gap at i: move back every later slot of the probe run whose
	// home is not strictly after the gap (cyclically), so that each entry
	// stays reachable from its home without crossing an empty slot.
	for j := i; ; {
		j = (j + 1) & mask
		if t.slots[j].a == nil {
			break
		}
		if (j-t.home(t.slots[j].base))&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = baseSlot{}
	t.n--
}

// grow doubles the table (to 64 slots at first) and rehashes.
func (t *baseTable) grow() {
	old := t.slots
	size := max(64, 2*len(old))
	t.slots = make([]baseSlot, size)
	t.shift = 64
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	t.n = 0
	for _, s := range old {
		if s.a != nil {
			t.set(s.base, s.a)
		}
	}
}

// all calls f for every allocation in the table, in no particular order.
func (t *baseTable) all(f func(*allocation)) {
	for _, s := range t.slots {
		if s.a != nil {
			f(s.a)
		}
	}
}
