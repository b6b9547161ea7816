package timeline

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"

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

// Doc is one trace-event JSON document: the timeline of one trace, or of
// several (the processes of a recorded tree), each under process ids of
// its own.
type Doc struct {
	bw      *bufio.Writer
	first   bool
	err     error
	traces  int // Traces begun in the document.
	several bool
}

// NewDoc begins a document on w; Close ends it. several says it will hold
// the timelines of several traces: devices are named with their process.
func NewDoc(w io.Writer, several bool) *Doc {
	d := &Doc{bw: bufio.NewWriter(w), first: true, several: several}
	io.WriteString(d.bw, "{\"traceEvents\":[")
	return d
}

// Close ends the document. The error is the first failure to write.
func (d *Doc) Close() error {
	io.WriteString(d.bw, "\n],\n\"displayTimeUnit\":\"ns\"}\n")
	if d.err != nil {
		return d.err
	}
	return d.bw.Flush()
}

// PIDStride separates the process ids of the traces of one document: the
// n-th trace begun (from 0) draws under n*PIDStride + HostPID and
// n*PIDStride + DevicePID(d).
const PIDStride = 1 << 21

// flowStride does the same for flow ids, a trace's sequence numbers.
const flowStride = 1 << 40

// Trace begins the timeline of one more trace, whose definitions are in
// tables, in the document: its calls are drawn at offset nanoseconds
// after their recorded times (the trace's start after the earliest
// trace's), and its processes are named with the traced process's pid.
// Finish ends it; Close ends the document.
func (d *Doc) Trace(tables *model.Tables, offset int64) *Writer {
	tw := newWriter(d, tables)
	tw.pidBase, tw.flowBase, tw.offset = d.traces*PIDStride, uint64(d.traces)*flowStride, offset
	d.traces++
	return tw
}

// Writer writes the timeline of one trace as its analysis reads it: the
// checker calls Observe with each event (checker.Options.Observe), then
// Finish adds the findings and the tracks' names. The JSON is streamed;
// what is kept grows with the streams, threads and events of the trace
// (where each call was drawn, for the findings' instants).
type Writer struct {
	doc      *Doc
	own      bool // The document is this trace's alone: Finish closes it.
	pidBase  int
	flowBase uint64
	offset   int64 // Added to each call's time, ns.
	chk      *checker.Checker
	tables   *model.Tables
	last     int64          // Start of the previous slice, ns; -1 before the first.
	threads  map[uint32]int // Recorded host thread id -> tid.
	tids     []uint32       // Recorded host thread ids, by tid-1.
	streams  []hb.AgentID   // Stream agents with a slice, in order of first slice.
	records  map[uint64]place
	events   map[uint64]string // Event handle -> display name.
	placed   []placed          // Where each call was drawn, by seq.
	sorted   bool              // placed is in seq order.
	calls    map[callKey]callInfo
}

