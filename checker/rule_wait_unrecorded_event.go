package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleWaitUnrecordedEvent is the id of the rule this file defines.
const RuleWaitUnrecordedEvent RuleID = "wait-unrecorded-event"

// waitUnrecordedEventRule: wait-unrecorded-event. The engine finds such
// waits (hb.Step.UnrecordedWait); reportUnrecordedWait below reports them,
// naming the event record node noteRecordNode kept, if any.
var waitUnrecordedEventRule = &ruleDef{
	rank:     100,
	endRank:  90, // after the error findings it looks for
	state:    func(c *Checker) any { return &heldWaits{c: c} },
	id:       RuleWaitUnrecordedEvent,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "a wait on an event that was never recorded orders nothing, and a race follows it",
		Text: "a wait on an event that was never recorded orders nothing; reported when an error finding follows the wait on its stream (or, for `cudaEventSynchronize`, on the host), " +
			"not for an event shared with another process that some process of the tree records or whose other processes were not analyzed",
		Why: "A wait on an event with no cudaEventRecord before it returns at once: " +
			"the work after it is not ordered after anything, which the program probably meant it to be. " +
			"CUDA defines such a wait as a no-op, and correct programs rely on it: a pipeline's first pass waits on the slot-free events that later passes record (cuBLAS-XT), " +
			"and NVIDIA's simpleIPC waits on events other processes record. So the wait is reported only where the trace shows it mattered, " +
			"an error finding after it on the same stream (the host for cudaEventSynchronize), which it probably explains; an event shared through cudaIpcGetEventHandle/cudaIpcOpenEventHandle counts as recorded when any process of the tree records it, " +
			"and is not reported when no other process that shares it was analyzed (the trace cannot know). The price: a forgotten record that happens to cause no race in the recorded run is not reported.",
		Fix: "Record the event (cudaEventRecord) on the producing stream before the wait.",
		Ops: []model.Op{model.OpStreamWait, model.OpEventSync},
	},
	role:  "wait",
	other: "event record node",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s waits on an event that was never recorded", what(op))
		f.Why = "A wait on an event with no cudaEventRecord before it returns at once and orders nothing."
		f.Fix = fmt.Sprintf("Record the event with cudaEventRecord on the producing stream before the wait at %s.", op.Site())
		if other != nil { // only a graph's event record node records it
			f.Why = fmt.Sprintf("The event is recorded only by a graph's event record node (%s), and no launch recorded it before the wait: an executable graph instantiated before that call does not have it (cudaGraphInstantiate copies the graph), so its launches never record the event, and the wait orders nothing.", other.Where())
			f.Fix = fmt.Sprintf("Make the event record node before cudaGraphInstantiate, or instantiate again (or cudaGraphExecUpdate) after %s, so that the launch before the wait at %s records the event.", other.Site(), op.Site())
		}
	},
}

var _ = register(waitUnrecordedEventRule)

// heldWaits are the waits on events with no record before them
// (hb.Step.UnrecordedWait), folded by site, stream and event, kept until
// the end of the trace: whether one is reported depends on what follows it
// (reportUnrecordedWaits).
type heldWaits struct {
	c     *Checker
	waits []heldWait
	index map[heldWaitKey]int
}

type heldWait struct {
	op     access
	n      int    // Occurrences.
	ipcKey uint64 // The key of an event shared with other processes (ipc.go).
	shared bool
}

type heldWaitKey struct {
	site  siteKey
	agent hb.AgentID
	event uint64
}

// onSync applies a wait on an event with no record before it. One
// that only a graph's event record node records (in executable graphs made
// after it) is a bug whatever follows, reported at once, naming the node;
// the others are held (heldWaits).
func (h *heldWaits) onSync(ev *model.Event, st *hb.Step) {
	if !st.UnrecordedWait {
		return
	}
	c := h.c
	op := c.accessOf(ev, st, 0)
	if n, ok := c.recordNodes[ev.Event]; ok {
		c.report(waitUnrecordedEventRule, nil, op, &n)
		return
	}
	k := heldWaitKey{site: c.siteOf(&op), agent: st.Agent, event: ev.Event}
	if i, ok := h.index[k]; ok {
		h.waits[i].n++
		return
	}
	if h.index == nil {
		h.index = map[heldWaitKey]int{}
	}
	key, shared := c.ipc.events[ev.Event]
	h.index[k] = len(h.waits)
	h.waits = append(h.waits, heldWait{op: op, n: 1, ipcKey: key, shared: shared})
}

// atEnd reports, at the end of the trace, each held wait
// that an error finding follows on its stream (on the host, for an event
// synchronization): the race the wait probably meant to prevent. A wait
// on an event shared with other processes keeps its key, for LinkImports
// to decide across the process tree.
func (h *heldWaits) atEnd(bool) {
	c := h.c
	for i := range h.waits {
		w := &h.waits[i]
		if !c.errorAfter(&w.op) {
			continue
		}
		p := c.report(waitUnrecordedEventRule, nil, w.op, nil)
		p.f.Count += w.n - 1
		if w.shared {
			p.f.ipcEvent, p.f.sharedEvent = w.ipcKey, true
		}
	}
}

// errorAfter reports whether an error finding's operation follows op on
// op's agent.
func (c *Checker) errorAfter(op *access) bool {
	for i := range c.pending {
		p := &c.pending[i]
		if p.rule.severity == SeverityError && p.op.agent == op.agent && p.op.seq > op.seq {
			return true
		}
	}
	return false
}

// noteRecordNode keeps an event record node added to a graph (not an
// executable graph), for a report of a wait on its event.
func (c *Checker) noteRecordNode(ev *model.Event, st *hb.Step) {
	if ev.Exec != 0 {
		return // an executable graph's: its launches do record the event
	}
	if c.recordNodes == nil {
		c.recordNodes = map[uint64]access{}
	}
	c.recordNodes[ev.Event] = c.accessOf(ev, st, 0)
}
