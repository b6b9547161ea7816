package hb

import (
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// A capture that a failed cudaStreamEndCapture ended made no graph: its
// graph-work capture is closed too, so open captures follow live ones, and
// the step names the capture's origin so that other GraphWork users (the
// checker's) close theirs.
func TestFailedCaptureEndClosesGraphWork(t *testing.T) {
	e := New()
	const s = 0x5000
	for i, ev := range []model.Event{
		{Op: model.OpStreamCreate, Stream: s},
		{Op: model.OpCaptureBegin, Stream: s},
		{Op: model.OpEventRecord, Stream: s, Event: 0x77, Flags: model.FlagExternal},
	} {
		ev.Seq = uint64(i + 1)
		e.Apply(&ev)
	}
	if n := len(e.graphEvents.captures); n != 1 {
		t.Fatalf("%d open graph-work captures after the begin, want 1", n)
	}
	end := model.Event{Seq: 4, Op: model.OpCaptureEnd, Stream: s, Result: model.ResultCaptureInvalidated}
	st := e.Apply(&end)
	if n := len(e.graphEvents.captures); n != 0 {
		t.Errorf("%d open graph-work captures after the failed end, want 0", n)
	}
	if a, _ := e.Known(s, 0, 0); st.CaptureOrigin != a.ID {
		t.Errorf("the failed end's step names origin %d, want the stream's %d", st.CaptureOrigin, a.ID)
	}
	// A failed end that did not end the capture (a bad argument) names none.
	bad := model.Event{Seq: 5, Op: model.OpCaptureEnd, Stream: s, Result: 1}
	if st := e.Apply(&bad); st.CaptureOrigin != 0 {
		t.Errorf("a bad argument's step names origin %d, want 0", st.CaptureOrigin)
	}
}

// A node put into a graph after an executable graph was made from it must
// not show up in that executable graph's work, which shares the graph's
// slice; nor may one put into the executable graph change the graph's.
func TestGraphWorkPutKeepsInstantiatedWork(t *testing.T) {
	var g GraphWork[int]
	const origin, graph, exec, later, last = 1, 0x10, 0x20, 0x30, 0x38
	g.Apply(&model.Event{Op: model.OpCaptureBegin}, &Step{Captured: true, CaptureOrigin: origin}, nil)
	g.Add(origin, 1, 2)
	g.Apply(&model.Event{Op: model.OpCaptureEnd, Graph: graph}, &Step{Captured: true, CaptureOrigin: origin}, nil)
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: exec}, &Step{}, nil)
	g.Put(graph, 0, 3)
	g.Put(0, exec, 4)
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: later}, &Step{}, nil)
	g.Put(graph, 0, 5)
	g.Put(0, later, 6)
	g.Put(model.AllGraphs, 0, 9) // names no one graph: changes none
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: last}, &Step{}, nil)
	for _, c := range []struct {
		exec uint64
		want []int
	}{{exec, []int{1, 2, 4}}, {later, []int{1, 2, 3, 6}}, {last, []int{1, 2, 3, 5}}} {
		if got := g.Launched(c.exec); !slices.Equal(got, c.want) {
			t.Errorf("executable graph %#x launches %v, want %v", c.exec, got, c.want)
		}
	}
	// A graph the trace never saw captured (built node by node) has the
	// nodes put into it.
	g.Put(0x40, 0, 7)
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: 0x40, Exec: 0x50}, &Step{}, nil)
	if got, want := g.Launched(0x50), []int{7}; !slices.Equal(got, want) {
		t.Errorf("a graph built by hand launches %v, want %v", got, want)
	}
}

// A node given another event changes the graph it names, not the
// executable graphs already made from it, which share its items.
func TestSetEventCopiesSharedWork(t *testing.T) {
	var g GraphWork[graphEvent]
	const graph, exec = 0x10, 0x20
	g.Put(graph, 0, graphEvent{event: 1, node: 7, record: true})
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: exec}, &Step{}, nil)
	g.Update(graph, 0, func(items []graphEvent) []graphEvent {
		return setEvent(items, graphEvent{event: 2, node: 7, record: true})
	})
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: exec + 1}, &Step{}, nil)
	if got := g.Launched(exec); len(got) != 1 || got[0].event != 1 {
		t.Errorf("the executable graph made before launches %+v, want the record of event 1", got)
	}
	if got := g.Launched(exec + 1); len(got) != 1 || got[0].event != 2 || got[0].stale {
		t.Errorf("the one made after launches %+v, want the record of event 2 alone", got)
	}
}

// instantiateFor instantiates graph as exec in g and returns the items a
// launch replays, and whether the work is known.
func instantiateFor[T any](g *GraphWork[T], graph, exec uint64) ([]T, bool) {
	g.Apply(&model.Event{Op: model.OpGraphInstantiate, Graph: graph, Exec: exec}, &Step{}, nil)
	items, known := g.execs[exec]
	return items, known
}

