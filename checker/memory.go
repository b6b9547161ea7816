package checker

// memory is the checker's memory state: the allocation index, holding the
// live allocations and the grave of the most recent graveLimit freed ones,
// the grave's order, and the pools of records and buffers that forgotten
// allocations leave for new ones.
type memory struct {
	// allocs holds the live allocations and the grave. Their ranges never
	// overlap: an allocation replaces whatever it overlaps.
	allocs   *addrIndex
	graveQ   graveOrder
	graveLen int           // Freed allocations in allocs.
	spare    []*allocation // Records of forgotten allocations, for reuse.
	bufs     bufPool       // Their buffers.
}

// graveLimit bounds how many freed allocations are remembered for
// use-after-free, double-free and reuse checks; the oldest are forgotten
// first, so memory does not grow with the length of a trace.
const graveLimit = 1 << 16

// newAllocation returns a zeroed allocation record, reusing a forgotten one
// when there is one: the records of a long trace then stay few and close
// together in memory, and make no garbage.
func (m *memory) newAllocation() *allocation {
	if n := len(m.spare); n > 0 {
		a := m.spare[n-1]
		m.spare = m.spare[:n-1]
		return a
	}
	return &allocation{}
}

// recycle takes back the record of an allocation that is neither live nor
// in the grave. Nothing else keeps pointers to allocations: findings copy
// what they report.
func (m *memory) recycle(a *allocation) {
	a.clear(&m.bufs)
	m.spare = append(m.spare, a)
}

// graveOrder lists freed allocations from the oldest free to the newest, so
// the oldest can be forgotten first. The links live in the allocations, so
// one that leaves the grave early (its addresses were reused) is unlinked
// at once.
type graveOrder struct {
	oldest, newest *allocation
}

func (q *graveOrder) push(a *allocation) {
	a.older, a.newer = q.newest, nil
	if q.newest != nil {
		q.newest.newer = a
	} else {
		q.oldest = a
	}
	q.newest = a
}

// insertAfter links r into the order right after a, as if freed with it.
func (q *graveOrder) insertAfter(a, r *allocation) {
	r.older, r.newer = a, a.newer
	if a.newer != nil {
		a.newer.older = r
	} else {
		q.newest = r
	}
	a.newer = r
}

func (q *graveOrder) unlink(a *allocation) {
	if a.older != nil {
		a.older.newer = a.newer
	} else if q.oldest == a {
		q.oldest = a.newer
	}
	if a.newer != nil {
		a.newer.older = a.older
	} else if q.newest == a {
		q.newest = a.older
	}
	a.older, a.newer = nil, nil
}

// trimGrave forgets the oldest freed allocations beyond graveLimit.
func (m *memory) trimGrave() {
	for m.graveLen > graveLimit {
		old := m.graveQ.oldest
		m.allocs.remove(old)
		m.graveQ.unlink(old)
		m.graveLen--
		m.recycle(old)
	}
}

// keepRest keeps in the grave the parts of the freed allocation o outside
// a new allocation [base, end) that overlaps it and takes its place in the
// index: a pool that hands out the middle or the end of a freed block keeps
// the rest, and later allocations there must still inherit o's uses, and a
// free through o's old pointer is still a double free. Each part keeps o's
// uses and free, and takes o's place in the grave's order.
//
// The common reuse, a smaller allocation at o's base, keeps no rest (see
// allocate): a record for each made the address index twice as large and
// the benchmark trace's analysis 60% slower, and reporting uses of such a
// rest as uses after free made false alarms on PyTorch, whose
// multi_tensor_apply kernels get structs holding stale pointers.
func (m *memory) keepRest(o *allocation, base, end uint64) {
	// o overlaps [base, end): o.base < end. Sizes, not ends, so that a
	// range that ends at the top of the address space does not wrap.
	if past := end - o.base; o.size > past {
		m.graveRest(o, end, o.size-past)
	}
	if o.base < base {
		m.graveRest(o, o.base, base-o.base)
	}
}

// graveRest adds to the grave a record of the part [lo, lo+size) of the
// freed allocation o, with o's uses, next to o in the grave's order.
func (m *memory) graveRest(o *allocation, lo, size uint64) {
	r := m.newAllocation()
	r.freed, r.async, r.family, r.base, r.size = true, o.async, o.family, lo, size
	r.alloc, r.free = o.alloc, o.free
	_, r.wholeSize = o.wholeOf()
	for _, u := range o.uses() {
		r.addUse(u, &m.bufs)
	}
	if len(o.inherited) > 0 {
		r.inherited = append(m.bufs.get(), o.inherited...)
	}
	m.allocs.insert(r)
	m.graveQ.insertAfter(o, r)
	m.graveLen++
}
