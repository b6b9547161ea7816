package explain

import (
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// nameEvent numbers an event handle on its first use: events the trace
// does not name are shown as "e<number>".
func (rc *Recorder) nameEvent(h uint64) {
	if _, ok := rc.eventNames[h]; !ok {
		rc.eventNames[h] = fmt.Sprintf("e%d", len(rc.eventNames)+1)
	}
}

// eventName returns an event's display name: the trace's name for it (names
// may be defined after first use, so this is looked up late), or its number.
func (rc *Recorder) eventName(h uint64) string {
	if n := rc.tables.Name(model.ObjectEvent, h); n != "" {
		return n
	}
	if n, ok := rc.eventNames[h]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", h)
}

func (rc *Recorder) lane(id hb.AgentID) Lane {
	if id == hb.HostAgent {
		return Lane{Agent: hb.HostAgent, Name: "host", Kind: "host"}
	}
	a := rc.chk.Engine().Agent(id)
	return Lane{Agent: id, Name: laneName(rc.chk.StreamName(a), rc.chk.ProgramStreamName(a)), Kind: a.Kind.String()}
}

// laneName names a stream's lane as reports do: the program's own name for
// it where its source tells, with the stable id the trace's views share.
func laneName(id, program string) string {
	if program == "" || program == id {
		return id
	}
	return "`" + program + "` (" + id + ")"
}

// vertexOf makes the vertex of a kept call shown as context.
func (rc *Recorder) vertexOf(r *recorded, devices []int32) *Vertex {
	op := rc.chk.Describe(&r.ev, r.step.hbStep())
	v := &Vertex{
		ID: vertexID(r.ev.Seq), Seq: r.ev.Seq, Op: r.ev.Op.String(), API: op.API, Kernel: op.Kernel,
		Site: siteOf(&op, r.ev.Seq), TID: r.ev.TID, Lane: rc.lane(r.step.agent), Skipped: r.step.skipped,
		Captured: r.step.captured || inGraph(&r.ev), step: r.step, hasStep: r.step.known(),
	}
	rc.annotate(v, r, devices)
	return v
}

// inGraph reports whether ev is a node added to a graph by hand: it runs
// at the graph's launches (as a captured operation does), not when made.
func inGraph(ev *model.Event) bool { return ev.Flags&model.FlagGraphNode != 0 && !ev.Failed() }

// memOpDetail says what a stream memory operation waits for or writes,
// and whether a wait was followed.
func memOpDetail(ev *model.Event, wait hb.MemWait) string {
	switch {
	case ev.MemOp == model.MemOpAtomic:
		return fmt.Sprintf("atomic reduction by %d at 0x%x", ev.Value, ev.Ptr)
	case ev.MemOp.IsWrite():
		s := fmt.Sprintf("writes %d to 0x%x", ev.Value, ev.Ptr)
		if ev.MemFlags&model.MemWriteNoBarrier != 0 {
			s += ", no memory barrier"
		}
		return s
	case ev.MemOp.IsWait():
		var cond string
		switch c := ev.MemFlags & model.MemWaitCondMask; c {
		case model.MemWaitGEQ:
			cond = ">="
		case model.MemWaitEQ:
			cond = "=="
		case model.MemWaitAND:
			cond = "&"
		case model.MemWaitNOR:
			cond = "nor"
		default:
			cond = fmt.Sprintf("condition %d", c)
		}
		s := fmt.Sprintf("waits for 0x%x %s %d", ev.Ptr, cond, ev.Value)
		switch wait {
		case hb.MemWaitFollowed:
			s += ", after the writes that can give it"
		case hb.MemWaitNoWrite:
			s += ", which no write recorded before it gives: orders nothing here"
		case hb.MemWaitNoBarrier:
			s += ", written without a memory barrier: orders nothing here"
		case hb.MemWaitUnknown, hb.MemWaitGraphWrite, hb.MemWaitUnknownOp:
			s += ": not followed"
		}
		return s
	}
	return ev.MemOp.String()
}

// annotate adds what a vertex's event names: its detail line, its event,
// the record it joined, and a stream memory operation's address.
func (rc *Recorder) annotate(v *Vertex, r *recorded, devices []int32) {
	v.Detail = rc.detail(r, devices)
	switch r.ev.Op {
	case model.OpEventRecord, model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		v.event = rc.eventName(r.ev.Event)
	}
	if r.record != nil {
		v.joined = r.record.ev.Seq
	}
	if r.ev.Op == model.OpStreamMemOp {
		v.memAddr = r.ev.Ptr
		v.memWrite = r.ev.MemOp.Changes()
		v.memFollowed = r.step.memWait == hb.MemWaitFollowed
	}
}

// detail says what a synchronization operation names.
func (rc *Recorder) detail(r *recorded, devices []int32) string {
	ev := &r.ev
	s := ""
	switch ev.Op {
	case model.OpEventRecord:
		s = "event " + rc.eventName(ev.Event)
	case model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		s = "event " + rc.eventName(ev.Event)
		if r.record != nil {
			s += fmt.Sprintf(", recorded on %s at #%d", rc.lane(r.record.step.agent).Name, r.record.ev.Seq)
		} else {
			s += ", never recorded"
		}
	case model.OpStreamSync, model.OpStreamQuery:
		if r.target != 0 {
			s = "stream " + rc.lane(r.target).Name
		}
	case model.OpHostFnRun:
		if r.record != nil {
			s = fmt.Sprintf("ran; enqueued on %s at #%d", rc.lane(r.record.step.agent).Name, r.record.ev.Seq)
		}
	case model.OpDeviceSync:
		s = fmt.Sprintf("device %d", ev.Device)
		if len(devices) > 0 && !slices.Contains(devices, ev.Device) {
			s += fmt.Sprintf(", not the streams' device %d: orders nothing here", devices[0])
		}
	}
	switch ev.Op {
	case model.OpStreamQuery, model.OpEventQuery:
		if ev.Result == model.ResultSuccess {
			s += ": success"
		} else {
			s += ": not ready"
		}
	case model.OpMemcpy, model.OpMemcpyAsync:
		s = ev.Kind.String() + " copy"
	case model.OpStreamMemOp:
		s = memOpDetail(ev, r.step.memWait)
	}
	if r.join {
		s = joinWords(s, "implicit join with blocking streams")
	}
	return s
}

func joinWords(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
