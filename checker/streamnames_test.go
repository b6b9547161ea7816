package checker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// writeSource writes a source file for a trace's sites to name streams
// from, and returns its path.
func writeSource(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkTrace analyzes a JSON Lines trace given as text.
func checkTrace(t *testing.T, trace string) *checker.Result {
	t.Helper()
	res, err := checker.Check("t.jsonl", model.NewJSONLReader(strings.NewReader(trace), "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// crossStreamRace analyzes a use on stream b, created at siteB, of memory
// allocated on stream a, created at siteA, with nothing ordering them, and
// returns its one finding.
func crossStreamRace(t *testing.T, src, a, siteA, b, siteB string) *checker.Finding {
	t.Helper()
	res := checkTrace(t, fmt.Sprintf(`{"op":"stream_create","stream":%q,"flags":"non_blocking","site":%q}
{"op":"stream_create","stream":%q,"flags":"non_blocking","site":%q}
{"op":"malloc_async","stream":%[1]q,"ptr":"0x7f0000000000","size":4096,"site":"%[5]s:10"}
{"op":"launch","stream":%[3]q,"kernel":"k","ptrs":["0x7f0000000000"],"site":"%[5]s:11"}
`, a, siteA, b, siteB, src))
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings, want 1", len(res.Findings))
	}
	return res.Findings[0]
}

// TestStreamsNamedAsTheProgramNamesThem: every sentence of a finding names
// a stream by the variable its creating line assigns, read from the
// program's source (C++: an assignment or cudaStreamCreate's &argument);
// the stable id stays in Op.Stream.
func TestStreamsNamedAsTheProgramNamesThem(t *testing.T) {
	src := writeSource(t, "app.cu", `int main() {
    cudaStream_t copy = make_stream(true);
    cudaStream_t compute;
    SC_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) cudaStreamCreate(&pool[i]);
}
`)
	f := crossStreamRace(t, src, "a", "main "+src+":2 (via make_stream)", "b", src+":4")
	for _, text := range []string{f.Message, f.Why, f.Fix} {
		if strings.Contains(text, "stream a") || strings.Contains(text, "stream b") {
			t.Errorf("a sentence names a stream by the trace's id: %q", text)
		}
	}
	if !strings.Contains(f.Message, "on stream `compute` uses") {
		t.Errorf("message %q does not name the stream `compute`", f.Message)
	}
	if want := "Record an event on stream `copy` after"; !strings.HasPrefix(f.Fix, want) {
		t.Errorf("fix %q, want it to start %q", f.Fix, want)
	}
	if !strings.Contains(f.Why, "stream `copy` and stream `compute`") {
		t.Errorf("why %q does not name both streams", f.Why)
	}
	use := f.Ops[0]
	if use.Stream != "b" || use.StreamName != "compute" || f.Alloc.Stream != "a" || f.Alloc.StreamName != "copy" {
		t.Errorf("streams (id, name): use (%q, %q), allocation (%q, %q)", use.Stream, use.StreamName, f.Alloc.Stream, f.Alloc.StreamName)
	}
}

// A stream the source does not name (an element of an array, a line that
// made several streams, a source not at hand) is named by its id and the
// line that made it, at its first mention in each sentence.
func TestStreamsNotNamedBySourceKeepTheirPlace(t *testing.T) {
	src := writeSource(t, "app.cu", `int main() {
    for (int i = 0; i < 2; i++) cudaStreamCreate(&pool[i]);
}
`)
	f := crossStreamRace(t, src, "0x10", src+":2", "0x20", src+":9")
	s1 := fmt.Sprintf("stream s1 (created at %s:2)", src)
	if strings.Count(f.Fix, s1) != 1 || !strings.Contains(f.Why, s1) || strings.Count(f.Why, "(created at "+src+":2)") != 1 {
		t.Errorf("want %q once in each sentence:\nwhy: %s\nfix: %s", s1, f.Why, f.Fix)
	}
	if f.Alloc.StreamName != "" || f.Ops[0].StreamName != "" {
		t.Errorf("names read for streams the source does not name: %q, %q", f.Alloc.StreamName, f.Ops[0].StreamName)
	}
}

// Two streams the program gives one name are told apart by their ids, and
// the default streams are named as CUDA names them.
func TestStreamNamesTellStreamsApart(t *testing.T) {
	src := writeSource(t, "work.py", `import torch
def f():
    s = torch.cuda.Stream()
def g():
    s = torch.cuda.Stream()
`)
	res := checkTrace(t, fmt.Sprintf(`{"op":"stream_create","stream":"0x10","site":"py::f %[1]s:3"}
{"op":"stream_create","stream":"0x20","site":"py::g %[1]s:5"}
{"op":"malloc_async","stream":"0x10","ptr":"0x7f0000000000","size":4096,"site":"py::f %[1]s:10"}
{"op":"launch","stream":"0x20","kernel":"k","ptrs":["0x7f0000000000"],"site":"py::g %[1]s:11"}
{"op":"stream_create","stream":"0x30","flags":"non_blocking"}
{"op":"malloc_async","stream":"0x30","ptr":"0x7f1000000000","size":4096}
{"op":"launch","stream":"per_thread","tid":7,"kernel":"k","ptrs":["0x7f1000000000"]}
{"op":"malloc_async","stream":"legacy","ptr":"0x7f2000000000","size":4096}
{"op":"launch","stream":"0x30","kernel":"k","ptrs":["0x7f2000000000"]}
`, src))
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Message, f.Fix)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"on stream `s` (s2) uses",
		"Record an event on stream `s` (s1) after",
		"cudaLaunchKernel of k on the per-thread default stream of host thread 7 uses",
		"Record an event on the legacy default stream after",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("messages and fixes lack %q:\n%s", want, all)
		}
	}
}
