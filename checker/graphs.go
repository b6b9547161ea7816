package checker

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// graphMemory follows the device memory that work captured into graphs
// uses, so that launching a graph is checked as those uses, made on the
// launching stream: a graph replayed after its input was freed, or on a
// stream that is not ordered after the input's allocation, is a finding
// like a kernel launch would be. The trace links a capture to its graph
// (OpCaptureEnd's Graph) and the graph to its executable graphs
// (OpGraphInstantiate); a graph built node by node, or an executable graph
// whose graph the trace does not know, launches with no known uses.
type graphMemory struct {
	captures map[hb.AgentID]*capturedUses // Open captures, by origin stream.
	graphs   map[uint64][]uint64          // Graph handle -> device addresses its work uses.
	execs    map[uint64][]uint64          // Executable graph handle -> the same.
}

// capturedUses is what one open capture's work uses.
type capturedUses struct {
	addrs []uint64
	// allocs are the ranges the capture allocated itself: graph memory,
	// allocated anew at each launch, whose uses are the graph's own.
	allocs [][2]uint64
}

// captured records a captured operation's uses into its capture, or
// starts or ends the capture.
func (g *graphMemory) captured(ev *model.Event, st *hb.Step) {
	switch ev.Op {
	case model.OpCaptureBegin:
		if g.captures == nil {
			g.captures = map[hb.AgentID]*capturedUses{}
		}
		// cudaStreamBeginCaptureToGraph adds to an existing graph: its work
		// so far stays part of it.
		g.captures[st.CaptureOrigin] = &capturedUses{addrs: slices.Clone(g.graphs[ev.Graph])}
		return
	case model.OpCaptureEnd:
		g.endCapture(ev, st)
		return
	}
	cu := g.captures[st.CaptureOrigin]
	if cu == nil {
		return
	}
	switch ev.Op {
	case model.OpLaunch:
		cu.addrs = append(cu.addrs, ev.Ptrs...)
	case model.OpMemcpyAsync, model.OpMemcpy:
		if ev.Kind.DstDevice() {
			cu.addrs = append(cu.addrs, ev.Ptr)
		}
		if ev.Kind.SrcDevice() {
			cu.addrs = append(cu.addrs, ev.Src)
		}
	case model.OpMemsetAsync, model.OpMemset:
		cu.addrs = append(cu.addrs, ev.Ptr)
	case model.OpMallocAsync:
		cu.allocs = append(cu.allocs, [2]uint64{ev.Ptr, ev.Ptr + max(ev.Size, 1)})
	case model.OpGraphLaunch: // A graph launched inside a capture: a child graph.
		cu.addrs = append(cu.addrs, g.execs[ev.Exec]...)
	}
}

// endCapture gives the uses of the capture that ends to its graph.
func (g *graphMemory) endCapture(ev *model.Event, st *hb.Step) {
	cu := g.captures[st.CaptureOrigin]
	if cu == nil {
		return
	}
	delete(g.captures, st.CaptureOrigin)
	if ev.Graph == 0 {
		return
	}
	slices.Sort(cu.addrs)
	addrs := slices.Compact(cu.addrs)
	// Drop the capture's own allocations: both lists sorted, one pass.
	slices.SortFunc(cu.allocs, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	kept, r, end := addrs[:0], 0, uint64(0) // end: furthest end of the ranges starting at or below p
	for _, p := range addrs {
		for r < len(cu.allocs) && cu.allocs[r][0] <= p {
			end = max(end, cu.allocs[r][1])
			r++
		}
		if p != 0 && p >= end {
			kept = append(kept, p)
		}
	}
	addrs = slices.Clip(kept)
	if g.graphs == nil {
		g.graphs = map[uint64][]uint64{}
	}
	g.graphs[ev.Graph] = addrs // A graph handle used again names the new graph.
}

// instantiate makes an executable graph run its graph's work.
func (g *graphMemory) instantiate(ev *model.Event) {
	if ev.Exec == 0 {
		return
	}
	addrs, ok := g.graphs[ev.Graph]
	if !ok {
		delete(g.execs, ev.Exec) // Its work is unknown now.
		return
	}
	if g.execs == nil {
		g.execs = map[uint64][]uint64{}
	}
	g.execs[ev.Exec] = addrs // Shared: never changed once made.
}

// forget drops what the trace knew of a graph's or an executable graph's
// work: its launches then use no known memory, which may miss a finding
// but never makes one up.
func (g *graphMemory) forget(ev *model.Event) {
	switch ev.Graph {
	case 0:
	case model.AllGraphs:
		clear(g.graphs)
	default:
		delete(g.graphs, ev.Graph)
	}
	if ev.Exec != 0 {
		delete(g.execs, ev.Exec)
	}
}

// launched returns the device addresses a launch of executable graph exec
// uses, sorted and unique.
func (g *graphMemory) launched(exec uint64) []uint64 { return g.execs[exec] }
