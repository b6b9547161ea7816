package hb

import (
	"slices"

	"github.com/streamcheck/streamcheck/model"
)

// MemWait says what the engine made of a stream memory operation's wait
// for a value (cuStreamWaitValue32/64): whether it ordered the waiting
// stream after recorded writes of the value, and if not, why.
type MemWait uint8

const (
	MemWaitNone     MemWait = iota // Not a wait.
	MemWaitFollowed                // Ordered after the recorded writes that can give the value.
	// MemWaitNoWrite: no write recorded before the wait at the address
	// gives the value (a kernel, a copy, the host or a later write may).
	MemWaitNoWrite
	// MemWaitNoBarrier: a write that can give the value was made with
	// CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which lets it pass its
	// stream's earlier writes.
	MemWaitNoBarrier
	// MemWaitUnknown: the wait's condition, or what older writes at the
	// address were, is not known.
	MemWaitUnknown
	// MemWaitGraphWrite: a graph writes the address (a captured write, or
	// a batch memory operation node added by hand), at launches the engine
	// does not follow for values.
	MemWaitGraphWrite
	// MemWaitUnknownOp: the trace holds a stream memory operation of a
	// kind it does not describe, which may have written anywhere.
	MemWaitUnknownOp
)

// maxMemWrites is how many writes the engine keeps per block; older ones
// are summarized by the join of their epochs (memBlock.dropped).
const maxMemWrites = 32

// maxMemWaits is how many followed waits the engine keeps per block, to
// tell when a later write may have met one first (Step.MemLateWrite).
const maxMemWaits = 32

// memWrite is a recorded write of a value (cuStreamWriteValue32/64), or an
// atomic reduction (its result unknown: known is false).
type memWrite struct {
	addr, value uint64
	width       uint64 // 4 or 8 bytes
	known       bool   // The value written is value.
	noBarrier   bool
	epoch       Epoch
	snap        vclock // The writing stream's clock at the write.
}

// end returns the address past the write.
func (w *memWrite) end() uint64 { return w.addr + w.width }

// waitFor is what a wait for a value waits for: the value at ptr, by its
// kind's width and its flags' condition.
type waitFor struct {
	ptr, value uint64
	flags      uint32
	kind       model.MemOpKind
}

func waitForOf(ev *model.Event) waitFor {
	return waitFor{ptr: ev.Ptr, value: ev.Value, flags: ev.MemFlags, kind: ev.MemOp}
}

// memWait is a wait the engine followed: a later write that can meet it,
// not ordered after it nor after what it was joined with, may have met it
// first.
type memWait struct {
	waitFor
	epoch Epoch
	meet  vclock // What the wait was ordered after.
}

// memBlock is what the engine knows of the writes to one 8-byte aligned
// block of memory (CUDA aligns 32-bit operations to 4 bytes and 64-bit
// ones to 8, so each lies within one block).
type memBlock struct {
	writes []memWrite // In trace order, the last maxMemWrites.
	// dropped is the join of the epochs of the writes dropped from writes
	// (a clock holding, per slot, the highest count); any of them may
	// still give a wait its value unless a later write overwrote them all.
	dropped    vclock
	hasDropped bool
	waits      []memWait // Followed waits, the last maxMemWaits.
	// graphWritten: a graph's write (captured, or a node added by hand)
	// changes the block at the graph's launches, which the engine does not
	// follow for values.
	graphWritten bool
}

// blockOf returns the 8-byte block that holds addr.
func blockOf(addr uint64) uint64 { return addr &^ 7 }

// block returns the block at key b, made if need be.
func (e *Engine) block(b uint64) *memBlock {
	if e.memory == nil {
		e.memory = map[uint64]*memBlock{}
	}
	m := e.memory[b]
	if m == nil {
		m = &memBlock{}
		e.memory[b] = m
		i, _ := slices.BinarySearch(e.memBlocks, b)
		e.memBlocks = slices.Insert(e.memBlocks, i, b)
	}
	return m
}

