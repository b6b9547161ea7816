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
		if a := e.agents.get(id); a == nil || a.pruned { // its slot inherited
			continue
		} else if e.host.Get(a.Slot) < a.count() {
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
	if n := len(e.agents.residues); n > 0 {
		a.residue, e.agents.residues = e.agents.residues[n-1], e.agents.residues[:n-1]
	}
	a.clock.above(e.host, func(s AgentID, v uint64) {
		if e.passesOn(a, s) {
			a.residue = append(a.residue, slotCount{s, v})
		}
	})
	if len(e.spare) < cap(e.spare) && a.clock.depth == 0 {
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
	h := e.agents.at(e.slotHolder[s]) // The entry is h's: the host holds every count of the slot's earlier holders.
	if h.Device != a.Device {         // h may be retired, without its device state
		return true
	}
	return a.Kind == KindBlocking && h.Kind == KindNonBlocking
}

// inherit gives stream a, before its first operation, the slot of the
// destroyed stream whose event its first operation waited for, if a's
// clock now covers all of that stream's work: a's operations count on from
// there, so a clock that learns one of them covers the destroyed stream's
// work too, which is true (a was ordered after it), and the slot is not
// held apart for it until the host is: a program that hands work from
// stream to stream, each destroyed after handing off and none waited for
// by the host, keeps clocks as wide as the streams alive, not as all the
// streams it ever made (bench/notes.md). The destroyed stream is then done with: a device synchronization, or
// (when a is blocking if it was) the legacy stream, joins a, which knows
// all it knew.
func (e *Engine) inherit(a *Agent, waited *eventState) {
	if !waited.recorded || waited.captureOrigin != 0 || (a.Kind != KindBlocking && a.Kind != KindNonBlocking) {
		return
	}
	d := e.agents.at(waited.agent)
	if !d.destroyed || d.pruned || d.dev != a.dev || (d.Kind != a.Kind && d.Kind != KindNonBlocking) ||
		a.clock.Get(d.Slot) < d.count() {
		return
	}
	e.freeSlots = append(e.freeSlots, a.Slot) // never counted on by a
	a.Slot, a.base = d.Slot, d.count()
	e.slotHolder[a.Slot] = a.ID
	e.forget(d) // its slot not freed
	if n := len(e.dying); n > 0 && e.dying[n-1] == d.ID {
		e.dying = e.dying[:n-1] // nearly always the last destroyed; prune drops others
	}
}

// retire hands the slot of a destroyed stream the host is ordered after to
// the next stream created.
func (e *Engine) retire(a *Agent) {
	e.forget(a)
	e.freeSlots = append(e.freeSlots, a.Slot)
}

// forget marks a destroyed stream as pruned, nothing left to wait for,
// and drops it from its device.
func (e *Engine) forget(a *Agent) {
	if cap(a.residue) > 0 && len(e.agents.residues) < 64 {
		e.agents.residues = append(e.agents.residues, a.residue[:0])
	}
	a.pruned, a.residue = true, nil
	// Swapped out, not searched for: a device synchronization after
	// 100,000 unwaited streams retired them all, each search costing the
	// number of streams.
	ags := a.dev.agents
	last := ags[len(ags)-1]
	ags[a.devIndex] = last
	e.agents.at(last).devIndex = a.devIndex
	a.dev.agents = ags[:len(ags)-1]
	e.agents.retire(a)
}

// Agent returns the agent with the given id. A retired stream (destroyed,
// its work behind the host: Pruned) is rebuilt from what it keeps, its
// public fields, Ops and Pruned.
func (e *Engine) Agent(id AgentID) *Agent { return e.agents.at(id) }

// Agents returns all agents, the host first: a retired stream's rebuilt
// (see Agent), so each call costs the number of streams ever made.
func (e *Engine) Agents() []*Agent {
	all := make([]*Agent, e.agents.n)
	for i := range all {
		all[i] = e.agents.at(AgentID(i))
	}
	return all
}

// NumAgents returns the number of agents, the host's included: ids run
// from 0 to it.
func (e *Engine) NumAgents() int { return e.agents.n }

// Kind returns the kind of agent id, without rebuilding a retired one.
func (e *Engine) Kind(id AgentID) StreamKind { return e.agents.kind(id) }

func keyOf(handle uint64, device int32, tid uint32) streamKey {
	switch handle {
	case model.StreamLegacy, model.StreamLegacyAlt:
		return streamKey{model.StreamLegacy, device, 0}
	case model.StreamPerThread:
		return streamKey{model.StreamPerThread, device, tid}
	}
	return streamKey{handle: handle}
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
	a := &Agent{ID: AgentID(e.agents.n), Kind: kind, Handle: k.handle, Device: device, TID: tid, Implicit: implicit}
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
	e.agents.add(a)
	e.register(k, a.ID)
	a.devIndex = len(a.dev.agents)
	a.dev.agents = append(a.dev.agents, a.ID)
	a.markUnjoined() // a reused slot's count may already be ahead of the legacy stream's view
	return a
}

// Known returns the agent a stream handle names now, without creating one
// as Stream does, and whether there is one.
func (e *Engine) Known(handle uint64, device int32, tid uint32) (*Agent, bool) {
	if id := e.lookup(keyOf(handle, device, tid)); id != 0 {
		return e.agents.at(id), true
	}
	return nil, false
}

// Stream returns the agent a stream handle names for an event's device and
// host thread, creating default streams and never-created streams (as
// blocking, like cudaStreamCreate's default) on first use.
func (e *Engine) Stream(handle uint64, device int32, tid uint32) *Agent {
	k := keyOf(handle, device, tid)
	if id := e.lookup(k); id != 0 {
		return e.agents.get(id) // registered: live
	}
	switch k.handle {
	case model.StreamLegacy:
		return e.newAgent(k, KindLegacy, device, 0, false)
	case model.StreamPerThread:
		return e.newAgent(k, KindPerThread, device, tid, false)
	}
	return e.newAgent(k, KindBlocking, device, 0, true)
}
