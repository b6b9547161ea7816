package report

import (
	"bytes"
	"io"
	"runtime/debug"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/heapmeter"
	"github.com/streamcheck/streamcheck/internal/synth"
	"github.com/streamcheck/streamcheck/model"
)

// maxReportBytesPerFinding bounds the heap a report may take per finding,
// the findings themselves aside, with the garbage collector keeping
// garbage to a tenth of the heap (GOGC=10), so that what is measured is
// what the report holds. Building the SARIF or JSON document before
// writing it took over 12 KB a finding, and buffering the whole text report
// over 3 KB; writing a finding at a time takes a few hundred bytes, most of
// them garbage not yet collected (bench/README.md has the figures).
const maxReportBytesPerFinding = 2048

// TestReportMemory: the memory a report takes does not grow with its
// findings, in every format but JUnit (whose testcase of a rule holds the
// text of all its findings).
func TestReportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory: a few seconds")
	}
	const n = 10_000
	var trace bytes.Buffer
	if err := synth.WriteUseAfterFree(&trace, n); err != nil {
		t.Fatal(err)
	}
	r, err := model.NewReader(&trace, "uaf.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := checker.CheckWith("uaf.jsonl", r, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != n {
		t.Fatalf("%d findings, want %d", len(res.Findings), n)
	}
	a := &Analysis{Results: []*checker.Result{res}}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, name := range []string{"text", "json", "sarif"} {
		f, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		u, err := heapmeter.Measure(func(w io.Writer) error {
			return f.Format(w, a, &Options{Root: "/"}) // every finding in full
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes a finding at the peak, %d allocated", name, u.Peak/n, u.Alloc/n)
		if u.Peak/n > maxReportBytesPerFinding {
			t.Errorf("%s: the report took %d bytes a finding at the peak, want at most %d", name, u.Peak/n, maxReportBytesPerFinding)
		}
	}
}
