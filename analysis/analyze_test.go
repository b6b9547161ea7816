package analysis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// demo is a binary trace with one error finding.
const demo = "../cmd/streamcheck/testdata/demo/reuse_while_in_flight.sctrace"

// Run splits binary traces concatenated into one file into processes of
// their own, each named by its place, and keeps going past an input that
// cannot be read.
func TestRunConcatenatedAndUnreadable(t *testing.T) {
	one, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	two := append(append([]byte{}, one...), one...)
	in := Input{Name: "two.sctrace", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(two)), nil }}
	missing := FileInput("missing.jsonl", filepath.Join(t.TempDir(), "missing.jsonl"))
	a := Run([]Input{missing, in}, Options{})
	if len(a.Results) != 2 {
		t.Fatalf("%d results, want 2", len(a.Results))
	}
	if a.Results[0].Trace != "two.sctrace" || a.Results[1].Trace != "two.sctrace (trace 2, at offset "+strconv.Itoa(len(one))+")" {
		t.Errorf("names %q, %q", a.Results[0].Trace, a.Results[1].Trace)
	}
	for _, r := range a.Results {
		if len(r.Findings) == 0 {
			t.Errorf("%s: no findings", r.Trace)
		}
	}
	if len(a.Unreadable) != 1 || !strings.HasPrefix(a.Unreadable[0].Error(), "missing.jsonl: ") {
		t.Errorf("unreadable %v", a.Unreadable)
	}
}
