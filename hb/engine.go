package hb

import "github.com/streamcheck/streamcheck/model"

// Step is what the engine learned from one event. Its fields are laid out
// to leave no padding: the analyzer's hot path copies and clears it per
// event, and its size shows in the time per event.
type Step struct {
	// Agent the operation ran on: a stream for stream operations (including
	// synchronous copies and sets, which run on the default stream), the host
	// for host-side calls.
	Agent AgentID
	// njoins and joins are the view of Engine.joins that Joins returns.
	njoins uint32
	// Epoch of the operation, for operations that others can be ordered
	// after; zero for pure bookkeeping (create, destroy, queries...). A
	// non-zero Epoch is always on Agent.
	Epoch Epoch
	// Clock of the operation: every epoch it covers happens before it. It is
	// a view into engine state, valid until the next call of Apply or
	// ApplyTo.
	Clock Clock
	// Skipped is set for calls that did not take effect: failed calls, and
	// operations captured into a graph instead of running.
	Skipped  bool
	Captured bool
	// UnrecordedWait is set for a wait or event synchronize on an event with
	// no record before it: it orders nothing.
	UnrecordedWait bool
	// MemLateWrite is set on a write of a value that may have met a wait
	// the engine followed before it (to other writes) first: the wait was
	// taken as ordered after more than it may have been, which can hide
	// races after it.
	MemLateWrite bool
	// MemWait is, for a stream memory operation that waits for a value,
	// whether the engine ordered it after recorded writes of the value.
	MemWait MemWait
	// CaptureOrigin is, for a captured operation (and a capture's begin and
	// end), the stream whose cudaStreamBeginCapture started the capture: it
	// tells the captures of one program apart.
	CaptureOrigin AgentID
	// EndedCapture and EndedOrigin are set on a capture's begin that ended
	// another capture its stream was in (CUDA refuses such a begin; a
	// trace may still say it succeeded): that capture's number and origin.
	EndedOrigin  AgentID
	EndedCapture uint64
	// Capture numbers the capture a captured operation (and a capture's
	// begin and end) belongs to, from 1, unlike CaptureOrigin never the
	// same for two captures. For a captured stream operation, Local is its
	// epoch among the capture's work and LocalClock its clock there: it
	// follows another operation of the same capture, when the graph runs,
	// exactly when LocalClock covers that one's Local.
	Capture    uint64
	Local      Epoch
	LocalClock Clock
	joins      *[]Join
}

