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
