package checker

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ianlancetaylor/demangle"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// graveLimit bounds how many freed allocations are remembered for
// use-after-free, double-free and reuse checks; the oldest are forgotten
// first, so memory does not grow with the length of a trace.
const graveLimit = 1 << 16

// access is one operation on an allocation, with what is needed to report
// it later. It is kept small (48 bytes): allocations hold one per stream
// that used them, and the hot loop of a large trace is mostly cache misses
// on them.
type access struct {
	// clock is the operation's epoch on agent (hb.Step.Epoch, whose agent
	// is always Step.Agent); 0 for operations no one is ordered after.
	// These two come first: they are what a use reads.
	clock  uint64
	agent  hb.AgentID
	tid    uint32
	seq    uint64
	ptr    uint64
	api    model.StringID
	kernel model.StringID
	stack  model.StackID
	op     model.Op
	// rejected says CUDA refused the call (it returned an error): it
	// changed nothing, but what it names is still the program's.
	rejected bool
}

// epoch returns the operation's happens-before epoch.
func (c *Checker) epoch(a *access) hb.Epoch { return c.engine.EpochOf(a.agent, a.clock) }

// allocation is one allocation, live or freed.
//
// A large trace's analysis touches thousands of these records in no
// particular order, so their layout matters: what a use of an allocation on
// a stream that used it before reads and writes (freed, nUses, useBuf[0])
// comes first, in the first 64 bytes (TestAllocationLayout checks).
type allocation struct {
	freed bool   // In the grave: freed, remembered for later checks.
	async bool   // Stream-ordered (cudaMallocAsync / from a pool).
	nUses uint32 // Length of uses().
	// The most recent use on each agent (see uses): in useBuf while they
	// fit, then all in extra. Most allocations are used on one or two
	// streams, and keeping those uses in the record itself means a use reads
	// no pointer before it can look at them.
	useBuf     [2]access
	base, size uint64
	alloc      access
	extra      []access
	// inherited holds the uses of the freed allocations whose addresses
	// this one took over.
	inherited []access
	free      access
	// older and newer link the freed allocations in the order they were
	// freed (see graveOrder).
	older, newer *allocation
	// wholeSize is set on a record of the rest of a freed allocation that
	// a new one partly reused (see keepRest): the size of the allocation it
	// was part of, which started at alloc.ptr. Reports name that one.
	wholeSize uint64
}

// wholeOf returns the base and size of the allocation a record's addresses
// were part of (see wholeSize).
func (a *allocation) wholeOf() (base, size uint64) {
	if a.wholeSize != 0 {
		return a.alloc.ptr, a.wholeSize
	}
	return a.base, a.size
}

// uses returns the most recent use on each agent, in the order the agents
// first used the allocation: a later use on the same stream is ordered
// after the earlier ones, so it stands for them.
func (a *allocation) uses() []access {
	if int(a.nUses) <= len(a.useBuf) {
		return a.useBuf[:a.nUses]
	}
	return a.extra
}

