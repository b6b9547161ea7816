package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// stepCopy keeps what the engine learned from an event past the next one.
type stepCopy struct {
	agent   hb.AgentID
	epoch   hb.Epoch
	clock   clockView
	skipped bool
	// captured: a call captured into a graph, which runs at the graph's
	// launches (skipped is set too: when issued it ordered nothing).
	// capture, local and localClock place a captured stream operation
	// among its capture's work (hb.Step).
	captured   bool
	capture    uint64
	local      hb.Epoch
	localClock hb.Clock
	memWait    hb.MemWait // A wait for a value: whether the engine followed it.
}

func copyStep(st *hb.Step) stepCopy {
	s := stepCopy{agent: st.Agent, epoch: st.Epoch, clock: clockView{base: st.Clock.Clone()}, skipped: st.Skipped, captured: st.Captured, memWait: st.MemWait}
	if st.Local.Clock != 0 {
		s.capture, s.local, s.localClock = st.Capture, st.Local, st.LocalClock.Clone()
	}
	return s
}

// known reports whether the step orders its call among others: it took
// effect, or it was captured and is ordered among its capture's work.
func (s *stepCopy) known() bool { return !s.skipped || s.capture != 0 }

// hbStep returns the step as the checker's Describe takes it (its clock
// left out: an operation's description does not depend on it).
func (s *stepCopy) hbStep() *hb.Step {
	return &hb.Step{Agent: s.agent, Epoch: s.epoch, Skipped: s.skipped, Captured: s.captured,
		Capture: s.capture, Local: s.local, LocalClock: s.localClock}
}

// clockView is a kept clock: base, but for entry slot, which is own when
// hasOwn is set (a call's clock that differs from the one kept before it
// on its stream only by its own count).
type clockView struct {
	base   hb.Clock
	slot   hb.AgentID
	own    uint64
	hasOwn bool
}

func (c clockView) get(s hb.AgentID) uint64 {
	if c.hasOwn && s == c.slot {
		return c.own
	}
	return c.base.Get(s)
}

func (c clockView) len() int {
	if c.hasOwn {
		return max(c.base.Len(), int(c.slot)+1)
	}
	return c.base.Len()
}

// Covers reports whether the point with clock c is ordered after epoch e
// (hb.Clock.Covers).
func (c clockView) Covers(e hb.Epoch) bool {
	return e.Clock == 0 || c.get(e.Slot) >= e.Clock
}

// CoversAll reports whether c covers every entry of o (hb.Clock.CoversAll).
func (c clockView) CoversAll(o clockView) bool {
	for s := hb.AgentID(0); int(s) < o.len(); s++ {
		if c.get(s) < o.get(s) {
			return false
		}
	}
	return true
}

// recorded is one call kept for a graph.
type recorded struct {
	ev   model.Event
	step stepCopy
	// target is the stream a host synchronization waited for: the synced
	// stream, or the stream of the event record it joined.
	target hb.AgentID
	// record is the event record a wait, event synchronize or successful
	// event query joined.
	record *recorded
	join   bool // An operation on the legacy stream, shown for its implicit joins.
}

// window keeps the first and the last candidates of a finding's seq range,
// so that memory does not grow with the length of the trace.
type window struct {
	headCap, tailCap int
	head, tail       []*recorded // tail is a ring once full.
	start            int
	dropped          int
	firstDrop        uint64 // Seq of the earliest left-out candidate.
	lastDrop         uint64
}

func (w *window) add(r *recorded) {
	if len(w.head) < w.headCap {
		w.head = append(w.head, r)
		return
	}
	if w.tailCap == 0 {
		w.drop(r)
		return
	}
	if len(w.tail) < w.tailCap {
		w.tail = append(w.tail, r)
		return
	}
	w.drop(w.tail[w.start])
	w.tail[w.start] = r
	w.start = (w.start + 1) % w.tailCap
}

func (w *window) drop(r *recorded) {
	if w.dropped == 0 || r.ev.Seq < w.firstDrop {
		w.firstDrop = r.ev.Seq
	}
	w.lastDrop = max(w.lastDrop, r.ev.Seq)
	w.dropped++
}

// items returns the kept candidates in trace order, and how many were left
// out and between which seqs. When some were left out, one more is, to
// make room for the note vertex within the budget.
func (w *window) items() (kept []*recorded, dropped int, first, last uint64) {
	kept = slices.Clone(w.head)
	kept = append(kept, w.tail[w.start:]...)
	kept = append(kept, w.tail[:w.start]...)
	dropped, first, last = w.dropped, w.firstDrop, w.lastDrop
	if dropped > 0 && len(kept) > 0 {
		i := min(len(w.head), len(kept)-1) // The oldest of the tail, next to the gap.
		s := kept[i].ev.Seq
		first, last = min(first, s), max(last, s)
		dropped++
		kept = slices.Delete(kept, i, i+1)
	}
	return kept, dropped, first, last
}

// collector gathers the context of one finding from the kept calls.
type collector struct {
	f        *checker.Finding
	involved []hb.AgentID // The finding's streams.
	lo, hi   uint64       // The finding's seq range.
	fixed    []uint64     // Seqs of the finding's own operations.
	win      window
}

func newCollector(f *checker.Finding, maxVertices int) *collector {
	c := &collector{f: f, lo: ^uint64(0)}
	add := func(o *checker.Op) {
		if !slices.Contains(c.fixed, o.Seq) {
			c.fixed = append(c.fixed, o.Seq)
		}
		c.lo, c.hi = min(c.lo, o.Seq), max(c.hi, o.Seq)
		if o.Agent != hb.HostAgent && !slices.Contains(c.involved, o.Agent) {
			c.involved = append(c.involved, o.Agent)
		}
	}
	if f.Alloc != nil {
		add(&f.Alloc.Op)
	}
	for i := range f.Ops {
		add(&f.Ops[i])
	}
	budget := max(maxVertices-len(c.fixed), 0)
	c.win.headCap = budget / 2
	c.win.tailCap = budget - c.win.headCap
	return c
}

func (c *collector) involves(a hb.AgentID) bool { return slices.Contains(c.involved, a) }
