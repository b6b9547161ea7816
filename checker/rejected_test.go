package checker_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

// checkGolden analyzes the trace of a golden file with opts.
func checkGolden(t *testing.T, name string, opts checker.Options) *checker.Result {
	t.Helper()
	ar, err := txtar.ParseFile(golden.CheckerFile(t, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "trace.jsonl" {
			res, err := checker.CheckWith("trace.jsonl", model.NewJSONLReader(strings.NewReader(string(f.Data)), "trace.jsonl"), opts)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatalf("%s has no trace", name)
	return nil
}

// TestRejectedUseSaysSo checks that a use after free CUDA rejected says so
// in its report, and that one CUDA accepted does not.
func TestRejectedUseSaysSo(t *testing.T) {
	rejected := 0
	for _, f := range checkGolden(t, "rejected_use_after_free_racy", checker.Options{}).Findings {
		if f.Rule != string(checker.RuleUseAfterFree) {
			continue
		}
		rejected++
		if !f.Ops[0].Rejected || !strings.Contains(f.Message, "CUDA rejected the call") || !strings.Contains(f.Why, "CUDA rejected the call") {
			t.Errorf("a rejected use is not said to be rejected: %+v: %s / %s", f.Ops[0].Rejected, f.Message, f.Why)
		}
	}
	if rejected != 3 {
		t.Errorf("%d rejected uses after free reported, want 3", rejected)
	}
	for _, f := range checkGolden(t, "use_after_free_racy", checker.Options{}).Findings {
		if f.Ops[0].Rejected || strings.Contains(f.Message+f.Why, "rejected") {
			t.Errorf("an accepted use is said to be rejected: %s / %s", f.Message, f.Why)
		}
	}
	for _, f := range checkGolden(t, "rejected_free_racy", checker.Options{}).Findings {
		if f.Rule == string(checker.RuleDoubleFree) && !strings.Contains(f.Why, "CUDA rejected this free") {
			t.Errorf("a rejected double free is not said to be rejected: %s", f.Why)
		}
	}
}
