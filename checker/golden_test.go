package checker_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

var update = flag.Bool("update", false, "rewrite the -- expect -- sections of testdata/*.txtar and testdata/rules/*/*.txtar")

// summarize prints findings one per line, in the form the golden files use:
// rule, the sequence numbers of the operations in conflict and of the
// allocation, how often the bug repeated, on how many allocations (when
// more than one), and the other rules folded into it; then the damage and
// the count of unknown address uses and of overlapped allocations, if any.
func summarize(res *checker.Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%s %s op=#%d", f.Severity, f.Rule, f.Ops[0].Seq)
		if len(f.Ops) > 1 {
			fmt.Fprintf(&b, " other=#%d", f.Ops[1].Seq)
		}
		if f.Alloc != nil {
			fmt.Fprintf(&b, " alloc=#%d", f.Alloc.Seq)
		}
		fmt.Fprintf(&b, " count=%d", f.Count)
		if f.Allocations > 1 {
			fmt.Fprintf(&b, " allocations=%d", f.Allocations)
		}
		for _, r := range f.Also {
			fmt.Fprintf(&b, " also=%s", r)
		}
		b.WriteString("\n")
	}
	if res.Damage != nil {
		fmt.Fprintf(&b, "damage: %v\n", res.Damage)
	}
	if n := res.Stats.UnknownAddressUses; n != 0 {
		fmt.Fprintf(&b, "unknown address uses: %d\n", n)
	}
	if n := res.Stats.UnknownAddressFrees; n != 0 {
		fmt.Fprintf(&b, "unknown address frees: %d\n", n)
	}
	if n := res.Stats.OverlappedAllocations; n != 0 {
		fmt.Fprintf(&b, "overlapped allocations: %d\n", n)
	}
	if b.Len() == 0 {
		return "clean\n"
	}
	return b.String()
}

// goldenOptions reads the analysis options a golden file's comment asks
// for: a line "leak-check: full" reports leaks (checker.Options.Leaks), a
// line "alloc-loop-threshold: N" sets the performance lints' threshold
// (checker.Options.AllocLoopThreshold).
func goldenOptions(comment []byte) checker.Options {
	var o checker.Options
	for _, line := range strings.Split(string(comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "leak-check: full" {
			o.Leaks = true
		}
		if n, ok := strings.CutPrefix(line, "alloc-loop-threshold: "); ok {
			fmt.Sscan(n, &o.AllocLoopThreshold)
		}
	}
	return o
}

// analyzeGolden analyzes the trace of a golden file with the options its
// comment asks for.
func analyzeGolden(t *testing.T, comment, trace []byte) *checker.Result {
	t.Helper()
	res, err := checker.CheckWith("trace.jsonl", model.NewJSONLReader(bytes.NewReader(trace), "trace.jsonl"), goldenOptions(comment))
	if err != nil {
		t.Fatal(err)
	}
	checker.LinkImports([]*checker.Result{res}) // as streamcheck check decides for one trace
	return res
}

// TestGolden runs every golden file, testdata/*.txtar and each rule's
// testdata/rules/<id>/*.txtar: the "trace.jsonl" section is analyzed with
// the options its comment asks for (goldenOptions) and the findings must
// match the "expect" section.
func TestGolden(t *testing.T) {
	for _, file := range golden.CheckerFiles(t, "testdata", ".txtar") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var trace, expect []byte
			expectAt := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "trace.jsonl":
					trace = f.Data
				case "expect":
					expect, expectAt = f.Data, i
				}
			}
			if trace == nil || expectAt < 0 {
				t.Fatalf("%s needs -- trace.jsonl -- and -- expect -- sections", file)
			}
			res := analyzeGolden(t, ar.Comment, trace)
			got := summarize(res)
			if *update {
				ar.Files[expectAt].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != string(expect) {
				t.Errorf("findings differ\n--- got\n%s--- want\n%s", got, expect)
				for _, f := range res.Findings {
					t.Logf("%s: %s\n  why: %s\n  fix: %s", f.Rule, f.Message, f.Why, f.Fix)
				}
			}
		})
	}
}
