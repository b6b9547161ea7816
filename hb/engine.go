package hb

import "github.com/streamcheck/streamcheck/model"

// StreamKind says how a stream takes part in default-stream synchronization.
type StreamKind uint8

const (
	KindHost        StreamKind = iota // The host agent (not a stream).
	KindLegacy                        // The legacy default stream of a device.
	KindPerThread                     // A host thread's per-thread default stream.
	KindBlocking                      // A created stream that synchronizes with the legacy stream.
	KindNonBlocking                   // A created stream that does not.
)

func (k StreamKind) String() string {
	switch k {
	case KindHost:
		return "host"
	case KindLegacy:
		return "legacy default stream"
	case KindPerThread:
		return "per-thread default stream"
	case KindBlocking:
		return "blocking stream"
	case KindNonBlocking:
		return "non-blocking stream"
	}
	return "stream"
}

// Agent is the host or one incarnation of a stream: a handle reused after
// cudaStreamDestroy becomes a new agent.
type Agent struct {
	ID     AgentID
	Kind   StreamKind
	Handle uint64 // Stream handle as recorded (0 legacy, 2 per-thread).
	Device int32
	TID    uint32 // Owning host thread of a per-thread stream.
	// Implicit is set for a stream first seen in use, with no recorded create.
	Implicit bool

	clock     Clock
	destroyed bool
	capturing bool
}

// Ops returns how many operations were issued to the agent so far.
func (a *Agent) Ops() uint64 { return a.clock.Get(a.ID) }

type streamKey struct {
	handle uint64
	device int32
	tid    uint32
}

type eventState struct {
	recorded bool
	agent    AgentID // Stream of the most recent record.
	snap     Clock
}

// Step is what the engine learned from one event.
type Step struct {
	// Agent the operation ran on: a stream for stream operations (including
	// synchronous copies and sets, which run on the default stream), the host
	// for host-side calls.
	Agent AgentID
	// Epoch of the operation, for operations that others can be ordered
	// after; zero for pure bookkeeping (create, destroy, queries...).
	Epoch Epoch
	// Clock of the operation: every epoch it covers happens before it. It is
	// a view into engine state, valid until the next call of Apply.
	Clock Clock
	// Skipped is set for calls that did not take effect: failed calls, and
	// operations captured into a graph instead of running.
	Skipped  bool
	Captured bool
	// UnrecordedWait is set for a wait or event synchronize on an event with
	// no record before it: it orders nothing.
	UnrecordedWait bool
}

// Engine advances the happens-before relation one event at a time. Its
// memory grows with the number of streams and events objects, not with the
// number of operations.
type Engine struct {
	agents  []*Agent
	streams map[streamKey]AgentID
	events  map[uint64]*eventState
	// byDevice lists the stream agents of each device, for device
	// synchronization and the legacy stream's implicit joins.
	byDevice map[int32][]AgentID
	host     Clock
}

// New returns an engine with only the host agent.
func New() *Engine {
	e := &Engine{
		streams:  map[streamKey]AgentID{},
		events:   map[uint64]*eventState{},
		byDevice: map[int32][]AgentID{},
	}
	e.agents = append(e.agents, &Agent{ID: HostAgent, Kind: KindHost})
	return e
}

// Agent returns the agent with the given id.
func (e *Engine) Agent(id AgentID) *Agent { return e.agents[id] }

// Agents returns all agents, the host first.
func (e *Engine) Agents() []*Agent { return e.agents }

// HostClock returns the host's current clock (a view).
func (e *Engine) HostClock() Clock { return e.host }

func keyOf(handle uint64, device int32, tid uint32) streamKey {
	switch handle {
	case model.StreamLegacy, model.StreamLegacyAlt:
		return streamKey{model.StreamLegacy, device, 0}
	case model.StreamPerThread:
		return streamKey{model.StreamPerThread, device, tid}
	}
	return streamKey{handle: handle}
}

func (e *Engine) newAgent(k streamKey, kind StreamKind, device int32, tid uint32, implicit bool) *Agent {
	a := &Agent{ID: AgentID(len(e.agents)), Kind: kind, Handle: k.handle, Device: device, TID: tid, Implicit: implicit}
	e.agents = append(e.agents, a)
	e.streams[k] = a.ID
	e.byDevice[device] = append(e.byDevice[device], a.ID)
	return a
}

// Stream returns the agent a stream handle names for an event's device and
// host thread, creating default streams and never-created streams (as
// blocking, like cudaStreamCreate's default) on first use.
func (e *Engine) Stream(handle uint64, device int32, tid uint32) *Agent {
	k := keyOf(handle, device, tid)
	if id, ok := e.streams[k]; ok {
		return e.agents[id]
	}
	switch k.handle {
	case model.StreamLegacy:
		return e.newAgent(k, KindLegacy, device, 0, false)
	case model.StreamPerThread:
		return e.newAgent(k, KindPerThread, device, tid, false)
	}
	return e.newAgent(k, KindBlocking, device, 0, true)
}

