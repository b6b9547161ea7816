package hb

import "github.com/streamcheck/streamcheck/model"

// The advance functions of streams and events as objects: creating and
// destroying them, and opening another process's event.

func (e *Engine) advanceStreamCreate(ev *model.Event, st *Step) {
	if k := keyOf(ev.Stream, ev.Device, ev.TID); k.handle == model.StreamLegacy || k.handle == model.StreamPerThread {
		// A create naming a default stream (the JSON Lines form allows
		// it) refers to that fixed stream: nothing to create.
		a := e.Stream(ev.Stream, ev.Device, ev.TID)
		*st = Step{Agent: a.ID, Clock: a.clock.view()}
		return
	}
	kind := KindBlocking
	if ev.Flags&model.FlagNonBlocking != 0 {
		kind = KindNonBlocking
	}
	a := e.newAgent(keyOf(ev.Stream, ev.Device, ev.TID), kind, ev.Device, ev.TID, ev.Flags&model.FlagImplicit != 0)
	// A new stream starts after what the host knows: work issued to it
	// later joins the host clock anyway, so nothing else to do.
	*st = Step{Agent: a.ID, Clock: a.clock.view()}
}

func (e *Engine) advanceStreamDestroy(ev *model.Event, st *Step) {
	a := e.Stream(ev.Stream, ev.Device, ev.TID)
	*st = Step{Agent: a.ID, Clock: a.clock.view()}
	if a.Kind == KindBlocking || a.Kind == KindNonBlocking {
		st.Clock = st.Clock.Clone() // the clock is dropped below
		e.register(keyOf(ev.Stream, ev.Device, ev.TID), 0)
		e.destroy(a) // a created stream's handle names a new agent from now on
	}
	a.destroyed = true
}

func (e *Engine) advanceEventCreate(ev *model.Event, st *Step) {
	e.events[ev.Event] = &eventState{}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

func (e *Engine) advanceEventDestroy(ev *model.Event, st *Step) {
	delete(e.events, ev.Event)
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// advanceIpcEventOpen applies cuIpcOpenEventHandle: a new event object
// for the handle, whose records in other processes this trace does not
// see (a wait before a record here orders nothing it can see, and is
// Step.UnrecordedWait: the checker decides across processes).
func (e *Engine) advanceIpcEventOpen(ev *model.Event, st *Step) {
	e.events[ev.Event] = &eventState{}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// EventRecorded reports whether the event of handle has a record (one
// that a wait would join).
func (e *Engine) EventRecorded(handle uint64) bool {
	es := e.events[handle]
	return es != nil && es.recorded
}

type eventState struct {
	recorded bool
	agent    AgentID // Stream of the most recent record.
	count    uint64  // The record's count on its stream's slot (Join.From).
	snap     vclock
	// captureOrigin is set when the most recent record was captured into a
	// graph: waiting on it pulls the waiting stream into that capture.
	captureOrigin AgentID
	// capture and capSnap are the capture (Step.Capture) of the most recent
	// record, if captured, and its clock there (see capture).
	capture uint64
	capSnap vclock
}

// recordOn makes the state of handle in m (an event, or an executable
// graph's last launch) a record of a's clock as it is now.
func recordOn(m map[uint64]*eventState, handle uint64, a *Agent) {
	es := m[handle]
	if es == nil {
		es = &eventState{}
		m[handle] = es
	}
	es.recorded, es.agent, es.count, es.captureOrigin, es.capture = true, a.ID, a.own, 0, 0
	es.snap.set(&a.clock)
}

// joinRecordOn joins a's clock into the last record of event handle in m
// (a record that may or may not be made: a wait then follows both).
func joinRecordOn(m map[uint64]*eventState, handle uint64, a *Agent) {
	if es := m[handle]; es != nil && es.recorded {
		es.snap.join(&a.clock)
		return
	}
	recordOn(m, handle, a)
}

// EventRecordedOn returns the stream agent of the most recent record of an
// event handle, and whether it was recorded at all.
func (e *Engine) EventRecordedOn(handle uint64) (AgentID, bool) {
	if st := e.events[handle]; st != nil && st.recorded {
		return st.agent, true
	}
	return 0, false
}
