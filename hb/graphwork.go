package hb

import (
	"slices"

	"github.com/streamcheck/streamcheck/model"
)

// GraphWork follows, for one kind of item T, what the work captured into
// each graph holds, as the trace says: a capture collects items until its
// end gives them to the graph it made (OpCaptureEnd's Graph), an
// instantiation gives a graph's items to an executable graph
// (OpGraphInstantiate), and a launch of that executable graph replays them.
// Nodes added by hand (Put), changed (Update) or copied from another graph
// (Copy) add to that; a graph the trace knows none of this about has no
// items: its launches replay nothing. What a change after the capture
// (OpGraphForget) drops is the caller's call (Forget), since items differ in
// which changes they survive.
//
// The engine keeps one for captured external event records and waits; the
// checker one for the device memory captured work uses.
type GraphWork[T any] struct {
	captures map[AgentID][]T // Open captures, by origin stream.
	// open holds the graph each open capture builds, where the trace names
	// it (OpCaptureBegin's Graph): nodes added to that graph by hand join
	// the capture's items.
	open   map[uint64]openCapture
	graphs map[uint64][]T
	execs  map[uint64][]T
	// bodies holds, by graph, the body graphs of its conditional nodes,
	// whose work an instantiation of the graph gathers (see AddBody).
	bodies map[uint64][]body
	// Lasting says which items survive a change in place (Change) and an
	// executable graph's update to a graph whose work is unknown; nil:
	// none. Memory nodes, say: parameters and updates cannot add or remove
	// them.
	Lasting func(T) bool
	// Body makes a body graph's item one of the graph that holds the
	// conditional node (false: left out): a body runs any number of times
	// at a launch, or not at all. nil: every item as it is.
	Body func(T) (T, bool)
}

// Apply follows one event with the engine's step for it: a capture's begin
// or end (a failed end, too, when it ended the capture), a graph launched
// inside a capture (a child graph: its items join the capture's), and an
// instantiation. finish makes a capture's items what its graph keeps (nil:
// as they are). The caller adds the other items, and forgets.
func (g *GraphWork[T]) Apply(ev *model.Event, st *Step, finish func([]T) []T) {
	switch ev.Op {
	case model.OpCaptureBegin:
		if st.EndedOrigin != 0 {
			g.close(st.EndedOrigin) // the begin ended a capture
		}
		if st.Captured {
			g.begin(st.CaptureOrigin, ev.Graph, ev.Flags&model.FlagLifetime != 0)
		}
	case model.OpCaptureEnd:
		if st.Captured || st.CaptureOrigin != 0 { // a failed end that ended the capture made no graph
			graph := ev.Graph
			if ev.Failed() {
				graph = 0 // whatever the trace says, a failed call gave no graph
			}
			g.end(st.CaptureOrigin, graph, finish)
		}
	case model.OpGraphLaunch:
		if st.Captured {
			g.Add(st.CaptureOrigin, g.Launched(ev.Exec)...)
		}
	case model.OpGraphInstantiate:
		if !st.Skipped {
			g.instantiate(ev.Graph, ev.Exec)
		}
	}
}

// openCapture is a capture in progress that builds a graph the trace
// names: a new graph (fresh), or one it adds to, whose nodes from before
// the capture its items copy.
type openCapture struct {
	origin AgentID
	fresh  bool
}

// body is a body graph of a conditional node (node 0: not known).
type body struct{ graph, node uint64 }

// begin starts a capture on origin, building graph (0: not known): a new
// graph (fresh), or one it adds to (cudaStreamBeginCaptureToGraph), whose
// items it starts with.
func (g *GraphWork[T]) begin(origin AgentID, graph uint64, fresh bool) {
	g.close(origin)
	if g.captures == nil {
		g.captures = map[AgentID][]T{}
	}
	if fresh {
		// A handle used again names the new graph: nothing of an old one
		// (a failed capture's conditional nodes, say) carries over.
		g.forgetBodies(graph, 0)
		g.detach(graph)
		g.captures[origin] = []T{}
	} else {
		g.captures[origin] = slices.Clone(g.graphs[graph])
	}
	if graph != 0 {
		if g.open == nil {
			g.open = map[uint64]openCapture{}
		}
		g.open[graph] = openCapture{origin, fresh}
	}
}

