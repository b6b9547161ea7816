package explain

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// DOT writes the graph in the Graphviz DOT language: one cluster per lane
// (the host, then each stream), operations in trace order within it, and the
// missing ordering as a dashed red edge. The output depends only on the
// graph: the same trace gives byte-identical DOT.
//
// It does not use draw.DOT from github.com/dominikbraun/graph, which ranges
// over the adjacency map (Go map order, so the output changes from run to
// run) and has neither clusters nor escaping.
func DOT(w io.Writer, g *Graph) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("digraph %s {\n", quote(fmt.Sprintf("finding%d", g.Number)))
	p("\tgraph [label=%s, labelloc=t, labeljust=l, fontname=\"Helvetica\", fontsize=12, rankdir=TB, newrank=true];\n", quote(graphTitle(g)))
	p("\tnode [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n")
	p("\tedge [fontname=\"Helvetica\", fontsize=9];\n")

	vs := g.Vertices()
	for _, l := range g.Lanes() {
		p("\n\tsubgraph %s {\n", quote(clusterID(l)))
		style := "rounded"
		if l.Host() {
			style = "dashed"
		}
		p("\t\tlabel=%s;\n\t\tstyle=%s;\n\t\tcolor=\"gray50\";\n", quote(l.Title()), quote(style))
		for _, v := range vs {
			if v.ID != NoteID && v.Lane.Agent == l.Agent {
				p("\t\t%s [%s];\n", quote(v.ID), vertexAttrs(v))
			}
		}
		p("\t}\n")
	}
	for _, v := range vs {
		if v.ID == NoteID {
			p("\n\t%s [shape=note, style=filled, fillcolor=\"gray95\", label=%s];\n", quote(v.ID), quote(v.Note))
		}
	}
	p("\n")
	edges := g.Edges()
	for _, e := range edges {
		p("\t%s -> %s [%s];\n", quote(e.From), quote(e.To), edgeAttrs(e))
	}
	// Invisible edges between operations consecutive in the trace keep
	// call order flowing downward across the lanes.
	linked := map[[2]string]bool{}
	for _, e := range edges {
		if e.Kind != EdgeMissing {
			linked[[2]string{e.From, e.To}] = true
		}
	}
	var prev *Vertex
	for _, v := range vs {
		if v.ID == NoteID {
			continue
		}
		if prev != nil && !linked[[2]string{prev.ID, v.ID}] {
			p("\t%s -> %s [style=invis];\n", quote(prev.ID), quote(v.ID))
		}
		prev = v
	}
	p("}\n")
	return bw.Flush()
}

func graphTitle(g *Graph) string {
	f := g.Finding
	s := fmt.Sprintf("finding %d: %s[%s] %s", g.Number, f.Severity, f.Rule, f.Message)
	if r := f.Repeats(); r != "" {
		s += " (" + r + ")"
	}
	return s
}

func clusterID(l Lane) string {
	if l.Host() {
		return "cluster_host"
	}
	return fmt.Sprintf("cluster_stream%d", l.Agent)
}

func vertexAttrs(v *Vertex) string {
	lines := []string{v.Title()}
	if v.Detail != "" {
		lines = append(lines, v.Detail)
	}
	if v.Site != "" {
		lines = append(lines, v.Site)
	}
	if v.Role != "" {
		lines = append(lines, "("+v.Role+")")
	}
	switch {
	case v.Captured:
		lines = append(lines, "(in a graph: runs at its launches)")
	case v.Skipped:
		lines = append(lines, "(did not take effect)")
	}
	attrs := []string{"label=" + quote(strings.Join(lines, "\n"))}
	switch {
	case v.Finding && strings.HasPrefix(v.Role, "allocation"):
		attrs = append(attrs, `style="rounded,filled,bold"`, `fillcolor="#dbe9ff"`)
	case v.Finding:
		attrs = append(attrs, `style="rounded,filled,bold"`, `fillcolor="#ffe0e0"`)
	case v.Skipped:
		attrs = append(attrs, `style="rounded,dashed"`, `fontcolor="gray40"`)
	}
	return strings.Join(attrs, ", ")
}

func edgeAttrs(e Edge) string {
	var attrs []string
	if e.Kind != EdgeStream && e.Kind != EdgeHost {
		attrs = append(attrs, "label="+quote(e.Label))
	}
	switch e.Kind {
	case EdgeStream, EdgeHost:
		attrs = append(attrs, `color="gray30"`)
	case EdgeEvent, EdgeValue:
		attrs = append(attrs, `color="#1f6fd1"`, `fontcolor="#1f6fd1"`)
	case EdgeSync, EdgeIssue:
		attrs = append(attrs, `color="#2e8b57"`, `fontcolor="#2e8b57"`)
	case EdgeJoin:
		attrs = append(attrs, `color="#8a2be2"`, `fontcolor="#8a2be2"`)
	case EdgeMissing:
		attrs = append(attrs, `style=dashed`, `color=red`, `fontcolor=red`, `penwidth=2`, `constraint=false`)
	default:
		attrs = append(attrs, `style=dotted`, `color="gray50"`)
	}
	return strings.Join(attrs, ", ")
}

// quote returns s as a DOT quoted string; line breaks become centered
// line breaks (\n) of Graphviz labels.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