// addUse records the first use on an agent; a buffer it needs comes from p.
func (a *allocation) addUse(u access, p *bufPool) {
	switch n := int(a.nUses); {
	case n < len(a.useBuf):
		a.useBuf[n] = u
	case n == len(a.useBuf):
		a.extra = append(append(p.get(), a.useBuf[:]...), u)
	default:
		a.extra = append(a.extra, u)
	}
	a.nUses++
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

// Checker applies the rules to a trace, one event at a time.
type Checker struct {
	trace  string
	tables *model.Tables
	engine *hb.Engine
	// allocs holds the live allocations and the grave: the most recent
	// graveLimit freed ones. Their ranges never overlap: an allocation
	// replaces whatever it overlaps.
	allocs   *addrIndex
	graveQ   graveOrder
	graveLen int                // Freed allocations in allocs.
	spare    []*allocation      // Records of forgotten allocations, for reuse.
	bufs     bufPool            // Their buffers.
	findings map[findingKey]int // Index in pending of each root cause's finding.
	order    []*Finding
	stats    Stats
	threads  map[uint32]bool
	pending  []pendingFinding      // Findings whose operations Finish resolves.
	created  map[hb.AgentID]access // Stream creations, for naming streams in reports.
	// firstUse holds, by agent, the first call on each stream whose stack
	// has a frame of the program (streamsites.go), and programStacks which
	// stacks were looked at.
	firstUse      []firstUse
	programStacks map[model.StackID]bool
	streamSites   map[hb.AgentID]streamSite // Computed at the first report.
	// graphAllocs are the ranges a graph allocates, base -> end (a
	// captured cudaMallocAsync, or a memory node: FlagGraphAlloc), which the
	// program may free itself after each launch (graph memory is not
	// analyzed yet, but such a free is no invalid free), and which nodes
	// added by hand may use (not memory from outside the graph).
	graphAllocs map[uint64]uint64
	graphs      graphMemory   // What captured work uses, for graph launches.
	captureMem  captureMemory // The memory each open capture allocated.
	// graphOps holds the captured operations and nodes added by hand that
	// graphs' items name (graphUse.by), and launched each graph launch's
	// items: a report of a graph launch names the node that made the use.
	graphOps graphOps
	launched launchedWork
	// recordNodes holds, by event handle, the latest event record node
	// added to a graph by hand or pointed at the event, in a graph (not an
	// executable graph): a wait on an event that only such a node records
	// (in executable graphs made after it) names it.
	recordNodes map[uint64]access
	ipc         ipcState // Pointers exported to and imported from other processes (ipc.go).
	// streamRank[id] counts the created streams among agents 0..id: the
	// number StreamName gives an unnamed stream.
	streamRank []uint32
	step       hb.Step  // What the engine learned from the current event.
	ptrs       []uint64 // Scratch for a launch's long pointer list.
	// The most recent threads, already in threads (nRecent of them): most
	// events come from one or two threads.
	recentTIDs [2]uint32
	nRecent    int
	opts       Options
	memOps     memOps // Stream memory operations (memops.go).
}

// Options adjust an analysis.
type Options struct {
	// Symbolize, if set, fills in the source locations of a recorded stack
	// before a finding reports it (see package symbolize).
	Symbolize func(t *model.Tables, id model.StackID)
	// Leaks makes a leak finding of each stream-ordered allocation still
	// live when a complete trace ends (compute-sanitizer's --leak-check
	// full). Without it they are only counted, in Stats.LiveAtExit and
	// Stats.LiveBytesAtExit: programs that never free what they keep until
	// exit (a Python program's model, a library's workspace) are correct.
	Leaks bool
}

// New returns a checker for the trace named trace, whose definitions are in
// tables (a Reader's Tables, which may still grow while events are added).
func New(trace string, tables *model.Tables) *Checker {
	return &Checker{
		trace:    trace,
		tables:   tables,
		engine:   hb.New(),
		allocs:   newAddrIndex(),
		findings: map[findingKey]int{},
		// A change in place cannot add or remove memory nodes: the memory
		// a graph allocates at each launch stays known.
		graphs: graphMemory{hb.GraphWork[graphUse]{
			Lasting: func(u graphUse) bool { return u.allocSize != 0 },
			// A conditional body's uses may be made at each launch; CUDA
			// allows no memory nodes in a body.
			Body: usesOnly,
		}},
		threads: map[uint32]bool{},
	}
}

// Check reads r to the end and returns the analysis. A damaged trace is not
// an error: Result.Damage says where reading stopped. The error is non-nil
// only when r fails for another reason (an I/O error).
func Check(trace string, r model.Reader) (*Result, error) {
	return CheckWith(trace, r, Options{})
}

// CheckWith is Check with options.
func CheckWith(trace string, r model.Reader, opts Options) (*Result, error) {
	c := New(trace, r.Tables())
	c.opts = opts
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return c.Finish(nil), nil
		}
		if err != nil {
			if model.IsDamage(err) {
				return c.Finish(err), nil
			}
			return c.Finish(err), err
		}
		c.Add(&ev)
	}
}

// Engine exposes the happens-before engine, for explanations.
func (c *Checker) Engine() *hb.Engine { return c.engine }