// Apply advances the relation with ev and returns what it learned.
func (e *Engine) Apply(ev *model.Event) Step {
	if ev.Failed() {
		return Step{Agent: HostAgent, Clock: e.host, Skipped: true}
	}
	switch ev.Op {
	case model.OpStreamCreate:
		kind := KindBlocking
		if ev.Flags&model.FlagNonBlocking != 0 {
			kind = KindNonBlocking
		}
		a := e.newAgent(keyOf(ev.Stream, ev.Device, ev.TID), kind, ev.Device, ev.TID, ev.Flags&model.FlagImplicit != 0)
		// A new stream starts after what the host knows: work issued to it
		// later joins the host clock anyway, so nothing else to do.
		return Step{Agent: a.ID, Clock: a.clock}
	case model.OpStreamDestroy:
		a := e.Stream(ev.Stream, ev.Device, ev.TID)
		a.destroyed = true
		if a.Kind == KindBlocking || a.Kind == KindNonBlocking {
			delete(e.streams, keyOf(ev.Stream, ev.Device, ev.TID))
		}
		return Step{Agent: a.ID, Clock: a.clock}
	case model.OpEventCreate:
		e.events[ev.Event] = &eventState{}
		return Step{Agent: HostAgent, Clock: e.host}
	case model.OpEventDestroy:
		delete(e.events, ev.Event)
		return Step{Agent: HostAgent, Clock: e.host}
	case model.OpStreamSync, model.OpStreamQuery:
		a := e.Stream(ev.Stream, ev.Device, ev.TID)
		if ev.Op == model.OpStreamSync || ev.Result == model.ResultSuccess {
			e.host.join(a.clock)
		}
		return Step{Agent: HostAgent, Clock: e.host}
	case model.OpEventSync, model.OpEventQuery:
		st := e.events[ev.Event]
		if st == nil || !st.recorded {
			// cudaEventSynchronize on an event never recorded returns at once.
			return Step{Agent: HostAgent, Clock: e.host, UnrecordedWait: ev.Op == model.OpEventSync}
		}
		if ev.Op == model.OpEventSync || ev.Result == model.ResultSuccess {
			e.host.join(st.snap)
		}
		return Step{Agent: HostAgent, Clock: e.host}
	case model.OpDeviceSync:
		for _, id := range e.byDevice[ev.Device] {
			e.host.join(e.agents[id].clock)
		}
		return Step{Agent: HostAgent, Clock: e.host}
	case model.OpMalloc, model.OpFree, model.OpPoolCreate:
		ep := e.host.tick(HostAgent)
		return Step{Agent: HostAgent, Epoch: ep, Clock: e.host}
	case model.OpMemcpy, model.OpMemset:
		st := e.issue(ev)
		if ev.Op == model.OpMemcpy && hostWaitsForCopy(ev) {
			e.host.join(st.Clock)
		}
		return st
	}
	if ev.Op.OnStream() {
		return e.issue(ev)
	}
	return Step{Agent: HostAgent, Clock: e.host}
}

// hostWaitsForCopy reports whether a synchronous cudaMemcpy returns only
// after the copy completed, per the runtime's "API synchronization behavior".
func hostWaitsForCopy(ev *model.Event) bool {
	switch ev.Kind {
	case model.CopyD2H, model.CopyH2H:
		return true
	case model.CopyH2D:
		return ev.Flags&model.FlagPinned != 0
	}
	return false
}

// issue applies an operation issued by the host to a stream.
func (e *Engine) issue(ev *model.Event) Step {
	a := e.Stream(ev.Stream, ev.Device, ev.TID)
	switch ev.Op {
	case model.OpCaptureBegin:
		a.capturing = true
		return Step{Agent: a.ID, Clock: a.clock, Captured: true, Skipped: true}
	case model.OpCaptureEnd:
		a.capturing = false
		return Step{Agent: a.ID, Clock: a.clock, Captured: true, Skipped: true}
	}
	if a.capturing {
		return Step{Agent: a.ID, Clock: a.clock, Captured: true, Skipped: true}
	}
	// Work issued by the host follows everything the host knows completed.
	a.clock.join(e.host)
	switch a.Kind {
	case KindLegacy:
		for _, id := range e.byDevice[a.Device] {
			if b := e.agents[id]; (b.Kind == KindBlocking || b.Kind == KindPerThread) && !b.destroyed {
				a.clock.join(b.clock)
			}
		}
	case KindBlocking, KindPerThread:
		if id, ok := e.streams[streamKey{model.StreamLegacy, a.Device, 0}]; ok {
			a.clock.join(e.agents[id].clock)
		}
	}
	st := Step{Agent: a.ID}
	switch ev.Op {
	case model.OpStreamWait:
		es := e.events[ev.Event]
		if es == nil || !es.recorded {
			st.UnrecordedWait = true
		} else {
			a.clock.join(es.snap)
		}
	case model.OpEventRecord:
		es := e.events[ev.Event]
		if es == nil {
			es = &eventState{}
			e.events[ev.Event] = es
		}
		st.Epoch = a.clock.tick(a.ID)
		es.recorded = true
		es.agent = a.ID
		es.snap.set(a.clock)
		st.Clock = a.clock
		return st
	}
	st.Epoch = a.clock.tick(a.ID)
	st.Clock = a.clock
	return st
}

// EventRecordedOn returns the stream agent of the most recent record of an
// event handle, and whether it was recorded at all.
func (e *Engine) EventRecordedOn(handle uint64) (AgentID, bool) {
	if st := e.events[handle]; st != nil && st.recorded {
		return st.agent, true
	}
	return 0, false
}
