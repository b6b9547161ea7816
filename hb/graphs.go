package hb

import (
	"slices"

	"github.com/streamcheck/streamcheck/model"
)

// graphEvent is an event record or wait captured with the external flag:
// each launch of its graph makes it.
type graphEvent struct {
	event  uint64
	node   uint64 // The graph node, where the trace named it (a node added by hand).
	record bool   // Else a wait.
	// stale marks a record that may no longer be made: a node whose
	// event changed could not be told apart from it. A launch joins it into
	// the event's last record rather than replacing that.
	stale bool
}

// copiedEvent is it copied into another graph (a clone, a child graph
// node): a new node, whose handle the trace never saw, so its event can
// change unseen (cudaGraphNodeFindInClone, cudaGraphChildGraphNodeGetGraph):
// a copied record is stale. Every item is copied (GraphWork.Copy's convert).
func copiedEvent(it graphEvent) (graphEvent, bool) {
	it.node = 0
	it.stale = it.stale || it.record
	return it, true
}

// bodyEvent is it in a conditional node's body, which a launch runs any
// number of times, or not at all: a record may not be made (stale), and a
// wait, which may not be made either, orders nothing.
func bodyEvent(it graphEvent) (graphEvent, bool) {
	if !it.record {
		return it, false
	}
	it.stale = true
	return it, true
}

// staleRecords makes stale the records of node, or with node 0, those
// without a node (made by a capture or copied: any of them may be the
// node a change the trace cannot place was about).
func staleRecords(items []graphEvent, node uint64) {
	for i := range items {
		if items[i].record && items[i].node == node {
			items[i].stale = true
		}
	}
}

// names reports whether items hold node's record or wait.
func names(items []graphEvent, node uint64) bool {
	return slices.ContainsFunc(items, func(it graphEvent) bool { return it.node == node })
}

// staleNode is items with node's records stale; if they do not name it,
// their records without a node (it may be one of them, or hold them).
func staleNode(items []graphEvent, node uint64) []graphEvent {
	if !names(items, node) {
		node = 0
	}
	staleRecords(items, node)
	return items
}

// withoutNode is items without node's. If they do not name it, it may be
// one a capture made: their records without a node become stale.
func withoutNode(items []graphEvent, node uint64) []graphEvent {
	if names(items, node) {
		return slices.DeleteFunc(items, func(it graphEvent) bool { return it.node == node })
	}
	staleRecords(items, 0)
	return items
}

// setEvent is items with node item.node's event set to item.event. A node
// the items do not name (one a capture made, whose handle the trace never
// saw) is added; adding a record is not enough then, since one of the
// records without a node may be the node whose event changed, still
// recorded as before: those and the new one become stale.
func setEvent(items []graphEvent, item graphEvent) []graphEvent {
	for i := len(items) - 1; i >= 0; i-- { // The newest node with the handle.
		if item.node != 0 && items[i].node == item.node && items[i].record == item.record {
			items[i].event = item.event
			return items
		}
	}
	if item.record {
		staleRecords(items, 0)
		item.stale = true
	}
	return append(items, item)
}

// The advance functions of graphs, which the host changes without
// ordering anything: their launches (Engine.issue) run the work.

