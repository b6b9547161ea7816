package explain

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// realTrace is the recorded trace of the golden test: the one file in its
// directory, whatever its process id.
const realTraceDir = "../testdata/real/use_before_alloc_racy-static"

// analyze checks the trace at path (reported as name) and builds its graphs
// in the same pass.
func analyze(t *testing.T, path, name string, opts Options) ([]*Graph, *checker.Result) {
	t.Helper()
	r, closer, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	res, gs, err := Build(name, r, checker.Options{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != len(res.Findings) {
		t.Fatalf("%d graphs for %d findings", len(gs), len(res.Findings))
	}
	return gs, res
}

// txtarTrace writes the trace.jsonl section of a checker golden file to a
// temporary file named after it, and returns its path.
func txtarTrace(t *testing.T, file string) string {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "trace.jsonl" {
			path := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(file), ".txtar")+".jsonl")
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("%s has no trace.jsonl section", file)
	return ""
}

func realTrace(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(realTraceDir, "*.sctrace"))
	if len(files) != 1 {
		t.Fatalf("want one trace in %s, found %v", realTraceDir, files)
	}
	return files[0]
}

// racyTraces returns every racy hand-written trace of the checker's tests.
func racyTraces(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, f := range golden.CheckerFiles(t, "../checker/testdata", "_racy.txtar") {
		paths = append(paths, txtarTrace(t, f))
	}
	return paths
}

func render(t *testing.T, g *Graph, write func(*bytes.Buffer, *Graph) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func dotOf(b *bytes.Buffer, g *Graph) error  { return DOT(b, g) }
func textOf(b *bytes.Buffer, g *Graph) error { return Text(b, g) }

func checkGolden(t *testing.T, path, got string) { golden.Match(t, path, got, *update) }

// TestGolden compares the DOT and text of the first finding of hand-written
// examples and of a recorded trace with testdata/*.dot and *.txt.
func TestGolden(t *testing.T) {
	cases := []struct{ name, path string }{
		{"reuse_while_in_flight_racy", txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "reuse_while_in_flight_racy"))},
		{"event_rerecord_racy", txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "event_rerecord_racy"))},
		{"host_fn_run_later_fn_racy", txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "host_fn_run_later_fn_racy"))},
		// A race inside a captured graph: the capture's own orderings (the
		// fork's event, stream order) are drawn from its own clocks.
		{"capture_inner_free_racy", txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "capture_inner_free_racy"))},
		{"use_before_alloc_racy-static", realTrace(t)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gs, _ := analyze(t, c.path, c.name, Options{})
			if len(gs) == 0 {
				t.Fatal("no findings")
			}
			checkGolden(t, filepath.Join("testdata", c.name+".dot"), render(t, gs[0], dotOf))
			checkGolden(t, filepath.Join("testdata", c.name+".txt"), render(t, gs[0], textOf))
		})
	}
}

// TestDeterministic: two analyses and replays of the same trace give
// byte-identical DOT and text, for every finding of every racy trace.
func TestDeterministic(t *testing.T) {
	for _, path := range append(racyTraces(t), realTrace(t)) {
		first, _ := analyze(t, path, filepath.Base(path), Options{})
		second, _ := analyze(t, path, filepath.Base(path), Options{})
		for i := range first {
			for _, w := range []func(*bytes.Buffer, *Graph) error{dotOf, textOf} {
				a, b := render(t, first[i], w), render(t, second[i], w)
				if a != b {
					t.Errorf("%s finding %d: two runs differ:\n%s\n---\n%s", filepath.Base(path), i+1, a, b)
				}
				if again := render(t, first[i], w); again != a {
					t.Errorf("%s finding %d: rendering twice differs", filepath.Base(path), i+1)
				}
			}
		}
	}
}

// TestGraphviz: dot accepts every graph (skipped where Graphviz is not
// installed).
func TestGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot not installed")
	}
	for _, path := range append(racyTraces(t), realTrace(t)) {
		gs, _ := analyze(t, path, filepath.Base(path), Options{})
		for i, g := range gs {
			cmd := exec.Command(dot, "-Tsvg")
			cmd.Stdin = strings.NewReader(render(t, g, dotOf))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("<svg")) {
				t.Errorf("%s finding %d: dot -Tsvg: %v\n%s", filepath.Base(path), i+1, err, stderr.String())
			}
		}
	}
}

