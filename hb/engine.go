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
	ID AgentID
	// Slot is the agent's index in clocks (see Epoch): a stream's own, or
	// one a destroyed stream gave back.
	Slot   AgentID
	Kind   StreamKind
	Handle uint64 // Stream handle as recorded (0 legacy, 2 per-thread).
	Device int32
	TID    uint32 // Owning host thread of a per-thread stream.
	// Implicit is set for a stream first seen in use, with no recorded create.
	Implicit bool

	clock    vclock
	hostSeen uint64 // Engine.hostVer when the agent last joined the host clock.
	// The legacy stream agent this blocking stream last joined, and how many
	// operations it had then: its clock changes only with its operations.
	legacySeen    AgentID
	legacySeenOps uint64
	// own is the count on the agent's slot after its last operation, kept
	// apart from the clock so that the check above reads no clock.
	own uint64
	// unjoined: a blocking stream listed in its device's unjoined list.
	unjoined bool
	dev      *device // The agent's device, for default-stream synchronization.
	devIndex int     // The agent's place in dev.agents.
	// barrierSeen is dev.barrierVer when the agent last joined the barrier.
	barrierSeen uint64
	destroyed   bool
	// A destroyed stream does no more work, so its dense clock is dropped
	// at once: ops keeps its operation count, and residue the entries of
	// its clock that the host clock did not reach at the destroy, all that
	// joining it can still add (see Engine.destroy). pruned is set once the
	// host is ordered after its work and its slot is handed on.
	ops     uint64
	residue []slotCount
	pruned  bool
	// base is the count on the agent's slot before its first operation:
	// what the streams that had the slot before it counted.
	base      uint64
	capturing bool
	// captureOrigin is the stream whose cudaStreamBeginCapture this stream
	// is part of: itself, or the origin of a captured event it waited on.
	captureOrigin AgentID
}

// Pruned reports whether the agent is a destroyed stream that the host is
// ordered after, its slot free for another stream.
func (a *Agent) Pruned() bool { return a.pruned }

// Ops returns how many operations were issued to the agent so far.
func (a *Agent) Ops() uint64 {
	if a.dying() {
		return a.ops
	}
	return max(a.clock.Get(a.Slot), a.base) - a.base
}

// dying reports whether a is a destroyed stream whose dense clock was
// dropped (pruned or not).
func (a *Agent) dying() bool { return a.destroyed && a.clock.isNil() }

// count returns the count on a's own slot: its last operation's epoch
// there (or what the slot counted before it, if none).
func (a *Agent) count() uint64 {
	if a.dying() {
		return a.base + a.ops
	}
	return a.clock.Get(a.Slot)
}

// slotCount is one entry of a clock kept sparse (Agent.residue).
type slotCount struct {
	slot  AgentID
	count uint64
}

// joinTo joins a's clock into *c; for a dying stream, its residue is all
// that can still change a clock that joined the host since the destroy.
func (a *Agent) joinTo(c *vclock) bool {
	if !a.dying() {
		return c.join(&a.clock)
	}
	grown := false
	for _, r := range a.residue {
		grown = c.raise(r.slot, r.count) || grown
	}
	return grown
}

// streamKey names a stream: a created stream by its handle alone, the
// legacy stream by its device, a per-thread stream by device and thread.
type streamKey struct {
	handle uint64
	device int32
	tid    uint32
}

// device is what the engine knows of one CUDA device.
type device struct {
	// legacy is the agent registered under the device's legacy-stream key,
	// or 0 (the host, never a stream) while there is none.
	legacy AgentID
	// agents lists every stream agent of the device, for device
	// synchronization.
	agents []AgentID
	// unjoined lists the blocking streams created or given work since the
	// legacy stream last looked, the only ones it may have to join: a
	// stream's own count changes only with its operations.
	unjoined []AgentID
	// barrier is what every stream of the device that synchronizes with
	// the legacy stream is ordered after from its next operation on: the
	// synchronous peer copies (Engine.peerCopy) that involved the device.
	// barrierVer counts its changes.
	barrier    vclock
	barrierVer uint64
}

