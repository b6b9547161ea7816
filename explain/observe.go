package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Recorder follows the checker's one pass over a trace (its Observe is a
// checker.Options.Observe) and keeps what the graphs of the findings need;
// Graphs draws them once the pass is over. The findings are known only at
// the end, and may name any call made since the start of the trace, so the
// Recorder keeps a few words of every call (trailEntry: its epoch and a
// clock shared with the calls before it on its stream while no other
// stream joined that one), and a whole copy of each synchronization, event
// record, stream memory operation and captured call.
type Recorder struct {
	chk        *checker.Checker
	tables     *model.Tables
	lastRecord map[uint64]*recorded // Most recent record of each event handle.
	hostFns    map[uint64]*recorded // Enqueued host functions by token, until their run.
	// captured lists each event handle's captured records, in trace order: a
	// wait in the same capture joined the latest of them that is not a
	// finding's own operation (see capturedWait).
	captured   map[uint64][]*recorded
	eventNames map[uint64]string // Display names of events, "e1", "e2"... unless the trace names them.

	full  map[uint64]*recorded // Calls kept whole, by seq.
	trail []trailEntry         // The other calls, by seq.
	cands []candidate          // The synchronization operations that may be context, in trace order.
	// snaps are the clocks the trail shares: snapOf[agent] is the index of
	// the agent's latest, or -1.
	snaps  []hb.Clock
	snapOf []int32
	// hostPrev is the host's clock after the previous call: a synchronous
	// copy or set shows the streams the host waited for by what it learned.
	hostPrev []uint64
}

// trailEntry is what a call that is not kept whole says when it is a
// finding's own operation: an allocation, a free or a use.
type trailEntry struct {
	seq      uint64
	epoch    hb.Epoch
	agent    hb.AgentID
	snap     int32 // Its clock: snaps[snap], with its own epoch's entry when hasOwn.
	flags    uint32
	op       model.Op
	kind     model.MemcpyKind
	skipped  bool
	captured bool
	hasOwn   bool
}

// candidate is a call that may be shown around a finding: a
// synchronization (s says what it synchronizes with), or a captured event
// record or wait.
type candidate struct {
	r       *recorded
	s       syncs
	nAgents int // The engine's agents at the call: streams made later are not joined.
	// capture: a captured record or wait; prior is, for a wait, how many
	// of its event's captured records came before it.
	capture bool
	prior   int
}

// NewRecorder returns a Recorder for a trace whose definitions are in
// tables (the reader's, which may still grow).
func NewRecorder(tables *model.Tables) *Recorder {
	return &Recorder{
		tables:     tables,
		lastRecord: map[uint64]*recorded{},
		hostFns:    map[uint64]*recorded{},
		captured:   map[uint64][]*recorded{},
		eventNames: map[uint64]string{},
		full:       map[uint64]*recorded{},
	}
}

// Observe keeps what one call, as the checker c applied it (st), may add
// to an explanation; it is a checker.Options.Observe.
func (rc *Recorder) Observe(c *checker.Checker, ev *model.Event, st *hb.Step) {
	rc.chk = c
	if ev.Op.NamesEvent() {
		rc.nameEvent(ev.Event)
	}
	rc.observe(ev, st)
	rc.noteHost()
}

func (rc *Recorder) observe(ev *model.Event, st *hb.Step) {
	if st.Local.Clock != 0 {
		rc.observeCaptured(ev, st)
		return
	}
	var target hb.AgentID
	var record *recorded
	switch ev.Op {
	case model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		record = rc.lastRecord[ev.Event] // A wait joins the previous record.
		if record != nil {
			target = record.step.agent
		}
	case model.OpHostFnRun:
		// The run joins its enqueue, as a wait joins a record.
		if record = rc.hostFns[ev.Value]; record != nil {
			target = record.step.agent
			delete(rc.hostFns, ev.Value)
		}
	}
	var keep *recorded
	get := func() *recorded {
		if keep == nil {
			keep = &recorded{ev: *ev, step: copyStep(st), target: target, record: record}
			keep.ev.Ptrs = nil // a synchronization names no pointers
			keep.step.clock = rc.clockOf(st)
			rc.full[ev.Seq] = keep
		}
		return keep
	}
	if record != nil || target != 0 || wholeOp(ev.Op) {
		get()
	}
	if !st.Skipped { // A failed or captured call ordered nothing.
		switch {
		case ev.Op == model.OpEventRecord:
			rc.lastRecord[ev.Event] = get()
		case ev.Op == model.OpEventCreate || ev.Op == model.OpEventDestroy:
			delete(rc.lastRecord, ev.Event) // The engine forgets the event's records too.
		case ev.Op == model.OpHostFunc && ev.Value != 0:
			rc.hostFns[ev.Value] = get()
		}
		if s := rc.sync(ev, st, target, record); len(s.touched) != 0 || s.device || s.legacy {
			rc.cands = append(rc.cands, candidate{r: get(), s: s, nAgents: rc.chk.Engine().NumAgents()})
		}
	}
	if keep == nil {
		rc.addTrail(ev, st)
	}
}