// Engine advances the happens-before relation one event at a time. Its
// memory grows with the number of streams and event objects, not with the
// number of operations; a destroyed stream keeps only its clock's entries
// the host has not reached, until the host is ordered after its work, and
// then gives its clock slot to the next stream created, so clocks are as
// wide as the streams alive at once. Wide clocks are persistent trees that
// share their nodes (see Clock; bench/notes.md has the figures).
type Engine struct {
	agents agentTable
	// joins are the joins made for the current event (Step.Joins): emptied
	// at each event, their storage kept.
	joins []Join
	// The current agent of each stream key, split by kind of key so that
	// the lookup every stream operation makes hashes a plain integer:
	// created streams by handle, per-thread streams by device and thread,
	// legacy streams in their device.
	created   map[uint64]AgentID
	perThread map[uint64]AgentID
	devices   map[int32]*device
	lastDev   *device // Most recently looked-up device (nearly always the only one).
	lastDevID int32
	// recent caches lookups of created streams, indexed by a hash of the
	// handle: nearly every event names one of a few streams.
	recent [16]struct {
		handle uint64
		id     AgentID
	}
	events map[uint64]*eventState
	execs  map[uint64]*eventState // Executable graphs, by handle: their last launch.
	// graphEvents are the event records and waits captured with the
	// external flag, which each launch of their graph makes.
	graphEvents GraphWork[graphEvent]
	captures    map[AgentID]*capture // Captures in progress, by origin stream.
	captureSeq  uint64               // Captures begun so far.
	scratch     vclock               // A stream's clock before an operation (see OpMemcpy).
	// dying lists destroyed streams whose work the host has not yet been
	// ordered after; prune drops their clocks once it has, so that memory
	// follows the streams alive, not every stream a program ever created.
	dying []AgentID
	// prunedAt is hostVer at the last prune: until it changes, another
	// prune would find nothing (a destroyed stream's count no longer
	// changes; only the host's can). nextPrune is the event count before
	// which no prune runs, so that a long dying list is walked once per
	// several of its length in events, not at every host change (a program
	// with a stream per step that never waits for them, say).
	prunedAt  uint64
	nextPrune uint64
	applied   uint64 // Events applied so far.
	// freeSlots are the clock slots of pruned streams, for new streams, so
	// that clocks stay as wide as the streams alive at once, not as the
	// number of streams ever created.
	freeSlots []AgentID
	nslots    AgentID // Slots handed out so far, the host's included.
	// slotHolder is the agent each slot was last handed to.
	slotHolder []AgentID
	// spare holds the storage of a few destroyed streams' clocks for new
	// streams, so that a program that makes a stream per step and never
	// waits for them does not allocate a clock as wide as all of them each
	// step.
	spare []vclock
	host  vclock
	// memory holds the recorded writes of values (cuStreamWriteValue*) by
	// 8-byte block, for the waits that read them; memBlocks the blocks'
	// keys, sorted, for ForgetMemory.
	memory    map[uint64]*memBlock
	memBlocks []uint64
	// unknownMemOps is set once a stream memory operation the trace does
	// not describe ran: it may have written anywhere.
	unknownMemOps bool
	// hostFns are the host functions enqueued whose run is not yet
	// recorded (hostfuncs.go).
	hostFns hostFns
	// hostVer counts changes of the host clock, so that work issued to a
	// stream joins it only when it changed since the stream last did.
	hostVer uint64
}

// New returns an engine with only the host agent.
func New() *Engine {
	e := &Engine{
		created:     map[uint64]AgentID{},
		perThread:   map[uint64]AgentID{},
		devices:     map[int32]*device{},
		events:      map[uint64]*eventState{},
		execs:       map[uint64]*eventState{},
		captures:    map[AgentID]*capture{},
		graphEvents: GraphWork[graphEvent]{Body: bodyEvent},
		hostVer:     1, // Agents start at 0: their first operation joins.
		spare:       make([]vclock, 0, 4),
		joins:       make([]Join, 0, 16), // a device synchronization of many streams grows it
		slotHolder:  []AgentID{HostAgent},
		nslots:      1, // Slot 0 is the host's.
		host:        vclock{lin: uint32(HostAgent) + 1},
	}
	e.agents.add(&Agent{ID: HostAgent, Kind: KindHost})
	return e
}

// HostClock returns the host's current clock (a view).
func (e *Engine) HostClock() Clock { return e.host.view() }

// Apply advances the relation with ev and returns what it learned.
func (e *Engine) Apply(ev *model.Event) Step {
	var st Step
	e.ApplyTo(ev, &st)
	return st
}

// advances is the dispatch table of the ops not issued to a stream: each
// op's ordering family (model.Op.Order, from the op spec), indexed by the
// op's byte (no bounds check), filled at init. It holds the family rather
// than a function because the compiler cannot tell what an indirect call
// keeps: a call through a function value makes the caller's event and Step
// escape to the heap. The switch on an entry (Engine.advance) compiles to a
// jump table, one case per family, each in the file of its kind: streams
// and events (streams.go), synchronization (syncs.go), allocations and
// mappings (allocs.go), synchronous copies and sets (copies.go), graphs
// (graphs.go), host functions (hostfuncs.go).
var advances [256]model.Order

func init() {
	for _, s := range model.OpSpecs() {
		advances[s.Op] = s.Order
	}
}

