package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// SliceNS is the drawn length of every call, in nanoseconds.
const SliceNS = 1000

// HostPID is the process id of the host's tracks; device d's streams are
// under process DevicePID(d).
const HostPID = 1

// DevicePID returns the process id of device d's stream tracks. A negative
// d (the recorder found no current context) gets its own, far from the
// devices' ids.
func DevicePID(d int32) int {
	if d < 0 {
		return 1<<20 - int(d)
	}
	return 2 + int(d)
}

// Event is one trace event, with its fields in the order they are written.
type Event struct {
	Name  string         `json:"name"`
	Cat   string         `json:"cat,omitempty"`
	Ph    string         `json:"ph"`
	TS    float64        `json:"ts"`
	Dur   *float64       `json:"dur,omitempty"`
	PID   int            `json:"pid"`
	TID   int            `json:"tid"`
	ID    *uint64        `json:"id,omitempty"`
	BP    string         `json:"bp,omitempty"`
	Scope string         `json:"s,omitempty"`
	Args  map[string]any `json:"args,omitempty"`
}

// track is one timeline row.
type track struct{ pid, tid int }

// place is where and when a call's slice was drawn.
type place struct {
	track
	ts int64 // ns
}

type writer struct {
	bw      *bufio.Writer
	first   bool
	err     error
	chk     *checker.Checker
	tables  *model.Tables
	last    int64          // Start of the previous slice, ns; -1 before the first.
	threads map[uint32]int // Recorded host thread id -> tid.
	tids    []uint32       // Recorded host thread ids, by tid-1.
	streams []hb.AgentID   // Stream agents with a slice, in order of first slice.
	records map[uint64]place
	events  map[uint64]string // Event handle -> display name.
	wanted  map[uint64]*place // Seqs of findings' operations.
	calls   map[callKey]callInfo
}

// callKey and callInfo cache what reports show of a call: most calls of a
// trace repeat a few call sites.
type callKey struct {
	op     model.Op
	api    model.StringID
	kernel model.StringID
	stack  model.StackID
	agent  hb.AgentID
}

type callInfo struct{ api, kernel, stream, site string }

// Write writes the trace-event JSON of the trace r reads (from its start)
// to w. res is the trace's analysis, whose findings become instant events;
// it may be nil. A damaged trace is written up to the damage; the error is
// for other failures of r and for failures to write.
func Write(w io.Writer, r model.Reader, res *checker.Result) error {
	tw := &writer{
		bw: bufio.NewWriter(w), first: true, tables: r.Tables(), last: -1,
		threads: map[uint32]int{}, records: map[uint64]place{}, events: map[uint64]string{},
		wanted: map[uint64]*place{}, calls: map[callKey]callInfo{},
	}
	name := ""
	if res != nil {
		name = res.Trace
		for _, f := range res.Findings {
			if len(f.Ops) > 0 {
				tw.wanted[f.Ops[0].Seq] = nil
			}
		}
	}
	tw.chk = checker.New(name, r.Tables())
	io.WriteString(tw.bw, "{\"traceEvents\":[")
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			if model.IsDamage(err) {
				break
			}
			return err
		}
		tw.add(&ev)
	}
	if res != nil {
		tw.findings(res.Findings)
	}
	tw.metadata()
	io.WriteString(tw.bw, "\n],\n\"displayTimeUnit\":\"ns\"}\n")
	if tw.err != nil {
		return tw.err
	}
	return tw.bw.Flush()
}

func (tw *writer) emit(e *Event) {
	if tw.err != nil {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		tw.err = err
		return
	}
	if !tw.first {
		tw.bw.WriteByte(',')
	}
	tw.first = false
	tw.bw.WriteByte('\n')
	tw.bw.Write(b)
}

func us(ns int64) float64 { return float64(ns) / 1000 }

// hostTrack returns the track of a recorded host thread.
func (tw *writer) hostTrack(tid uint32) track {
	t, ok := tw.threads[tid]
	if !ok {
		tw.tids = append(tw.tids, tid)
		t = len(tw.tids)
		tw.threads[tid] = t
	}
	return track{HostPID, t}
}

// streamTrack returns the track of a stream agent.
func (tw *writer) streamTrack(id hb.AgentID) track {
	if !slices.Contains(tw.streams, id) {
		tw.streams = append(tw.streams, id)
	}
	return track{DevicePID(tw.chk.Engine().Agent(id).Device), int(id)}
}

// eventName returns an event's display name: the trace's name for it, or
// "e<number>" in order of first use, as explain shows events.
func (tw *writer) eventName(h uint64) string {
	n, ok := tw.events[h]
	if !ok {
		n = fmt.Sprintf("e%d", len(tw.events)+1)
		tw.events[h] = n
	}
	if tn := tw.tables.Name(model.ObjectEvent, h); tn != "" {
		return tn
	}
	return n
}

