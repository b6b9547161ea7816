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

// advanceIpcEventOpen applies cuIpcOpenEventHandle: an event recorded in
// another process, out of the trace's sight (see eventState.foreign).
func (e *Engine) advanceIpcEventOpen(ev *model.Event, st *Step) {
	e.events[ev.Event] = &eventState{foreign: true}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}