// advance applies an event of an op not issued to a stream by its entry
// in advances. It reports false for a family it has no case for (the
// completeness test's concern; such an event orders nothing).
func (e *Engine) advance(ev *model.Event, st *Step) bool {
	switch advances[ev.Op] {
	case model.OrderNothing:
		e.advanceNothing(ev, st)
	case model.OrderStreamCreate:
		e.advanceStreamCreate(ev, st)
	case model.OrderStreamDestroy:
		e.advanceStreamDestroy(ev, st)
	case model.OrderEventCreate:
		e.advanceEventCreate(ev, st)
	case model.OrderEventDestroy:
		e.advanceEventDestroy(ev, st)
	case model.OrderIpcEventOpen:
		e.advanceIpcEventOpen(ev, st)
	case model.OrderStreamSync:
		e.advanceStreamSync(ev, st)
	case model.OrderEventSync:
		e.advanceEventSync(ev, st)
	case model.OrderDeviceSync:
		e.advanceDeviceSync(ev, st)
	case model.OrderAlloc:
		e.advanceAlloc(ev, st)
	case model.OrderCopy:
		e.advanceCopy(ev, st)
	case model.OrderGraphChange:
		e.advanceGraphChange(ev, st)
	case model.OrderGraphClone:
		e.advanceGraphClone(ev, st)
	case model.OrderGraphEventNode:
		e.advanceGraphEventNode(ev, st)
	case model.OrderHostFnRun:
		e.advanceHostFnRun(ev, st)
	default: // OrderIssue reaches issue, not here; an unknown op orders nothing
		e.advanceNothing(ev, st)
		return advances[ev.Op] == 0
	}
	return true
}

// ApplyTo is Apply writing into *st, which saves copying the Step on the
// analyzer's hot path.
func (e *Engine) ApplyTo(ev *model.Event, st *Step) {
	// Destroyed streams the previous events ordered the host after are
	// pruned here, once, rather than wherever the host joins: not while an
	// operation walks the agents, and at no cost when none is dying.
	if len(e.dying) > 0 && e.hostVer != e.prunedAt && e.applied >= e.nextPrune {
		e.prune()
	}
	e.applied++
	if len(e.joins) != 0 {
		e.joins = e.joins[:0]
	}
	switch {
	case ev.Failed():
		e.failed(ev, st)
	case ev.Flags&model.FlagGraphAlloc != 0 && ev.Op == model.OpMallocAsync:
		// A graph's memory node: allocated at each launch of the graph,
		// which is not analyzed, like captured work.
		*st = Step{Agent: HostAgent, Clock: e.host.view(), Captured: true, Skipped: true}
	case ev.Flags&model.FlagGraphNode != 0 && (ev.Op == model.OpLaunch || ev.Op == model.OpMemcpyAsync ||
		ev.Op == model.OpMemsetAsync || ev.Op == model.OpStreamMemOp):
		e.graphNode(ev, st)
	case ev.Op.OnStream(): // Most events: tested first, OrderIssue in advances.
		e.issue(ev, st)
	default:
		e.advance(ev, st)
	}
	if n := len(e.joins); n != 0 {
		st.joins, st.njoins = &e.joins, uint32(n)
	}
}

// failed applies a call that failed: it took no effect, but a failed
// capture end may still end its capture (see failedCaptureEnd).
func (e *Engine) failed(ev *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view(), Skipped: true}
	if ev.Op == model.OpCaptureEnd {
		st.CaptureOrigin, st.Capture = e.failedCaptureEnd(ev)
		e.graphEvents.Apply(ev, st, nil)
	}
}

