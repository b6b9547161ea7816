package checker

import (
	"cmp"
	"maps"
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
}

// captured records a captured operation's uses into its capture, or
// starts or ends the capture (a failed end that ended it, too).
func (g *graphMemory) captured(ev *model.Event, st *hb.Step) {
	g.Apply(ev, st, launchUses)
	if !st.Captured {
		return
	}
	switch ev.Op {
	case model.OpMallocAsync:
		g.Add(st.CaptureOrigin, graphUse{addr: ev.Ptr, allocSize: max(ev.Size, 1)})
		return
	case model.OpFreeAsync:
		g.Add(st.CaptureOrigin, graphUse{addr: ev.Ptr, free: true})
		return
	}
	eachUse(ev, func(p uint64) { g.Add(st.CaptureOrigin, graphUse{addr: p}) })
}

// graphNode adds the uses of a node added to a graph by hand
// (FlagGraphNode) to the graph's work: its launches made after that use
// them too. Addresses a graph allocates itself are left out: the graph's
// own memory, not memory from outside it whose uses its launches make.
func (c *Checker) graphNode(ev *model.Event) {
	var uses []graphUse
	eachUse(ev, func(p uint64) {
		if p != 0 && !c.inGraphAlloc(p) {
			uses = append(uses, graphUse{addr: p})
		}
	})
	c.graphs.Put(ev.Graph, 0, uses...)
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
	var addrs, frees []uint64
	var allocs [][2]uint64
	outlive := map[uint64]uint64{} // Base -> size of the allocations not freed (yet).
	for _, u := range items {
		switch {
		case u.allocSize != 0:
			allocs = append(allocs, [2]uint64{u.addr, u.addr + u.allocSize})
			outlive[u.addr] = u.allocSize
		case u.addr == 0:
		case u.free:
			if _, own := outlive[u.addr]; own {
				delete(outlive, u.addr)
			} else {
				frees = append(frees, u.addr)
			}
		default:
			addrs = append(addrs, u.addr)
		}
	}
	slices.SortFunc(allocs, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var out []graphUse
	for _, base := range slices.Sorted(maps.Keys(outlive)) {
		out = append(out, graphUse{addr: base, allocSize: outlive[base]})
	}
	out = outsideOf(out, addrs, allocs, false)
	return outsideOf(out, frees, allocs, true)
}

// outsideOf appends to out, as uses (or frees), the addresses of addrs,
// sorted and unique, that are in none of the ranges allocs (sorted).
func outsideOf(out []graphUse, addrs []uint64, allocs [][2]uint64, free bool) []graphUse {
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	// Both sorted: one pass. end is the furthest end of the ranges that
	// start at or below p, so p < end means p is in one of them.
	r, end := 0, uint64(0)
	for _, p := range addrs {
		for r < len(allocs) && allocs[r][0] <= p {
			end = max(end, allocs[r][1])
			r++
		}
		if p >= end {
			out = append(out, graphUse{addr: p, free: free})
		}
	}
	return out
}