// close drops origin's capture, and the graph it was building.
func (g *GraphWork[T]) close(origin AgentID) {
	delete(g.captures, origin)
	for h, o := range g.open {
		if o.origin == origin {
			delete(g.open, h)
		}
	}
}

// AddBody gives graph a conditional node whose body is graph b
// (OpGraphClone with FlagConditional), node its handle (0: not known). The
// driver makes the body, empty: whatever a graph that had its handle held
// is gone.
func (g *GraphWork[T]) AddBody(graph, b, node uint64) {
	if graph == 0 || b == 0 || graph == model.AllGraphs || b == model.AllGraphs {
		return
	}
	g.forgetBodies(b, 0)
	g.detach(b)
	if g.bodies == nil {
		g.bodies = map[uint64][]body{}
	}
	g.bodies[graph] = append(g.bodies[graph], body{b, node})
	// Adding the node makes the graph's work known, as Put does: a graph
	// built by hand holds what its recorded nodes do.
	g.Update(graph, 0, func(items []T) []T { return items })
	if g.graphs == nil {
		g.graphs = map[uint64][]T{}
	}
	g.graphs[b] = []T{}
}

// forgetBodies drops graph's conditional bodies and what is known of
// them, nested ones too: the driver destroys them with their graph.
func (g *GraphWork[T]) forgetBodies(graph uint64, depth int) {
	if depth >= maxBodyDepth {
		return
	}
	for _, b := range g.bodies[graph] {
		g.forgetBodies(b.graph, depth+1)
		delete(g.graphs, b.graph)
	}
	delete(g.bodies, graph)
}

// detach takes graph h out of the bodies of every graph: its handle now
// names another graph (made anew, or destroyed).
func (g *GraphWork[T]) detach(h uint64) {
	for p, bs := range g.bodies {
		if slices.ContainsFunc(bs, func(b body) bool { return b.graph == h }) {
			g.bodies[p] = slices.DeleteFunc(bs, func(b body) bool { return b.graph == h })
		}
	}
}

// DestroyNode drops the bodies of conditional node node, destroyed
// (cudaGraphDestroyNode), from its graph.
// It reports whether node was one.
func (g *GraphWork[T]) DestroyNode(node uint64) bool {
	if node == 0 {
		return false
	}
	found := false
	for p, bs := range g.bodies {
		for _, b := range bs {
			if b.node == node {
				g.forgetBodies(b.graph, 0)
				delete(g.graphs, b.graph)
				found = true
			}
		}
		g.bodies[p] = slices.DeleteFunc(bs, func(b body) bool { return b.node == node })
	}
	return found
}

// maxBodyDepth bounds the nesting of conditional bodies that an
// instantiation follows; a deeper or cyclic nesting (a damaged trace) is
// unknown work.
const maxBodyDepth = 16

// gather returns the work of graph with that of its conditional bodies,
// nested ones too, each as Body makes it, and whether all of it is known.
// A body reached twice adds its work once: a repeat adds no use and no
// record that is not there already.
func (g *GraphWork[T]) gather(graph uint64) ([]T, bool) {
	items, known := g.graphs[graph]
	if !known || len(g.bodies[graph]) == 0 {
		return items, known
	}
	out := slices.Clone(items)
	seen := map[uint64]bool{graph: true}
	var walk func(parent uint64, depth int) bool
	walk = func(parent uint64, depth int) bool {
		for _, bd := range g.bodies[parent] {
			b := bd.graph
			if seen[b] {
				continue
			}
			seen[b] = true
			inner, known := g.graphs[b]
			if !known || depth >= maxBodyDepth {
				return false
			}
			if g.Body == nil {
				out = append(out, inner...)
			} else {
				out = appendConverted(out, inner, g.Body)
			}
			if !walk(b, depth+1) {
				return false
			}
		}
		return true
	}
	if !walk(graph, 1) {
		// A body of unknown work: what lasts (memory nodes, which a body
		// cannot hold) is still known, as after a change in place.
		kept := lastingOf(items, g.Lasting)
		return kept, len(kept) > 0
	}
	return slices.Clip(out), true
}