type eventState struct {
	recorded bool
	// foreign is set for an event opened from another process's handle
	// (cudaIpcOpenEventHandle): it is recorded there, out of this trace's
	// sight, so a wait for it before a record here orders nothing the
	// trace can see, and is no wait for an event never recorded.
	foreign bool
	agent   AgentID // Stream of the most recent record.
	count   uint64  // The record's count on its stream's slot (Join.From).
	snap    vclock
	// captureOrigin is set when the most recent record was captured into a
	// graph: waiting on it pulls the waiting stream into that capture.
	captureOrigin AgentID
	// capture and capSnap are the capture (Step.Capture) of the most recent
	// record, if captured, and its clock there (see capture).
	capture uint64
	capSnap vclock
}

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
// wide as the streams alive at once. Wide clocks share their chunks (see
// Clock): 10,000 streams alive at once take tens of megabytes, not the
// gigabyte a vector each as wide as their number took.
type Engine struct {
	agents []*Agent
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
	// streams: a program that makes a stream per step and never waits
	// for them otherwise allocates a clock as wide as all of them each
	// step, and the garbage collector's time grew with its square.
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
	e.agents = append(e.agents, &Agent{ID: HostAgent, Kind: KindHost})
	return e
}

// hostJoin joins o into the host clock. The destroyed streams this orders
// the host after are pruned at the next event (ApplyTo).
func (e *Engine) hostJoin(o *vclock) {
	if e.host.join(o) {
		e.hostVer++
	}
}

// prune drops the clocks of destroyed streams that the host is ordered
// after. Nothing needs them then:
// their work can neither run later nor race with work issued from now on
// (which joins the host clock), the host clock holds all they knew (a
// stream's clock changes only at its own operations), and device
// synchronization has nothing left to wait for.
func (e *Engine) prune() {
	keep := e.dying[:0]
	for _, id := range e.dying {
		if a := e.agents[id]; e.host.Get(a.Slot) < a.count() {
			keep = append(keep, id)
		} else {
			e.retire(a)
		}
	}
	e.dying = keep
	e.prunedAt = e.hostVer
	e.nextPrune = e.applied + uint64(len(keep)/8)
}

// destroy drops the dense clock of a stream being destroyed, keeping only
// its residue, and lists it as dying until the host is ordered after its
// work. Without that, every destroyed stream the host never waited for kept
// a clock as wide as the streams created before it: 100,000 of them did
// not fit in memory.
func (e *Engine) destroy(a *Agent) {
	a.ops = a.Ops()
	a.clock.above(e.host, func(s AgentID, v uint64) {
		if e.passesOn(a, s) {
			a.residue = append(a.residue, slotCount{s, v})
		}
	})
	if len(e.spare) < cap(e.spare) && a.clock.ch == nil {
		e.spare = append(e.spare, vclock{v: a.clock.v[:0]})
	}
	a.clock, a.destroyed = vclock{}, true
	if e.host.Get(a.Slot) >= a.count() {
		e.retire(a)
	} else {
		e.dying = append(e.dying, a.ID)
	}
}

// passesOn reports whether the destroyed stream a must keep its clock's
// entry for slot s (one the host has not reached) in its residue. The
// residue serves the device synchronization, which joins every stream of
// a's device anyway, and, for a blocking stream, the legacy stream, which
// joins the device's blocking streams anyway: entries of those streams add
// nothing. Without this, a chain of destroyed streams of one kind on one
// device, each waiting for the one before, kept residues as long as the
// chain (a chain that alternates devices, or blocking and non-blocking
// streams, still does).
func (e *Engine) passesOn(a *Agent, s AgentID) bool {
	if s == a.Slot {
		return true
	}
	h := e.agents[e.slotHolder[s]] // The entry is h's: the host holds every count of the slot's earlier holders.
	if h.dev != a.dev {
		return true
	}
	return a.Kind == KindBlocking && h.Kind == KindNonBlocking
}

// retire hands the slot of a destroyed stream the host is ordered after to
// the next stream created.
func (e *Engine) retire(a *Agent) {
	a.pruned, a.residue = true, nil
	// Swapped out, not searched for: a device synchronization after
	// 100,000 unwaited streams retired them all, each search costing the
	// number of streams.
	ags := a.dev.agents
	last := ags[len(ags)-1]
	ags[a.devIndex] = last
	e.agents[last].devIndex = a.devIndex
	a.dev.agents = ags[:len(ags)-1]
	e.freeSlots = append(e.freeSlots, a.Slot)
}

// Devices returns how many devices the trace's streams were on so far.
func (e *Engine) Devices() int { return len(e.devices) }

// Agent returns the agent with the given id.
func (e *Engine) Agent(id AgentID) *Agent { return e.agents[id] }

// Agents returns all agents, the host first.
func (e *Engine) Agents() []*Agent { return e.agents }

// HostClock returns the host's current clock (a view).
func (e *Engine) HostClock() Clock { return e.host.view() }

func keyOf(handle uint64, device int32, tid uint32) streamKey {
	switch handle {
	case model.StreamLegacy, model.StreamLegacyAlt:
		return streamKey{model.StreamLegacy, device, 0}
	case model.StreamPerThread:
		return streamKey{model.StreamPerThread, device, tid}
	}
	return streamKey{handle: handle}
}

