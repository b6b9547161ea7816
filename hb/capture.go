package hb

import "github.com/streamcheck/streamcheck/model"

// capture is a capture in progress, and the order in which the graph it
// builds will run the captured work: stream order and the event waits made
// during the capture become the graph's edges. Each stream in the capture
// has a slot in clocks of the capture's own, which know nothing of the
// work outside it (that is ordered with the graph's launches instead).
type capture struct {
	id     uint64
	slots  map[AgentID]AgentID // A stream's slot in clocks.
	clocks []vclock            // Each stream's clock in the capture, by slot.
}

// failedCaptureEnd ends the capture a failed cudaStreamEndCapture leaves
// behind: CUDA returns the error and no graph, and what follows on the
// capture's streams runs. Measured on CUDA 13: an invalidated capture ends
// (cudaErrorStreamCaptureInvalidated), and so does one ended on its origin
// stream with an unjoined fork (cudaErrorStreamCaptureUnjoined) or from
// the wrong thread (cudaErrorStreamCaptureWrongThread); called on a stream
// that joined the capture (cudaErrorStreamCaptureUnmatched), it only
// invalidates the capture, which its origin's end then ends. Other errors
// (a bad argument, say) are not known to end it. It returns the origin of
// the capture it ended and its number (Step.Capture), 0 if none.
func (e *Engine) failedCaptureEnd(ev *model.Event) (AgentID, uint64) {
	a, ok := e.Known(ev.Stream, ev.Device, ev.TID) // a failed call creates no stream
	if !ok || !a.capturing {
		return 0, 0
	}
	origin := a.captureOrigin
	switch ev.Result {
	case model.ResultCaptureInvalidated:
	case model.ResultCaptureUnjoined, model.ResultCaptureWrongThread:
		if origin != a.ID {
			return 0, 0
		}
	default:
		return 0, 0
	}
	return origin, e.endCapture(a)
}

// endCapture ends the capture that stream a is part of, for every stream in
// it, and returns its number. Ending it on a stream that is not capturing
// does nothing (and returns 0).
func (e *Engine) endCapture(a *Agent) uint64 {
	if !a.capturing {
		return 0
	}
	// A stream is capturing exactly while its origin's capture is open
	// and lists it: streams join a capture only through it (the begin, or
	// a wait on one of its records), and leave only here.
	origin := a.captureOrigin
	cp := e.captures[origin]
	for id := range cp.slots {
		b := e.agents.at(id)
		b.capturing, b.captureOrigin = false, 0
	}
	delete(e.captures, origin)
	return cp.id
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
