package hb

import (
	"slices"

	"github.com/streamcheck/streamcheck/model"
)

// graphEvent is an event record or wait captured with the external flag:
// each launch of its graph makes it.
type graphEvent struct {
	event  uint64
	record bool // else a wait
}

// GraphWork follows, for one kind of item T, what the work captured into
// each graph holds, as the trace says: a capture collects items until its
// end gives them to the graph it made (OpCaptureEnd's Graph), an
// instantiation gives a graph's items to an executable graph
// (OpGraphInstantiate), and a launch of that executable graph replays them.
// A graph whose work changed after its capture (OpGraphForget), or one the
// trace never saw captured, has no items: its launches replay nothing.
//
// The engine keeps one for captured external event records and waits; the
// checker one for the device memory captured work uses.
type GraphWork[T any] struct {
	captures map[AgentID][]T // Open captures, by origin stream.
	graphs   map[uint64][]T
	execs    map[uint64][]T
}

// Begin starts a capture on origin. A capture into an existing graph
// (cudaStreamBeginCaptureToGraph names it in Graph) adds to its items.
func (g *GraphWork[T]) Begin(origin AgentID, graph uint64) {
	if g.captures == nil {
		g.captures = map[AgentID][]T{}
	}
	g.captures[origin] = slices.Clone(g.graphs[graph])
}

// Add gives items to origin's open capture, if there is one.
func (g *GraphWork[T]) Add(origin AgentID, items ...T) {
	if c, ok := g.captures[origin]; ok {
		g.captures[origin] = append(c, items...)
	}
}

// Capturing reports whether origin has an open capture.
func (g *GraphWork[T]) Capturing(origin AgentID) bool {
	_, ok := g.captures[origin]
	return ok
}

// End ends origin's capture, giving its items, as finish makes them (nil:
// as they are), to graph; a capture that made no graph (graph 0) is
// dropped.
func (g *GraphWork[T]) End(origin AgentID, graph uint64, finish func([]T) []T) {
	items, ok := g.captures[origin]
	if !ok {
		return
	}
	delete(g.captures, origin)
	if graph == 0 {
		return
	}
	if finish != nil {
		items = finish(items)
	}
	if g.graphs == nil {
		g.graphs = map[uint64][]T{}
	}
	g.graphs[graph] = slices.Clip(items) // A graph handle used again names the new graph.
}

// Instantiate makes executable graph exec run graph's work.
func (g *GraphWork[T]) Instantiate(graph, exec uint64) {
	if exec == 0 {
		return
	}
	items, ok := g.graphs[graph]
	if !ok {
		delete(g.execs, exec) // Its work is unknown now.
		return
	}
	if g.execs == nil {
		g.execs = map[uint64][]T{}
	}
	g.execs[exec] = items // Shared: never changed once made.
}

// Forget drops what is known of graph's work (model.AllGraphs: every
// graph's) and of exec's. Executable graphs keep the work they were
// instantiated with when their graph changes.
func (g *GraphWork[T]) Forget(graph, exec uint64) {
	switch graph {
	case 0:
	case model.AllGraphs:
		clear(g.graphs)
	default:
		delete(g.graphs, graph)
	}
	if exec != 0 {
		delete(g.execs, exec)
	}
}

// Launched returns the items a launch of executable graph exec replays.
func (g *GraphWork[T]) Launched(exec uint64) []T { return g.execs[exec] }

// Apply follows one event: a capture's begin or end (st from the engine) or
// an instantiation. Items are added, and forgotten (OpGraphForget), by the
// caller, which knows which changes its items survive.
func (g *GraphWork[T]) Apply(ev *model.Event, st *Step, finish func([]T) []T) {
	switch ev.Op {
	case model.OpCaptureBegin:
		if st.Captured {
			g.Begin(st.CaptureOrigin, ev.Graph)
		}
	case model.OpCaptureEnd:
		if st.Captured {
			g.End(st.CaptureOrigin, ev.Graph, finish)
		}
	case model.OpGraphInstantiate:
		if !st.Skipped {
			g.Instantiate(ev.Graph, ev.Exec)
		}
	}
}
