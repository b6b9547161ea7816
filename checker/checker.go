package checker

import (
	"io"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Checker applies the rules to a trace, one event at a time.
type Checker struct {
	trace    string
	tables   *model.Tables
	engine   *hb.Engine
	memory                      // The live allocations and the grave (memory.go).
	findings map[findingKey]int // Index in pending of each root cause's finding.
	order    []*Finding
	stats    Stats
	threads  map[uint32]bool
	pending  []pendingFinding // Findings whose operations Finish resolves.
	// streamCalls holds, by agent, each stream's creation and the first
	// call on it whose stack has a frame of the program, for placing
	// streams in reports (streamsites.go), and programStacks which stacks
	// were looked at.
	streamCalls   streamCalls
	programStacks map[model.StackID]bool
	streamPlaces  []creationPlace // Computed at the first report.
	// frameScratch holds a stack being resolved, resolvedStacks the
	// frames of each stack resolved (resolve.go).
	frameScratch   []Frame
	resolvedStacks map[stackAPI]resolvedStack
	recordedStacks map[stackAPI]resolvedStack // Unsymbolized, for DescribeAsRecorded.
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
	hostFuncs  hostFuncs // The latest host function queued to each stream (rule_free_while_in_flight.go).
	plugins    plugins   // The rules' own states and hooks (plugin.go).
	// overlappedBases: bases of live allocations a later recorded one
	// overlapped (lifetime.go), whose accepted frees are not reported.
	overlappedBases map[uint64]bool
	lastSyncFree    syncFree // The latest synchronous free (unrecordedBase).
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
	// Observe, if set, sees each event once the checker has applied it,
	// with what the happens-before engine learned from it (a view, valid
	// until the next event): tools that show the trace as the analysis
	// saw it (the timeline, explain) follow it in the analysis's one pass. It must
	// not symbolize stacks while the trace is read (see DescribeAsRecorded).
	Observe func(c *Checker, ev *model.Event, st *hb.Step)
	// AllocLoopThreshold is how many times one site must allocate around
	// GPU work (sync-alloc-in-loop), or one pool grow again after a
	// synchronization (pool-release-churn), to be reported; 0 means
	// DefaultAllocLoopThreshold.
	AllocLoopThreshold int
}

// New returns a checker for the trace named trace, whose definitions are in
// tables (a Reader's Tables, which may still grow while events are added).
func New(trace string, tables *model.Tables) *Checker {
	c := &Checker{
		trace:    trace,
		tables:   tables,
		engine:   hb.New(),
		memory:   memory{allocs: newAddrIndex()},
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
	c.plugIn()
	return c
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

// Add analyzes one event, then shows it to the observer (Options.Observe).
// Its body is the analyzer's hot path, which the command's profile
// (cmd/streamcheck/default.pgo) knows by this name.
func (c *Checker) Add(ev *model.Event) {
	c.stats.Events++
	c.noteThread(ev.TID)
	st := &c.step
	c.engine.ApplyTo(ev, st)
	if ev.Stack != 0 && st.Agent != hb.HostAgent && !c.usedByProgram(st.Agent) && ev.Op != model.OpStreamCreate {
		c.noteFirstUse(ev, st)
	}
	if st.Skipped {
		c.addSkipped(ev, st)
		if c.opts.Observe != nil {
			c.opts.Observe(c, ev, st)
		}
		return
	}
	// What the op does to memory, as the op spec says.
	switch ev.Op.Mem() {
	case model.MemAlloc, model.MemAllocOrdered:
		a := c.allocate(ev, st, ev.Ptr, ev.Size, ev.Op.Mem() == model.MemAllocOrdered)
		for _, h := range c.plugins.alloc {
			h.onAlloc(ev, st, a)
		}
	case model.MemFree:
		for _, h := range c.plugins.free {
			h.onFree(ev)
		}
		c.release(ev, st, ev.Ptr)
	case model.MemUnmap:
		c.unmap(ev, st)
	case model.MemUse:
		// At the addresses the op spec names: a launch's strong pointers
		// once each, then its weak ones; a copy's device sides, and its
		// host sides where they are pinned or registered memory; the
		// others' addresses as eachUse gives them.
		if uses := ev.Op.Uses(); uses[0].Field != model.AddrPtrs {
			eachUse(ev, func(p uint64) { c.use(ev, st, p) })
			eachHostSide(ev, func(p uint64) { c.useHostSide(ev, st, p) })
			break
		}
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
	case model.MemGraph:
		c.graphLaunched(ev, st)
	}
	// What else the checker follows of the op.
	switch ev.Op {
	case model.OpStreamCreate:
		c.streamCalls.note(&c.streamCalls.created, st.Agent, ev)
	case model.OpPtrImport, model.OpIpcMemOpen, model.OpPtrExport, model.OpIpcMemExport,
		model.OpIpcEventExport, model.OpIpcEventOpen, model.OpEventRecord, model.OpEventCreate:
		c.interprocess(ev, st)
	case model.OpHostFunc:
		c.hostFuncs.queued(ev, st)
	case model.OpGraphInstantiate:
		c.graphs.Apply(ev, st, nil)
	case model.OpGraphClone:
		c.graphCloned(ev)
	case model.OpGraphEventRecordNode:
		c.noteRecordNode(ev, st)
	case model.OpEventDestroy:
		delete(c.recordNodes, ev.Event) // the handle may name another event later
		delete(c.ipc.events, ev.Event)
	case model.OpGraphForget:
		c.graphForgotten(ev)
	}
	if waits[ev.Op] {
		for _, h := range c.plugins.sync {
			h.onSync(ev, st)
		}
	}
	for _, h := range c.plugins.byOp[ev.Op] {
		h.onOp(ev, st)
	}
	if c.opts.Observe != nil {
		c.opts.Observe(c, ev, st)
	}
}

// addSkipped analyzes an event the engine skipped: a failed call (a
// rejected free or use), or work captured into a graph or run as a graph
// node.
func (c *Checker) addSkipped(ev *model.Event, st *hb.Step) {
	c.stats.Skipped++
	if !st.Captured && (ev.Op == model.OpFree || ev.Op == model.OpFreeAsync || ev.Op == model.OpVmmUnmap) {
		c.rejectedFree(ev)
	}
	if !st.Captured && ev.Flags&model.FlagGraphNode == 0 && ev.Failed() {
		for _, h := range c.plugins.rejected {
			h.onRejected(ev)
		}
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
}

// eachUse calls use with each device address an op of model.MemUse uses,
// from the fields its spec row names, in their order: a launch's parameter
// pointers (as recorded, repeats included), a copy's device sides, a set's
// destination, a collective's buffers, a stream memory operation's address when it waits or
// writes. An address equal to the previous field's is one use. A copy or
// set is a use of the allocation its first byte is in: CUDA rejects one
// that runs past the end of its allocation (measured on CUDA 13), and a 2D
// or 3D copy's recorded size spans the wider of its two sides' pitches, so
// the range says nothing about a second allocation.
func eachUse(ev *model.Event, use func(uint64)) {
	for _, u := range ev.Op.Uses() {
		switch u.Field {
		case model.AddrPtrs:
			for _, p := range ev.Ptrs {
				use(p)
			}
		case model.AddrPtr:
			if ev.Ptr != 0 {
				use(ev.Ptr)
			}
		case model.AddrSrc:
			if ev.Src != 0 && ev.Src != ev.Ptr {
				use(ev.Src)
			}
		case model.AddrDst:
			if ev.Kind.DstDevice() {
				use(ev.Ptr)
			}
		case model.AddrCopySrc:
			if ev.Kind.SrcDevice() && ev.Src != ev.Ptr {
				use(ev.Src)
			}
		case model.AddrMemOp:
			if ev.MemOp.IsWait() || ev.MemOp.Changes() || ev.MemOp == model.MemOpUnknown {
				use(ev.Ptr)
			}
		}
	}
}

// eachHostSide calls use with the host sides of a copy (the fields of a
// side model.Event.Kind decides). A copy reads or writes pinned or
// registered host memory until it completes, through the same address
// under unified addressing, so a host free must wait for it.
func eachHostSide(ev *model.Event, use func(uint64)) {
	for _, u := range ev.Op.Uses() {
		switch u.Field {
		case model.AddrDst:
			if !ev.Kind.DstDevice() {
				use(ev.Ptr)
			}
		case model.AddrCopySrc:
			if !ev.Kind.SrcDevice() && ev.Src != ev.Ptr {
				use(ev.Src)
			}
		}
	}
}

// useHostSide checks a copy's use of host memory at addr: a use only of
// live pinned or registered memory. A pageable buffer may sit where pinned
// memory was freed before, so freed memory there is no use after free.
func (c *Checker) useHostSide(ev *model.Event, st *hb.Step, addr uint64) {
	if a := c.allocs.find(addr); a != nil && !a.freed && (a.family == famHost || a.family == famRegistered) {
		c.use(ev, st, addr)
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

// Finish ends the analysis: it calls the rules' end hooks (the leak rule
// counts the stream-ordered memory still live and, with Options.Leaks,
// reports it, only for a complete trace, since a damaged one stops before
// the frees), and returns the result.
func (c *Checker) Finish(damage error) *Result {
	for _, h := range c.plugins.end {
		h.atEnd(damage == nil) // a damaged trace stops before the waits and frees that may follow
	}

	for i := range c.pending {
		c.resolveFinding(&c.pending[i])
	}
	c.pending = nil
	c.stats.Streams = c.engine.NumAgents() - 1 // every agent but the host is a stream
	c.stats.Threads = len(c.threads)
	return &Result{Trace: c.trace, Findings: c.order, Stats: c.stats, Damage: damage, Tables: c.tables, Exports: c.resolveExports(), ipcEvents: c.ipc.shared}
}
