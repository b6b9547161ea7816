package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// memNote says why a stream-memory-op finding's ordering is not followed.
type memNote uint8

const (
	memNoteNone      memNote = iota
	memNoteUnknownOp         // A trace that does not say what the operation did.
	memNoteNoWrite           // A wait no recorded write before it can meet.
	memNoteNoBarrier         // A wait met by a write without a memory barrier.
	memNoteUnknown           // A wait whose condition or older writes are unknown.
	memNoteCaptured          // A wait captured into a graph.
	memNoteUnread            // A write no recorded wait reads.
)

// memOps is what the checker keeps of stream memory operations.
type memOps struct {
	// waited holds the addresses some recorded wait read.
	waited map[uint64]bool
	// unread holds, by address, the first write to an address no recorded
	// wait read (yet): reported at the end if none does.
	unread map[uint64]access
	order  []uint64 // unread's addresses, in the order of their writes.
}

// streamMemOp checks a stream memory operation that ran (not captured):
// it uses the memory it waits on or writes, and a wait whose ordering the
// engine did not follow is reported.
func (c *Checker) streamMemOp(ev *model.Event, st *hb.Step) {
	eachUse(ev, func(p uint64) { c.use(ev, st, p) })
	m := &c.memOps
	switch {
	case ev.MemOp == model.MemOpUnknown:
		c.reportMemOp(memNoteUnknownOp, c.accessOf(ev, st, ev.Ptr))
	case ev.MemOp.IsWait():
		if m.waited == nil {
			m.waited = map[uint64]bool{}
		}
		m.waited[ev.Ptr] = true
		delete(m.unread, ev.Ptr)
		switch st.MemWait {
		case hb.MemWaitNoWrite:
			c.reportMemOp(memNoteNoWrite, c.accessOf(ev, st, ev.Ptr))
		case hb.MemWaitNoBarrier:
			c.reportMemOp(memNoteNoBarrier, c.accessOf(ev, st, ev.Ptr))
		case hb.MemWaitUnknown:
			c.reportMemOp(memNoteUnknown, c.accessOf(ev, st, ev.Ptr))
		}
	case ev.MemOp.IsWrite():
		if _, ok := m.unread[ev.Ptr]; ok || m.waited[ev.Ptr] {
			return
		}
		if m.unread == nil {
			m.unread = map[uint64]access{}
		}
		m.unread[ev.Ptr] = c.accessOf(ev, st, ev.Ptr)
		m.order = append(m.order, ev.Ptr)
	}
	// A flush or a memory barrier orders nothing between streams.
}

// capturedMemOp reports a stream memory operation captured into a graph
// that waits (or may): the graph's orderings through memory are not
// followed.
func (c *Checker) capturedMemOp(ev *model.Event, st *hb.Step) {
	if ev.MemOp.IsWait() || ev.MemOp == model.MemOpUnknown {
		c.reportMemOp(memNoteCaptured, c.accessOf(ev, st, ev.Ptr))
	}
}

// unreadMemWrites reports the writes of values that no recorded wait read.
func (c *Checker) unreadMemWrites() {
	m := &c.memOps
	for _, p := range m.order {
		if w, ok := m.unread[p]; ok {
			c.reportMemOp(memNoteUnread, w)
			delete(m.unread, p)
		}
	}
	m.order = nil
}

// reportMemOp reports a stream-memory-op finding with its note.
func (c *Checker) reportMemOp(note memNote, op access) {
	if c.reportIn(hb.HostAgent, RuleStreamMemOp, nil, op, nil) {
		c.pending[len(c.pending)-1].memNote = note
	}
}
