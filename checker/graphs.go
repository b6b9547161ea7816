package checker

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// graphMemory follows the device memory that work captured into graphs
// uses, so that launching a graph is checked as those uses, made on the
// launching stream: a graph replayed after its input was freed, or on a
// stream that is not ordered after the input's allocation, is a finding
// like a kernel launch would be. hb.GraphWork ties captures to graphs and
// graphs to executable graphs; a graph the trace did not see captured, or
// whose work changed since, launches with no known uses.
type graphMemory struct {
	hb.GraphWork[graphUse]
}

// graphUse is an item of a capture: a device address its work uses (or,
// with free set, frees), or, when allocSize is set, a range the capture
// allocated itself (graph memory, allocated anew at each launch, whose
// uses and frees are the graph's own).
type graphUse struct {
	addr, allocSize uint64
	free            bool
	host            bool   // A copy's host side (eachHostSide): a use of live pinned or registered memory only.
	by              uint32 // The captured operation, or node added by hand, that makes it (Checker.graphOps); 0 unknown.
}

// usesOnly keeps, of a graph's items copied elsewhere (a clone, a child
// graph node, a conditional body gathered), the uses: allocations and
// frees of one graph cannot be told apart from another's.
func usesOnly(u graphUse) (graphUse, bool) { return u, u.allocSize == 0 && !u.free }

// captured records a captured operation's uses into its capture, or
// starts or ends the capture (a failed end that ended it, too).
func (g *graphMemory) captured(ev *model.Event, st *hb.Step, by uint32) {
	g.Apply(ev, st, launchUses)
	if !st.Captured {
		return
	}
	switch ev.Op {
	case model.OpMallocAsync:
		g.Add(st.CaptureOrigin, graphUse{addr: ev.Ptr, allocSize: max(ev.Size, 1), by: by})
		return
	case model.OpFreeAsync:
		g.Add(st.CaptureOrigin, graphUse{addr: ev.Ptr, free: true, by: by})
		return
	}
	eachUse(ev, func(p uint64) { g.Add(st.CaptureOrigin, graphUse{addr: p, by: by}) })
	eachHostSide(ev, func(p uint64) { g.Add(st.CaptureOrigin, graphUse{addr: p, host: true, by: by}) })
}

// graphNode adds the uses of a node added to a graph by hand
// (FlagGraphNode) to the graph's work: its launches made after that use
// them too. Addresses a graph allocates itself are left out: the graph's
// own memory, not memory from outside it whose uses its launches make.
func (c *Checker) graphNode(ev *model.Event, st *hb.Step) {
	var uses []graphUse
	eachUse(ev, func(p uint64) {
		if p != 0 && !c.inGraphAlloc(p) {
			uses = append(uses, graphUse{addr: p})
		}
	})
	eachHostSide(ev, func(p uint64) { uses = append(uses, graphUse{addr: p, host: true}) })
	if len(uses) > 0 {
		by := c.noteGraphOp(ev, st)
		for i := range uses {
			uses[i].by = by
		}
	}
	c.graphs.Put(ev.Graph, 0, uses...)
}

// capturedUse reports whether a captured operation gives its capture an
// item (graphMemory.captured): a use, or an allocation or free issued to a
// stream, as the op spec's memory column says.
func capturedUse(ev *model.Event) bool {
	switch m := ev.Op.Mem(); {
	case m == model.MemUse:
		return true
	case m.Allocates() || m.Frees():
		return ev.Op.OnStream()
	}
	return false
}

// noteGraphOp keeps a captured operation, or a node added by hand, for
// reports that name the node through which a graph launch made a use.
// It returns the reference items keep (graphUse.by).
func (c *Checker) noteGraphOp(ev *model.Event, st *hb.Step) uint32 {
	return c.graphOps.add(graphOp{seq: ev.Seq, agent: st.Agent, tid: ev.TID, api: ev.API, kernel: ev.Kernel, stack: ev.Stack, op: ev.Op})
}

// launchedWork is the items each graph launch replayed, by the launch's
// seq, in 12 bytes a launch: an executable graph's items are one slice,
// never changed once made (hb.GraphWork), which all its launches share.
type launchedWork struct {
	seqs   []uint64 // Increasing: launches in trace order.
	ids    []uint32 // Index in works.
	works  [][]graphUse
	last   *graphUse // The last launch's first item, and its id: the next
	lastID uint32    // launch is most often of the same graph.
	index  map[*graphUse]uint32
}

// add notes that launch seq replayed items (none: nothing to note).
func (l *launchedWork) add(seq uint64, items []graphUse) {
	if len(items) == 0 {
		return
	}
	key := &items[0]
	id, ok := l.lastID, key == l.last && len(l.works[l.lastID]) == len(items)
	if !ok {
		if id, ok = l.index[key]; !ok || len(l.works[id]) != len(items) {
			if l.index == nil {
				l.index = map[*graphUse]uint32{}
			}
			id = uint32(len(l.works))
			l.works = append(l.works, items)
			l.index[key] = id
		}
	}
	l.last, l.lastID = key, id
	l.seqs = append(l.seqs, seq)
	l.ids = append(l.ids, id)
}

// at returns the items launch seq replayed.
func (l *launchedWork) at(seq uint64) []graphUse {
	if i, ok := slices.BinarySearch(l.seqs, seq); ok {
		return l.works[l.ids[i]]
	}
	return nil
}

