package checker

import (
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleStreamMemOp is the id of the rule this file defines.
const RuleStreamMemOp RuleID = "stream-memory-op"

// streamMemOpRule: stream-memory-op. It is checked by its hooks below
// (after a stream memory operation's use, when freed memory is forgotten,
// at the end of a trace) and by capturedMemOp; its findings are kept apart
// by their note, which says why the ordering is not followed.
var streamMemOpRule = &ruleDef{
	rank:     110,
	endRank:  10,
	state:    func(c *Checker) any { return &memOps{c: c} },
	id:       RuleStreamMemOp,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "a stream memory operation orders streams in a way streamcheck cannot follow (a wait for a value no recorded write gives, a write no recorded wait reads): findings between them may be false alarms, or missed after a wait an unordered write may have met first",
		Text:  "a stream memory operation (`cuStreamWaitValue*`, `cuStreamWriteValue*`, `cuStreamBatchMemOp`) orders streams in a way streamcheck cannot follow (a wait for a value no write recorded before it gives, a write no recorded wait reads; see [docs/ordering.md](docs/ordering.md)): findings between those streams may be false alarms, or, for a write that may have met an earlier wait first, races after that wait may be missed (goldens `stream_mem_op_*`)",
		Why: "streamcheck orders a wait for a value in memory after the recorded writes that can meet it. " +
			"When it cannot tell which write meets a wait, it takes the streams as unordered, and a write that may have met a wait taken as ordered after others makes that ordering too strong.",
		Fix: "Order the streams with an event as well (cudaEventRecord, cudaStreamWaitEvent), issue the write before the wait, " +
			"or suppress the findings with a reason.",
		Ops: []model.Op{model.OpStreamMemOp},
	},
	roleFor: memRole, // a wait and a write at one site are two findings
	explain: func(c *Checker, f *Finding, x *explainArgs) { explainMemOp(f, x.op, x.note) },
}

var _ = register(streamMemOpRule)

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
	c *Checker
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

func (m *memOps) ops() []model.Op { return []model.Op{model.OpStreamMemOp} }