// memOpWidth is the bytes a write or wait ev names: its kind's, or an
// atomic reduction's data type's (8, covering either, if not known).
func memOpWidth(ev *model.Event) uint64 {
	if ev.MemOp == model.MemOpAtomic {
		if ev.MemFlags == 4 || ev.MemFlags == 8 {
			return uint64(ev.MemFlags)
		}
		return 8 - ev.Ptr&7
	}
	return ev.MemOp.Width()
}

// memoryWrite records a write of a value, or an atomic reduction, that
// agent a made at epoch ep (ev), and sets st.MemLateWrite if it may have
// met a wait followed before it first.
func (e *Engine) memoryWrite(ev *model.Event, a *Agent, ep Epoch, st *Step) {
	m := e.block(blockOf(ev.Ptr))
	w := memWrite{addr: ev.Ptr, width: memOpWidth(ev), value: ev.Value, known: ev.MemOp.IsWrite(), epoch: ep,
		noBarrier: ev.MemOp.IsWrite() && ev.MemFlags&model.MemWriteNoBarrier != 0}
	// A followed wait this write could have met first, unordered with it.
	for i := range m.waits {
		mw := &m.waits[i]
		if met, _ := meets(&w, &mw.waitFor); met && !a.clock.Covers(mw.epoch) && !a.clock.coversAll(mw.meet) {
			st.MemLateWrite = true
			break
		}
	}
	if len(m.writes) == maxMemWrites {
		old := m.writes[0]
		m.dropped.raise(old.epoch.Slot, old.epoch.Clock)
		m.hasDropped = true
		// The oldest entry's clock storage is reused for the new one.
		copy(m.writes, m.writes[1:])
		w.snap = old.snap
		m.writes[len(m.writes)-1] = w
	} else {
		m.writes = append(m.writes, w)
	}
	m.writes[len(m.writes)-1].snap.set(&a.clock)
}

// valueWait orders stream a, about to wait for a value (ev), after the
// recorded writes that can give it (memoryWait), and says so in st.
func (e *Engine) valueWait(ev *model.Event, a *Agent, st *Step) {
	if st.MemWait = e.memoryWait(ev, a); st.MemWait == MemWaitFollowed {
		e.joinClock(JoinValueWait, a.ID)
	}
}

// memOpIssued records, after stream memory operation ev on stream a (at
// st.Epoch), a write of a value for the waits after it, a followed wait
// for the writes after it, or an operation the trace does not describe.
func (e *Engine) memOpIssued(ev *model.Event, a *Agent, st *Step) {
	switch {
	case ev.MemOp.Changes():
		e.memoryWrite(ev, a, st.Epoch, st)
	case st.MemWait == MemWaitFollowed:
		e.noteWait(ev, st.Epoch)
	case ev.MemOp == model.MemOpUnknown:
		e.unknownMemOps = true
	}
}

// graphMemOp notes a stream memory operation of a graph (captured, or a
// node added by hand), made at the graph's launches, whose values the
// engine does not follow: waits at the block a write changes are not
// followed any more, and after an operation the trace does not describe,
// none is.
func (e *Engine) graphMemOp(ev *model.Event) {
	switch {
	case ev.MemOp.Changes():
		e.block(blockOf(ev.Ptr)).graphWritten = true
	case ev.MemOp.IsWait():
		e.block(blockOf(ev.Ptr)) // its address is waited on (ForgetMemory)
	case ev.MemOp == model.MemOpUnknown:
		e.unknownMemOps = true
	}
}

// meets says whether write w can give wait t its value, and whether that
// is known: a write of another address or width overlapping the wait's
// (part of the value, or more), or whose value is unknown, can, unknown.
func meets(w *memWrite, t *waitFor) (met, known bool) {
	width := t.kind.Width()
	if w.addr >= t.ptr+width || t.ptr >= w.end() {
		return false, true // no overlap
	}
	if w.addr != t.ptr || w.width != width || !w.known {
		return true, false
	}
	return t.kind.Satisfies(w.value, t.value, t.flags)
}