// add draws one call.
func (tw *writer) add(ev *model.Event) {
	var record *place
	if ev.Op.NamesEvent() {
		tw.eventName(ev.Event) // Numbered in order of first use.
		if p, ok := tw.records[ev.Event]; ok {
			record = &p
		}
	}
	tw.chk.Add(ev)
	st := tw.chk.LastStep()

	here := tw.placeOf(ev, st)
	if _, ok := tw.wanted[ev.Seq]; ok {
		tw.wanted[ev.Seq] = &here
	}

	call := tw.describe(ev, st)
	args := tw.args(ev, st, call)
	name := call.api
	if call.kernel != "" {
		name = call.kernel
	}
	dur := us(SliceNS)
	tw.emit(&Event{Name: name, Cat: ev.Op.Category().String(), Ph: "X", TS: us(here.ts), Dur: &dur, PID: here.pid, TID: here.tid, Args: args})

	if st.Skipped {
		return
	}
	switch ev.Op {
	case model.OpEventRecord:
		tw.records[ev.Event] = here
	case model.OpEventCreate, model.OpEventDestroy:
		delete(tw.records, ev.Event) // A re-created event has no record.
	case model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		// The engine's joins say whether the call joined the record: a
		// wait or event synchronize of a recorded event, or a successful
		// query.
		if record != nil && slices.ContainsFunc(st.Joins(), func(j hb.Join) bool { return j.Why.Record() }) {
			tw.flow(ev, *record, here)
		}
	}
}

// placeOf returns where and when the call's slice is drawn: on its stream's
// track, or its host thread's, after the previous slice.
func (tw *writer) placeOf(ev *model.Event, st *hb.Step) place {
	ts := max(ev.Time, 0)
	if tw.last >= 0 {
		ts = max(ts, tw.last+SliceNS)
	}
	tw.last = ts
	tr := tw.hostTrack(ev.TID) // Every thread gets its track, numbered in order of its first call.
	if ev.Op == model.OpStreamCreate || ev.Op == model.OpStreamDestroy {
		// Made and destroyed by the host: a stream gets its track from
		// the first work it runs, so that streams that never ran any
		// (a pool's spares) draw none.
		return place{tr, ts}
	}
	if st.Agent != hb.HostAgent {
		tr = tw.streamTrack(st.Agent)
	} else if ev.Failed() && ev.Op.OnStream() {
		// A call CUDA rejected ran nowhere, but reports name its stream
		// (a rejected cudaFreeAsync is a double free): draw it there.
		if a, ok := tw.chk.Engine().Known(ev.Stream, ev.Device, ev.TID); ok {
			tr = tw.streamTrack(a.ID)
		}
	}
	return place{tr, ts}
}

// args returns the arguments shown with a call's slice.
func (tw *writer) args(ev *model.Event, st *hb.Step, call callInfo) map[string]any {
	args := map[string]any{"seq": ev.Seq, "op": ev.Op.String(), "api": call.api, "tid": ev.TID}
	if call.stream != "" {
		args["stream"] = call.stream
	}
	if call.site != "" {
		args["site"] = call.site
	}
	if call.kernel != "" {
		args["kernel"] = call.kernel
	}
	tw.opArgs(args, ev, st)
	if ev.Result != model.ResultSuccess {
		args["result"] = ev.Result
	}
	switch {
	case st.Captured:
		args["captured"] = true
	case ev.Flags&model.FlagGraphNode != 0 && !ev.Failed():
		args["graph_node"] = true // added to a graph by hand: it runs at the graph's launches
	case st.Skipped:
		args["failed"] = true
	}
	return args
}

// opArgs adds to args what the call's op names: pointers, sizes, events,
// streams, values.
func (tw *writer) opArgs(args map[string]any, ev *model.Event, st *hb.Step) {
	if ev.Op.NamesEvent() {
		args["event"] = tw.eventName(ev.Event)
	}
	switch ev.Op {
	case model.OpMallocAsync, model.OpMalloc, model.OpMemsetAsync, model.OpMemset:
		args["ptr"], args["size"] = fmt.Sprintf("0x%x", ev.Ptr), ev.Size
	case model.OpFreeAsync, model.OpFree:
		args["ptr"] = fmt.Sprintf("0x%x", ev.Ptr)
	case model.OpMemcpyAsync, model.OpMemcpy:
		args["dst"], args["src"], args["size"], args["kind"] = fmt.Sprintf("0x%x", ev.Ptr), fmt.Sprintf("0x%x", ev.Src), ev.Size, ev.Kind.String()
	case model.OpLaunch:
		if len(ev.Ptrs) > 0 {
			ptrs := make([]string, len(ev.Ptrs))
			for i, p := range ev.Ptrs {
				ptrs[i] = fmt.Sprintf("0x%x", p)
			}
			args["ptrs"] = ptrs
		}
	case model.OpStreamSync, model.OpStreamQuery:
		if !st.Skipped { // Add looked the stream up: it exists.
			args["stream"] = tw.chk.StreamName(tw.chk.Engine().Stream(ev.Stream, ev.Device, ev.TID))
		}
	case model.OpStreamMemOp:
		args["mem_op"] = ev.MemOp.String()
		if ev.MemOp.IsWait() || ev.MemOp.Changes() {
			args["ptr"], args["value"] = fmt.Sprintf("0x%x", ev.Ptr), fmt.Sprintf("0x%x", ev.Value)
		}
		if ev.MemFlags != 0 {
			args["mem_flags"] = ev.MemFlags
		}
		if st.MemWait == hb.MemWaitFollowed {
			args["followed"] = true // ordered after the writes that can give the value
		}
	case model.OpGraphClone:
		args["graph"], args["from"] = fmt.Sprintf("0x%x", ev.Graph), fmt.Sprintf("0x%x", ev.Src)
		if ev.Flags&model.FlagConditional != 0 {
			args["conditional"] = true
		}
	}
}