// TestMissingIsMissing: in every graph, the operation that should come
// first does not reach the one that should wait through the edges shown,
// and every edge, the missing one too, goes forward in the trace.
func TestMissingIsMissing(t *testing.T) {
	for _, path := range append(racyTraces(t), realTrace(t)) {
		gs, _ := analyze(t, path, filepath.Base(path), Options{})
		for _, g := range gs {
			name := fmt.Sprintf("%s finding %d (%s)", filepath.Base(path), g.Number, g.Finding.Rule)
			if m := g.Missing; m != nil {
				if slices.ContainsFunc(g.orderedBefore(m.To), func(v *Vertex) bool { return v.ID == m.From }) {
					t.Errorf("%s: the missing edge %s -> %s is implied by the others", name, m.From, m.To)
				}
				// Backwards, it would close a cycle with stream or call order.
				if g.Vertex(m.From).Seq >= g.Vertex(m.To).Seq {
					t.Errorf("%s: the missing edge %s -> %s goes back in the trace", name, m.From, m.To)
				}
			}
			for _, e := range g.Edges() {
				if e.Kind != EdgeMissing && g.Vertex(e.From).Seq >= g.Vertex(e.To).Seq {
					t.Errorf("%s: edge %s -> %s goes back in the trace", name, e.From, e.To)
				}
			}
		}
	}
}

// TestStaleRecord: a wait that joins a record made before the allocation
// shows that record (outside the finding's range) and the event edge.
func TestStaleRecord(t *testing.T) {
	gs, _ := analyze(t, txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "event_stale_racy")), "stale", Options{})
	g := gs[0]
	var record, wait *Vertex
	for _, v := range g.Vertices() {
		switch v.Op {
		case "event_record":
			record = v
		case "stream_wait_event":
			wait = v
		}
	}
	if record == nil || wait == nil {
		t.Fatalf("want the record and the wait among the vertices:\n%s", render(t, g, textOf))
	}
	if record.Seq > g.Finding.Alloc.Seq {
		t.Errorf("record #%d is not the stale one, before the allocation #%d", record.Seq, g.Finding.Alloc.Seq)
	}
	if !slices.ContainsFunc(g.Edges(), func(e Edge) bool { return e.From == record.ID && e.To == wait.ID && e.Kind == EdgeEvent }) {
		t.Errorf("no event edge %s -> %s:\n%s", record.ID, wait.ID, render(t, g, textOf))
	}
	if g.Missing == nil || g.Missing.From != vertexID(g.Finding.Alloc.Seq) || g.Missing.To != vertexID(g.Finding.Ops[0].Seq) {
		t.Errorf("missing edge %+v, want allocation -> use", g.Missing)
	}
}

