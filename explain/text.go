package explain

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Text writes the graph as plain text: the finding, its operations and the
// synchronization around them in trace order, the orderings that exist
// between them, and the one that is missing.
func Text(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	f := g.Finding

	p("%s\n", graphTitle(g))
	if f.Trace != "" {
		p("  trace: %s\n", f.Trace)
	}
	var lanes []string
	for _, l := range g.Lanes() {
		if !l.Host() {
			lanes = append(lanes, fmt.Sprintf("%s (%s)", l.Name, l.Kind))
		}
	}
	if len(lanes) > 0 {
		p("  streams: %s\n", strings.Join(lanes, ", "))
	}
	vs := g.Vertices()
	laneWidth, seqWidth := 0, 0
	for _, v := range vs {
		laneWidth = max(laneWidth, len(v.Lane.Name))
		seqWidth = max(seqWidth, len(fmt.Sprint(v.Seq)))
	}
	p("  operations (in call order):\n")
	for _, v := range vs {
		if v.ID == NoteID {
			p("    (%s)\n", v.Note)
			continue
		}
		line := fmt.Sprintf("#%-*d  %-*s  %s", seqWidth, v.Seq, laneWidth, v.Lane.Name, strings.TrimPrefix(v.Title(), fmt.Sprintf("#%d ", v.Seq)))
		if v.Detail != "" {
			line += " (" + v.Detail + ")"
		}
		if v.Site != "" {
			line += " at " + v.Site
		}
		if v.Role != "" {
			line += "  [" + v.Role + "]"
		}
		switch {
		case v.Captured:
			line += "  [in a graph: runs at its launches]"
		case v.Skipped:
			line += "  [did not take effect]"
		}
		p("    %s\n", strings.TrimRight(line, " "))
		if v.GraphNode != "" {
			p("    %*s  in the graph: %s\n", seqWidth+1+2+laneWidth, "", v.GraphNode)
		}
	}

	seqOf := func(id string) string {
		if v := g.Vertex(id); v != nil {
			return fmt.Sprintf("#%d", v.Seq)
		}
		return id
	}
	var existing []Edge
	for _, e := range g.Edges() {
		if e.Kind != EdgeMissing {
			existing = append(existing, e)
		}
	}
	if len(existing) == 0 {
		p("  existing orderings: none between these operations\n")
	} else {
		p("  existing orderings:\n")
		for _, e := range existing {
			label := e.Label
			if e.Kind == EdgeStream {
				label += " on " + g.Vertex(e.From).Lane.Name
			}
			p("    %s -> %s  %s\n", seqOf(e.From), seqOf(e.To), label)
		}
	}

	if m := g.Missing; m != nil {
		p("  missing ordering:\n")
		p("    %s -> %s  %s\n", seqOf(m.From), seqOf(m.To), m.Label)
		p("    %s is ordered after: %s\n", seqOf(m.To), seqList(g.orderedBefore(m.To)))
		p("    ordered after %s: %s\n", seqOf(m.From), seqList(g.orderedAfter(m.From)))
	}
	if f.Why != "" {
		p("  why: %s\n", f.Why)
	}
	if f.Fix != "" {
		p("  fix: %s\n", f.Fix)
	}
	return bw.Flush()
}

func seqList(vs []*Vertex) string {
	if len(vs) == 0 {
		return "nothing shown"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("#%d", v.Seq)
	}
	return strings.Join(parts, ", ")
}