// onOp checks a stream memory operation that ran (not captured), once its
// use of the memory it waits on or writes is checked: a wait whose
// ordering the engine did not follow, or a write that may have met a
// followed wait first, is reported.
func (m *memOps) onOp(ev *model.Event, st *hb.Step) {
	c := m.c
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
	m := c.stateOf(streamMemOpRule).(*memOps)
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

// onDrop drops what is kept of the blocks of freed memory (the engine's
// ForgetMemory forgets their writes and names them), reporting their
// unread writes: a later allocation there is other memory, whose writes
// are read or not afresh.
func (m *memOps) onDrop(a *allocation, freed bool) {
	c := m.c
	if !freed || !c.engine.HasMemoryWrites() {
		return
	}
	base, size := a.wholeOf()
	m.forgot = c.engine.ForgetMemory(base, rangeEnd(base, size), m.forgot[:0])
	for _, b := range m.forgot {
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

// atEnd reports, at the end of a complete trace, the writes of values
// that no recorded wait read.
func (m *memOps) atEnd(complete bool) {
	if !complete {
		return
	}
	c := m.c
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
	c.reportNoted(hb.HostAgent, streamMemOpRule, nil, op, nil, note)
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

// explainMemOp explains a stream memory operation whose ordering streamcheck
// does not follow, by why it does not.
func explainMemOp(f *Finding, op *Op, note memNote) {
	// A node added to a graph by hand runs at the graph's launches, on no
	// stream of its own.
	on := op.StreamRef
	if op.Stream == "" {
		on = "the launches of its graph"
	}
	falseAlarms := fmt.Sprintf("Findings between %s and the streams this value orders it with may be false alarms", on)
	eventFix := "order those streams with an event as well (cudaEventRecord, cudaStreamWaitEvent), or suppress the findings with a reason."
	switch note {
	case memNoteNoWrite:
		f.Message = fmt.Sprintf("%s waits for a value that no write recorded before it gives", what(op))
		f.Why = "streamcheck orders a wait for a value in memory (cuStreamWaitValue*) after the writes recorded before it at the same address (cuStreamWriteValue*) that can meet its condition. None can meet this one: the value comes from a kernel, a copy, the host, another process, or a write issued after the wait, which streamcheck does not follow, so it takes the work after the wait as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: issue the cuStreamWriteValue before the wait at %s, or %s", falseAlarms, op.Site(), eventFix)
	case memNoteNoBarrier:
		f.Message = fmt.Sprintf("%s waits for a value written without a memory barrier", what(op))
		f.Why = "A write that can meet this wait was made with CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which lets it land before the earlier writes of its stream: seeing the value does not make the writer's earlier work visible, so streamcheck does not order the waiting stream after it."
		f.Fix = fmt.Sprintf("Drop CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER from the write this wait at %s reads, or %s", op.Site(), eventFix)
	case memNoteUnknown:
		f.Message = fmt.Sprintf("%s waits for a value in a way streamcheck cannot follow", what(op))
		f.Why = "Either the wait's condition is not one streamcheck knows, or more writes were made to this 8-byte block of memory than it keeps (32) and the waiting stream is not ordered after the older ones, so it cannot tell which writes can meet the wait."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteGraphWrite:
		f.Message = fmt.Sprintf("%s waits for a value that a graph may write", what(op))
		f.Why = "A write in a graph (captured, or a node added by hand) changes this memory at the graph's launches, which streamcheck does not follow for values: it cannot tell which write meets the wait, so it takes the work after the wait as unordered with every writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteAfterUnknown:
		f.Message = fmt.Sprintf("%s waits for a value after a stream memory operation streamcheck cannot read", what(op))
		f.Why = "An earlier stream memory operation in the trace is of a kind streamcheck does not know, and may have written this memory, so no wait after it is followed: the work after the wait is taken as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteCaptured:
		f.Message = fmt.Sprintf("%s waits for a value in a graph (captured, or a node added by hand), which streamcheck does not follow", what(op))
		f.Why = "The wait is a node of a graph and runs at its launches; streamcheck does not follow what a graph's memory operations order, so it takes the graph's work after the wait as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteCapturedWrite:
		f.Message = fmt.Sprintf("%s writes a value in a graph (captured, or a node added by hand), which streamcheck does not follow", what(op))
		f.Why = "The write is a node of a graph and lands at the graph's launches: waits for values at this memory are not followed, and one taken before as ordered after other writes may have been met by this one first, so races after it may be missed."
		f.Fix = "Order the streams that wait for this value with an event as well: waits for it are not followed, and races after a wait it may have met first can be missed."
	case memNoteLateWrite:
		f.Message = fmt.Sprintf("%s writes a value that an earlier wait may have read first", what(op))
		f.Why = "A wait for a value recorded before this write was taken as ordered after the writes recorded before it; this write can meet the wait too, and nothing orders it after them or after the wait, so on the GPU it may have released the wait first. The work after that wait was taken as ordered after more than it is: races after it may be missed."
		f.Fix = fmt.Sprintf("Make the value this write gives one the earlier wait does not wait for, order the write after the wait's other writers with an event, or order the streams with an event as well; the write is at %s.", op.Site())
	case memNoteUnread:
		f.Message = fmt.Sprintf("%s writes a value that no recorded wait reads", what(op))
		f.Why = "No cuStreamWaitValue* was recorded at this memory. If the host or a kernel waits for the value, the ordering that gives is not followed: streamcheck takes what runs after that wait as unordered with this stream."
		f.Fix = fmt.Sprintf("Findings between %s and work ordered by this value may be false alarms: order them with an event or a stream synchronization as well, or suppress them with a reason.", on)
	case memNoteUnknownType:
		f.Message = fmt.Sprintf("%s is a stream memory operation of a type streamcheck does not know", what(op))
		f.Why = "The recorder did not know this operation's parameters, so streamcheck cannot tell what memory it changes: no wait for a value after it is followed, and a wait followed before it may have been met by it first (races after that wait may be missed)."
		f.Fix = fmt.Sprintf("Findings between %s and the streams that wait for values may be false alarms, and races after waits before it may be missed: order them with an event as well.", on)
	default:
		f.Message = fmt.Sprintf("%s orders work through memory, which streamcheck does not follow", what(op))
		f.Why = "The trace does not say what this stream memory operation waited for or wrote (it was recorded by an older streamcheck), so streamcheck takes the streams it orders as unordered."
		f.Fix = fmt.Sprintf("Findings between %s and the streams it is ordered with this way may be false alarms: record the program again, or %s", on, eventFix)
	}
}
