package explain

import (
	"slices"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// DefaultMaxVertices bounds a graph's vertices when Options.MaxVertices is 0.
const DefaultMaxVertices = 20

// Options adjust Graphs.
type Options struct {
	// MaxVertices bounds the vertices of each graph, the note included
	// (DefaultMaxVertices if 0). The finding's own operations are always
	// shown.
	MaxVertices int
}

// Build analyzes the trace r reads, named name, with the checker's
// options copts (their Observe is replaced), and returns the analysis and
// the graph of each of its findings: one pass, as Recorder does it. A
// damaged trace is analyzed up to the damage; the error is for other
// failures of r.
func Build(name string, r model.Reader, copts checker.Options, opts Options) (*checker.Result, []*Graph, error) {
	rc := NewRecorder(r.Tables())
	copts.Observe = rc.Observe
	res, err := checker.CheckWith(name, r, copts)
	if err != nil {
		return res, nil, err
	}
	gs, err := rc.Graphs(res, opts)
	return res, gs, err
}

// Graphs returns the graph of each finding of res, the analysis whose
// pass the Recorder followed, in order.
func (rc *Recorder) Graphs(res *checker.Result, opts Options) ([]*Graph, error) {
	if len(res.Findings) == 0 {
		return nil, nil
	}
	maxV := opts.MaxVertices
	if maxV <= 0 {
		maxV = DefaultMaxVertices
	}
	var cols []*collector
	fixed := map[uint64]*recorded{} // The findings' own operations, by seq.
	for _, f := range res.Findings {
		c := newCollector(f, maxV)
		cols = append(cols, c)
		for _, s := range c.fixed {
			fixed[s] = rc.call(s)
		}
	}
	for i := range rc.cands {
		rc.hand(&rc.cands[i], cols, fixed)
	}
	graphs := make([]*Graph, len(cols))
	for i, c := range cols {
		g, err := rc.graph(i+1, c, fixed, maxV)
		if err != nil {
			return nil, err
		}
		graphs[i] = g
	}
	return graphs, nil
}

// hand gives a candidate to the collectors whose findings it is context
// of, in trace order. A finding's own operation is context of none, but
// for a stream memory operation, whose warning is context for the races
// it may explain.
func (rc *Recorder) hand(cd *candidate, cols []*collector, fixed map[uint64]*recorded) {
	r := cd.r
	_, isFixed := fixed[r.ev.Seq]
	if cd.capture {
		if !isFixed {
			rc.handCaptured(cd, cols, fixed)
		}
		return
	}
	if isFixed && r.ev.Op != model.OpStreamMemOp {
		return
	}
	s := &cd.s
	for _, c := range cols {
		seq := r.ev.Seq
		if seq <= c.lo || seq >= c.hi || isFixed && slices.Contains(c.fixed, seq) {
			continue
		}
		// Device synchronizations are all shown: one on another device than
		// the finding's streams is a bug worth seeing.
		want := s.device || slices.ContainsFunc(s.touched, c.involves)
		join := false
		if !want && s.legacy {
			join = rc.legacyJoins(&r.ev, cd.nAgents, c)
			want = join
		}
		if want {
			r.target, r.record = s.target, s.record
			r.join = r.join || join
			c.win.add(r)
		}
	}
}
