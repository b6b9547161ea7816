package checker

import (
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
		g.captures[st.CaptureOrigin] = &capturedUses{}
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
	addrs := cu.addrs[:0]
	for _, p := range cu.addrs {
		if p != 0 && !inRanges(cu.allocs, p) {
			addrs = append(addrs, p)
		}
	}
	slices.Sort(addrs)
	addrs = slices.Clip(slices.Compact(addrs))
	if g.graphs == nil {
		g.graphs = map[uint64][]uint64{}
	}
	g.graphs[ev.Graph] = addrs // A graph handle used again names the new graph.
}

func inRanges(rs [][2]uint64, p uint64) bool {
	for _, r := range rs {
		if p >= r[0] && p < r[1] {
			return true
		}
	}
	return false
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

// launched returns the device addresses a launch of executable graph exec
// uses, sorted and unique.
func (g *graphMemory) launched(exec uint64) []uint64 { return g.execs[exec] }
