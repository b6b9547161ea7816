package checker

import (
	"math"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// What allocations, frees and uses do to the checker's memory state, and
// what they meet there, which the rules' use and free hooks judge
// (plugin.go): use asks about a use of freed memory and a first use not
// ordered after its allocation, release and rejectedFree about frees.

// allocate records the allocation of [base, base+size) that ev makes (an
// allocation call, or a graph launch allocating memory its graph does not
// free), and returns its record (nil for none); async says it is
// stream-ordered.
func (c *Checker) allocate(ev *model.Event, st *hb.Step, base, size uint64, async bool) *allocation {
	if familyOf(ev) == famModule {
		if o := c.allocs.at(base); o != nil && !o.freed && o.family == famModule && o.size == max(size, 1) {
			return o // the same global variable looked up again
		}
	}
	c.stats.Allocations++
	// A range cannot be live twice; a missed free (for instance by a call
	// the shim does not see) must not leave a stale entry that hides this one.
	// Uses of freed memory at these addresses stay relevant even when they
	// are ordered before this allocation: a use of the new memory on another
	// stream may be ordered after neither.
	if base == 0 {
		return nil // a zero-byte request answered with NULL allocates nothing
	}
	size = max(size, 1)
	o := c.allocs.at(base)
	var old []*allocation
	if o == nil || o.size < size {
		// Ranges in the index are disjoint, so one at base no smaller than
		// this allocation is all it overlaps; otherwise look.
		var same *span
		old, same = c.allocs.overlapping(base, size)
		if o = nil; len(old) == 1 && same != nil {
			o = old[0]
		}
	}
	if o != nil && !o.freed {
		c.overlapped(o, base)
	}
	if o != nil {
		// The common case: a pool hands out a range it gave before, at the
		// same base, and it overlaps nothing else. That allocation's record
		// becomes the new one's, and the index stays as it is.
		// (When the new allocation is the smaller, the rest of a freed
		// record is forgotten: see keepRest.)
		var inherited []access
		if o.freed {
			inherited = c.carried(nil, o)
			c.graveQ.unlink(o)
			c.graveLen--
		}
		c.dropped(o, false)
		o.clear(&c.bufs)
		o.inherited = inherited
		o.base, o.size, o.async, o.family, o.alloc = base, size, async, familyOf(ev), c.accessOf(ev, st, base)
		return o
	}
	a := c.newAllocation()
	a.base, a.size, a.async, a.family, a.alloc = base, size, async, familyOf(ev), c.accessOf(ev, st, base)
	for _, o := range old {
		if !o.freed {
			c.overlapped(o, base)
		}
		c.dropped(o, false)
		c.allocs.remove(o)
		if o.freed {
			a.inherited = c.carried(a.inherited, o)
			c.keepRest(o, base, rangeEnd(base, size))
			c.graveQ.unlink(o)
			c.graveLen--
		}
		c.recycle(o)
	}
	c.allocs.insert(a)
	c.trimGrave() // the rests kept above may have grown it
	return a
}

// maxOverlapped bounds the bases of overlapped allocations remembered.
const maxOverlapped = 4096

// overlapped notes that a new allocation at base overlaps o, which is still
// live: the trace missed o's free, so a free of o's base that CUDA accepts
// later is no invalid free.
func (c *Checker) overlapped(o *allocation, base uint64) {
	if o.family == famModule {
		return // its module was unloaded: the trace does not carry unloads
	}
	c.stats.OverlappedAllocations++
	if o.base == base || len(c.overlappedBases) >= maxOverlapped {
		return // at the same base, a free of base is the new allocation's
	}
	if c.overlappedBases == nil {
		c.overlappedBases = map[uint64]bool{}
	}
	c.overlappedBases[o.base] = true
}

// unrecordedBase says whether ev, a free CUDA accepted of ptr, where no
// live recorded allocation starts (a, the record at ptr, is nil or freed),
// freed an allocation the trace did not see made, and counts it. A synchronous free is validated by the driver
// before it returns: cudaFree, cudaFreeHost and cudaHostUnregister of an
// address no allocation starts at fail. Accepted, it names the base of
// memory some path the recorder misses allocated (cuFFT's work areas, a
// range handed out again after a recorded free), not an invalid or double
// free. Still reported: a pointer inside a live recorded allocation, a
// free of pool memory, and a free that is the freeing thread's next call
// after a free of the same address (nothing can have allocated it in
// between: the rule use-after-free follows for uses, mayBeReallocated).
func (c *Checker) unrecordedBase(ev *model.Event, a *allocation, ptr uint64, prev syncFree) bool {
	if ev.Op != model.OpFree {
		return false
	}
	if in := c.allocs.find(ptr); in != nil && !in.freed {
		return false
	}
	if a != nil && !c.mayBeReallocated(a, ev) {
		return false
	}
	if prev.ptr == ptr && prev.tid == ev.TID && ev.Seq == prev.seq+1 {
		return false
	}
	c.stats.UnknownAddressFrees++
	return true
}

// syncFree is a synchronous free's thread, call number and address.
type syncFree struct {
	tid uint32
	seq uint64
	ptr uint64
}

// release checks the free of ptr that ev makes (a free call, or a graph
// launch whose graph frees memory allocated outside it).
func (c *Checker) release(ev *model.Event, st *hb.Step, ptr uint64) {
	if ptr == 0 {
		return // cudaFree(NULL) is a valid no-op.
	}
	c.stats.Frees++
	prev := c.lastSyncFree
	if ev.Op == model.OpFree {
		c.lastSyncFree = syncFree{tid: ev.TID, seq: ev.Seq, ptr: ptr}
	}
	free := c.accessOf(ev, st, ptr)
	a := c.allocs.at(ptr)
	if _, graphs := c.graphAllocs[ptr]; a == nil && graphs {
		// A graph's allocation, freed by the program. The address stays
		// a graph's: each launch of the graph allocates it again, and the
		// program frees it after each.
		return
	}
	if a == nil || a.freed {
		if c.overlappedBases[ptr] && a == nil {
			// CUDA accepted the free of an allocation a later recorded one
			// overlapped: it was live, the trace missed its end.
			delete(c.overlappedBases, ptr)
			return
		}
		if c.unrecordedBase(ev, a, ptr, prev) {
			return
		}
		c.badFree(ev, a, free)
		return
	}
	// cudaFree and cuMemFree of cudaMalloc, pitched and managed memory wait
	// for all work issued on the free's device before they release it (the
	// driver skips that only for cuMemAllocAsync memory): its uses there are
	// complete, and a later allocation at these addresses does not inherit
	// them. The free orders nothing else: the engine is not told, so the
	// host is not ordered after that work for the program's other memory.
	// Host frees (cudaFreeHost, cudaHostUnregister) promise no such wait.
	syncs := a.family.freeWaits(ev)
	if syncs {
		c.completeUses(a, ev.Device)
	}
	for _, h := range c.plugins.liveFree {
		if h.onLiveFree(ev, st, a, free, syncs) {
			break
		}
	}
	a.free = free
	a.freed = true
	c.dropped(a, true)
	c.graveQ.push(a)
	c.graveLen++
	c.trimGrave()
}

// badFree asks the free hooks about a free of an address where no live
// allocation starts (a is nil or freed).
func (c *Checker) badFree(ev *model.Event, a *allocation, free access) {
	for _, h := range c.plugins.badFree {
		if h.onBadFree(ev, a, free) {
			return
		}
	}
}

// rejectedFree checks a free that CUDA refused. It changed nothing, but a
// program that frees twice or frees an interior pointer has a bug even when
// the driver catches it and the program ignores the error.
func (c *Checker) rejectedFree(ev *model.Event) {
	if ev.Ptr == 0 {
		return
	}
	a := c.allocs.at(ev.Ptr)
	if _, graphs := c.graphAllocs[ev.Ptr]; a == nil && graphs && ev.Result == model.ResultCaptureInvalidated {
		return // A graph's allocation, freed in a capture an illegal call invalidated: CUDA says so.
	}
	var st hb.Step
	if ev.Op == model.OpFreeAsync {
		st.Agent = c.engine.Stream(ev.Stream, ev.Device, ev.TID).ID
	}
	free := c.accessOf(ev, &st, ev.Ptr)
	if a != nil && !a.freed {
		for _, h := range c.plugins.refusedFree {
			if h.onRefusedFree(ev, a, free) {
				return
			}
		}
		return // The free failed for another reason (a bad stream, say).
	}
	c.badFree(ev, a, free)
}

// completeUses drops from a the uses, and the uses it inherited, made on
// the host or on streams of device: a free that synchronizes the device
// has waited for them. Uses on other devices' streams stay.
func (c *Checker) completeUses(a *allocation, device int32) {
	done := func(u *access) bool {
		return u.agent == hb.HostAgent || c.engine.Agent(u.agent).Device == device
	}
	kept := a.inherited[:0]
	for i := range a.inherited {
		if !done(&a.inherited[i]) {
			kept = append(kept, a.inherited[i])
		}
	}
	a.inherited = kept
	uses := a.uses()
	n := 0
	for i := range uses {
		if !done(&uses[i]) {
			uses[n] = uses[i]
			n++
		}
	}
	if n == int(a.nUses) {
		return
	}
	if int(a.nUses) > len(a.useBuf) {
		// The kept uses are at the front of extra; they move back into
		// useBuf when they fit, as uses() expects.
		a.extra = a.extra[:n]
		if n <= len(a.useBuf) {
			copy(a.useBuf[:], a.extra)
			c.bufs.put(a.extra)
			a.extra = nil
		}
	}
	a.nUses = uint32(n)
}

// use checks a use of the allocation that holds addr.
func (c *Checker) use(ev *model.Event, st *hb.Step, addr uint64) {
	if addr == 0 {
		return
	}
	a := c.allocs.find(addr)
	if a == nil {
		// Memory the trace never saw allocated (an allocation path the
		// recorder misses, or host memory a default-kind copy names).
		if !mayBeHost(ev) {
			c.stats.UnknownAddressUses++
		}
		return
	}
	c.stats.Uses++
	if a.freed {
		for _, h := range c.plugins.freedUse {
			if h.onFreedUse(ev, st, a, addr) {
				break
			}
		}
		return
	}
	uses := a.uses()
	prior := -1
	for i := range uses {
		if uses[i].agent == st.Agent {
			prior = i
			break
		}
	}
	// A use unordered after the allocation on a stream that already used the
	// memory is the same bug as that earlier use, which was reported: stream
	// order puts this one after it.
	if prior < 0 && !st.Clock.Covers(c.epoch(&a.alloc)) {
		for _, h := range c.plugins.unorderedUse {
			if h.onUnorderedUse(ev, st, a, addr) {
				break
			}
		}
	}
	if prior >= 0 {
		uses[prior] = c.accessOf(ev, st, addr)
		return
	}
	a.addUse(c.accessOf(ev, st, addr), &c.bufs)
}

// mayBeReallocated reports whether the freed allocation a's addresses may
// have been handed out again, by a path the trace does not record, before
// ev used them. A synchronous free of memory that is not stream-ordered
// (cudaFree, cuMemFree, cudaFreeHost, cudaHostUnregister), an unmap
// (cuMemUnmap) or the close of an interprocess mapping gives the range back
// to the driver or the C library, whose other callers (a library's own
// allocator: cuFFT's work areas) may get it without a call the recorder
// sees. A pool's memory (cudaFreeAsync, cudaFree of cudaMallocAsync memory,
// a graph's) is handed out again only by pool allocations, which are
// recorded. The one use of such a range that is still a use after free is
// the freeing thread's very next call, with nothing recorded in between on
// any thread: the program used the pointer it had just freed, not one an
// allocation handed it since.
func (c *Checker) mayBeReallocated(a *allocation, ev *model.Event) bool {
	switch a.free.op {
	case model.OpFree:
		if a.async {
			return false
		}
	case model.OpVmmUnmap, model.OpIpcMemClose:
	default:
		return false
	}
	return ev.TID != a.free.tid || ev.Seq != a.free.seq+1
}

// mayBeHost reports whether the addresses ev uses may be host memory: a
// copy of the default kind names either.
func mayBeHost(ev *model.Event) bool {
	return (ev.Op == model.OpMemcpy || ev.Op == model.OpMemcpyAsync) && ev.Kind == model.CopyDefault
}

// carried appends to dst what a freed allocation hands on to one that
// reuses its addresses: its uses or, when it had none, the uses it had
// inherited itself (so that a reuse is still seen through an allocation
// made and freed without a use). Those the host is already ordered after
// are left out: everything issued from now on is ordered after them.
func (c *Checker) carried(dst []access, o *allocation) []access {
	src := o.uses()
	if len(src) == 0 {
		src = o.inherited
	}
	host := c.engine.HostClock()
	for i := range src {
		if host.Covers(c.epoch(&src[i])) {
			continue
		}
		if dst == nil {
			dst = c.bufs.get()
		}
		dst = append(dst, src[i])
	}
	return dst
}

// rangeEnd returns base+size, or the top of the address space if that
// wraps around.
func rangeEnd(base, size uint64) uint64 {
	if end := base + size; end >= base {
		return end
	}
	return math.MaxUint64
}
