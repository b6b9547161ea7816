package explain

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/dominikbraun/graph"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// DefaultMaxVertices bounds a graph's vertices when Options.MaxVertices is 0.
const DefaultMaxVertices = 20

// Options adjust Build.
type Options struct {
	// MaxVertices bounds the vertices of each graph, the note included
	// (DefaultMaxVertices if 0). The finding's own operations are always
	// shown.
	MaxVertices int
	// Symbolize fills in source locations of recorded stacks, as for
	// checker.Options.
	Symbolize func(t *model.Tables, id model.StackID)
}

// stepCopy keeps what the engine learned from an event past the next one.
type stepCopy struct {
	agent   hb.AgentID
	epoch   hb.Epoch
	clock   hb.Clock
	skipped bool
	// captured: a call captured into a graph, which runs at the graph's
	// launches (skipped is set too: when issued it ordered nothing).
	// capture, local and localClock place a captured stream operation
	// among its capture's work (hb.Step).
	captured   bool
	capture    uint64
	local      hb.Epoch
	localClock hb.Clock
	memWait    hb.MemWait // A wait for a value: whether the engine followed it.
}

func copyStep(st *hb.Step) stepCopy {
	s := stepCopy{agent: st.Agent, epoch: st.Epoch, clock: st.Clock.Clone(), skipped: st.Skipped, captured: st.Captured, memWait: st.MemWait}
	if st.Local.Clock != 0 {
		s.capture, s.local, s.localClock = st.Capture, st.Local, st.LocalClock.Clone()
	}
	return s
}

// known reports whether the step orders its call among others: it took
// effect, or it was captured and is ordered among its capture's work.
func (s *stepCopy) known() bool { return !s.skipped || s.capture != 0 }

func (s *stepCopy) hbStep() *hb.Step {
	return &hb.Step{Agent: s.agent, Epoch: s.epoch, Clock: s.clock, Skipped: s.skipped, Captured: s.captured,
		Capture: s.capture, Local: s.local, LocalClock: s.localClock}
}

// recorded is one replayed event kept for a graph.
type recorded struct {
	ev   model.Event
	step stepCopy
	// target is the stream a host synchronization waited for: the synced
	// stream, or the stream of the event record it joined.
	target hb.AgentID
	// record is the event record a wait, event synchronize or successful
	// event query joined.
	record *recorded
	join   bool // An operation on the legacy stream, shown for its implicit joins.
}

// window keeps the first and the last candidates of a finding's seq range,
// so that memory does not grow with the length of the trace.
type window struct {
	headCap, tailCap int
	head, tail       []*recorded // tail is a ring once full.
	start            int
	dropped          int
	firstDrop        uint64 // Seq of the earliest left-out candidate.
	lastDrop         uint64
}

func (w *window) add(r *recorded) {
	if len(w.head) < w.headCap {
		w.head = append(w.head, r)
		return
	}
	if w.tailCap == 0 {
		w.drop(r)
		return
	}
	if len(w.tail) < w.tailCap {
		w.tail = append(w.tail, r)
		return
	}
	w.drop(w.tail[w.start])
	w.tail[w.start] = r
	w.start = (w.start + 1) % w.tailCap
}

func (w *window) drop(r *recorded) {
	if w.dropped == 0 || r.ev.Seq < w.firstDrop {
		w.firstDrop = r.ev.Seq
	}
	w.lastDrop = max(w.lastDrop, r.ev.Seq)
	w.dropped++
}

// items returns the kept candidates in trace order, and how many were left
// out and between which seqs. When some were left out, one more is, to
// make room for the note vertex within the budget.
func (w *window) items() (kept []*recorded, dropped int, first, last uint64) {
	kept = slices.Clone(w.head)
	kept = append(kept, w.tail[w.start:]...)
	kept = append(kept, w.tail[:w.start]...)
	dropped, first, last = w.dropped, w.firstDrop, w.lastDrop
	if dropped > 0 && len(kept) > 0 {
		i := min(len(w.head), len(kept)-1) // The oldest of the tail, next to the gap.
		s := kept[i].ev.Seq
		first, last = min(first, s), max(last, s)
		dropped++
		kept = slices.Delete(kept, i, i+1)
	}
	return kept, dropped, first, last
}