// device returns the state of a device, creating it on first use.
func (e *Engine) device(id int32) *device {
	if e.lastDev != nil && e.lastDevID == id {
		return e.lastDev
	}
	d := e.devices[id]
	if d == nil {
		d = &device{}
		e.devices[id] = d
	}
	e.lastDev, e.lastDevID = d, id
	return d
}

func perThreadKey(k streamKey) uint64 { return uint64(uint32(k.device))<<32 | uint64(k.tid) }

// recentSlot returns the lookup cache slot of a created stream's handle.
func recentSlot(handle uint64) int { return int((handle * 0x9e3779b97f4a7c15) >> 60) }

// lookup returns the agent registered under k, or 0 if none is.
func (e *Engine) lookup(k streamKey) AgentID {
	switch k.handle {
	case model.StreamLegacy:
		return e.device(k.device).legacy
	case model.StreamPerThread:
		return e.perThread[perThreadKey(k)]
	}
	r := &e.recent[recentSlot(k.handle)]
	if r.handle != k.handle || r.id == 0 {
		r.handle, r.id = k.handle, e.created[k.handle]
	}
	return r.id
}

// register makes id the agent of k; id 0 unregisters k.
func (e *Engine) register(k streamKey, id AgentID) {
	switch k.handle {
	case model.StreamLegacy:
		e.device(k.device).legacy = id
	case model.StreamPerThread:
		if id == 0 {
			delete(e.perThread, perThreadKey(k))
		} else {
			e.perThread[perThreadKey(k)] = id
		}
	default:
		if id == 0 {
			delete(e.created, k.handle)
		} else {
			e.created[k.handle] = id
		}
		if r := &e.recent[recentSlot(k.handle)]; r.handle == k.handle {
			r.id = id
		}
	}
}

func (e *Engine) newAgent(k streamKey, kind StreamKind, device int32, tid uint32, implicit bool) *Agent {
	a := &Agent{ID: AgentID(len(e.agents)), Kind: kind, Handle: k.handle, Device: device, TID: tid, Implicit: implicit}
	// A reused slot's count goes on past the old stream's: its first
	// operation joins the host clock, which holds that count.
	if n := len(e.freeSlots); n > 0 {
		a.Slot, e.freeSlots = e.freeSlots[n-1], e.freeSlots[:n-1]
		a.base = e.host.Get(a.Slot)
	} else {
		a.Slot = e.nslots
		e.nslots++
		e.slotHolder = append(e.slotHolder, 0)
	}
	e.slotHolder[a.Slot] = a.ID
	if n := len(e.spare); n > 0 {
		a.clock, e.spare = e.spare[n-1], e.spare[:n-1]
	}
	a.clock.lin = uint32(a.ID) + 1 // a's clock only grows
	a.dev = e.device(device)
	e.agents = append(e.agents, a)
	e.register(k, a.ID)
	a.devIndex = len(a.dev.agents)
	a.dev.agents = append(a.dev.agents, a.ID)
	a.markUnjoined() // a reused slot's count may already be ahead of the legacy stream's view
	return a
}

// markUnjoined lists a blocking stream for the legacy stream's next look.
func (a *Agent) markUnjoined() {
	if (a.Kind == KindBlocking || a.Kind == KindPerThread) && !a.unjoined {
		a.unjoined = true
		a.dev.unjoined = append(a.dev.unjoined, a.ID)
	}
}

// Known returns the agent a stream handle names now, without creating one
// as Stream does, and whether there is one.
func (e *Engine) Known(handle uint64, device int32, tid uint32) (*Agent, bool) {
	if id := e.lookup(keyOf(handle, device, tid)); id != 0 {
		return e.agents[id], true
	}
	return nil, false
}

