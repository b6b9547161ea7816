package checker_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// withoutOp reads a trace as if every event of one op had not been recorded.
type withoutOp struct {
	model.Reader
	op model.Op
}

func (w withoutOp) Next(ev *model.Event) error {
	for {
		if err := w.Reader.Next(ev); err != nil || ev.Op != w.op {
			return err
		}
	}
}

// TestPoolReleaseChurnFollowsRecordedThreshold checks pool-release-churn on
// NVIDIA's streamOrderedAllocation sample as recorded on the GPU: its second
// loop (20 passes of allocate, free, synchronize) runs after the program sets
// the default pool's release threshold, so nothing is reported; read without
// that one pool attribute record, the same loop is the churn the rule finds.
func TestPoolReleaseChurnFollowsRecordedThreshold(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "realworld", "streamOrderedAllocation", "*.sctrace"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("want one recording of streamOrderedAllocation, got %v (%v)", paths, err)
	}
	churn := func(res *checker.Result) []*checker.Finding {
		var out []*checker.Finding
		for _, f := range res.Findings {
			if f.Rule == string(checker.RulePoolReleaseChurn) {
				out = append(out, f)
			}
		}
		return out
	}
	if got := churn(checkFile(t, paths[0])); len(got) != 0 {
		t.Fatalf("with the recorded release threshold: %d pool-release-churn findings, want none: %s", len(got), got[0].Message)
	}

	r, c, err := model.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := checker.Check(paths[0], withoutOp{Reader: r, op: model.OpPoolSetAttr})
	if err != nil {
		t.Fatal(err)
	}
	got := churn(res)
	if len(got) != 1 || !strings.Contains(got[0].Message, "grew again 20 times") {
		t.Fatalf("without the threshold record: %d pool-release-churn findings, want one that counts the 20 passes of the loop: %v", len(got), messages(got))
	}
}

func messages(fs []*checker.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Message
	}
	return out
}