// Add analyzes one event.
func (c *Checker) Add(ev *model.Event) {
	c.stats.Events++
	c.noteThread(ev.TID)
	st := &c.step
	c.engine.ApplyTo(ev, st)
	if ev.Stack != 0 && st.Agent != hb.HostAgent && !c.usedByProgram(st.Agent) && ev.Op != model.OpStreamCreate {
		c.noteFirstUse(ev, st)
	}
	if st.Skipped {
		c.stats.Skipped++
		if !st.Captured && (ev.Op == model.OpFree || ev.Op == model.OpFreeAsync) {
			c.rejectedFree(ev)
		}
		if !st.Captured && ev.Flags&model.FlagGraphNode == 0 && ev.Failed() {
			c.rejectedUse(ev)
		}
		if st.Captured && ev.Op == model.OpMallocAsync && ev.Ptr != 0 {
			if c.graphAllocs == nil {
				c.graphAllocs = map[uint64]uint64{}
			}
			c.graphAllocs[ev.Ptr] = rangeEnd(ev.Ptr, ev.Size)
		}
		if st.Captured || ev.Op == model.OpCaptureEnd {
			by := uint32(0)
			if st.Captured && capturedUse(ev) {
				by = c.noteGraphOp(ev, st)
			}
			c.graphs.captured(ev, st, by)
			c.captured(ev, st)
		}
		if ev.Flags&model.FlagGraphNode != 0 && !ev.Failed() {
			c.graphNode(ev, st)
		}
		if ev.Op == model.OpStreamMemOp && (st.Captured || ev.Flags&model.FlagGraphNode != 0 && !ev.Failed()) {
			c.capturedMemOp(ev, st)
		}
		return
	}
	if st.UnrecordedWait {
		c.reportUnrecordedWait(ev, st)
	}
	switch ev.Op {
	case model.OpStreamCreate:
		if c.created == nil {
			c.created = map[hb.AgentID]access{}
		}
		c.created[st.Agent] = c.accessOf(ev, st, 0)
	case model.OpMallocAsync, model.OpMalloc:
		c.allocate(ev, st, ev.Ptr, ev.Size, ev.Op == model.OpMallocAsync)
	case model.OpFreeAsync, model.OpFree, model.OpIpcMemClose:
		c.release(ev, st, ev.Ptr)
	case model.OpPtrImport, model.OpIpcMemOpen, model.OpPtrExport, model.OpIpcMemExport:
		c.interprocess(ev, st)
	case model.OpLaunch:
		// The strong addresses (pointer slots); the weak ones after them.
		ptrs := ev.StrongPtrs()
		if len(ptrs) > maxScannedPtrs {
			// A long list (a hand-written trace; the shim's come sorted
			// and unique) is deduplicated by sorting a copy.
			c.ptrs = append(c.ptrs[:0], ptrs...)
			slices.Sort(c.ptrs)
			for i, p := range c.ptrs {
				if i == 0 || p != c.ptrs[i-1] {
					c.use(ev, st, p)
				}
			}
		} else {
			for i, p := range ptrs {
				if !seenBefore(ptrs[:i], p) {
					c.use(ev, st, p)
				}
			}
		}
		if ev.Weak > 0 {
			c.weakUses(ev, st)
		}
	case model.OpMemcpy, model.OpMemcpyAsync, model.OpMemset, model.OpMemsetAsync:
		eachUse(ev, func(p uint64) { c.use(ev, st, p) })
	case model.OpGraphInstantiate:
		c.graphs.Apply(ev, st, nil)
	case model.OpGraphClone:
		if ev.Flags&model.FlagConditional != 0 {
			c.graphs.AddBody(ev.Graph, ev.Src, ev.Node) // see graphMemory's Body
			break
		}
		// The copy uses what the original uses; its allocations (outputs)
		// and frees are left out, as a copy's cannot be told apart from
		// the original's. A copy of unknown work is unknown work.
		replace := ev.Flags&model.FlagLifetime != 0
		if !c.graphs.Copy(ev.Src, ev.Graph, replace, usesOnly) {
			if replace {
				c.graphs.Forget(ev.Graph, 0)
			} else {
				c.graphs.Change(ev.Graph, 0)
			}
		}
	case model.OpStreamMemOp:
		c.streamMemOp(ev, st)
	case model.OpGraphEventRecordNode:
		c.noteRecordNode(ev, st)
	case model.OpEventDestroy:
		delete(c.recordNodes, ev.Event) // the handle may name another event later
	case model.OpGraphForget:
		// Any change, in place or not, makes what the capture used stale;
		// one in place leaves the memory nodes (graphMemory's Lasting).
		if ev.Flags&model.FlagLifetime != 0 {
			c.graphs.Forget(ev.Graph, ev.Exec)
		} else {
			c.graphs.Change(ev.Graph, ev.Exec)
		}
		if ev.Node != 0 && ev.Exec == 0 {
			c.graphs.DestroyNode(ev.Node) // a conditional node's bodies go with it
		}
	case model.OpGraphLaunch:
		// The graph's work runs in stream order on the launching stream:
		// the memory it allocates and does not free is allocated there
		// (live after the launch, for the program to use and free); each
		// address it uses is a use made there; each allocation from
		// outside it that it frees is freed there, after the uses.
		uses := c.graphs.Launched(ev.Exec)
		c.launched.add(ev.Seq, uses)
		for _, u := range uses {
			switch {
			case u.allocSize != 0:
				a := c.allocs.at(u.addr)
				live := a != nil && !a.freed
				// A launch ordered after the program's free of the last
				// output follows that free, which was checked against the
				// output's uses itself.
				afterFree := a != nil && a.freed && st.Clock.Covers(c.epoch(&a.free))
				if live {
					// Still live from the last launch: CUDA refuses the launch
					// unless the graph was instantiated to free it first
					// (cudaGraphInstantiateFlagAutoFreeOnLaunch, as PyTorch
					// does), and a refused launch is skipped.
					c.release(ev, st, u.addr)
				}
				c.allocate(ev, st, u.addr, u.allocSize, true)
				if !live && !afterFree {
					c.relaunchAfterFree(ev, st, u.addr)
				}
			case !u.free:
				c.use(ev, st, u.addr)
			}
		}
		for _, u := range uses {
			if u.free {
				c.release(ev, st, u.addr)
			}
		}
	}
}

