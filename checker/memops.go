package checker

import (
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// memNote says why a stream-memory-op finding's ordering is not followed.
type memNote uint8

const (
	memNoteNone          memNote = iota
	memNoteOldTrace              // A trace that does not say what the operation did.
	memNoteUnknownType           // An operation of a type the recorder did not know.
	memNoteNoWrite               // A wait no recorded write before it can meet.
	memNoteNoBarrier             // A wait met by a write without a memory barrier.
	memNoteUnknown               // A wait whose condition or older writes are unknown.
	memNoteGraphWrite            // A wait at memory a graph writes.
	memNoteAfterUnknown          // A wait after an operation the trace does not describe.
	memNoteCaptured              // A wait captured into a graph.
	memNoteCapturedWrite         // A write captured into a graph.
	memNoteLateWrite             // A write that may have met an earlier, followed wait first.
	memNoteUnread                // A write no recorded wait reads.
)

// memOps is what the checker keeps of stream memory operations, by the
// 8-byte block of memory they name (see hb's memBlock).
type memOps struct {
	// waited holds the blocks some recorded wait read.
	waited map[uint64]bool
	// unread holds, by block, the first write no recorded wait read (yet):
	// reported at the end if none does.
	unread map[uint64]access
	order  []uint64 // unread's blocks, in the order of their writes.
	forgot []uint64 // Scratch for the blocks of freed memory.
}

// memBlock is the 8-byte block of memory that holds addr.
func memBlock(addr uint64) uint64 { return addr &^ 7 }

// waitNotes are the notes of the waits the engine did not follow.
var waitNotes = [...]memNote{
	hb.MemWaitNoWrite:    memNoteNoWrite,
	hb.MemWaitNoBarrier:  memNoteNoBarrier,
	hb.MemWaitUnknown:    memNoteUnknown,
	hb.MemWaitGraphWrite: memNoteGraphWrite,
	hb.MemWaitUnknownOp:  memNoteAfterUnknown,
}

// streamMemOp checks a stream memory operation that ran (not captured):
// it uses the memory it waits on or writes, and a wait whose ordering the
// engine did not follow, or a write that may have met a followed wait
// first, is reported.
func (c *Checker) streamMemOp(ev *model.Event, st *hb.Step) {
	eachUse(ev, func(p uint64) { c.use(ev, st, p) })
	switch {
	case ev.MemOp == model.MemOpUnknown:
		c.reportMemOp(undescribedNote(ev), c.accessOf(ev, st, ev.Ptr))
	case ev.MemOp.IsWait():
		c.memWaited(ev.Ptr)
		if int(st.MemWait) < len(waitNotes) && waitNotes[st.MemWait] != memNoteNone {
			c.reportMemOp(waitNotes[st.MemWait], c.accessOf(ev, st, ev.Ptr))
		}
	case ev.MemOp.Changes():
		if st.MemLateWrite {
			c.reportMemOp(memNoteLateWrite, c.accessOf(ev, st, ev.Ptr))
		}
		m := &c.memOps
		b := memBlock(ev.Ptr)
		if _, ok := m.unread[b]; ok || m.waited[b] {
			return
		}
		if m.unread == nil {
			m.unread = map[uint64]access{}
		}
		m.unread[b] = c.accessOf(ev, st, ev.Ptr)
		m.order = append(m.order, b)
	}
	// A flush or a memory barrier orders nothing between streams.
}

// undescribedNote is the note of an operation the trace does not
// describe: of a type the recorder did not know (its number in Value), or
// recorded before kinds were.
func undescribedNote(ev *model.Event) memNote {
	if ev.Value != 0 {
		return memNoteUnknownType
	}
	return memNoteOldTrace
}

// memWaited notes a wait at addr: writes there are read.
func (c *Checker) memWaited(addr uint64) {
	m := &c.memOps
	if m.waited == nil {
		m.waited = map[uint64]bool{}
	}
	m.waited[memBlock(addr)] = true
	delete(m.unread, memBlock(addr))
}

// capturedMemOp reports a stream memory operation captured into a graph
// that waits or writes: the graph's orderings through memory are not
// followed.
func (c *Checker) capturedMemOp(ev *model.Event, st *hb.Step) {
	switch {
	case ev.MemOp == model.MemOpUnknown:
		c.reportMemOp(undescribedNote(ev), c.accessOf(ev, st, ev.Ptr))
	case ev.MemOp.IsWait():
		c.memWaited(ev.Ptr)
		c.reportMemOp(memNoteCaptured, c.accessOf(ev, st, ev.Ptr))
	case ev.MemOp.Changes():
		c.reportMemOp(memNoteCapturedWrite, c.accessOf(ev, st, ev.Ptr))
	}
}

// forgetMemOps drops what is kept of the blocks of freed memory (the
// engine's ForgetMemory names them), reporting their unread writes: a
// later allocation there is other memory, whose writes are read or not
// afresh.
func (c *Checker) forgetMemOps(blocks []uint64) {
	m := &c.memOps
	for _, b := range blocks {
		delete(m.waited, b)
		if w, ok := m.unread[b]; ok { // nothing can wait for it any more
			c.reportMemOp(memNoteUnread, w)
			delete(m.unread, b)
		}
	}
	if len(m.order) > 64 && len(m.order) > 2*len(m.unread) {
		m.order = slices.DeleteFunc(m.order, func(b uint64) bool { _, ok := m.unread[b]; return !ok })
	}
}

// unreadMemWrites reports the writes of values that no recorded wait read.
func (c *Checker) unreadMemWrites() {
	m := &c.memOps
	for _, b := range m.order {
		if w, ok := m.unread[b]; ok {
			c.reportMemOp(memNoteUnread, w)
			delete(m.unread, b)
		}
	}
	m.order = nil
}

// reportMemOp reports a stream-memory-op finding with its note.
func (c *Checker) reportMemOp(note memNote, op access) {
	c.reportNoted(hb.HostAgent, RuleStreamMemOp, nil, op, nil, note)
}

// memRole is the role of a stream-memory-op finding's operation.
func memRole(note memNote) string {
	switch note {
	case memNoteNoWrite, memNoteNoBarrier, memNoteUnknown, memNoteGraphWrite, memNoteAfterUnknown, memNoteCaptured:
		return "wait for a value"
	case memNoteCapturedWrite, memNoteLateWrite, memNoteUnread:
		return "write of a value"
	}
	return "memory operation"
}
