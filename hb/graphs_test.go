package hb

import (
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