// eachUse calls use with each device address a launch, copy or set uses:
// a launch's parameter pointers (as recorded, repeats included), a copy's
// device sides, a set's destination. A copy or set is a use of the
// allocation its first byte is in: CUDA rejects one that runs past the end
// of its allocation (measured on CUDA 13), and a 2D or 3D copy's recorded
// size spans the wider of its two sides' pitches, so the range says
// nothing about a second allocation.
func eachUse(ev *model.Event, use func(uint64)) {
	switch ev.Op {
	case model.OpLaunch:
		for _, p := range ev.Ptrs {
			use(p)
		}
	case model.OpMemcpy, model.OpMemcpyAsync:
		if ev.Kind.DstDevice() {
			use(ev.Ptr)
		}
		if ev.Kind.SrcDevice() && ev.Src != ev.Ptr {
			use(ev.Src)
		}
	case model.OpMemset, model.OpMemsetAsync:
		use(ev.Ptr)
	case model.OpStreamMemOp:
		if ev.MemOp.IsWait() || ev.MemOp.Changes() || ev.MemOp == model.MemOpUnknown {
			use(ev.Ptr)
		}
	}
}

// noteThread counts the thread tid.
func (c *Checker) noteThread(tid uint32) {
	for _, t := range c.recentTIDs[:c.nRecent] {
		if t == tid {
			return
		}
	}
	c.threads[tid] = true
	c.recentTIDs[1], c.recentTIDs[0] = c.recentTIDs[0], tid
	c.nRecent = min(c.nRecent+1, len(c.recentTIDs))
}

// maxScannedPtrs is the longest pointer list deduplicated by scanning.
const maxScannedPtrs = 64

func seenBefore(ps []uint64, p uint64) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func (c *Checker) accessOf(ev *model.Event, st *hb.Step, ptr uint64) access {
	return access{
		clock: st.Epoch.Clock, agent: st.Agent, seq: ev.Seq, op: ev.Op, api: ev.API,
		kernel: ev.Kernel, stack: ev.Stack, tid: ev.TID, ptr: ptr, rejected: ev.Failed(),
	}
}

// newAllocation returns a zeroed allocation record, reusing a forgotten one
// when there is one: the records of a long trace then stay few and close
// together in memory, and make no garbage.
func (c *Checker) newAllocation() *allocation {
	if n := len(c.spare); n > 0 {
		a := c.spare[n-1]
		c.spare = c.spare[:n-1]
		return a
	}
	return &allocation{}
}

// recycle takes back the record of an allocation that is neither live nor
// in the grave. Nothing else keeps pointers to allocations: findings copy
// what they report.
func (c *Checker) recycle(a *allocation) {
	a.clear(&c.bufs)
	c.spare = append(c.spare, a)
}