// A conditional node's body is run by the graph's launches as it is at the
// instantiation: its records may not be made (stale), its waits order
// nothing (dropped), nested bodies count, and a body filled after the
// instantiation does not.
func TestConditionalBodies(t *testing.T) {
	g := GraphWork[graphEvent]{Body: bodyEvent}
	const parent, body, inner, late = 0x10, 0x20, 0x30, 0x40
	g.Put(parent, 0, graphEvent{event: 1, record: true})
	g.AddBody(parent, body, 0)
	g.Put(body, 0, graphEvent{event: 2, record: true}, graphEvent{event: 3})
	g.AddBody(body, inner, 0)
	g.Put(inner, 0, graphEvent{event: 4, record: true})
	items, known := instantiateFor(&g, parent, 0x100)
	want := []graphEvent{{event: 1, record: true}, {event: 2, record: true, stale: true}, {event: 4, record: true, stale: true}}
	if !known || !slices.Equal(items, want) {
		t.Fatalf("launch replays %+v (known %v), want %+v", items, known, want)
	}
	g.AddBody(parent, late, 0)
	g.Put(late, 0, graphEvent{event: 5, record: true})
	if items, _ := instantiateFor(&g, parent, 0x100+1); len(items) != 4 {
		t.Errorf("a body filled before the second instantiation: %+v", items)
	}
	if items := g.Launched(0x100); len(items) != 3 {
		t.Errorf("the first executable graph changed: %+v", items)
	}
}

// A body whose work became unknown makes its graph's unknown; so does a
// cycle of bodies (a damaged trace), without looping.
func TestConditionalBodyUnknown(t *testing.T) {
	var g GraphWork[int]
	const parent, body = 0x10, 0x20
	g.Put(parent, 0, 1)
	g.AddBody(parent, body, 0)
	if items, known := instantiateFor(&g, parent, 0x100); !known || !slices.Equal(items, []int{1}) {
		t.Fatalf("an empty body: %v, known %v", items, known)
	}
	g.Change(body, 0) // a node the trace does not follow added to the body
	if _, known := instantiateFor(&g, parent, 0x101); known {
		t.Error("a body of unknown work left its graph's known")
	}
	// A body graph destroyed, its handle made a new graph: no longer a
	// body of the parent.
	g.Forget(body, 0)
	g.Put(body, 0, 9)
	if items, known := instantiateFor(&g, parent, 0x102); !known || !slices.Equal(items, []int{1}) {
		t.Errorf("after the body's handle was reused: %v, known %v", items, known)
	}
}

// Bodies are gathered once each, however often they are reached: a graph
// whose every level holds the next four times instantiates in linear
// time, and a cycle (a damaged trace) ends.
func TestConditionalBodiesGatheredOnce(t *testing.T) {
	g := GraphWork[int]{bodies: map[uint64][]body{}}
	for i := uint64(1); i <= 40; i++ {
		g.Put(i, 0, int(i))
		if i > 1 {
			for range 4 {
				g.bodies[i-1] = append(g.bodies[i-1], body{graph: i})
			}
		}
	}
	items, known := instantiateFor(&g, 1, 0x100)
	if known {
		t.Fatalf("a nesting deeper than %d was gathered: %d items", maxBodyDepth, len(items))
	}
	h := GraphWork[int]{bodies: map[uint64][]body{}}
	for i := uint64(1); i <= 10; i++ {
		h.Put(i, 0, int(i))
		if i > 1 {
			for range 4 {
				h.bodies[i-1] = append(h.bodies[i-1], body{graph: i})
			}
		}
	}
	h.bodies[10] = []body{{graph: 1}} // a cycle
	items, known = instantiateFor(&h, 1, 0x100)
	if !known || len(items) != 10 {
		t.Fatalf("got %d items (known %v), want the 10 graphs' one each", len(items), known)
	}
}

// Nodes added by hand to the graph a capture is building join the
// capture's items, and an unknown one makes the capture's work unknown;
// once the capture ended, its graph is an ordinary one.
func TestNodesAddedToCapturingGraph(t *testing.T) {
	var g GraphWork[int]
	const origin, graph = 1, 0x10
	begin := func(graph uint64) {
		g.Apply(&model.Event{Op: model.OpCaptureBegin, Graph: graph}, &Step{Captured: true, CaptureOrigin: origin}, nil)
	}
	end := func(graph uint64) {
		g.Apply(&model.Event{Op: model.OpCaptureEnd, Graph: graph}, &Step{Captured: true, CaptureOrigin: origin}, nil)
	}
	begin(graph)
	g.Add(origin, 1)
	g.Put(graph, 0, 2)
	g.Add(origin, 3)
	end(graph)
	if got := g.graphs[graph]; !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("the captured graph holds %v, want [1 2 3]", got)
	}
	g.Put(graph, 0, 4) // after the end: the graph's own
	if got := g.graphs[graph]; !slices.Equal(got, []int{1, 2, 3, 4}) {
		t.Fatalf("after the end the graph holds %v", got)
	}
	begin(0x20)
	g.Add(origin, 5)
	g.Forget(0x20, 0) // an unknown node added during the capture
	g.Add(origin, 6)
	end(0x20)
	if _, known := g.graphs[0x20]; known {
		t.Error("a capture given an unknown node made a graph of known work")
	}
}
