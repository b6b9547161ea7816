package checker_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// corpusRow is one program of the real-world corpus
// (testdata/realworld/VERDICTS.tsv).
type corpusRow struct {
	name, program, kind string
	findings            map[string]int // rule -> findings
	verdict             string
}

// readTSV reads a tab-separated file of the corpus: each line that is not
// blank or a '#' comment, split into columns, with its line number; a line
// with fewer than minCols columns fails the test.
func readTSV(t *testing.T, path string, minCols int) (rows [][]string, lines []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		col := strings.Split(sc.Text(), "\t")
		if len(col) < minCols {
			t.Fatalf("%s:%d: %d columns, want %d", path, line, len(col), minCols)
		}
		rows, lines = append(rows, col), append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, lines
}

func readVerdicts(t *testing.T, path string) []corpusRow {
	t.Helper()
	cols, lines := readTSV(t, path, 5)
	var rows []corpusRow
	for i, col := range cols {
		line := lines[i]
		if len(col) != 5 {
			t.Fatalf("%s:%d: %d columns, want 5", path, line, len(col))
		}
		r := corpusRow{name: col[0], program: col[1], kind: col[2], findings: map[string]int{}, verdict: col[4]}
		switch r.kind {
		case "correct", "buggy", "racy":
		default:
			t.Fatalf("%s:%d: kind %q", path, line, r.kind)
		}
		if col[3] != "-" {
			for _, item := range strings.Split(col[3], ",") {
				rule, count, ok := strings.Cut(item, ":")
				n, err := strconv.Atoi(count)
				if _, lerr := checker.LookupRule(rule); !ok || err != nil || lerr != nil {
					t.Fatalf("%s:%d: bad finding %q", path, line, item)
				}
				r.findings[rule] = n
			}
		}
		if r.verdict == "" {
			t.Fatalf("%s:%d: no verdict", path, line)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestRealWorldCorpus checks the analyzer against traces recorded on a GPU
// machine from programs nobody in this project wrote (NVIDIA's cuda-samples,
// CuPy's test suite, PyTorch models; scripts/gpu-corpus.sh) and from racy
// variants of a few of them. Every program's findings must be exactly those
// its row of VERDICTS.tsv lists, each with a verdict; a correct program may
// have no error finding at all, and a racy variant must have one.
// testdata/realworld-interpose holds the CuPy and PyTorch programs recorded
// with the default backend, checked the same way.
func TestRealWorldCorpus(t *testing.T) {
	for _, c := range []struct {
		dir     string
		minRows int
	}{{"realworld", 40}, {"realworld-interpose", 14}} {
		t.Run(c.dir, func(t *testing.T) { checkCorpus(t, filepath.Join("..", "testdata", c.dir), c.minRows) })
	}
}

// checkCorpus checks the corpus in dir (its VERDICTS.tsv and a folder of
// traces for each row) as TestRealWorldCorpus says; it must hold at least
// minRows programs.
func checkCorpus(t *testing.T, dir string, minRows int) {
	rows := readVerdicts(t, filepath.Join(dir, "VERDICTS.tsv"))
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.name] = true
		t.Run(r.name, func(t *testing.T) {
			traces, _ := filepath.Glob(filepath.Join(dir, r.name, "*.sctrace"))
			if len(traces) == 0 {
				t.Fatal("no trace recorded")
			}
			found := map[string]int{}
			errors := 0
			var events uint64
			for _, path := range traces {
				res := checkFile(t, path)
				if res.Damage != nil {
					t.Errorf("damaged recording: %v", res.Damage)
				}
				events += res.Stats.Events
				for _, f := range res.Findings {
					found[f.Rule]++
					if f.Severity == checker.SeverityError {
						errors++
					}
				}
			}
			if events == 0 {
				t.Errorf("no events in %d traces", len(traces))
			}
			if r.kind == "correct" && errors > 0 {
				t.Errorf("a correct program has %d error findings: %v", errors, found)
			}
			if r.kind == "racy" && errors == 0 {
				t.Errorf("a racy variant has no error finding")
			}
			if diff := diffCounts(r.findings, found); diff != "" {
				t.Errorf("findings differ from VERDICTS.tsv: %s", diff)
			}
		})
	}
	dirs, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && info.IsDir() && !listed[filepath.Base(d)] {
			t.Errorf("%s has no row in VERDICTS.tsv", d)
		}
	}
	if len(rows) < minRows {
		t.Errorf("only %d programs in the corpus", len(rows))
	}
}

// diffCounts says how found differs from want, rule by rule.
func diffCounts(want, found map[string]int) string {
	var diffs []string
	for rule, n := range want {
		if found[rule] != n {
			diffs = append(diffs, fmt.Sprintf("%s found %d times, want %d", rule, found[rule], n))
		}
	}
	for rule, n := range found {
		if _, ok := want[rule]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected %s (%d)", rule, n))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}
