package explain

import (
	"errors"
	"fmt"
	"io"

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

// replay is the state of one pass over the trace.
type replay struct {
	chk        *checker.Checker
	tables     *model.Tables
	cols       []*collector
	fixed      map[uint64]*recorded // The findings' own operations, by seq.
	lastRecord map[uint64]*recorded // Most recent record of each event handle.
	hostFns    map[uint64]*recorded // Enqueued host functions by token, until their run.
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
		hostFns:    map[uint64]*recorded{},
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
	if ev.Op.NamesEvent() {
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
	case model.OpHostFnRun:
		// The run joins its enqueue, as a wait joins a record.
		if record = rp.hostFns[ev.Value]; record != nil {
			target = record.step.agent
			delete(rp.hostFns, ev.Value)
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
	case ev.Op == model.OpHostFunc && ev.Value != 0:
		rp.hostFns[ev.Value] = get()
	}
	if isFixed && ev.Op != model.OpStreamMemOp {
		// A finding's own operation, not context. A stream memory
		// operation's warning is context for the races it may explain.
		return
	}
	s := rp.sync(ev, st, target, record, hostBefore)
	if len(s.touched) == 0 && !s.device && !s.legacy {
		return
	}
	rp.hand(ev, s, isFixed, get)
}