// advanceGraphChange applies an instantiation or update of an executable
// graph (OpGraphInstantiate), and a graph whose work is no longer known
// (OpGraphForget).
func (e *Engine) advanceGraphChange(ev *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
	e.graphEvents.Apply(ev, st, nil)
	if ev.Flags&model.FlagLifetime != 0 {
		// A new or destroyed object: a handle used again must not
		// inherit its launches or its external events. A change in
		// place (new node parameters) keeps both: the event nodes
		// are still there, and launches stay in order.
		if ev.Op == model.OpGraphForget {
			e.graphEvents.Forget(ev.Graph, ev.Exec)
		}
		if ev.Exec != 0 {
			delete(e.execs, ev.Exec)
		}
	}
	if ev.Op == model.OpGraphForget && ev.Node != 0 {
		if ev.Exec != 0 {
			// A node of an executable graph changed (enabled or
			// disabled, a child graph replaced): whether its records
			// are still made is unknown, and so is whether the new
			// child graph's (Src) are.
			e.graphEvents.Update(0, ev.Exec, func(items []graphEvent) []graphEvent { return staleNode(items, ev.Node) })
			if ev.Src != 0 {
				e.graphEvents.CopyToExec(ev.Src, ev.Exec, copiedEvent)
			}
		} else {
			// A node destroyed (cudaGraphDestroyNode): its event
			// record or wait goes from its graph, a conditional node's
			// bodies too; executable graphs keep theirs.
			if !e.graphEvents.DestroyNode(ev.Node) { // a conditional node's bodies go; it has no record
				e.graphEvents.UpdateGraphs(func(items []graphEvent) []graphEvent { return withoutNode(items, ev.Node) },
					func(items []graphEvent) bool { return names(items, ev.Node) })
			}
		}
	}
}

// advanceGraphClone applies a graph copied into another: a clone, a child
// graph node (see copiedEvent), or a conditional node's body (see
// bodyEvent).
func (e *Engine) advanceGraphClone(ev *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
	if ev.Flags&model.FlagConditional != 0 {
		e.graphEvents.AddBody(ev.Graph, ev.Src, ev.Node)
		return
	}
	replace := ev.Flags&model.FlagLifetime != 0
	if !e.graphEvents.Copy(ev.Src, ev.Graph, replace, copiedEvent) && replace {
		e.graphEvents.Forget(ev.Graph, 0)
	}
}

// advanceGraphEventNode applies an event node added to a graph by hand,
// or given another event: its launches record or wait for the event, as
// for a captured external one.
func (e *Engine) advanceGraphEventNode(ev *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
	item := graphEvent{event: ev.Event, node: ev.Node, record: ev.Op == model.OpGraphEventRecordNode}
	if ev.Flags&model.FlagLifetime != 0 {
		e.graphEvents.Put(ev.Graph, ev.Exec, item)
	} else {
		e.graphEvents.Update(ev.Graph, ev.Exec, func(items []graphEvent) []graphEvent { return setEvent(items, item) })
	}
}

// graphNode applies a node added to a graph by hand: it runs at each
// launch of the graph, which the checker follows; adding it orders
// nothing. A memory operation's values are not followed in graphs, as a
// captured one's.
func (e *Engine) graphNode(ev *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view(), Skipped: true}
	if ev.Op == model.OpStreamMemOp {
		e.graphMemOp(ev)
	}
}

// captureBegin applies cudaStreamBeginCapture on stream a.
func (e *Engine) captureBegin(ev *model.Event, a *Agent, st *Step) {
	// CUDA refuses to begin a capture on a stream in one (a failed call
	// is skipped before this); a trace that says it did ends the first.
	endedOrigin := a.captureOrigin
	ended := e.endCapture(a)
	a.capturing, a.captureOrigin = true, a.ID
	e.captureSeq++
	e.captures[a.ID] = &capture{id: e.captureSeq, slots: map[AgentID]AgentID{a.ID: 0}, clocks: make([]vclock, 1)}
	*st = Step{Agent: a.ID, Clock: a.clock.view(), Captured: true, Skipped: true, CaptureOrigin: a.ID, Capture: e.captureSeq}
	if ended != 0 {
		st.EndedCapture, st.EndedOrigin = ended, endedOrigin
	}
	e.graphEvents.Apply(ev, st, nil)
}

// captureEnd applies cudaStreamEndCapture on stream a.
func (e *Engine) captureEnd(ev *model.Event, a *Agent, st *Step) {
	origin := a.captureOrigin
	id := e.endCapture(a)
	*st = Step{Agent: a.ID, Clock: a.clock.view(), Captured: true, Skipped: true, CaptureOrigin: origin, Capture: id}
	e.graphEvents.Apply(ev, st, nil)
}