// collector gathers the context of one finding during the replay.
type collector struct {
	f        *checker.Finding
	involved []hb.AgentID // The finding's streams.
	lo, hi   uint64       // The finding's seq range.
	fixed    []uint64     // Seqs of the finding's own operations.
	win      window
}

func newCollector(f *checker.Finding, maxVertices int) *collector {
	c := &collector{f: f, lo: ^uint64(0)}
	add := func(o *checker.Op) {
		if !slices.Contains(c.fixed, o.Seq) {
			c.fixed = append(c.fixed, o.Seq)
		}
		c.lo, c.hi = min(c.lo, o.Seq), max(c.hi, o.Seq)
		if o.Agent != hb.HostAgent && !slices.Contains(c.involved, o.Agent) {
			c.involved = append(c.involved, o.Agent)
		}
	}
	if f.Alloc != nil {
		add(&f.Alloc.Op)
	}
	for i := range f.Ops {
		add(&f.Ops[i])
	}
	budget := max(maxVertices-len(c.fixed), 0)
	c.win.headCap = budget / 2
	c.win.tailCap = budget - c.win.headCap
	return c
}

func (c *collector) involves(a hb.AgentID) bool { return slices.Contains(c.involved, a) }

// replay is the state of one pass over the trace.
type replay struct {
	chk        *checker.Checker
	tables     *model.Tables
	cols       []*collector
	fixed      map[uint64]*recorded // The findings' own operations, by seq.
	lastRecord map[uint64]*recorded // Most recent record of each event handle.
	// lastCaptured is the most recent captured record of each event handle:
	// a wait in the same capture joined it.
	lastCaptured map[uint64]*recorded
	eventNames   map[uint64]string // Display names of events, "e1", "e2"... unless the trace names them.
	stop         uint64            // Events after this seq are read but not replayed.
}

// ErrTraceChanged is returned by Build when the trace it reads is not the one
// the findings came from.
var ErrTraceChanged = errors.New("the trace read differently the second time")

// Build re-reads a trace whose analysis is res and returns the graph of
// each of its findings, in order. r must read the same trace from its
// start. A damaged trace is replayed up to the damage (as res was); the
// error is for other failures of r.
func Build(r model.Reader, res *checker.Result, opts Options) ([]*Graph, error) {
	maxV := opts.MaxVertices
	if maxV <= 0 {
		maxV = DefaultMaxVertices
	}
	rp := &replay{
		chk:        checker.NewWith(res.Trace, r.Tables(), checker.Options{Symbolize: opts.Symbolize}),
		tables:     r.Tables(),
		fixed:      map[uint64]*recorded{},
		lastRecord: map[uint64]*recorded{},
		eventNames: map[uint64]string{},

		lastCaptured: map[uint64]*recorded{},
	}
	if len(res.Findings) == 0 {
		return nil, nil
	}
	for _, f := range res.Findings {
		c := newCollector(f, maxV)
		rp.cols = append(rp.cols, c)
		for _, s := range c.fixed {
			rp.fixed[s] = nil
		}
		rp.stop = max(rp.stop, c.hi)
	}
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
			return nil, err
		}
		// Read on to the end so that names defined late are known, but
		// analyze only what the findings need.
		if ev.Seq <= rp.stop {
			rp.add(&ev)
		}
	}
	// The findings' operations must all have come by again: r reading
	// another trace than res analyzed (a file rewritten meanwhile) would
	// otherwise explain them with the wrong events, or none.
	missing := uint64(0) // the first one missing, for a message that does not vary
	for seq, op := range rp.fixed {
		if op == nil && (missing == 0 || seq < missing) {
			missing = seq
		}
	}
	if missing != 0 {
		return nil, fmt.Errorf("%w: operation #%d of a finding is not in it", ErrTraceChanged, missing)
	}
	graphs := make([]*Graph, len(rp.cols))
	for i, c := range rp.cols {
		g, err := rp.graph(i+1, c, maxV)
		if err != nil {
			return nil, err
		}
		graphs[i] = g
	}
	return graphs, nil
}