// TestCap: many synchronizations between the allocation and the use are cut
// to the vertex budget, and a note counts the rest.
func TestCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"stream_create","stream":"s3"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"app.cu:10"}
`)
	const pairs = 30
	for i := 0; i < pairs; i++ {
		fmt.Fprintf(&b, `{"op":"event_record","event":"e%d","stream":"s1"}`+"\n", i)
		fmt.Fprintf(&b, `{"op":"stream_wait_event","stream":"s3","event":"e%d"}`+"\n", i)
	}
	b.WriteString(`{"op":"launch","stream":"s2","kernel":"k","ptrs":["0x7f0000000000"],"site":"app.cu:20"}` + "\n")
	path := filepath.Join(t.TempDir(), "many.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{0, 7, 8} {
		gs, _ := analyze(t, path, "many.jsonl", Options{MaxVertices: max})
		g := gs[0]
		want := max
		if max == 0 {
			want = DefaultMaxVertices
		}
		vs := g.Vertices()
		if len(vs) != want {
			t.Errorf("max %d: %d vertices, want %d", max, len(vs), want)
		}
		shown := len(vs) - 1 - 2 // Less the note and the two operations of the finding.
		if g.Omitted != 2*pairs-shown {
			t.Errorf("max %d: %d omitted, want %d", max, g.Omitted, 2*pairs-shown)
		}
		if last := vs[len(vs)-1]; last.ID != NoteID || !strings.Contains(last.Note, fmt.Sprint(g.Omitted)) {
			t.Errorf("max %d: last vertex %+v, want the note", max, last)
		}
		if g.Missing == nil {
			t.Errorf("max %d: no missing edge", max)
		}
	}
}

// A graph launch among a finding's operations says which operation in the
// graph made the use: in a recorded trace, the captured kernel.
func TestGraphNodeNamed(t *testing.T) {
	files, _ := filepath.Glob("../testdata/real/graph_event_node_racy-static/*.sctrace")
	if len(files) != 1 {
		t.Fatalf("want one trace, found %v", files)
	}
	gs, res := analyze(t, files[0], "graph_event_node_racy", Options{})
	for i, f := range res.Findings {
		if f.Rule != string(checker.RuleFreeWhileInFlight) {
			continue
		}
		const want = "in the graph: cudaLaunchKernel of sc_read_spin at main testdata/cuda/graph_event_node_racy.cu:26"
		if text := render(t, gs[i], textOf); !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
		return
	}
	t.Fatal("no free-while-in-flight finding")
}

// A wait for a value that was followed is drawn after the write it read,
// with an edge of its own kind; the race with work issued after the write
// stays a race, and the graph shows why the wait does not cover it.
func TestStreamMemOpValueEdge(t *testing.T) {
	const trace = `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"stream_create","stream":"s2","flags":"non_blocking"}
{"op":"malloc","ptr":"0x7e0000000000","size":4,"site":"m.cu:9"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"m.cu:10"}
{"op":"launch","stream":"s1","kernel":"first","ptrs":["0x7f0000000000"],"site":"m.cu:11"}
{"op":"stream_mem_op","stream":"s1","ptr":"0x7e0000000000","mem_op":"write32","value":1,"api":"cuStreamWriteValue32","site":"m.cu:12"}
{"op":"launch","stream":"s1","kernel":"second","ptrs":["0x7f0000000000"],"site":"m.cu:13"}
{"op":"stream_mem_op","stream":"s2","ptr":"0x7e0000000000","mem_op":"wait32","value":1,"api":"cuStreamWaitValue32","site":"m.cu:14"}
{"op":"free_async","stream":"s2","ptr":"0x7f0000000000","site":"m.cu:15"}
{"op":"device_sync"}
{"op":"free","ptr":"0x7e0000000000","site":"m.cu:16"}
`
	path := filepath.Join(t.TempDir(), "memop.jsonl")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	gs, res := analyze(t, path, "memop", Options{})
	if len(res.Findings) != 1 || res.Findings[0].Ops[1].Seq != 7 {
		t.Fatalf("want one free-while-in-flight against the second kernel, got %+v", res.Findings)
	}
	g := gs[0]
	text := render(t, g, textOf)
	if !slices.ContainsFunc(g.Edges(), func(e Edge) bool { return e.From == "op6" && e.To == "op8" && e.Kind == EdgeValue }) {
		t.Errorf("no value edge from the write to the wait:\n%s", text)
	}
	if !strings.Contains(text, "waits for 0x7e0000000000 >= 1, after the writes that can give it") {
		t.Errorf("the wait's detail does not say it was followed:\n%s", text)
	}
}

// The write-to-wait edge keeps its kind when the wait is one of the
// finding's own operations (the flag's free races with the wait).
func TestStreamMemOpValueEdgeToFindingOp(t *testing.T) {
	gs, _ := analyze(t, txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "stream_mem_op_flag_freed_racy")), "flag", Options{})
	if !slices.ContainsFunc(gs[0].Edges(), func(e Edge) bool { return e.From == "op4" && e.To == "op5" && e.Kind == EdgeValue }) {
		t.Errorf("no value edge from the write to the wait:\n%s", render(t, gs[0], textOf))
	}
}

// A node added to a graph by hand is drawn as work that runs at the
// graph's launches, not as a call that did not take effect.
func TestGraphNodeAddedByHandLabel(t *testing.T) {
	gs, _ := analyze(t, txtarTrace(t, golden.CheckerFile(t, "../checker/testdata", "stream_mem_op_graph_node_racy")), "node", Options{})
	for _, g := range gs {
		text := render(t, g, textOf)
		if strings.Contains(text, "cuGraphAddBatchMemOpNode") && (strings.Contains(text, "did not take effect") ||
			!strings.Contains(text, "in a graph: runs at its launches")) {
			t.Errorf("the node is not drawn as a graph's work:\n%s", text)
		}
	}
}