// placed is where the call with seq was drawn.
type placed struct {
	seq      uint64
	ts       int64
	pid, tid int32
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

// New returns a Writer of the timeline of the trace whose definitions are
// in tables, to w: a document of its own.
func New(w io.Writer, tables *model.Tables) *Writer {
	tw := newWriter(NewDoc(w, false), tables)
	tw.own = true
	tw.doc.traces = 1
	return tw
}

func newWriter(d *Doc, tables *model.Tables) *Writer {
	return &Writer{
		doc: d, tables: tables, last: -1, sorted: true,
		threads: map[uint32]int{}, records: map[uint64]place{}, events: map[uint64]string{},
		calls: map[callKey]callInfo{},
	}
}

// Observe draws one call, as the checker c applied it (st); it is a
// checker.Options.Observe.
func (tw *Writer) Observe(c *checker.Checker, ev *model.Event, st *hb.Step) {
	tw.chk = c
	tw.add(ev, st)
}

// Finish marks the findings of res, the trace's analysis (nil: none), and
// names the trace's tracks; for a Writer made by New it ends the JSON. The
// error is the first failure to write.
func (tw *Writer) Finish(res *checker.Result) error {
	if res != nil {
		tw.findings(res.Findings)
	}
	tw.metadata()
	if tw.own {
		return tw.doc.Close()
	}
	return tw.doc.err
}

// Write analyzes the trace r reads and writes its timeline, findings
// included, to w in one pass, and returns the analysis. A damaged trace is
// written up to the damage; the error is for other failures of r and for
// failures to write.
func Write(w io.Writer, r model.Reader, opts checker.Options) (*checker.Result, error) {
	tw := New(w, r.Tables())
	opts.Observe = tw.Observe
	res, err := checker.CheckWith("", r, opts)
	if err != nil {
		return res, err
	}
	return res, tw.Finish(res)
}

// emit writes one event of the trace, under the trace's process ids.
func (tw *Writer) emit(e *Event) {
	e.PID += tw.pidBase
	tw.doc.emit(e)
}

func (d *Doc) emit(e *Event) {
	if d.err != nil {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		d.err = err
		return
	}
	if !d.first {
		d.bw.WriteByte(',')
	}
	d.first = false
	d.bw.WriteByte('\n')
	d.bw.Write(b)
}

func us(ns int64) float64 { return float64(ns) / 1000 }

// hostTrack returns the track of a recorded host thread.
func (tw *Writer) hostTrack(tid uint32) track {
	t, ok := tw.threads[tid]
	if !ok {
		tw.tids = append(tw.tids, tid)
		t = len(tw.tids)
		tw.threads[tid] = t
	}
	return track{HostPID, t}
}

// streamTrack returns the track of a stream agent.
func (tw *Writer) streamTrack(id hb.AgentID) track {
	if !slices.Contains(tw.streams, id) {
		tw.streams = append(tw.streams, id)
	}
	return track{DevicePID(tw.chk.Engine().Agent(id).Device), int(id)}
}

// eventName returns an event's display name: the trace's name for it, or
// "e<number>" in order of first use, as explain shows events.
func (tw *Writer) eventName(h uint64) string {
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
func (tw *Writer) add(ev *model.Event, st *hb.Step) {
	var record *place
	if ev.Op.NamesEvent() {
		tw.eventName(ev.Event) // Numbered in order of first use.
		if p, ok := tw.records[ev.Event]; ok {
			record = &p
		}
	}
	here := tw.placeOf(ev, st)
	if n := len(tw.placed); n > 0 && tw.placed[n-1].seq >= ev.Seq {
		tw.sorted = false
	}
	tw.placed = append(tw.placed, placed{ev.Seq, here.ts, int32(here.pid), int32(here.tid)})

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
func (tw *Writer) placeOf(ev *model.Event, st *hb.Step) place {
	ts := max(ev.Time, 0) + tw.offset
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
func (tw *Writer) args(ev *model.Event, st *hb.Step, call callInfo) map[string]any {
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
func (tw *Writer) opArgs(args map[string]any, ev *model.Event, st *hb.Step) {
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
func (tw *Writer) flow(ev *model.Event, from, to place) {
	id := tw.flowBase + ev.Seq // Unique: one flow per joining call.
	name := "event " + tw.eventName(ev.Event)
	tw.emit(&Event{Name: name, Cat: "event", Ph: "s", TS: us(from.ts + SliceNS/2), PID: from.pid, TID: from.tid, ID: &id})
	tw.emit(&Event{Name: name, Cat: "event", Ph: "f", BP: "e", TS: us(to.ts + SliceNS/2), PID: to.pid, TID: to.tid, ID: &id})
}

// describe returns a call's API, kernel, stream and site as findings show
// them.
func (tw *Writer) describe(ev *model.Event, st *hb.Step) callInfo {
	k := callKey{ev.Op, ev.API, ev.Kernel, ev.Stack, st.Agent}
	if c, ok := tw.calls[k]; ok {
		return c
	}
	op := tw.chk.DescribeAsRecorded(ev, st)
	c := callInfo{api: op.API, kernel: op.Kernel, stream: op.Stream}
	if ev.Stack != 0 {
		c.site = op.Site()
	}
	tw.calls[k] = c
	return c
}

// findings marks each finding with an instant event on its operation's
// track (a global one if the operation was not drawn).
func (tw *Writer) findings(fs []*checker.Finding) {
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
			at = tw.placeOfSeq(f.Ops[0].Seq)
		}
		if at != nil {
			e.TS, e.PID, e.TID, e.Scope = us(at.ts+SliceNS/2), at.pid, at.tid, "t"
		} else {
			e.TS, e.PID, e.TID, e.Scope = us(max(tw.last, 0)), HostPID, 0, "g"
		}
		tw.emit(e)
	}
}

// placeOfSeq returns where the call with seq was drawn, or nil.
func (tw *Writer) placeOfSeq(seq uint64) *place {
	if !tw.sorted {
		slices.SortStableFunc(tw.placed, func(a, b placed) int { return cmp.Compare(a.seq, b.seq) })
		tw.sorted = true
	}
	// The last call drawn with seq, as a trace that repeats one says.
	i := sort.Search(len(tw.placed), func(i int) bool { return tw.placed[i].seq > seq }) - 1
	if i < 0 || tw.placed[i].seq != seq {
		return nil
	}
	p := tw.placed[i]
	return &place{track{int(p.pid), int(p.tid)}, p.ts}
}

// metadata names and orders the processes and tracks that were drawn.
func (tw *Writer) metadata() {
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
	meta("process_sort_index", HostPID, 0, map[string]any{"sort_index": tw.pidBase}) // a trace's processes together
	for i, t := range tw.tids {
		meta("thread_name", HostPID, i+1, map[string]any{"name": fmt.Sprintf("thread %d", t)})
		meta("thread_sort_index", HostPID, i+1, map[string]any{"sort_index": i + 1})
	}
	if len(tw.streams) == 0 {
		return // no stream drawn (and, with no event, no checker)
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
			name := fmt.Sprintf("device %d", d)
			if p := tw.tables.Process.PID; tw.doc.several && p != 0 {
				name += fmt.Sprintf(" (pid %d)", p) // whose devices
			}
			meta("process_name", pid, 0, map[string]any{"name": name})
			meta("process_sort_index", pid, 0, map[string]any{"sort_index": tw.pidBase + pid})
		}
	}
	for _, id := range streams {
		a := eng.Agent(id)
		pid := DevicePID(a.Device)
		name := tw.chk.StreamName(a)
		if n := tw.chk.ProgramStreamName(a); n != "" {
			name = "`" + n + "`" // as the program and the findings name it
		}
		meta("thread_name", pid, int(id), map[string]any{"name": fmt.Sprintf("stream %s (%s)", name, a.Kind)})
		meta("thread_sort_index", pid, int(id), map[string]any{"sort_index": int(id)})
	}
}