// add replays one event and hands it to the collectors that want it.
func (rp *replay) add(ev *model.Event) {
	switch ev.Op {
	case model.OpEventCreate, model.OpEventRecord, model.OpStreamWait, model.OpEventSync, model.OpEventQuery, model.OpEventDestroy:
		rp.nameEvent(ev.Event)
	}
	eng := rp.chk.Engine()
	// A synchronous copy or set may make the host wait for its stream: see
	// which stream agents the host learned of.
	var hostBefore hb.Clock
	if ev.Op == model.OpMemcpy || ev.Op == model.OpMemset {
		hostBefore = eng.HostClock().Clone()
	}
	var target hb.AgentID
	var record *recorded
	switch ev.Op {
	case model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		record = rp.lastRecord[ev.Event] // Before the event: a wait joins the previous record.
		if record != nil {
			target = record.step.agent
		}
	}
	captured := rp.lastCaptured[ev.Event]
	rp.chk.Add(ev)
	st := rp.chk.LastStep()
	if st.Local.Clock != 0 {
		rp.addCaptured(ev, st, captured)
		return
	}
	var keep *recorded
	get := func() *recorded {
		if keep == nil {
			keep = &recorded{ev: ev.Clone(), step: copyStep(st), target: target, record: record}
		}
		return keep
	}
	_, isFixed := rp.fixed[ev.Seq]
	if isFixed {
		rp.fixed[ev.Seq] = get()
	}
	switch {
	case st.Skipped:
		return // A failed or captured call ordered nothing.
	case ev.Op == model.OpEventRecord:
		rp.lastRecord[ev.Event] = get()
	case ev.Op == model.OpEventCreate || ev.Op == model.OpEventDestroy:
		delete(rp.lastRecord, ev.Event) // The engine forgets the event's records too.
	}
	if isFixed && ev.Op != model.OpStreamMemOp {
		// A finding's own operation, not context. A stream memory
		// operation's warning is context for the races it may explain.
		return
	}

	// What the event synchronizes with, as the collectors' tests need it:
	// the stream or event record a synchronization or successful query
	// joined, as the engine says (hb.Step.Joins).
	var touched []hb.AgentID
	device := false
	legacy := false
	switch ev.Op {
	case model.OpEventRecord, model.OpStreamWait:
		touched = append(touched, st.Agent)
		if ev.Op == model.OpStreamWait && target != 0 {
			touched = append(touched, target)
		}
	case model.OpStreamSync, model.OpStreamQuery:
		if j, ok := syncJoin(st); ok {
			target = j.From.Agent
			touched = append(touched, target)
		}
	case model.OpEventSync, model.OpEventQuery:
		if _, ok := syncJoin(st); ok && record != nil {
			touched = append(touched, target)
		} else {
			record, target = nil, 0
		}
	case model.OpDeviceSync:
		device = true
	case model.OpStreamMemOp:
		// A write of a value, or a wait for one: a wait that was followed
		// orders its stream after writes shown on theirs.
		if ev.MemOp.IsWait() || ev.MemOp.Changes() {
			touched = append(touched, st.Agent)
		}
	case model.OpMemcpy, model.OpMemset:
		host := eng.HostClock()
		for _, a := range eng.Agents() {
			if a.ID != hb.HostAgent && !a.Pruned() && host.Get(a.Slot) > hostBefore.Get(a.Slot) {
				touched = append(touched, a.ID)
			}
		}
	}
	if a := eng.Agent(st.Agent); a.Kind == hb.KindLegacy {
		legacy = true
	}
	if len(touched) == 0 && !device && !legacy {
		return
	}
	for _, c := range rp.cols {
		if ev.Seq <= c.lo || ev.Seq >= c.hi || isFixed && slices.Contains(c.fixed, ev.Seq) {
			continue
		}
		// Device synchronizations are all shown: one on another device than
		// the finding's streams is a bug worth seeing.
		want := device || slices.ContainsFunc(touched, c.involves)
		join := false
		if !want && legacy {
			// The legacy stream joins the blocking streams of its device, and
			// they join it: it orders them among themselves.
			join = slices.ContainsFunc(c.involved, func(id hb.AgentID) bool {
				if int(id) >= len(eng.Agents()) {
					return false // a stream created later in the trace
				}
				a := eng.Agent(id)
				// A synchronous peer copy joins those of its other devices too.
				onDevice := a.Device == ev.Device ||
					ev.Flags&model.FlagPeer != 0 && (a.Device == ev.PeerSrc || a.Device == ev.PeerDst)
				return onDevice && (a.Kind == hb.KindBlocking || a.Kind == hb.KindPerThread)
			})
			want = join
		}
		if want {
			r := get()
			r.target, r.record = target, record
			r.join = r.join || join
			c.win.add(r)
		}
	}
}

