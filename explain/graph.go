package explain

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dominikbraun/graph"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
)

// Lane is where an operation ran: a stream, or the host (all host threads:
// the engine orders host calls in recording order).
type Lane struct {
	Agent hb.AgentID // hb.HostAgent for the host.
	Name  string     // Stream display name as findings show it, or "host".
	Kind  string     // "non-blocking stream", ..., or "host".
}

// Host reports whether the lane is the host.
func (l Lane) Host() bool { return l.Agent == hb.HostAgent }

// Title names the lane for a heading: "stream s1 (blocking stream)".
func (l Lane) Title() string {
	if l.Host() {
		return "host"
	}
	return fmt.Sprintf("stream %s (%s)", l.Name, l.Kind)
}

// Vertex is one operation of a finding's graph, or the note saying how
// many operations were left out.
type Vertex struct {
	ID     string // "op<seq>"; NoteID for the note.
	Seq    uint64 // Position in the trace; 0 for the note.
	Op     string // JSON Lines op name: "launch", "event_record", ...
	API    string // "cudaLaunchKernel".
	Kernel string
	// Detail says what the call names besides its stream: "event e1
	// (recorded on s1 at #6)", "stream s1".
	Detail string
	Site   string
	// Role is the operation's part in the finding ("allocation", "use",
	// "free", ...); empty for synchronization operations shown as context.
	Role    string
	Finding bool // One of the finding's own operations.
	Skipped bool // A failed or captured call: it ordered nothing.
	// Captured is set on a call captured into a graph (Skipped too): it
	// runs at the graph's launches.
	Captured bool
	TID      uint32
	Lane     Lane
	Note     string // Text of the note vertex.
	// GraphNode says, for a graph launch among the finding's operations,
	// which operation in the graph made the use: "cudaLaunchKernel of scale
	// at app.cu:12" (checker.Op.GraphNode).
	GraphNode string

	step    stepCopy
	hasStep bool   // The engine's step is known and the call took effect.
	event   string // Display name of the event an event operation names.
	joined  uint64 // Seq of the event record a wait or event synchronize joined.
	memAddr uint64 // The address a stream memory operation names.
	// memWrite: a stream memory operation that changes memAddr;
	// memFollowed: a wait for a value there that the engine followed.
	memWrite, memFollowed bool
}

// NoteID is the id of the vertex that says how many operations were left out.
const NoteID = "omitted"

// vertexID names the vertex of the operation with the given seq.
func vertexID(seq uint64) string { return fmt.Sprintf("op%d", seq) }

// Title describes the operation in a few words: "#7 cudaLaunchKernel of fast".
func (v *Vertex) Title() string {
	if v.ID == NoteID {
		return v.Note
	}
	s := fmt.Sprintf("#%d %s", v.Seq, v.API)
	if v.Kernel != "" {
		s += " of " + v.Kernel
	}
	return s
}

// EdgeKind says why one operation is ordered before another.
type EdgeKind string

const (
	EdgeStream  EdgeKind = "stream order"   // Consecutive operations on one stream.
	EdgeHost    EdgeKind = "host order"     // Consecutive host calls.
	EdgeEvent   EdgeKind = "event"          // An event record, to the wait or synchronize that joined it.
	EdgeValue   EdgeKind = "value"          // A write of a value in memory, to a wait for it (cuStreamWriteValue, cuStreamWaitValue).
	EdgeSync    EdgeKind = "sync"           // A stream's work, to the host call that waited for it.
	EdgeIssue   EdgeKind = "issue"          // A host call, to work the host issued after it returned.
	EdgeJoin    EdgeKind = "implicit join"  // The legacy default stream's join with a blocking stream.
	EdgeOrder   EdgeKind = "happens before" // Ordered through operations not shown.
	EdgeMissing EdgeKind = "missing"        // The ordering whose absence is the bug.
)

// Edge is one ordering between two vertices.
type Edge struct {
	From, To string // Vertex ids.
	Kind     EdgeKind
	Label    string
}

