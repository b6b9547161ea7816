package checker_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/golden"
)

// TestRealReportsUnchanged pins what the checker reports on every recording
// in testdata/real, testdata/realworld and testdata/realworld-interpose: each finding's rule, count,
// message and the call sites of its operations, trace by trace, in
// testdata/real-reports.txt. A change to what streamcheck decides on real
// programs shows there as a diff (go test -update rewrites it, and the diff
// is then reviewed with the change), where TestRealTraces and
// TestRealWorldCorpus check only the rules and counts the programs expect.
func TestRealReportsUnchanged(t *testing.T) {
	var b strings.Builder
	for _, corpus := range []string{"real", "realworld", "realworld-interpose"} {
		traces, err := filepath.Glob(filepath.Join("..", "testdata", corpus, "*", "*.sctrace"))
		if err != nil {
			t.Fatal(err)
		}
		if len(traces) == 0 {
			t.Fatalf("no recordings in testdata/%s", corpus)
		}
		for _, path := range traces {
			res := checkFile(t, path)
			name := filepath.ToSlash(filepath.Join(corpus, filepath.Base(filepath.Dir(path)), filepath.Base(path)))
			fmt.Fprintf(&b, "%s: %d events, %d findings\n", name, res.Stats.Events, len(res.Findings))
			for _, f := range res.Findings {
				fmt.Fprintf(&b, "  %s %s x%d: %s\n", f.Severity, f.Rule, f.Count, f.Message)
				for _, op := range f.Ops {
					fmt.Fprintf(&b, "    %s: %s\n", op.Role, op.Site())
				}
			}
		}
	}
	golden.Match(t, filepath.Join("testdata", "real-reports.txt"), b.String(), *update)
}