// syncJoin returns the join of a stream or event synchronization, or a
// successful query, that ordered the host after a stream's work.
func syncJoin(st *hb.Step) (hb.Join, bool) {
	for _, j := range st.Joins() {
		if j.Why.HostSync() {
			return j, true
		}
	}
	return hb.Join{}, false
}

// addCaptured hands a captured operation to the collectors of races in
// captures: its event records and waits order the capture's work (the
// graph's edges), as the capture's own clocks say. record is the event's
// most recent captured record before it.
func (rp *replay) addCaptured(ev *model.Event, st *hb.Step, record *recorded) {
	var keep *recorded
	get := func() *recorded {
		if keep == nil {
			keep = &recorded{ev: ev.Clone(), step: copyStep(st)}
		}
		return keep
	}
	if _, isFixed := rp.fixed[ev.Seq]; isFixed {
		rp.fixed[ev.Seq] = get()
		return
	}
	var touched []hb.AgentID
	switch ev.Op {
	case model.OpEventRecord:
		rp.lastCaptured[ev.Event] = get()
		touched = append(touched, st.Agent)
	case model.OpStreamWait:
		touched = append(touched, st.Agent)
		if record != nil && record.step.capture == st.Capture {
			r := get()
			r.record, r.target = record, record.step.agent
			touched = append(touched, record.step.agent)
		}
	default:
		return
	}
	for _, c := range rp.cols {
		if c.f.Capture != "" && ev.Seq > c.lo && ev.Seq < c.hi && slices.ContainsFunc(touched, c.involves) {
			c.win.add(get())
		}
	}
}

// nameEvent numbers an event handle on its first use: events the trace
// does not name are shown as "e<number>".
func (rp *replay) nameEvent(h uint64) {
	if _, ok := rp.eventNames[h]; !ok {
		rp.eventNames[h] = fmt.Sprintf("e%d", len(rp.eventNames)+1)
	}
}

// eventName returns an event's display name: the trace's name for it (names
// may be defined after first use, so this is looked up late), or its number.
func (rp *replay) eventName(h uint64) string {
	if n := rp.tables.Name(model.ObjectEvent, h); n != "" {
		return n
	}
	if n, ok := rp.eventNames[h]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", h)
}

func (rp *replay) lane(id hb.AgentID) Lane {
	if id == hb.HostAgent {
		return Lane{Agent: hb.HostAgent, Name: "host", Kind: "host"}
	}
	a := rp.chk.Engine().Agent(id)
	return Lane{Agent: id, Name: rp.chk.StreamName(a), Kind: a.Kind.String()}
}