// memoryWait orders agent a, about to wait at ev's address for a value,
// after the recorded writes that can give it, and says whether it could.
//
// The wait ends when the memory holds a value that meets its condition.
// A recorded write can give that value unless it was overwritten before
// the wait by a write that does not: one ordered after it and before the
// wait (and not made without a memory barrier, which may land before it).
// The wait is ordered after whichever of the writes that can give the
// value lands first, so a is joined with what all of them are ordered
// after (the element-wise minimum of their clocks). Assumed, as a program
// that waits for a value must: the memory did not hold a value meeting
// the condition before the recorded writes, and no kernel, copy or host
// write gave it one (a wait that no recorded write can satisfy is
// reported, not followed). A write recorded after the wait that may have
// met it first is reported at the write (Step.MemLateWrite).
//
// A followed wait leaves what it was joined with in e.scratch, for
// noteWait once the wait has its epoch.
func (e *Engine) memoryWait(ev *model.Event, a *Agent) MemWait {
	m := e.block(blockOf(ev.Ptr)) // made even with no writes: its address is waited on (ForgetMemory)
	if e.unknownMemOps {
		return MemWaitUnknownOp
	}
	if m.graphWritten {
		return MemWaitGraphWrite
	}
	t := waitForOf(ev)
	if _, known := t.kind.Satisfies(0, t.value, t.flags); !known {
		return MemWaitUnknown
	}
	// overwritten says whether a write ordered after epoch ep (or after
	// every dropped write, if over is set) and before the wait gives a
	// value that does not meet the condition.
	overwritten := func(from int, ep Epoch, over *vclock) bool {
		for i := from; i < len(m.writes); i++ {
			x := &m.writes[i]
			if met, known := meets(x, &t); met || !known || x.noBarrier || !a.clock.Covers(x.epoch) {
				continue
			}
			if x.addr != t.ptr {
				continue // met is false only for no overlap: it overwrote nothing of the value
			}
			if over != nil {
				if x.snap.coversAll(*over) {
					return true
				}
			} else if x.snap.Covers(ep) {
				return true
			}
		}
		return false
	}
	found, noBarrier := false, false
	meet := &e.scratch
	add := func(c *vclock) {
		if !found {
			meet.set(c)
			found = true
		} else {
			meet.meet(*c)
		}
	}
	if m.hasDropped && !overwritten(0, Epoch{}, &m.dropped) {
		// Dropped writes that may still give the value: only when the wait
		// is ordered after all of them is what they are ordered after
		// known (no more than the wait is already).
		if !a.clock.coversAll(m.dropped) {
			return MemWaitUnknown
		}
		add(&m.dropped)
	}
	for i := range m.writes {
		w := &m.writes[i]
		if met, _ := meets(w, &t); !met || overwritten(i+1, w.epoch, nil) {
			continue
		}
		noBarrier = noBarrier || w.noBarrier
		add(&w.snap)
	}
	switch {
	case !found:
		return MemWaitNoWrite
	case noBarrier:
		return MemWaitNoBarrier
	}
	a.clock.join(meet)
	return MemWaitFollowed
}

// noteWait keeps the wait ev that memoryWait followed, now at epoch ep, for
// the writes after it (memoryWrite).
func (e *Engine) noteWait(ev *model.Event, ep Epoch) {
	m := e.memory[blockOf(ev.Ptr)]
	if len(m.waits) == maxMemWaits {
		copy(m.waits, m.waits[1:])
		m.waits = m.waits[:len(m.waits)-1]
	}
	m.waits = append(m.waits, memWait{waitFor: waitForOf(ev), epoch: ep, meet: e.scratch.clone()})
}

// ForgetMemory drops what the engine knows of the values written in
// [lo, hi): the memory was freed, and a later allocation there is other
// memory. It returns the 8-byte blocks it forgot (appended to dst), whose
// addresses callers keep state for too.
func (e *Engine) ForgetMemory(lo, hi uint64, dst []uint64) []uint64 {
	i, _ := slices.BinarySearch(e.memBlocks, blockOf(lo))
	j := i
	for j < len(e.memBlocks) && e.memBlocks[j] < hi {
		delete(e.memory, e.memBlocks[j])
		dst = append(dst, e.memBlocks[j])
		j++
	}
	e.memBlocks = slices.Delete(e.memBlocks, i, j)
	return dst
}

// HasMemoryWrites reports whether the engine knows of any value written or
// waited for, so that a caller can skip ForgetMemory.
func (e *Engine) HasMemoryWrites() bool { return len(e.memBlocks) > 0 }
