package synth

import (
	"errors"
	"io"

	"github.com/streamcheck/streamcheck/model"
)

// Handoffs says what WriteHandoffs generates: a chain of streams, each
// handing the buffer it allocated to the next by an event.
type Handoffs struct {
	Streams int // Streams in the chain; at least 1.
	// Destroy makes each stream short-lived: destroyed once it has handed
	// off, so that one is alive at a time (a stream per step). Otherwise
	// all are alive at the end.
	Destroy bool
	// Reuse gives every stream the same handle and event (a program that
	// creates and destroys "its" stream each step); with Destroy only.
	Reuse bool
	// Race makes the Race-th stream (from 1; at least 2) use and free the
	// buffer the one before it handed over without waiting for its event:
	// a race with the work of a stream by then destroyed, if Destroy.
	// 0: none.
	Race int
}

// WriteHandoffs writes, in the binary format, a program whose streams
// each wait for the previous one's event, allocate a buffer, launch a
// kernel on it and on the buffer the previous stream handed over, free
// that one, and record their own event; the last buffer is freed after
// a device synchronization. Without Race it is correct. It returns the
// number of events written.
func WriteHandoffs(w io.Writer, h Handoffs) (int, error) {
	if h.Streams < 1 || h.Reuse && !h.Destroy || h.Race == 1 {
		return 0, errors.New("synth: need Streams >= 1, Destroy with Reuse, and Race 0 or at least 2")
	}
	t := model.NewTables()
	t.Process = model.Process{PID: 4243, PPID: 1, Exe: t.Intern("/opt/steps/bin/steps"), Version: t.Intern("synth")}
	bw := model.NewBinaryWriter(w)
	var ev model.Event
	seq := uint64(0)
	emit := func(op model.Op, stream, event, ptr uint64) {
		seq++
		ev = model.Event{Seq: seq, Op: op, TID: 1, Time: int64(seq) * 500, Stream: stream, Event: event, Ptr: ptr, Ptrs: ev.Ptrs[:0]}
		switch op {
		case model.OpStreamCreate:
			ev.Flags = model.FlagNonBlocking
		case model.OpMallocAsync:
			ev.Size = 1 << 20
		}
	}
	flush := func() { _ = bw.WriteEvent(&ev, t) } // sticky; Close reports it
	handle := func(i int) (stream, event uint64) {
		if h.Reuse {
			i = 0
		}
		return streamHandle0 + uint64(i)*0x100, eventHandle0 + uint64(i)*0x40
	}
	buf := func(i int) uint64 { return deviceBase + uint64(i)<<20 }
	for i := range h.Streams {
		s, e := handle(i)
		_, prevEv := handle(i - 1)
		emit(model.OpStreamCreate, s, 0, 0)
		flush()
		if !h.Reuse || i == 0 {
			emit(model.OpEventCreate, 0, e, 0)
			flush()
		}
		if i > 0 && i != h.Race-1 {
			emit(model.OpStreamWait, s, prevEv, 0)
			flush()
		}
		if i > 0 && h.Destroy && !h.Reuse {
			emit(model.OpEventDestroy, 0, prevEv, 0) // waited for: done with
			flush()
		}
		emit(model.OpMallocAsync, s, 0, buf(i))
		flush()
		emit(model.OpLaunch, s, 0, 0)
		ev.Ptrs = append(ev.Ptrs, buf(i))
		if i > 0 {
			ev.Ptrs = append(ev.Ptrs, buf(i-1))
		}
		flush()
		if i > 0 {
			emit(model.OpFreeAsync, s, 0, buf(i-1))
			flush()
		}
		emit(model.OpEventRecord, s, e, 0)
		flush()
		if h.Destroy {
			emit(model.OpStreamDestroy, s, 0, 0)
			flush()
		}
	}
	emit(model.OpDeviceSync, 0, 0, 0)
	flush()
	emit(model.OpFree, 0, 0, buf(h.Streams-1))
	flush()
	return int(seq), bw.Close()
}