// vertexOf makes the vertex of a replayed event shown as context.
func (rp *replay) vertexOf(r *recorded, devices []int32) *Vertex {
	op := rp.chk.Describe(&r.ev, r.step.hbStep())
	v := &Vertex{
		ID: vertexID(r.ev.Seq), Seq: r.ev.Seq, Op: r.ev.Op.String(), API: op.API, Kernel: op.Kernel,
		Site: siteOf(&op, r.ev.Seq), TID: r.ev.TID, Lane: rp.lane(r.step.agent), Skipped: r.step.skipped,
		Captured: r.step.captured || inGraph(&r.ev), step: r.step, hasStep: r.step.known(),
	}
	rp.annotate(v, r, devices)
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
func (rp *replay) annotate(v *Vertex, r *recorded, devices []int32) {
	v.Detail = rp.detail(r, devices)
	switch r.ev.Op {
	case model.OpEventRecord, model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		v.event = rp.eventName(r.ev.Event)
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
func (rp *replay) detail(r *recorded, devices []int32) string {
	ev := &r.ev
	s := ""
	switch ev.Op {
	case model.OpEventRecord:
		s = "event " + rp.eventName(ev.Event)
	case model.OpStreamWait, model.OpEventSync, model.OpEventQuery:
		s = "event " + rp.eventName(ev.Event)
		if r.record != nil {
			s += fmt.Sprintf(", recorded on %s at #%d", rp.lane(r.record.step.agent).Name, r.record.ev.Seq)
		} else {
			s += ", never recorded"
		}
	case model.OpStreamSync, model.OpStreamQuery:
		if r.target != 0 {
			s = "stream " + rp.lane(r.target).Name
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

// graph builds the graph of one finding from what the replay collected.
func (rp *replay) graph(number int, c *collector, maxV int) (*Graph, error) {
	g := &Graph{Number: number, Finding: c.f, HB: newHBGraph()}
	f := c.f
	var devices []int32 // Of the finding's streams.
	for _, id := range c.involved {
		if d := rp.chk.Engine().Agent(id).Device; !slices.Contains(devices, d) {
			devices = append(devices, d)
		}
	}

	// The finding's own operations, merged where one call has two roles
	// (a use-before-alloc's allocation is both the finding's allocation and
	// its other operation).
	byID := map[string]*Vertex{}
	var vs []*Vertex
	addFixed := func(o *checker.Op) {
		id := vertexID(o.Seq)
		if v := byID[id]; v != nil {
			if v.Role != o.Role {
				v.Role += ", " + o.Role
			}
			return
		}
		v := &Vertex{
			ID: id, Seq: o.Seq, Op: o.Op, API: o.API, Kernel: o.Kernel, Site: siteOf(o, o.Seq), Role: o.Role,
			Finding: true, TID: o.TID,
			Lane: Lane{Agent: o.Agent, Name: cmpOr(o.Stream, "host"), Kind: cmpOr(o.StreamKind, "host")},
		}
		if r := rp.fixed[o.Seq]; r != nil {
			v.step, v.hasStep, v.Skipped, v.Captured = r.step, r.step.known(), r.step.skipped, r.step.captured || inGraph(&r.ev)
			rp.annotate(v, r, devices)
		}
		if n := o.GraphNode; n != nil {
			v.GraphNode = n.API
			if n.Kernel != "" {
				v.GraphNode += " of " + n.Kernel
			}
			if s := siteOf(n, n.Seq); s != "" {
				v.GraphNode += " at " + s
			}
		}
		byID[id] = v
		vs = append(vs, v)
	}
	if f.Alloc != nil {
		addFixed(&f.Alloc.Op)
	}
	for i := range f.Ops {
		addFixed(&f.Ops[i])
	}

	// Context: the kept synchronization operations, then the records their
	// waits joined, while there is room.
	items, dropped, firstDrop, lastDrop := c.win.items()
	for _, r := range items {
		v := rp.vertexOf(r, devices)
		byID[v.ID] = v
		vs = append(vs, v)
	}
	room := maxV - len(vs)
	if dropped > 0 {
		room-- // The note.
	}
	for _, r := range items {
		if rec := r.record; rec != nil && room > 0 && byID[vertexID(rec.ev.Seq)] == nil {
			v := rp.vertexOf(rec, devices)
			byID[v.ID] = v
			vs = append(vs, v)
			room--
		}
	}
	slices.SortFunc(vs, compareVertices)
	for _, v := range vs {
		if err := g.HB.AddVertex(v); err != nil {
			return nil, err
		}
	}
	if dropped > 0 {
		g.Omitted, g.OmittedFrom, g.OmittedTo = dropped, firstDrop, lastDrop
		note := &Vertex{ID: NoteID, Note: fmt.Sprintf("%d more synchronization operations between #%d and #%d not shown",
			g.Omitted, g.OmittedFrom, g.OmittedTo)}
		if g.Omitted == 1 {
			note.Note = fmt.Sprintf("1 more synchronization operation (#%d) not shown", g.OmittedFrom)
		}
		if err := g.HB.AddVertex(note); err != nil {
			return nil, err
		}
	}

	for _, e := range orderings(vs) {
		if err := addEdge(g.HB, e); err != nil {
			return nil, err
		}
	}
	if m := missingEdge(f); m != nil && byID[m.From] != nil && byID[m.To] != nil {
		g.Missing = m
		if err := addEdge(g.HB, *m); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func addEdge(hbg graph.Graph[string, *Vertex], e Edge) error {
	err := hbg.AddEdge(e.From, e.To, graph.EdgeAttribute("kind", string(e.Kind)), graph.EdgeAttribute("label", e.Label))
	if errors.Is(err, graph.ErrEdgeAlreadyExists) {
		return nil
	}
	return err
}

// siteOf returns where an operation was called, or "" when no stack was
// recorded (Site then says "call #seq", which the vertex title already does).
func siteOf(o *checker.Op, seq uint64) string {
	if s := o.Site(); s != fmt.Sprintf("call #%d", seq) {
		return s
	}
	return ""
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// before reports whether u happens before v, as the engine decided it:
// among the work of one capture, as the capture's own clocks do; between
// captured work and other work, never (the graph's work runs at its
// launches, which the graph shows nothing of).
func before(u, v *Vertex) bool {
	if !u.hasStep || !v.hasStep || u.Seq >= v.Seq || u.step.capture != v.step.capture {
		return false
	}
	if u.step.capture != 0 {
		return v.step.localClock.Covers(u.step.local)
	}
	if u.step.epoch.Clock != 0 {
		return v.step.clock.Covers(u.step.epoch)
	}
	// A host call that no one is ordered after by epoch (a synchronization):
	// what it knew is known to everything that follows it.
	return v.step.clock.CoversAll(u.step.clock)
}

// orderings returns the edges among vs (sorted by seq): stream and host
// order between consecutive operations of a lane, and the other orderings
// that no shown operation implies.
func orderings(vs []*Vertex) []Edge {
	var out []Edge
	last := map[hb.AgentID]*Vertex{}
	for _, v := range vs {
		if !v.hasStep {
			continue
		}
		if u := last[v.Lane.Agent]; u != nil && u.step.capture == v.step.capture {
			kind := EdgeStream
			if v.Lane.Host() {
				kind = EdgeHost
			}
			out = append(out, Edge{From: u.ID, To: v.ID, Kind: kind, Label: string(kind)})
		}
		last[v.Lane.Agent] = v
	}
	for _, u := range vs {
		for _, v := range vs {
			if u.Lane.Agent == v.Lane.Agent || !before(u, v) {
				continue
			}
			implied := false
			for _, w := range vs {
				if w != u && w != v && before(u, w) && before(w, v) {
					implied = true
					break
				}
			}
			if !implied {
				kind, label := classify(u, v)
				out = append(out, Edge{From: u.ID, To: v.ID, Kind: kind, Label: label})
			}
		}
	}
	return out
}

// classify says why u, on one lane, is ordered directly before v, on another.
func classify(u, v *Vertex) (EdgeKind, string) {
	if u.Op == model.OpEventRecord.String() && v.joined == u.Seq {
		return EdgeEvent, "event " + v.event
	}
	if u.memWrite && v.memFollowed && u.memAddr&^7 == v.memAddr&^7 {
		return EdgeValue, fmt.Sprintf("value at 0x%x", v.memAddr)
	}
	switch u.Op {
	case model.OpMemcpy.String(), model.OpMemset.String():
		if !v.Lane.Host() {
			return EdgeSync, "host waited for " + u.API + ", then issued"
		}
	}
	uk, vk := u.Lane.Kind, v.Lane.Kind
	legacy := hb.KindLegacy.String()
	blocking := func(k string) bool { return k == hb.KindBlocking.String() || k == hb.KindPerThread.String() }
	switch {
	case v.Lane.Host() && hostSync(v.Op):
		return EdgeSync, "host waits (" + v.API + ")"
	case u.Lane.Host():
		return EdgeIssue, "issued after"
	case (uk == legacy && blocking(vk)) || (vk == legacy && blocking(uk)):
		return EdgeJoin, string(EdgeJoin)
	}
	return EdgeOrder, string(EdgeOrder)
}

// hostSync reports whether a host call of the given op makes the host wait
// for stream work (a query when it answers success).
func hostSync(op string) bool {
	switch op {
	case model.OpStreamSync.String(), model.OpEventSync.String(), model.OpDeviceSync.String(),
		model.OpStreamQuery.String(), model.OpEventQuery.String():
		return true
	}
	return false
}

// missingEdge returns the ordering whose absence a finding reports, from the
// operation that should come first to the one that should wait for it, as
// the finding's rule says (checker.MissingOrder). A use-after-free has none:
// the use was issued after the free, and no ordering added between them
// would make it right (an edge from the use back to the free would close a
// cycle), so the graph shows no missing edge.
func missingEdge(f *checker.Finding) *Edge {
	from, alloc, ok := checker.MissingOrder(f)
	if !ok {
		return nil
	}
	op := &f.Ops[0]
	label := fmt.Sprintf("missing: the %s must wait for #%d", op.Role, from)
	if alloc {
		label = fmt.Sprintf("missing: the %s must wait for the allocation #%d", op.Role, from)
	}
	return &Edge{From: vertexID(from), To: vertexID(op.Seq), Kind: EdgeMissing, Label: label}
}