// Stream returns the agent a stream handle names for an event's device and
// host thread, creating default streams and never-created streams (as
// blocking, like cudaStreamCreate's default) on first use.
func (e *Engine) Stream(handle uint64, device int32, tid uint32) *Agent {
	k := keyOf(handle, device, tid)
	if id := e.lookup(k); id != 0 {
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
	var st Step
	e.ApplyTo(ev, &st)
	return st
}

// advance names the function that applies an event of an op not issued
// to a stream, each in the file of its family: streams and events
// (streams.go), synchronization (syncs.go), allocations and mappings
// (allocs.go), synchronous copies and sets (copies.go), graphs
// (graphs.go).
type advance uint8

const (
	advNothing advance = iota // A host call that orders nothing.
	advStreamCreate
	advStreamDestroy
	advEventCreate
	advEventDestroy
	advIpcEventOpen
	advStreamSync
	advEventSync
	advDeviceSync
	advAlloc
	advCopy
	advGraphChange
	advGraphClone
	advGraphEventNode
)

// advances is the dispatch table of the ops not issued to a stream: the
// advance function of each op, indexed by the op's byte (no bounds
// check); an op it does not list orders nothing. It names the functions
// rather than holding them because the compiler cannot tell what an
// indirect call keeps: calling through a function value made every
// caller's event and Step escape to the heap, an allocation per Apply.
// The switch on an entry (Engine.advance) compiles to a jump table.
var advances = [256]advance{
	model.OpStreamCreate:  advStreamCreate,
	model.OpStreamDestroy: advStreamDestroy,
	model.OpEventCreate:   advEventCreate,
	model.OpEventDestroy:  advEventDestroy,
	model.OpIpcEventOpen:  advIpcEventOpen,

	model.OpStreamSync:  advStreamSync,
	model.OpStreamQuery: advStreamSync,
	model.OpEventSync:   advEventSync,
	model.OpEventQuery:  advEventSync,
	model.OpDeviceSync:  advDeviceSync,

	model.OpMalloc:      advAlloc,
	model.OpFree:        advAlloc,
	model.OpPoolCreate:  advAlloc,
	model.OpPtrImport:   advAlloc,
	model.OpIpcMemOpen:  advAlloc,
	model.OpIpcMemClose: advAlloc,
	model.OpVmmMap:      advAlloc,
	model.OpVmmUnmap:    advAlloc,

	model.OpMemcpy: advCopy,
	model.OpMemset: advCopy,

	model.OpGraphInstantiate:     advGraphChange,
	model.OpGraphForget:          advGraphChange,
	model.OpGraphClone:           advGraphClone,
	model.OpGraphEventRecordNode: advGraphEventNode,
	model.OpGraphEventWaitNode:   advGraphEventNode,
}

// advance applies an event of an op not issued to a stream by its entry
// in advances.
func (e *Engine) advance(ev *model.Event, st *Step) {
	switch advances[ev.Op] {
	case advStreamCreate:
		e.advanceStreamCreate(ev, st)
	case advStreamDestroy:
		e.advanceStreamDestroy(ev, st)
	case advEventCreate:
		e.advanceEventCreate(ev, st)
	case advEventDestroy:
		e.advanceEventDestroy(ev, st)
	case advIpcEventOpen:
		e.advanceIpcEventOpen(ev, st)
	case advStreamSync:
		e.advanceStreamSync(ev, st)
	case advEventSync:
		e.advanceEventSync(ev, st)
	case advDeviceSync:
		e.advanceDeviceSync(ev, st)
	case advAlloc:
		e.advanceAlloc(ev, st)
	case advCopy:
		e.advanceCopy(ev, st)
	case advGraphChange:
		e.advanceGraphChange(ev, st)
	case advGraphClone:
		e.advanceGraphClone(ev, st)
	case advGraphEventNode:
		e.advanceGraphEventNode(ev, st)
	default:
		e.advanceNothing(ev, st)
	}
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
	case ev.Op.OnStream(): // Most events: tested first, none of the ops in advances.
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
		// can have work the legacy stream has not joined: scanning every
		// blocking stream made each legacy operation cost the number of
		// streams.
		for _, id := range a.dev.unjoined {
			b := e.agents[id]
			b.unjoined = false
			// A destroyed blocking stream's unfinished work is waited for
			// too (measured on CUDA 13.0: testdata/cuda/
			// legacy_after_destroy_ok); a pruned one's is behind the host.
			// Joined already if the legacy stream knows b's own count (see
			// OpDeviceSync): rejoining every blocking stream each time cost
			// the cube of the stream count.
			if !b.pruned && a.clock.Get(b.Slot) < b.count() {
				b.joinTo(&a.clock)
				e.join(JoinLegacy, a.ID, b)
			}
		}
		a.dev.unjoined = a.dev.unjoined[:0]
	case KindBlocking, KindPerThread:
		if id := a.dev.legacy; id != 0 {
			l := e.agents[id]
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
	}
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
		b := e.agents[id]
		b.capturing, b.captureOrigin = false, 0
	}
	delete(e.captures, origin)
	return cp.id
}

// EpochOf is the epoch of an operation of agent a that was the clock-th
// counted on its slot, for those that keep only the two (the checker).
func (e *Engine) EpochOf(a AgentID, clock uint64) Epoch {
	return Epoch{Agent: a, Slot: e.agents[a].Slot, Clock: clock}
}