// joinCaptureOf makes stream a, about to wait for event waited, part of
// the capture that recorded it.
func (e *Engine) joinCaptureOf(a *Agent, waited *eventState) {
	// Cross-stream capture: waiting on an event recorded in a capturing
	// stream makes this stream part of the same capture. Only the capture
	// that made the record, if it is still open: not a later one its
	// origin began or joined.
	if w := waited; !a.capturing && w != nil && w.captureOrigin != 0 {
		if cp := e.captures[w.captureOrigin]; cp != nil && cp.id == w.capture {
			a.capturing, a.captureOrigin = true, w.captureOrigin
		}
	}
}

// issueCaptured applies an operation issued to stream a while it is
// captured into a graph: it runs at the graph's launches, ordered among
// the capture's work by the capture's own clocks. waited is the event a
// wait names.
func (e *Engine) issueCaptured(ev *model.Event, a *Agent, waited *eventState, st *Step) {
	*st = Step{Agent: a.ID, Clock: a.clock.view(), Captured: true, Skipped: true, CaptureOrigin: a.captureOrigin}
	cp := e.captures[a.captureOrigin] // never nil: see endCapture
	s, ok := cp.slots[a.ID]
	if !ok {
		s = AgentID(len(cp.clocks))
		cp.slots[a.ID] = s
		cp.clocks = append(cp.clocks, vclock{})
	}
	clock := &cp.clocks[s]
	// A wait with the external flag becomes an event wait node of the
	// graph, not an edge from the record (see graphEvents).
	if ev.Op == model.OpStreamWait && waited != nil && waited.capture == cp.id && ev.Flags&model.FlagExternal == 0 {
		clock.join(&waited.capSnap)
	}
	st.Capture, st.Local = cp.id, clock.tick(s)
	st.Local.Agent, st.LocalClock = a.ID, clock.view()
	if ev.Op == model.OpEventRecord {
		es := e.events[ev.Event]
		if es == nil {
			es = &eventState{}
			e.events[ev.Event] = es
		}
		es.captureOrigin, es.capture = a.captureOrigin, cp.id
		es.capSnap.set(clock)
	}
	if ev.Flags&model.FlagExternal != 0 && (ev.Op == model.OpEventRecord || ev.Op == model.OpStreamWait) {
		e.graphEvents.Add(a.captureOrigin, graphEvent{event: ev.Event, record: ev.Op == model.OpEventRecord})
	}
	if ev.Op == model.OpStreamMemOp {
		e.graphMemOp(ev)
	}
	e.graphEvents.Apply(ev, st, nil) // a child graph's external records and waits join the capture
}

// launchJoins orders stream a, about to launch executable graph ev.Exec,
// after its previous launch and the events its external event wait nodes
// wait for, and returns the graph's external event records and waits.
func (e *Engine) launchJoins(ev *model.Event, a *Agent) []graphEvent {
	if ev.Exec == 0 {
		return nil
	}
	// "Each launch is ordered behind both any previous work in stream
	// and any previous launches of graphExec" (CUDA runtime API): the
	// previous launch works as an event this one waits for, and this
	// launch as its record for the next.
	if last := e.execs[ev.Exec]; last != nil {
		a.clock.join(&last.snap)
		e.joinRecord(JoinGraphLaunch, a.ID, last)
	}
	// The graph's external waits order all of its work after the
	// events, and its external records (below) see all of it: coarser
	// than the nodes' own places in the graph, which can only hide a
	// race, never make one up.
	graphWork := e.graphEvents.Launched(ev.Exec)
	for _, g := range graphWork {
		if w := e.events[g.event]; !g.record && w != nil && w.recorded {
			a.clock.join(&w.snap)
			e.joinRecord(JoinGraphEventWait, a.ID, w)
		}
	}
	return graphWork
}

// launched records, after a graph launch on stream a, the launch for the
// next one and the graph's external event records (graphWork).
func (e *Engine) launched(ev *model.Event, a *Agent, graphWork []graphEvent) {
	if ev.Exec != 0 {
		recordOn(e.execs, ev.Exec, a)
	}
	for _, g := range graphWork {
		switch {
		case g.record && g.stale:
			joinRecordOn(e.events, g.event, a)
		case g.record:
			recordOn(e.events, g.event, a)
		}
	}
}

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