// Graph is the happens-before graph of one finding.
type Graph struct {
	// Number is the finding's 1-based position in the trace's findings.
	Number  int
	Finding *checker.Finding
	// HB holds the vertices (keyed by id) and edges; an edge's attributes
	// "kind" and "label" hold its Kind and Label. The missing edge is in it.
	HB graph.Graph[string, *Vertex]
	// Missing is the ordering whose absence is the bug, or nil for rules
	// that are not about a missing ordering (double-free, leak...).
	Missing *Edge
	// Omitted counts the synchronization operations left out to keep the
	// graph small; they lie between seqs OmittedFrom and OmittedTo.
	Omitted                int
	OmittedFrom, OmittedTo uint64
}

func newHBGraph() graph.Graph[string, *Vertex] {
	return graph.New(func(v *Vertex) string { return v.ID }, graph.Directed())
}

// Vertices returns the graph's vertices in trace order, the note last.
func (g *Graph) Vertices() []*Vertex {
	adj, err := g.HB.AdjacencyMap()
	if err != nil {
		return nil
	}
	vs := make([]*Vertex, 0, len(adj))
	for id := range adj {
		if v, err := g.HB.Vertex(id); err == nil {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, compareVertices)
	return vs
}

func compareVertices(a, b *Vertex) int {
	if (a.ID == NoteID) != (b.ID == NoteID) {
		if a.ID == NoteID {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
}

// Vertex returns the vertex with the given id, or nil.
func (g *Graph) Vertex(id string) *Vertex {
	v, err := g.HB.Vertex(id)
	if err != nil {
		return nil
	}
	return v
}

// Edges returns the graph's edges, the missing one included, ordered by the
// trace positions of their ends.
func (g *Graph) Edges() []Edge {
	raw, err := g.HB.Edges()
	if err != nil {
		return nil
	}
	es := make([]Edge, 0, len(raw))
	for _, e := range raw {
		es = append(es, Edge{
			From: e.Source, To: e.Target,
			Kind:  EdgeKind(e.Properties.Attributes["kind"]),
			Label: e.Properties.Attributes["label"],
		})
	}
	seq := func(id string) uint64 {
		if v := g.Vertex(id); v != nil {
			return v.Seq
		}
		return 0
	}
	slices.SortFunc(es, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(seq(a.From), seq(b.From)), cmp.Compare(seq(a.To), seq(b.To)),
			cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Kind, b.Kind))
	})
	return es
}

// Lanes returns the lanes of the graph's operations: the host first, then
// the streams in the order the analysis first saw them.
func (g *Graph) Lanes() []Lane {
	var lanes []Lane
	for _, v := range g.Vertices() {
		if v.ID == NoteID {
			continue
		}
		if !slices.ContainsFunc(lanes, func(l Lane) bool { return l.Agent == v.Lane.Agent }) {
			lanes = append(lanes, v.Lane)
		}
	}
	slices.SortFunc(lanes, func(a, b Lane) int { return cmp.Compare(a.Agent, b.Agent) })
	return lanes
}

// orderedBefore returns the ids of the vertices from which id is reached
// through existing orderings (every edge but the missing one), in trace
// order.
func (g *Graph) orderedBefore(id string) []*Vertex {
	pred, err := g.HB.PredecessorMap()
	if err != nil {
		return nil
	}
	return g.reach(id, pred)
}

// orderedAfter returns the vertices reached from id through existing
// orderings, in trace order.
func (g *Graph) orderedAfter(id string) []*Vertex {
	succ, err := g.HB.AdjacencyMap()
	if err != nil {
		return nil
	}
	return g.reach(id, succ)
}

func (g *Graph) reach(id string, next map[string]map[string]graph.Edge[string]) []*Vertex {
	seen := map[string]bool{id: true}
	stack := []string{id}
	var out []*Vertex
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for n, e := range next[cur] {
			if seen[n] || EdgeKind(e.Properties.Attributes["kind"]) == EdgeMissing {
				continue
			}
			seen[n] = true
			stack = append(stack, n)
			if v := g.Vertex(n); v != nil {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, compareVertices)
	return out
}
