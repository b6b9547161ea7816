package explain

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dominikbraun/graph"

	"github.com/streamcheck/streamcheck/checker"
)

// graph builds the graph of one finding from what its collector kept;
// fixed holds the findings' own operations.
func (rc *Recorder) graph(number int, c *collector, fixed map[uint64]*recorded, maxV int) (*Graph, error) {
	g := &Graph{Number: number, Finding: c.f, HB: newHBGraph()}
	f := c.f
	var devices []int32 // Of the finding's streams.
	for _, id := range c.involved {
		if d := rc.chk.Engine().Agent(id).Device; !slices.Contains(devices, d) {
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
		v := rc.fixedVertex(o, fixed[o.Seq], devices)
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
		v := rc.vertexOf(r, devices)
		byID[v.ID] = v
		vs = append(vs, v)
	}
	room := maxV - len(vs)
	if dropped > 0 {
		room-- // The note.
	}
	for _, r := range items {
		if rec := r.record; rec != nil && room > 0 && byID[vertexID(rec.ev.Seq)] == nil {
			v := rc.vertexOf(rec, devices)
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

// fixedVertex makes the vertex of one of the finding's own operations, r
// what was kept of its call.
func (rc *Recorder) fixedVertex(o *checker.Op, r *recorded, devices []int32) *Vertex {
	v := &Vertex{
		ID: vertexID(o.Seq), Seq: o.Seq, Op: o.Op, API: o.API, Kernel: o.Kernel, Site: siteOf(o, o.Seq), Role: o.Role,
		Finding: true, TID: o.TID,
		Lane: Lane{Agent: o.Agent, Name: cmpOr(laneName(o.Stream, o.StreamName), "host"), Kind: cmpOr(o.StreamKind, "host")},
	}
	if r != nil {
		v.step, v.hasStep, v.Skipped, v.Captured = r.step, r.step.known(), r.step.skipped, r.step.captured || inGraph(&r.ev)
		rc.annotate(v, r, devices)
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
	return v
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