// advanceNothing applies a host-side call that orders nothing (pool
// attributes, exports...).
func (e *Engine) advanceNothing(_ *model.Event, st *Step) {
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// issue applies an operation issued by the host to a stream: a capture's
// begin and end, an operation captured into a graph (issueCaptured), or
// one that runs, ordered after what the host knows, the device's peer
// copies and, by its stream's kind, the legacy stream, and then after what
// its op joins: an event wait (syncs.go), a wait for a value (memops.go),
// a graph launch's previous launch and external event waits (graphs.go).
func (e *Engine) issue(ev *model.Event, st *Step) {
	a := e.Stream(ev.Stream, ev.Device, ev.TID)
	var waited *eventState // The event a wait names, looked up once.
	switch ev.Op {
	case model.OpCaptureBegin:
		e.captureBegin(ev, a, st)
		return
	case model.OpCaptureEnd:
		e.captureEnd(ev, a, st)
		return
	case model.OpStreamWait:
		waited = e.events[ev.Event]
		e.joinCaptureOf(a, waited)
	}
	if a.capturing {
		e.issueCaptured(ev, a, waited, st)
		return
	}
	// Work issued by the host follows everything the host knows completed,
	// and the peer copies of its device.
	if a.hostSeen != e.hostVer {
		a.clock.join(&e.host)
		a.hostSeen = e.hostVer
	}
	if d := a.dev; a.barrierSeen != d.barrierVer && a.Kind != KindNonBlocking {
		a.clock.join(&d.barrier)
		a.barrierSeen = d.barrierVer
		e.joinClock(JoinBarrier, a.ID)
	}
	a.markUnjoined() // the operation below counts on a's slot
	switch a.Kind {
	case KindLegacy:
		// Only blocking streams created or given work since the last look
		// can have work the legacy stream has not joined, so a legacy
		// operation costs those, not the number of streams.
		for _, id := range a.dev.unjoined {
			b := e.agents.at(id)
			b.unjoined = false
			// A destroyed blocking stream's unfinished work is waited for
			// too (measured on CUDA 13.0: testdata/cuda/
			// legacy_after_destroy_ok); a pruned one's is behind the host.
			// Joined already if the legacy stream knows b's own count (see
			// OpDeviceSync): no need to join it again.
			if !b.pruned && a.clock.Get(b.Slot) < b.count() {
				b.joinTo(&a.clock)
				e.join(JoinLegacy, a.ID, b)
			}
		}
		a.dev.unjoined = a.dev.unjoined[:0]
	case KindBlocking, KindPerThread:
		if id := a.dev.legacy; id != 0 {
			l := e.agents.get(id) // a legacy stream is never retired
			if ops := l.own; id != a.legacySeen || ops != a.legacySeenOps {
				a.clock.join(&l.clock)
				a.legacySeen, a.legacySeenOps = id, ops
				e.join(JoinLegacy, a.ID, l)
			}
		}
	}
	*st = Step{Agent: a.ID}
	var graphWork []graphEvent // A graph launch's external event records and waits.
	switch ev.Op {
	case model.OpStreamWait:
		e.eventWait(a, waited, st)
	case model.OpStreamMemOp:
		if ev.MemOp.IsWait() {
			e.valueWait(ev, a, st)
		}
	case model.OpGraphLaunch:
		graphWork = e.launchJoins(ev, a)
	}
	if a.own == 0 && waited != nil {
		e.inherit(a, waited)
	}
	st.Epoch = a.clock.tick(a.Slot)
	st.Epoch.Agent, a.own = a.ID, st.Epoch.Clock
	st.Clock = a.clock.view()
	switch ev.Op {
	case model.OpEventRecord:
		recordOn(e.events, ev.Event, a)
	case model.OpStreamMemOp:
		e.memOpIssued(ev, a, st)
	case model.OpGraphLaunch:
		e.launched(ev, a, graphWork)
	case model.OpHostFunc:
		if ev.Value != 0 {
			e.hostFnEnqueued(ev.Value, a)
		}
	}
}

// EpochOf is the epoch of an operation of agent a that was the clock-th
// counted on its slot, for those that keep only the two (the checker).
func (e *Engine) EpochOf(a AgentID, clock uint64) Epoch {
	return Epoch{Agent: a, Slot: e.agents.slot(a), Clock: clock}
}