// clear empties a record for reuse, giving its buffers back to p.
//
// Only what is read before it is written is reset (base, size, async, alloc
// and free are set when they take effect; useBuf is read up to nUses), so
// that reusing a cold record does not write all of its cache lines.
func (a *allocation) clear(p *bufPool) {
	p.put(a.extra)
	p.put(a.inherited)
	a.freed, a.nUses = false, 0
	a.extra, a.inherited = nil, nil
	a.older, a.newer, a.wholeSize = nil, nil, 0
}

// bufPool keeps the buffers of forgotten allocations' extra and inherited
// uses for new allocations. A buffer goes back when its record is cleared,
// so memory follows what the live and remembered allocations need instead
// of creeping up with the length of a trace, and reuse makes no garbage.
type bufPool struct {
	free [][]access
}

// bufCap is the capacity of pooled buffers: what most allocations need.
// Larger buffers are left to the garbage collector.
const bufCap = 4

func (p *bufPool) get() []access {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return make([]access, 0, bufCap)
}

func (p *bufPool) put(b []access) {
	if cap(b) == bufCap {
		p.free = append(p.free, b[:0])
	}
}

// allocate records the allocation of [base, base+size) that ev makes (an
// allocation call, or a graph launch allocating memory its graph does not
// free); async says it is stream-ordered.
func (c *Checker) allocate(ev *model.Event, st *hb.Step, base, size uint64, async bool) {
	c.stats.Allocations++
	// A range cannot be live twice; a missed free (for instance by a call
	// the shim does not see) must not leave a stale entry that hides this one.
	// Uses of freed memory at these addresses stay relevant even when they
	// are ordered before this allocation: a use of the new memory on another
	// stream may be ordered after neither.
	if base == 0 {
		return // a zero-byte request answered with NULL allocates nothing
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
		o.clear(&c.bufs)
		o.inherited = inherited
		o.base, o.size, o.async, o.alloc = base, size, async, c.accessOf(ev, st, base)
		return
	}
	a := c.newAllocation()
	a.base, a.size, a.async, a.alloc = base, size, async, c.accessOf(ev, st, base)
	for _, o := range old {
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
}

// rangeEnd returns base+size, or the top of the address space if that
// wraps around.
func rangeEnd(base, size uint64) uint64 {
	if end := base + size; end >= base {
		return end
	}
	return math.MaxUint64
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
func (c *Checker) keepRest(o *allocation, base, end uint64) {
	// o overlaps [base, end): o.base < end. Sizes, not ends, so that a
	// range that ends at the top of the address space does not wrap.
	if past := end - o.base; o.size > past {
		c.graveRest(o, end, o.size-past)
	}
	if o.base < base {
		c.graveRest(o, o.base, base-o.base)
	}
}

// graveRest adds to the grave a record of the part [lo, lo+size) of the
// freed allocation o, with o's uses, next to o in the grave's order.
func (c *Checker) graveRest(o *allocation, lo, size uint64) {
	r := c.newAllocation()
	r.freed, r.async, r.base, r.size = true, o.async, lo, size
	r.alloc, r.free = o.alloc, o.free
	_, r.wholeSize = o.wholeOf()
	for _, u := range o.uses() {
		r.addUse(u, &c.bufs)
	}
	if len(o.inherited) > 0 {
		r.inherited = append(c.bufs.get(), o.inherited...)
	}
	c.allocs.insert(r)
	c.graveQ.insertAfter(o, r)
	c.graveLen++
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

// release checks the free of ptr that ev makes (a free call, or a graph
// launch whose graph frees memory allocated outside it).
func (c *Checker) release(ev *model.Event, st *hb.Step, ptr uint64) {
	if ptr == 0 {
		return // cudaFree(NULL) is a valid no-op.
	}
	c.stats.Frees++
	free := c.accessOf(ev, st, ptr)
	a := c.allocs.at(ptr)
	if _, graphs := c.graphAllocs[ptr]; a == nil && graphs {
		// A graph's allocation, freed by the program. The address stays
		// a graph's: each launch of the graph allocates it again, and the
		// program frees it after each.
		return
	}
	if a == nil || a.freed {
		c.reportBadFree(free)
		return
	}
	// cudaFree and cuMemFree of memory that is not stream-ordered wait for
	// all work issued on the free's device before they release it (the
	// driver skips that only for cuMemAllocAsync memory): its uses there are
	// complete, and a later allocation at these addresses does not inherit
	// them. The free orders nothing else: the engine is not told, so the
	// host is not ordered after that work for the program's other memory.
	syncs := ev.Op == model.OpFree && !a.async
	if syncs {
		c.completeUses(a, ev.Device)
	}
	c.checkFree(a, free, st, syncs)
	a.free = free
	a.freed = true
	if c.engine.HasMemoryWrites() {
		base, size := a.wholeOf()
		c.memOps.forgot = c.engine.ForgetMemory(base, rangeEnd(base, size), c.memOps.forgot[:0])
		c.forgetMemOps(c.memOps.forgot)
	}
	c.graveQ.push(a)
	c.graveLen++
	c.trimGrave()
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

// trimGrave forgets the oldest freed allocations beyond graveLimit.
func (c *Checker) trimGrave() {
	for c.graveLen > graveLimit {
		old := c.graveQ.oldest
		c.allocs.remove(old)
		c.graveQ.unlink(old)
		c.graveLen--
		c.recycle(old)
	}
}

// use checks a use of the allocation that holds addr.
func (c *Checker) use(ev *model.Event, st *hb.Step, addr uint64) {
	if addr == 0 {
		return
	}
	a := c.allocs.find(addr)
	if a == nil {
		return
	}
	if a.freed {
		c.stats.Uses++
		c.report(useAfterFreeRule, a, c.accessOf(ev, st, addr), &a.free)
		return
	}
	c.stats.Uses++
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
		u := c.accessOf(ev, st, addr)
		if old := c.unorderedInherited(a, st); old != nil {
			c.report(reuseWhileInFlightRule, a, u, old)
		} else {
			c.report(useBeforeAllocRule, a, u, &a.alloc)
		}
	}
	if prior >= 0 {
		uses[prior] = c.accessOf(ev, st, addr)
		return
	}
	a.addUse(c.accessOf(ev, st, addr), &c.bufs)
}

// Finish ends the analysis: it counts the stream-ordered memory still live
// and, with Options.Leaks, reports it (only for a complete trace, since a
// damaged one stops before the frees), and returns the result.
func (c *Checker) Finish(damage error) *Result {
	if damage == nil { // a damaged trace stops before the waits and frees that may follow
		c.unreadMemWrites()
		c.reportLeaks()
	}
	for i := range c.pending {
		c.resolveFinding(&c.pending[i])
	}
	c.pending = nil
	streams := 0
	for _, a := range c.engine.Agents() {
		if a.Kind != hb.KindHost {
			streams++
		}
	}
	c.stats.Streams = streams
	c.stats.Threads = len(c.threads)
	return &Result{Trace: c.trace, Findings: c.order, Stats: c.stats, Damage: damage, Tables: c.tables, Exports: c.resolveExports()}
}

// siteKey identifies a call site for folding repeated findings. Without a
// recorded stack the stream stands in for the site, so hand-written traces
// without sites still keep distinct bugs apart.
type siteKey struct {
	stack  model.StackID
	api    model.StringID
	kernel model.StringID
	agent  hb.AgentID
}

// findingKey identifies a root cause (see Finding): the rule, the two call
// sites and the two streams. The allocation is not part of it: one missing
// wait hits every tensor the two operations touch.
type findingKey struct {
	rule             RuleID
	op, on           siteKey
	opAgent, onAgent hb.AgentID // The stream pair; -1 without another operation.
	capture          bool       // A race inside a captured graph.
	memNote          memNote    // Why a stream-memory-op finding is not followed: one call site can have several.
}

// unorderedUse is the key's rule for use-before-alloc and
// reuse-while-in-flight. Both say that a use is not ordered after another
// stream's work on its addresses (the allocation, or a use of the memory
// the pool gave them before), and the fix of both is the one wait before
// that use: the other operation's site is left out of the key, and the
// finding keeps the rule seen first.
const unorderedUse RuleID = "unordered use"

func (c *Checker) siteOf(a *access) siteKey {
	if a == nil {
		return siteKey{agent: -1}
	}
	k := siteKey{stack: a.stack, api: a.api, kernel: a.kernel}
	if a.stack == 0 {
		k.agent = a.agent
	}
	return k
}

// allocID identifies one allocation for counting the allocations a finding
// hit: the call that made it and its base (a graph launch makes several).
type allocID struct{ seq, base uint64 }

// report records a finding, folding it into an earlier one with the same
// root cause.
func (c *Checker) report(rule *ruleDef, a *allocation, op access, other *access) {
	c.reportIn(hb.HostAgent, rule, a, op, other)
}

// reportIn is report for a race between operations captured into a graph
// by the capture begun on stream origin (the host: not captured).
func (c *Checker) reportIn(origin hb.AgentID, rule *ruleDef, a *allocation, op access, other *access) {
	c.reportNoted(origin, rule, a, op, other, memNoteNone)
}

// reportNoted is reportIn for a finding with a note (stream-memory-op's).
func (c *Checker) reportNoted(origin hb.AgentID, rule *ruleDef, a *allocation, op access, other *access, note memNote) {
	key := findingKey{rule: rule.id, op: c.siteOf(&op), on: c.siteOf(other), opAgent: -1, onAgent: -1,
		capture: origin != hb.HostAgent, memNote: note}
	if other != nil {
		// A finding about one operation (a leak, a bad free) is its call
		// site's, whatever stream the call named: threads that each leak
		// a workspace on their own stream at one line are one finding.
		key.opAgent, key.onAgent = op.agent, other.agent
	}
	if rule.unorderedUse {
		key.rule, key.on = unorderedUse, c.siteOf(nil)
	}
	var id allocID
	if a != nil {
		base, _ := a.wholeOf()
		id = allocID{seq: a.alloc.seq, base: base}
	}
	if i, ok := c.findings[key]; ok {
		p := &c.pending[i]
		p.f.Count++
		if rule != p.rule {
			p.also[rule.id]++
		}
		if a != nil {
			p.countAlloc(id)
		}
		return
	}
	f := &Finding{Rule: string(rule.id), Severity: rule.severity, Count: 1, Trace: c.trace}
	p := pendingFinding{f: f, rule: rule, op: op, capture: origin, memNote: note}
	if a != nil {
		p.hasAlloc, p.alloc = true, a.alloc
		p.base, p.size = a.wholeOf() // the rest of a partly reused allocation: name the whole
		p.countAlloc(id)
	}
	if other != nil {
		p.hasOther, p.other = true, *other
	}
	if key.rule == unorderedUse {
		p.also = map[RuleID]int{}
	}
	c.findings[key] = len(c.pending)
	c.order = append(c.order, f)
	c.pending = append(c.pending, p)
}

// countAlloc counts an allocation the finding hit, once.
func (p *pendingFinding) countAlloc(id allocID) {
	if p.allocs == nil {
		p.allocs = map[allocID]struct{}{}
	}
	if id == p.lastAlloc && len(p.allocs) > 0 {
		return // a loop over one allocation: no map lookup
	}
	p.lastAlloc = id
	if _, ok := p.allocs[id]; ok {
		return
	}
	if len(p.allocs) >= MaxCountedAllocations {
		p.f.AllocationsAtLeast = true
		return
	}
	p.allocs[id] = struct{}{}
}

// pendingFinding keeps what a finding needs until Finish resolves names and
// stacks. Resolution waits for the end of the trace because symbolizing adds
// strings to the tables, which a streaming reader is still filling, and
// because names may be defined after the operations that use them.
type pendingFinding struct {
	f                  *Finding
	rule               *ruleDef
	hasAlloc, hasOther bool
	base, size         uint64
	alloc, op, other   access
	capture            hb.AgentID // See reportIn.
	memNote            memNote    // Why a stream-memory-op finding is not followed.
	// allocs are the distinct allocations the finding hit (see
	// Finding.Allocations), lastAlloc the latest of them.
	allocs    map[allocID]struct{}
	lastAlloc allocID
	// also counts the occurrences folded in under another rule, by rule.
	also map[RuleID]int
}

// resolveFinding fills a finding's operations and explanation.
func (c *Checker) resolveFinding(p *pendingFinding) {
	f := p.f
	proc := c.tables.Process
	f.PID, f.Exe, f.Command = proc.PID, c.tables.String(proc.Exe), c.tables.String(proc.Args)
	if p.capture != hb.HostAgent {
		f.Capture = c.StreamName(c.engine.Agent(p.capture))
	}
	if p.hasAlloc {
		f.Alloc = &Alloc{Ptr: p.base, Size: p.size, Op: c.resolve("allocation", &p.alloc)}
		f.Alloc.Import = c.importOf(&p.alloc)
	}
	f.Ops = append(f.Ops, c.resolve(p.rule.roleOf(p.memNote), &p.op))
	if p.hasOther {
		f.Ops = append(f.Ops, c.resolve(p.rule.otherRole(), &p.other))
	}
	c.explain(f, p.rule, p.memNote)
	f.Allocations = len(p.allocs)
	c.explainAlso(f, p.rule, p.also)
}

// resolve turns an access into a reportable Op with names from the tables.
func (c *Checker) resolve(role string, a *access) Op {
	o := Op{
		Role: role, Seq: a.seq, API: c.tables.String(a.api), Op: a.op.String(), TID: a.tid,
		Kernel: kernelName(c.tables.String(a.kernel)), Ptr: a.ptr, StackID: a.stack, Agent: a.agent,
		Rejected: a.rejected,
	}
	if o.API == "" {
		o.API = a.op.String()
	}
	if a.agent != hb.HostAgent {
		ag := c.engine.Agent(a.agent)
		o.Stream = c.StreamName(ag)
		o.StreamKind = ag.Kind.String()
		if c.engine.Devices() > 1 {
			d := ag.Device
			o.Device = &d // Said only when it tells streams apart.
		}
		o.StreamHandle = ag.Handle
		if role != "" {
			site := c.streamSite(a.agent)
			o.StreamCreatedAt, o.StreamFirstUsedAt = site.created, site.firstUsed
		}
	}
	if c.opts.Symbolize != nil && a.stack != 0 {
		c.opts.Symbolize(c.tables, a.stack)
	}
	for _, f := range c.tables.Stack(a.stack) {
		fr := Frame{Func: c.tables.String(f.Func), File: c.tables.String(f.File), Line: int(f.Line), PC: f.PC}
		if f.Module != 0 {
			m := c.tables.Module(f.Module)
			fr.Module = c.tables.String(m.Path)
			if f.PC >= m.Base {
				fr.PC = f.PC - m.Base
			}
		}
		o.Stack = append(o.Stack, fr)
	}
	// The shim records driver calls; the runtime function the program
	// called (cudaMallocAsync for cuMemAllocAsync) is in the stack.
	if isDriverAPI(o.API) {
		if rt := runtimeAPI(o.Stack); rt != "" {
			o.API = rt
		}
	}
	o.Stack, o.FoldedFrames = userFrames(o.Stack)
	o.Stack, o.FoldedFrames = dropLaunchStub(o.Stack, o.Kernel, o.FoldedFrames)
	if a.op == model.OpGraphLaunch && role != "" {
		if n, ok := c.graphNodeOf(a, role); ok {
			node := c.resolve("", &n) // no role: its own graph node is not looked for
			node.Role = "in the graph"
			o.GraphNode = &node
		}
	}
	return o
}

// kernelName demangles a C++ kernel name for reports, dropping parameter
// and template argument lists, which make CUDA kernel names unreadable
// ("at::native::vectorized_elementwise_kernel").
func kernelName(mangled string) string {
	return demangle.Filter(mangled, demangle.NoParams, demangle.NoTemplateParams)
}

// StreamName returns a stream's display name: the name the trace gives it,
// or a description of a default stream, or its handle.
func (c *Checker) StreamName(a *hb.Agent) string {
	switch a.Kind {
	case hb.KindHost:
		return "host"
	// Each device has its own default streams: name the device, but for
	// device 0 (most programs, and their reports stay as they were).
	case hb.KindLegacy:
		if a.Device != 0 {
			return fmt.Sprintf("legacy(device %d)", a.Device)
		}
		return "legacy"
	case hb.KindPerThread:
		if a.Device != 0 {
			return fmt.Sprintf("per_thread(tid %d, device %d)", a.TID, a.Device)
		}
		return fmt.Sprintf("per_thread(tid %d)", a.TID)
	}
	if n := c.tables.Name(model.ObjectStream, a.Handle); n != "" {
		return n
	}
	// Recorded programs name no streams: number them in creation order,
	// which the report ties to code with the creation site. The engine only
	// appends agents, so the count of streams up to each one is kept as
	// agents appear, rather than counted per name.
	agents := c.engine.Agents()
	for i := len(c.streamRank); i < len(agents); i++ {
		n := uint32(0)
		if i > 0 {
			n = c.streamRank[i-1]
		}
		if k := agents[i].Kind; k == hb.KindBlocking || k == hb.KindNonBlocking {
			n++
		}
		c.streamRank = append(c.streamRank, n)
	}
	return fmt.Sprintf("s%d", c.streamRank[a.ID])
}
