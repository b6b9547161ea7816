package checker

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// captureMemory applies the allocation rules inside each capture. A graph
// allocates and frees its own memory (cudaMallocAsync and cudaFreeAsync
// captured as memory nodes) and runs its nodes in the order that stream
// order and the event waits made during the capture gave them
// (hb.Step.Local): a captured use not ordered after the captured
// allocation, or a captured free not ordered after a captured use, is a
// race at every launch of the graph, however the launches are ordered.
// Memory allocated outside the capture is checked at the launches instead
// (graphMemory).
type captureMemory struct {
	open map[uint64]*capturedAllocs // By hb.Step.Capture.
}

// capturedAllocs are the allocations of one capture, sorted by base.
type capturedAllocs struct {
	origin hb.AgentID
	allocs []*capturedAlloc
}

type capturedAlloc struct {
	base, size uint64
	alloc      capturedAccess
	uses       []capturedAccess // The latest on each stream.
	freed      bool
	free       capturedAccess
}

// capturedAccess is an operation of a capture: what reports show, and its
// place in the capture's order.
type capturedAccess struct {
	access
	local hb.Epoch
}

// captured checks one captured operation, or forgets a capture that ended.
func (c *Checker) captured(ev *model.Event, st *hb.Step) {
	m := &c.captureMem
	if ev.Op == model.OpCaptureEnd {
		delete(m.open, st.Capture)
		return
	}
	if st.Capture == 0 || st.Local.Clock == 0 {
		return // a capture's begin, or a memory node added to a graph by hand
	}
	capt := m.open[st.Capture]
	if capt == nil {
		if ev.Op != model.OpMallocAsync {
			return // no allocation of its own yet: nothing to check
		}
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
			capt.allocate(ev.Ptr, max(ev.Size, 1), at(ev.Ptr))
		}
	case model.OpFreeAsync:
		a := capt.find(ev.Ptr)
		if a == nil || a.base != ev.Ptr || a.freed {
			return // memory from outside the capture, or a bad free CUDA rejects
		}
		free := at(ev.Ptr)
		inFlight := false
		for i := range a.uses {
			if !st.LocalClock.Covers(a.uses[i].local) {
				c.reportCaptured(capt, RuleFreeWhileInFlight, a, free.access, &a.uses[i].access)
				inFlight = true
				break
			}
		}
		if !inFlight && !st.LocalClock.Covers(a.alloc.local) {
			c.reportCaptured(capt, RuleFreeBeforeAlloc, a, free.access, &a.alloc.access)
		}
		a.freed, a.free = true, free
	default:
		eachUse(ev, func(p uint64) {
			a := capt.find(p)
			if a == nil {
				return
			}
			u := at(p)
			if a.freed {
				c.reportCaptured(capt, RuleUseAfterFree, a, u.access, &a.free.access)
				return
			}
			i := slices.IndexFunc(a.uses, func(o capturedAccess) bool { return o.agent == u.agent })
			if i >= 0 {
				a.uses[i] = u // stream order puts it after the earlier one, checked then
				return
			}
			if !st.LocalClock.Covers(a.alloc.local) {
				c.reportCaptured(capt, RuleUseBeforeAlloc, a, u.access, &a.alloc.access)
			}
			a.uses = append(a.uses, u)
		})
	}
}

// allocate adds a captured allocation, replacing those it overlaps (freed
// ones: the graph reuses its memory).
func (m *capturedAllocs) allocate(base, size uint64, alloc capturedAccess) {
	end := rangeEnd(base, size)
	i, _ := slices.BinarySearchFunc(m.allocs, base, byCapturedBase)
	if i > 0 && rangeEnd(m.allocs[i-1].base, m.allocs[i-1].size) > base {
		i--
	}
	j := i
	for j < len(m.allocs) && m.allocs[j].base < end {
		j++
	}
	m.allocs = slices.Replace(m.allocs, i, j, &capturedAlloc{base: base, size: size, alloc: alloc})
}

func byCapturedBase(a *capturedAlloc, base uint64) int { return cmp.Compare(a.base, base) }

// find returns the captured allocation holding addr, or nil.
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

// reportCaptured reports a race between two operations of a capture.
func (c *Checker) reportCaptured(m *capturedAllocs, rule string, a *capturedAlloc, op access, other *access) {
	whole := allocation{base: a.base, size: a.size, alloc: a.alloc.access}
	c.reportIn(m.origin, rule, &whole, op, other)
}