// wholeOp reports whether a call of op is kept whole: what its vertex says
// takes more of the call than its op, copy kind and flags.
func wholeOp(op model.Op) bool {
	switch op {
	case model.OpEventRecord, model.OpStreamWait, model.OpEventSync, model.OpEventQuery, model.OpStreamSync,
		model.OpStreamQuery, model.OpHostFnRun, model.OpHostFunc, model.OpDeviceSync, model.OpStreamMemOp:
		return true
	}
	return false
}

// observeCaptured keeps a captured stream operation: its event records and
// waits order the capture's work (the graph's edges), as the capture's own
// clocks say.
func (rc *Recorder) observeCaptured(ev *model.Event, st *hb.Step) {
	r := &recorded{ev: ev.Clone(), step: copyStep(st)}
	rc.full[ev.Seq] = r
	switch ev.Op {
	case model.OpEventRecord:
		rc.cands = append(rc.cands, candidate{r: r, capture: true})
		rc.captured[ev.Event] = append(rc.captured[ev.Event], r)
	case model.OpStreamWait:
		rc.cands = append(rc.cands, candidate{r: r, capture: true, prior: len(rc.captured[ev.Event])})
	}
}

// addTrail keeps the few words of a call that is not kept whole, its clock
// shared with the agent's previous call's when only its own entry differs.
func (rc *Recorder) addTrail(ev *model.Event, st *hb.Step) {
	e := trailEntry{seq: ev.Seq, epoch: st.Epoch, agent: st.Agent, flags: ev.Flags, op: ev.Op, kind: ev.Kind, skipped: st.Skipped, captured: st.Captured}
	e.snap, e.hasOwn = rc.snapshot(st)
	rc.trail = append(rc.trail, e)
}

// snapshot returns the index of the kept clock that st's clock is, but
// for st's own epoch's entry when hasOwn: the agent's latest, or a copy.
func (rc *Recorder) snapshot(st *hb.Step) (i int32, hasOwn bool) {
	for int(st.Agent) >= len(rc.snapOf) {
		rc.snapOf = append(rc.snapOf, -1)
	}
	if i := rc.snapOf[st.Agent]; i >= 0 && sameClock(st.Clock, rc.snaps[i], st.Epoch) {
		return i, st.Epoch.Clock != 0
	}
	i = int32(len(rc.snaps))
	rc.snaps = append(rc.snaps, st.Clock.Clone())
	rc.snapOf[st.Agent] = i
	return i, false
}

// clockOf returns st's clock as kept: shared with the calls before it on
// its agent while they differ only in its own entry.
func (rc *Recorder) clockOf(st *hb.Step) clockView {
	i, hasOwn := rc.snapshot(st)
	c := clockView{base: rc.snaps[i]}
	if hasOwn {
		c.slot, c.own, c.hasOwn = st.Epoch.Slot, st.Epoch.Clock, true
	}
	return c
}

// sameClock reports whether c is snap but for the entry of its own epoch e
// (if it has one), which is e's count.
func sameClock(c, snap hb.Clock, e hb.Epoch) bool {
	n := max(c.Len(), snap.Len())
	for s := hb.AgentID(0); int(s) < n; s++ {
		if e.Clock != 0 && s == e.Slot {
			if c.Get(s) != e.Clock {
				return false
			}
		} else if c.Get(s) != snap.Get(s) {
			return false
		}
	}
	return true
}

// noteHost keeps the host's clock as the call left it.
func (rc *Recorder) noteHost() {
	h := rc.chk.Engine().HostClock()
	rc.hostPrev = rc.hostPrev[:0]
	for s := hb.AgentID(0); int(s) < h.Len(); s++ {
		rc.hostPrev = append(rc.hostPrev, h.Get(s))
	}
}

// hostBefore returns entry s of the host's clock before the current call.
func (rc *Recorder) hostBefore(s hb.AgentID) uint64 {
	if int(s) < len(rc.hostPrev) {
		return rc.hostPrev[s]
	}
	return 0
}

// call returns what was kept of the call at seq, or nil.
func (rc *Recorder) call(seq uint64) *recorded {
	if r := rc.full[seq]; r != nil {
		return r
	}
	i, ok := slices.BinarySearchFunc(rc.trail, seq, func(e trailEntry, seq uint64) int {
		switch {
		case e.seq < seq:
			return -1
		case e.seq > seq:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	e := &rc.trail[i]
	clock := clockView{base: rc.snaps[e.snap]}
	if e.hasOwn {
		clock.slot, clock.own, clock.hasOwn = e.epoch.Slot, e.epoch.Clock, true
	}
	return &recorded{
		ev:   model.Event{Seq: e.seq, Op: e.op, Kind: e.kind, Flags: e.flags},
		step: stepCopy{agent: e.agent, epoch: e.epoch, clock: clock, skipped: e.skipped, captured: e.captured},
	}
}