// flow draws an arrow from an event record to the call that joined it.
// Both ends sit in the middle of their slices and bind to them.
func (tw *writer) flow(ev *model.Event, from, to place) {
	id := ev.Seq // Unique: one flow per joining call.
	name := "event " + tw.eventName(ev.Event)
	tw.emit(&Event{Name: name, Cat: "event", Ph: "s", TS: us(from.ts + SliceNS/2), PID: from.pid, TID: from.tid, ID: &id})
	tw.emit(&Event{Name: name, Cat: "event", Ph: "f", BP: "e", TS: us(to.ts + SliceNS/2), PID: to.pid, TID: to.tid, ID: &id})
}

// describe returns a call's API, kernel, stream and site as findings show
// them.
func (tw *writer) describe(ev *model.Event, st *hb.Step) callInfo {
	k := callKey{ev.Op, ev.API, ev.Kernel, ev.Stack, st.Agent}
	if c, ok := tw.calls[k]; ok {
		return c
	}
	op := tw.chk.Describe(ev, st)
	c := callInfo{api: op.API, kernel: op.Kernel, stream: op.Stream}
	if ev.Stack != 0 {
		c.site = op.Site()
	}
	tw.calls[k] = c
	return c
}

// findings marks each finding with an instant event on its operation's
// track (a global one if the operation was not drawn).
func (tw *writer) findings(fs []*checker.Finding) {
	for i, f := range fs {
		args := map[string]any{
			"number": i + 1, "rule": f.Rule, "severity": f.Severity.String(), "message": f.Message, "count": f.Count,
		}
		if f.Why != "" {
			args["why"] = f.Why
		}
		if f.Fix != "" {
			args["fix"] = f.Fix
		}
		var seqs []uint64
		for _, o := range f.Ops {
			seqs = append(seqs, o.Seq)
		}
		args["seqs"] = seqs
		if f.Alloc != nil {
			args["allocation_seq"] = f.Alloc.Seq
		}
		e := &Event{Name: fmt.Sprintf("%s[%s]", f.Severity, f.Rule), Cat: "finding", Ph: "i", Args: args}
		var at *place
		if len(f.Ops) > 0 {
			at = tw.wanted[f.Ops[0].Seq]
		}
		if at != nil {
			e.TS, e.PID, e.TID, e.Scope = us(at.ts+SliceNS/2), at.pid, at.tid, "t"
		} else {
			e.TS, e.PID, e.TID, e.Scope = us(max(tw.last, 0)), HostPID, 0, "g"
		}
		tw.emit(e)
	}
}

// metadata names and orders the processes and tracks that were drawn.
func (tw *writer) metadata() {
	meta := func(name string, pid, tid int, args map[string]any) {
		tw.emit(&Event{Name: name, Ph: "M", PID: pid, TID: tid, Args: args})
	}
	host := "host"
	if p := tw.tables.Process; p.PID != 0 {
		host = fmt.Sprintf("host (pid %d)", p.PID)
		if exe := tw.tables.String(p.Exe); exe != "" {
			host = fmt.Sprintf("host: %s (pid %d)", exe, p.PID)
		}
	}
	meta("process_name", HostPID, 0, map[string]any{"name": host})
	meta("process_sort_index", HostPID, 0, map[string]any{"sort_index": 0})
	for i, t := range tw.tids {
		meta("thread_name", HostPID, i+1, map[string]any{"name": fmt.Sprintf("thread %d", t)})
		meta("thread_sort_index", HostPID, i+1, map[string]any{"sort_index": i + 1})
	}
	eng := tw.chk.Engine()
	streams := slices.Clone(tw.streams)
	slices.SortFunc(streams, func(a, b hb.AgentID) int {
		da, db := eng.Agent(a).Device, eng.Agent(b).Device
		if da != db {
			return int(da - db)
		}
		return int(a - b)
	})
	var devices []int32
	for _, id := range streams {
		if d := eng.Agent(id).Device; !slices.Contains(devices, d) {
			devices = append(devices, d)
			pid := DevicePID(d)
			meta("process_name", pid, 0, map[string]any{"name": fmt.Sprintf("device %d", d)})
			meta("process_sort_index", pid, 0, map[string]any{"sort_index": pid})
		}
	}
	for _, id := range streams {
		a := eng.Agent(id)
		pid := DevicePID(a.Device)
		meta("thread_name", pid, int(id), map[string]any{"name": fmt.Sprintf("stream %s (%s)", tw.chk.StreamName(a), a.Kind)})
		meta("thread_sort_index", pid, int(id), map[string]any{"sort_index": int(id)})
	}
}
