package hb

import "github.com/streamcheck/streamcheck/model"

// MemWait says what the engine made of a stream memory operation's wait
// for a value (cuStreamWaitValue32/64): whether it ordered the waiting
// stream after a recorded write of the value, and if not, why.
type MemWait uint8

const (
	MemWaitNone     MemWait = iota // Not a wait.
	MemWaitFollowed                // Ordered after the recorded writes that can give the value.
	// MemWaitNoWrite: no recorded cuStreamWriteValue at the address gives
	// the value (a kernel, a copy or the host may write it).
	MemWaitNoWrite
	// MemWaitNoBarrier: a write that can give the value was made with
	// CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which lets it pass its
	// stream's earlier writes.
	MemWaitNoBarrier
	// MemWaitUnknown: the wait's condition, or what older writes at the
	// address were, is not known.
	MemWaitUnknown
)

// maxMemWrites is how many writes the engine keeps per address; older ones
// are summarized by the join of their epochs (memAddr.dropped).
const maxMemWrites = 32

// memWrite is a recorded cuStreamWriteValue32/64.
type memWrite struct {
	value     uint64
	width     uint64 // 4 or 8 bytes
	noBarrier bool
	epoch     Epoch
	snap      Clock // The writing stream's clock at the write.
}

// memAddr is what the engine knows of the writes to one address.
type memAddr struct {
	writes []memWrite // In trace order, the last maxMemWrites.
	// dropped is the join of the epochs of the writes dropped from writes
	// (a clock holding, per slot, the highest count); any of them may
	// still give a wait its value unless a later write overwrote them all.
	dropped    Clock
	hasDropped bool
}

// memoryWrite records a write of a value (ev, a stream memory operation
// that writes) made by agent a at epoch ep.
func (e *Engine) memoryWrite(ev *model.Event, a *Agent, ep Epoch) {
	if e.memory == nil {
		e.memory = map[uint64]*memAddr{}
	}
	m := e.memory[ev.Ptr]
	if m == nil {
		m = &memAddr{}
		e.memory[ev.Ptr] = m
	}
	if len(m.writes) == maxMemWrites {
		old := m.writes[0]
		m.dropped.raise(old.epoch.Slot, old.epoch.Clock)
		m.hasDropped = true
		// The oldest entry's clock storage is reused for the new one.
		copy(m.writes, m.writes[1:])
		m.writes[len(m.writes)-1] = memWrite{snap: old.snap}
	} else {
		m.writes = append(m.writes, memWrite{})
	}
	w := &m.writes[len(m.writes)-1]
	w.value, w.width, w.epoch = ev.Value, ev.MemOp.Width(), ep
	w.noBarrier = ev.MemFlags&model.MemWriteNoBarrier != 0
	w.snap.set(a.clock)
}

// memoryWait orders agent a, about to wait at ev's address for a value,
// after the recorded writes that can give it, and says whether it could.
//
// The wait ends when the memory holds a value that meets its condition.
// A recorded write can give that value unless it was overwritten before
// the wait by a write that does not: one ordered after it and before the
// wait. The wait is ordered after whichever of the writes that can give
// the value lands first, so a is joined with what all of them are ordered
// after (the element-wise minimum of their clocks). Assumed, as a program
// that waits for a value must: the memory did not hold a value meeting
// the condition before the recorded writes, and no kernel, copy or host
// write gave it one (a wait that no recorded write can satisfy is
// reported, not followed).
func (e *Engine) memoryWait(ev *model.Event, a *Agent) MemWait {
	m := e.memory[ev.Ptr]
	if m == nil {
		return MemWaitNoWrite
	}
	width := ev.MemOp.Width()
	// meets says whether write w can give the value: unknown for a write
	// of another width (it sets part of the value, or more).
	meets := func(w *memWrite) (met, known bool) {
		if w.width != width {
			return true, false
		}
		return ev.MemOp.Satisfies(w.value, ev.Value, ev.MemFlags)
	}
	// overwritten says whether a write ordered after epoch ep (or after
	// every dropped write, if over is set) and before the wait gives a
	// value that does not meet the condition.
	overwritten := func(from int, ep Epoch, over Clock) bool {
		for i := from; i < len(m.writes); i++ {
			x := &m.writes[i]
			if met, known := meets(x); met || !known || !a.clock.Covers(x.epoch) {
				continue
			}
			if over != nil {
				if covers(x.snap, over) {
					return true
				}
			} else if x.snap.Covers(ep) {
				return true
			}
		}
		return false
	}
	if _, known := ev.MemOp.Satisfies(0, ev.Value, ev.MemFlags); !known {
		return MemWaitUnknown
	}
	if m.hasDropped && !overwritten(0, Epoch{}, m.dropped) {
		return MemWaitUnknown
	}
	found, noBarrier := false, false
	meet := &e.scratch
	for i := range m.writes {
		w := &m.writes[i]
		if met, _ := meets(w); !met || overwritten(i+1, w.epoch, nil) {
			continue
		}
		noBarrier = noBarrier || w.noBarrier
		if !found {
			meet.set(w.snap)
			found = true
		} else {
			meet.meet(w.snap)
		}
	}
	switch {
	case !found:
		return MemWaitNoWrite
	case noBarrier:
		return MemWaitNoBarrier
	}
	a.clock.join(*meet)
	return MemWaitFollowed
}

// covers reports whether clock c covers every entry of o.
func covers(c, o Clock) bool {
	for s, n := range o {
		if c.Get(AgentID(s)) < n {
			return false
		}
	}
	return true
}

// ForgetMemory drops what the engine knows of the writes to addresses in
// [lo, hi): the memory was freed, and a later allocation there is other
// memory.
func (e *Engine) ForgetMemory(lo, hi uint64) {
	for addr := range e.memory {
		if addr >= lo && addr < hi {
			delete(e.memory, addr)
		}
	}
}

// HasMemoryWrites reports whether any write of a value is known, so that a
// caller can skip ForgetMemory.
func (e *Engine) HasMemoryWrites() bool { return len(e.memory) > 0 }
