package checker_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// expectation is what a test program's header says streamcheck must report
// (testdata/cuda/README.md): required rules with optional exact counts, and
// rules that may appear.
type expectation struct {
	expect map[string]int // Rule -> required count of findings; -1 means at least one.
	allow  map[string]bool
	// apis are API names that some finding's reported operation must carry:
	// they show that an entry point was recorded, decoded and named as the
	// program called it.
	apis []string
}

var headerLine = regexp.MustCompile(`^(?://|#)\s*streamcheck-(expect|expect-count|expect-api|allow|may-fail):\s*(\S+)`)

func readExpectation(t *testing.T, source string) expectation {
	t.Helper()
	f, err := os.Open(source)
	if err != nil {
		t.Fatalf("no source for recorded trace: %v", err)
	}
	defer f.Close()
	e := expectation{expect: map[string]int{}, allow: map[string]bool{}}
	last := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := headerLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		switch m[1] {
		case "expect":
			if m[2] != "clean" {
				e.expect[m[2]] = -1
				last = m[2]
			}
		case "expect-count":
			n, err := strconv.Atoi(m[2])
			if err != nil || last == "" {
				t.Fatalf("%s: bad expect-count line %q", source, sc.Text())
			}
			e.expect[last] = n
		case "allow":
			e.allow[m[2]] = true
		case "expect-api":
			e.apis = append(e.apis, m[2])
		}
	}
	return e
}

// sourceOf maps a recorded case ("use_before_alloc_racy-static",
// "torch_train_ok-py") to the program it was recorded from.
func sourceOf(name string) string {
	base, variant, _ := strings.Cut(name, "-")
	if variant == "py" {
		return filepath.Join("..", "testdata", "python", base+".py")
	}
	return filepath.Join("..", "testdata", "cuda", base+".cu")
}

// checkFile analyzes the trace file at path.
func checkFile(t *testing.T, path string) *checker.Result {
	t.Helper()
	return checkFileWith(t, path, checker.Options{})
}

// checkFileWith is checkFile with options.
func checkFileWith(t *testing.T, path string, opts checker.Options) *checker.Result {
	t.Helper()
	r, c, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := checker.CheckWith(path, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	checker.LinkImports([]*checker.Result{res}) // as streamcheck check decides for one trace
	return res
}

// TestRealTraces checks the analyzer against traces recorded by the shim
// from the test programs on a GPU machine (scripts/gpu-run.sh): every racy
// program must be reported with its rules and counts, every correct one must
// be clean, and no recording may be damaged. A program whose header expects
// leak is checked with leak findings on (--leak-check full), and without
// them it must report none and count as many allocations live at exit.
func TestRealTraces(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "real", "*"))
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		cases++
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			want := readExpectation(t, sourceOf(name))
			traces, _ := filepath.Glob(filepath.Join(dir, "*.sctrace"))
			if len(traces) == 0 {
				t.Fatal("no trace recorded")
			}
			found := map[string]int{}
			reported := map[string]bool{}
			var events, live uint64
			_, leaks := want.expect[string(checker.RuleLeak)]
			for _, path := range traces {
				res := checkFileWith(t, path, checker.Options{Leaks: leaks})
				if leaks {
					def := checkFile(t, path)
					for _, f := range def.Findings {
						if f.Rule == string(checker.RuleLeak) {
							t.Errorf("leak reported without Options.Leaks")
						}
					}
					live += def.Stats.LiveAtExit
				}
				if res.Damage != nil {
					t.Errorf("damaged recording: %v", res.Damage)
				}
				if res.Tables.Dropped != 0 {
					t.Errorf("the shim dropped %d events", res.Tables.Dropped)
				}
				// A process that initialized CUDA and made no recorded
				// call (torch.compile's worker) has a trace without events.
				events += res.Stats.Events
				for _, f := range res.Findings {
					found[f.Rule]++
					if len(f.Ops) > 0 {
						reported[f.Ops[0].API] = true
					}
				}
			}
			if events == 0 {
				t.Errorf("no events in %d traces", len(traces))
			}
			if diff := compare(want, found); diff != "" {
				t.Error(diff)
			}
			if leaks && live != uint64(found[string(checker.RuleLeak)]) {
				t.Errorf("%d allocations counted live at exit, %d leak findings", live, found[string(checker.RuleLeak)])
			}
			for _, api := range want.apis {
				if !reported[api] {
					t.Errorf("no finding reported at %s", api)
				}
			}
		})
	}
	if cases < 214 {
		t.Errorf("only %d recorded cases under testdata/real; the GPU runs record 214", cases)
	}
}

// compare returns what differs between the findings and the expectation.
func compare(want expectation, found map[string]int) string {
	var diffs []string
	for rule, n := range want.expect {
		switch {
		case found[rule] == 0:
			diffs = append(diffs, fmt.Sprintf("missing %s", rule))
		case n >= 0 && found[rule] != n:
			diffs = append(diffs, fmt.Sprintf("%s found %d times, want %d", rule, found[rule], n))
		}
	}
	for rule, n := range found {
		if _, ok := want.expect[rule]; !ok && !want.allow[rule] {
			diffs = append(diffs, fmt.Sprintf("unexpected %s (%d)", rule, n))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// TestRealPythonFrames checks that the recorded Python programs' findings
// name Python functions (from the perf maps CPython wrote while `streamcheck
// record` ran them), not the interpreter: every error finding's operations
// are placed in the program's script (its innermost Python function that is
// not an installed library: a Triton launch goes through Triton's launcher),
// at a line of code in it (the shim reads CPython's frames), and the stacks
// go on through the Python callers (the shim unwinds through CPython's perf
// trampolines), so some operation has a Python caller above its site.
func TestRealPythonFrames(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "real", "*_racy-py"))
	if len(dirs) == 0 {
		t.Fatal("no recorded racy Python programs")
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		script := strings.TrimSuffix(name, "-py") + ".py"
		src, err := os.ReadFile(sourceOf(name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		traces, _ := filepath.Glob(filepath.Join(dir, "*.sctrace"))
		namesScript, hasCaller := false, false
		for _, path := range traces {
			res := checkFile(t, path)
			for _, f := range res.Findings {
				if f.Severity != checker.SeverityError {
					continue
				}
				for _, op := range f.Ops {
					site, i := op.Site(), op.SiteFrame()
					if i < 0 {
						t.Errorf("%s: %s: %s has no stack", name, f.Rule, op.Role)
						continue
					}
					frame := op.Stack[i]
					if !strings.HasPrefix(site, "py::") || !strings.HasSuffix(frame.File, script) {
						t.Errorf("%s: %s: %s placed at %q, not in %s", name, f.Rule, op.Role, site, script)
						continue
					}
					namesScript = true
					if n := frame.Line; n < 1 || n > len(lines) || codeLine(lines[n-1]) == "" {
						t.Errorf("%s: %s: %s placed at %q, not a line of code in %s", name, f.Rule, op.Role, site, script)
					}
					for _, fr := range op.Stack[op.SiteFrame()+1:] {
						hasCaller = hasCaller || strings.HasPrefix(fr.Func, "py::")
					}
				}
			}
		}
		if !namesScript {
			t.Errorf("%s: no finding names %s", name, script)
		}
		if !hasCaller {
			t.Errorf("%s: no operation has a Python caller above its site", name)
		}
	}
}

// codeLine returns a Python source line without its comment and spaces.
func codeLine(line string) string {
	code, _, _ := strings.Cut(line, "#")
	return strings.TrimSpace(code)
}