// Add gives items to origin's open capture, if there is one.
func (g *GraphWork[T]) Add(origin AgentID, items ...T) {
	if c, ok := g.captures[origin]; ok {
		g.captures[origin] = append(c, items...)
	}
}

// Put adds items to the known work of graph (0 and model.AllGraphs: none)
// and of executable graph exec (0: none): nodes added after the capture, or
// to a graph built node by node. Executable graphs made from graph before
// keep the work they were made with.
func (g *GraphWork[T]) Put(graph, exec uint64, items ...T) {
	g.Update(graph, exec, func(old []T) []T { return append(old, items...) })
}

// Update replaces the known work of graph (0 and model.AllGraphs: none)
// and of executable graph exec (0: none) by what change makes of a copy of
// it: a node changed after the capture.
func (g *GraphWork[T]) Update(graph, exec uint64, change func([]T) []T) {
	if o, ok := g.open[graph]; ok && graph != 0 {
		// The graph a capture is building: the capture's items change.
		if items, ok := g.captures[o.origin]; ok {
			g.captures[o.origin] = change(items)
		}
	} else if graph != 0 && graph != model.AllGraphs {
		if g.graphs == nil {
			g.graphs = map[uint64][]T{}
		}
		g.graphs[graph] = change(slices.Clone(g.graphs[graph]))
	}
	if exec != 0 {
		if g.execs == nil {
			g.execs = map[uint64][]T{}
		}
		g.execs[exec] = change(slices.Clone(g.execs[exec]))
	}
}

// Copy gives graph to the items of graph from's known work, each as
// convert makes it (false: left out), in place of its own (replace: a
// clone) or after them (a child graph node embedding from). It reports
// whether from's work is known; if not, nothing changes. The copy's
// conditional nodes have bodies of their own, copies of from's as they
// are now, whose handles the trace does not see: their work is copied in
// with from's, as an instantiation gathers it.
func (g *GraphWork[T]) Copy(from, to uint64, replace bool, convert func(T) (T, bool)) bool {
	items, known := g.gather(from)
	if known {
		if replace {
			g.forgetBodies(to, 0)
		}
		g.Update(to, 0, func(old []T) []T {
			if replace {
				old = old[:0]
			}
			return appendConverted(old, items, convert)
		})
	}
	return known
}

// CopyToExec adds to executable graph exec's known work the items of graph
// from's, as Copy adds them to a graph's: a child graph node given a new
// graph in place. Nothing changes if from's work is unknown.
func (g *GraphWork[T]) CopyToExec(from, exec uint64, convert func(T) (T, bool)) {
	if items, known := g.gather(from); known {
		g.Update(0, exec, func(old []T) []T { return appendConverted(old, items, convert) })
	}
}

// appendConverted appends to out each of items as convert makes it, but
// those it leaves out.
func appendConverted[T any](out, items []T, convert func(T) (T, bool)) []T {
	for _, it := range items {
		if c, ok := convert(it); ok {
			out = append(out, c)
		}
	}
	return out
}

// UpdateGraphs is Update on every graph's known work, not executable
// graphs': a node destroyed in a graph that the trace does not name. The
// captures that add to a graph hold copies of its nodes: they change too;
// so does a new graph a capture builds when its items name the node
// (named: added to it by hand during the capture).
func (g *GraphWork[T]) UpdateGraphs(change func([]T) []T, named func([]T) bool) {
	for h, items := range g.graphs {
		g.graphs[h] = change(slices.Clone(items))
	}
	for _, o := range g.open {
		if items, ok := g.captures[o.origin]; ok && (!o.fresh || named != nil && named(items)) {
			g.captures[o.origin] = change(items)
		}
	}
}

