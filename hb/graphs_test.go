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