// graphOp is what a report says of a captured operation or a node added
// by hand: an access without the clock and address it no longer needs.
type graphOp struct {
	seq         uint64
	agent       hb.AgentID
	tid         uint32
	api, kernel model.StringID
	stack       model.StackID
	op          model.Op
}

// graphOps holds graphOp records in chunks that never move, so that a
// capture of many operations does not copy them over as it grows.
type graphOps struct{ chunks [][]graphOp }

const graphOpsChunk = 4096

// add keeps o and returns its reference: its index plus one (0 once there
// are more than fit, which names none).
func (g *graphOps) add(o graphOp) uint32 {
	if len(g.chunks) >= math.MaxUint32/graphOpsChunk {
		return 0
	}
	n := len(g.chunks)
	if n == 0 || len(g.chunks[n-1]) == graphOpsChunk {
		g.chunks = append(g.chunks, make([]graphOp, 0, graphOpsChunk))
		n++
	}
	g.chunks[n-1] = append(g.chunks[n-1], o)
	return uint32((n-1)*graphOpsChunk + len(g.chunks[n-1]))
}

// at returns the record whose reference is ref.
func (g *graphOps) at(ref uint32) access {
	o := g.chunks[(ref-1)/graphOpsChunk][(ref-1)%graphOpsChunk]
	return access{seq: o.seq, agent: o.agent, tid: o.tid, api: o.api, kernel: o.kernel, stack: o.stack, op: o.op}
}

// graphNodeOf returns the captured operation or node added by hand
// through which graph launch a touched a.ptr, in a report's role: a free
// names the graph's free, an allocation its allocation, anything else a
// use (an item of another kind at the address if none of that kind is:
// a relaunch frees its output before allocating it again).
func (c *Checker) graphNodeOf(a *access, role string) (access, bool) {
	free, alloc := role == "free", role == "allocation"
	var other uint32
	for _, u := range c.launched.at(a.seq) {
		if u.addr != a.ptr || u.by == 0 {
			continue
		}
		if u.free == free && (u.allocSize != 0) == alloc {
			return c.graphOps.at(u.by), true
		}
		if other == 0 {
			other = u.by
		}
	}
	if other != 0 {
		return c.graphOps.at(other), true
	}
	return access{}, false
}

// inGraphAlloc reports whether p is in a range some graph allocates. A
// scan: only nodes added by hand ask.
func (c *Checker) inGraphAlloc(p uint64) bool {
	for base, end := range c.graphAllocs {
		if p >= base && p < end {
			return true
		}
	}
	return false
}

// launchUses makes a capture's items what a launch of its graph does: the
// allocations it makes and does not free (they outlive the launch), then
// the addresses it uses, then those it frees, each sorted and unique; uses
// and frees of the capture's own allocations are the graph's own affair.
func launchUses(items []graphUse) []graphUse {
	var uses, frees []graphUse
	var allocs [][2]uint64
	outlive := map[uint64]graphUse{} // Base -> the allocations not freed (yet).
	for _, u := range items {
		switch {
		case u.allocSize != 0:
			allocs = append(allocs, [2]uint64{u.addr, u.addr + u.allocSize})
			outlive[u.addr] = u
		case u.addr == 0:
		case u.free:
			if _, own := outlive[u.addr]; own {
				delete(outlive, u.addr)
			} else {
				frees = append(frees, u)
			}
		default:
			uses = append(uses, u)
		}
	}
	slices.SortFunc(allocs, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var out []graphUse
	for _, base := range slices.Sorted(maps.Keys(outlive)) {
		out = append(out, outlive[base])
	}
	out = outsideOf(out, uses, allocs)
	return outsideOf(out, frees, allocs)
}

// outsideOf appends to out the items of us, sorted by address and one an
// address (the first made), whose addresses are in none of the ranges
// allocs (sorted).
func outsideOf(out, us []graphUse, allocs [][2]uint64) []graphUse {
	slices.SortStableFunc(us, func(a, b graphUse) int { return cmp.Compare(a.addr, b.addr) })
	us = slices.CompactFunc(us, func(a, b graphUse) bool { return a.addr == b.addr })
	// Both sorted: one pass. end is the furthest end of the ranges that
	// start at or below p, so p < end means p is in one of them.
	r, end := 0, uint64(0)
	for _, u := range us {
		for r < len(allocs) && allocs[r][0] <= u.addr {
			end = max(end, allocs[r][1])
			r++
		}
		if u.addr >= end {
			out = append(out, u)
		}
	}
	return out
}

// graphCloned analyzes a graph clone (OpGraphClone), or a conditional
// node's body added to a graph.
func (c *Checker) graphCloned(ev *model.Event) {
	if ev.Flags&model.FlagConditional != 0 {
		c.graphs.AddBody(ev.Graph, ev.Src, ev.Node) // see graphMemory's Body
		return
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
}

// graphForgotten analyzes a change of a graph or executable graph that
// makes what its work was known to use stale (OpGraphForget).
func (c *Checker) graphForgotten(ev *model.Event) {
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
}

// graphLaunched analyzes a graph launch (OpGraphLaunch): the work
// captured into the graph, replayed on the launching stream.
func (c *Checker) graphLaunched(ev *model.Event, st *hb.Step) {
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
		case u.host:
			c.useHostSide(ev, st, u.addr)
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