// end ends origin's capture, giving its items, as finish makes them, to
// graph; a capture that made no graph (graph 0) is dropped.
func (g *GraphWork[T]) end(origin AgentID, graph uint64, finish func([]T) []T) {
	items, ok := g.captures[origin]
	if graph == 0 {
		// No graph (a failed end): the conditional nodes added to a new
		// graph it was building went with it; what a graph it added to
		// holds now is not known.
		for h, o := range g.open {
			if o.origin != origin {
				continue
			}
			g.forgetBodies(h, 0)
			if !o.fresh {
				delete(g.graphs, h) // unknown, and so is any graph it is a body of
			}
		}
	}
	g.close(origin)
	if !ok {
		return
	}
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

// instantiate makes executable graph exec run graph's work.
func (g *GraphWork[T]) instantiate(graph, exec uint64) {
	if exec == 0 {
		return
	}
	items, ok := g.gather(graph)
	if !ok {
		// Its work is unknown now, but what lasts (the executable graph
		// being updated, or a new one: nothing).
		keep(g.execs, exec, g.Lasting)
		return
	}
	if g.execs == nil {
		g.execs = map[uint64][]T{}
	}
	g.execs[exec] = items // Shared: never changed once made.
}

// Forget drops what is known of graph's work (model.AllGraphs: every
// graph's) and of exec's, its conditional bodies' too. Executable graphs
// keep the work they were instantiated with when their graph changes.
func (g *GraphWork[T]) Forget(graph, exec uint64) {
	g.drop(graph, exec, nil)
	if graph == model.AllGraphs {
		clear(g.bodies)
	} else {
		g.forgetBodies(graph, 0)
		g.detach(graph)
	}
}

// Change keeps, of what is known of graph's work (model.AllGraphs: every
// graph's) and of exec's, only the Lasting items: a change in place (new
// node parameters, a node added) leaves them.
func (g *GraphWork[T]) Change(graph, exec uint64) { g.drop(graph, exec, g.Lasting) }

// drop keeps, of graph's work and exec's, the items lasting says last
// (nil: none).
func (g *GraphWork[T]) drop(graph, exec uint64, lasting func(T) bool) {
	switch graph {
	case 0:
	case model.AllGraphs:
		// A change the trace does not place (a node's new parameters):
		// taken to be in a graph already made, not in one a new capture is
		// building; a capture that adds to a graph holds copies of its
		// nodes.
		for h := range g.graphs {
			keep(g.graphs, h, lasting)
		}
		for h, o := range g.open {
			if !o.fresh {
				g.dropCapture(h, lasting)
			}
		}
	default:
		if _, ok := g.open[graph]; ok {
			g.dropCapture(graph, lasting)
		} else {
			keep(g.graphs, graph, lasting)
		}
	}
	if exec != 0 {
		keep(g.execs, exec, lasting)
	}
}

// dropCapture keeps, of the items of the capture building graph, those
// lasting says last; with none, the capture's work is unknown (its end
// gives the graph none).
func (g *GraphWork[T]) dropCapture(graph uint64, lasting func(T) bool) {
	keep(g.captures, g.open[graph].origin, lasting)
}

// keep replaces m[h] by its items lasting says last (nil: none), or deletes
// it if there are none.
func keep[K comparable, T any](m map[K][]T, h K, lasting func(T) bool) {
	if kept := lastingOf(m[h], lasting); len(kept) > 0 {
		m[h] = kept // A new slice: the old one may be shared (instantiate).
	} else {
		delete(m, h)
	}
}

// lastingOf returns, in a new slice, the items lasting says last (nil:
// none).
func lastingOf[T any](items []T, lasting func(T) bool) []T {
	var kept []T
	if lasting != nil {
		for _, it := range items {
			if lasting(it) {
				kept = append(kept, it)
			}
		}
	}
	return kept
}

// Launched returns the items a launch of executable graph exec replays.
func (g *GraphWork[T]) Launched(exec uint64) []T { return g.execs[exec] }
