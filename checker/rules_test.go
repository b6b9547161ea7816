package checker_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

// TestRuleDocumentation: every rule is documented, and its one-line Doc is
// its documentation's title.
func TestRuleDocumentation(t *testing.T) {
	for _, r := range checker.Rules {
		d := r.Docs
		if d == nil || d.Title == "" || d.Text == "" || d.Why == "" || d.Fix == "" || len(d.Ops) == 0 {
			t.Errorf("%s: documentation incomplete: %+v", r.ID, d)
			continue
		}
		if r.Doc != d.Title {
			t.Errorf("%s: Doc %q is not the title %q", r.ID, r.Doc, d.Title)
		}
		if text, md := r.Help(); !strings.Contains(text, d.Why) || !strings.Contains(md, d.Fix) {
			t.Errorf("%s: Help leaves out the documentation:\n%s\n%s", r.ID, text, md)
		}
	}
}

// TestRuleGoldenFolders: testdata/rules has a folder for each rule, named
// by its id, and no other; each holds a golden file that reports the rule.
func TestRuleGoldenFolders(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("testdata", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, d := range dirs {
		if _, err := checker.LookupRule(d.Name()); err != nil || !d.IsDir() {
			t.Errorf("testdata/rules/%s is not a rule's folder", d.Name())
		}
		have[d.Name()] = true
	}
	for _, r := range checker.Rules {
		if !have[r.ID] {
			t.Errorf("%s has no golden folder testdata/rules/%s", r.ID, r.ID)
			continue
		}
		files, _ := filepath.Glob(filepath.Join("testdata", "rules", r.ID, "*.txtar"))
		reported := false
		for _, file := range files {
			for _, f := range goldenFindings(t, file).Findings {
				reported = reported || f.Rule == r.ID
			}
		}
		if !reported {
			t.Errorf("no golden file in testdata/rules/%s reports %s", r.ID, r.ID)
		}
	}
}

// TestRuleOps: each finding of a golden file reports first an operation of
// those its rule's documentation says it is checked at.
func TestRuleOps(t *testing.T) {
	for _, file := range golden.CheckerFiles(t, "testdata", ".txtar") {
		for _, f := range goldenFindings(t, file).Findings {
			r, err := checker.LookupRule(f.Rule)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(r.Docs.Ops, func(op model.Op) bool { return op.String() == f.Ops[0].Op }) {
				t.Errorf("%s: a %s finding reports a %s, which its documentation's Ops %v leave out", file, f.Rule, f.Ops[0].Op, r.Docs.Ops)
			}
		}
	}
}

// goldenFindings analyzes the trace of a golden file as TestGolden does.
func goldenFindings(t *testing.T, file string) *checker.Result {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "trace.jsonl" {
			return analyzeGolden(t, ar.Comment, f.Data)
		}
	}
	t.Fatalf("%s has no trace", file)
	return nil
}

// A report's rule metadata (SARIF's help) can describe a rule from its
// documentation.
func ExampleRule_Help() {
	r, _ := checker.LookupRule(string(checker.RuleDoubleFree))
	text, _ := r.Help()
	fmt.Println(text)
	// Output:
	// memory is freed twice.
	//
	// After the first free the pool may have handed the addresses to another allocation: a second free can release memory that other work now owns, and CUDA rejects it only when the addresses are still unused.
	//
	// Fix: Remove one of the two frees.
}
