package checker

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// captureMemory applies the allocation rules inside each capture. A graph
// allocates and frees memory (cudaMallocAsync and cudaFreeAsync captured
// as memory nodes) and runs its nodes in the order that stream order and
// the event waits made during the capture gave them (hb.Step.Local): a
// captured use not ordered after the captured allocation, or a captured
// free not ordered after a captured use, is a race at every launch of the
// graph, however the launches are ordered. Uses of memory allocated
// outside the capture are otherwise checked at the launches (graphMemory).
type captureMemory struct {
	open map[uint64]*capturedAllocs // By hb.Step.Capture.
}

// capturedAllocs is what one capture knows of the memory its work touches,
// sorted by base: its own allocations, and the allocations from outside
// that its work used or freed.
type capturedAllocs struct {
	origin hb.AgentID
	allocs []*capturedAlloc
	// held are the races found in the capture: reported when it ends with
	// a graph, dropped when it fails (no graph, so none of it ever runs).
	held []heldReport
}

type capturedAlloc struct {
	base, size uint64
	// alloc is the captured allocation, or, for memory allocated outside
	// the capture, that allocation with a zero local epoch (before all of
	// the capture's work).
	alloc capturedAccess
	uses  []capturedAccess // The latest on each stream.
	freed bool
	free  capturedAccess
}

// capturedAccess is an operation of a capture: what reports show, and its
// place in the capture's order.
type capturedAccess struct {
	access
	local hb.Epoch
}

type heldReport struct {
	rule      *ruleDef
	whole     allocation // Only base, size and alloc are set.
	op, other access
}

// captured checks one captured operation, and reports or forgets the
// races of a capture that ended.
func (c *Checker) captured(ev *model.Event, st *hb.Step) {
	m := &c.captureMem
	if st.EndedCapture != 0 {
		delete(m.open, st.EndedCapture) // a begin that ended another capture: no graph from it
	}
	if ev.Op == model.OpCaptureEnd {
		if capt := m.open[st.Capture]; capt != nil && !ev.Failed() {
			for i := range capt.held {
				h := &capt.held[i]
				c.reportIn(capt.origin, h.rule, &h.whole, h.op, &h.other)
			}
		}
		delete(m.open, st.Capture)
		return
	}
	if st.Capture == 0 || st.Local.Clock == 0 {
		return // a capture's begin, or a memory node added to a graph by hand
	}
	capt := m.open[st.Capture]
	if capt == nil {
		if m.open == nil {
			m.open = map[uint64]*capturedAllocs{}
		}
		capt = &capturedAllocs{origin: st.CaptureOrigin}
		m.open[st.Capture] = capt
	}
	at := func(addr uint64) capturedAccess {
		return capturedAccess{access: c.accessOf(ev, st, addr), local: st.Local}
	}
	switch ev.Op {
	case model.OpMallocAsync:
		if ev.Ptr != 0 {
			capt.allocate(&capturedAlloc{base: ev.Ptr, size: max(ev.Size, 1), alloc: at(ev.Ptr)})
		}
	case model.OpFreeAsync:
		a := c.capturedOrOutside(capt, ev.Ptr)
		if a == nil || a.base != ev.Ptr || a.freed {
			return // not the start of an allocation: a bad free CUDA rejects
		}
		free := at(ev.Ptr)
		inFlight := false
		for i := range a.uses {
			if !st.LocalClock.Covers(a.uses[i].local) {
				capt.hold(freeWhileInFlightRule, a, free.access, a.uses[i].access)
				inFlight = true
				break
			}
		}
		if !inFlight && !st.LocalClock.Covers(a.alloc.local) {
			capt.hold(freeBeforeAllocRule, a, free.access, a.alloc.access)
		}
		a.freed, a.free = true, free
	default:
		eachUse(ev, func(p uint64) {
			a := c.capturedOrOutside(capt, p)
			if a == nil {
				return
			}
			u := at(p)
			if a.freed {
				capt.hold(useAfterFreeRule, a, u.access, a.free.access)
				return
			}
			i := slices.IndexFunc(a.uses, func(o capturedAccess) bool { return o.agent == u.agent })
			if i >= 0 {
				a.uses[i] = u // stream order puts it after the earlier one, checked then
				return
			}
			if !st.LocalClock.Covers(a.alloc.local) {
				capt.hold(useBeforeAllocRule, a, u.access, a.alloc.access)
			}
			a.uses = append(a.uses, u)
		})
	}
}

// capturedOrOutside returns what the capture knows of the allocation
// holding addr: one of its own, or a live allocation from outside it, which
// it starts to follow here. CUDA refuses a captured free of memory that no
// graph allocated (the refused call is skipped, like any failed call), but
// a trace that says a capture freed such memory gets the same rules as a
// free node of the graph's own memory.
func (c *Checker) capturedOrOutside(capt *capturedAllocs, addr uint64) *capturedAlloc {
	if addr == 0 {
		return nil
	}
	if a := capt.find(addr); a != nil {
		return a
	}
	o := c.allocs.find(addr)
	if o == nil || o.freed {
		return nil
	}
	a := &capturedAlloc{base: o.base, size: o.size, alloc: capturedAccess{access: o.alloc}}
	capt.allocate(a)
	return a
}

// hold keeps a race found in the capture until it ends.
func (m *capturedAllocs) hold(rule *ruleDef, a *capturedAlloc, op, other access) {
	m.held = append(m.held, heldReport{rule: rule, whole: allocation{base: a.base, size: a.size, alloc: a.alloc.access}, op: op, other: other})
}

// allocate adds an allocation to the capture's, replacing those it
// overlaps (freed ones: the graph reuses its memory).
func (m *capturedAllocs) allocate(n *capturedAlloc) {
	end := rangeEnd(n.base, n.size)
	i, _ := slices.BinarySearchFunc(m.allocs, n.base, byCapturedBase)
	if i > 0 && m.allocs[i-1].size > n.base-m.allocs[i-1].base {
		i--
	}
	j := i
	for j < len(m.allocs) && (m.allocs[j].base < end || m.allocs[j].base == n.base) {
		j++
	}
	m.allocs = slices.Replace(m.allocs, i, j, n)
}

func byCapturedBase(a *capturedAlloc, base uint64) int { return cmp.Compare(a.base, base) }

// find returns the allocation holding addr, or nil.
func (m *capturedAllocs) find(addr uint64) *capturedAlloc {
	i, found := slices.BinarySearchFunc(m.allocs, addr, byCapturedBase)
	if found {
		return m.allocs[i]
	}
	if i > 0 && addr-m.allocs[i-1].base < m.allocs[i-1].size {
		return m.allocs[i-1]
	}
	return nil
}
