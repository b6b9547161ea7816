package intercept

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/shimbuild"
	"github.com/streamcheck/streamcheck/model"
)

var updateCases = flag.Bool("update", false, "rewrite the want.jsonl sections of testdata/cases/*.txtar")

// TestShimCases runs testdata/cases/*.txtar, one subtest a file, named
// after it (go test ./intercept -run TestShimCases/cudaMallocAsync). A
// case holds:
//
//	-- program.c --   the body of a C function run by the fake app
//	                  (testdata/fakeapp.c, mode "case"): calls through
//	                  its helpers, as a program and the driver make them
//	-- want.jsonl --  the trace the shim records of it, as JSON Lines
//	                  (model.JSONLWriter) without the fields that change
//	                  from run to run: tid, time, stack and dur
//	-- findings --    optional: the rules of the findings the checker
//	                  makes of the recorded trace (its stacks included),
//	                  one a line, in order
//	-- env --         optional: KEY=VALUE lines set for the run
//
// Of dur, every case checks that the shim times the synchronous
// allocations and frees (malloc, free) and no other call.
//
// The case runs with the shim injected and runtime names on; -update
// rewrites want.jsonl (and findings, where the case has them) from what the
// shim recorded.
func TestShimCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) { runCase(t, file) })
	}
}

// caseSetup is what a kind of case adds to the fake app's build and run.
type caseSetup struct {
	cflags, ldflags []string // before and after the sources
	env             []string
}

// caseSections holds the sections of a case file.
type caseSections struct {
	ar                      *txtar.Archive
	program, want, findings *txtar.File
	env                     []string // the env section's KEY=VALUE settings
}

// readCase reads the case file and builds its program into a fake app, as
// setup says.
func readCase(t *testing.T, file string, setup caseSetup) (built, caseSections) {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cs := caseSections{ar: ar}
	for i := range ar.Files {
		switch f := &ar.Files[i]; f.Name {
		case "program.c":
			cs.program = f
		case "want.jsonl":
			cs.want = f
		case "findings":
			cs.findings = f
		case "env":
			cs.env = strings.Fields(string(f.Data))
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	if cs.program == nil {
		t.Fatalf("%s: no program.c", file)
	}
	b := build(t)
	b.app = buildCase(t, b, cs.program.Data, setup)
	return b, cs
}

func runCase(t *testing.T, file string) { runCaseWith(t, file, caseSetup{}) }

func runCaseWith(t *testing.T, file string, setup caseSetup) {
	caseApp, cs := readCase(t, file, setup)
	ar, want, findings := cs.ar, cs.want, cs.findings
	r := run(t, caseApp, "case", inject, append(setup.env, cs.env...)...)
	if r.state.ExitCode() != 0 {
		t.Fatalf("fakeapp: %s\nstderr:\n%s", exitDesc(r.state), r.stderr)
	}
	tr := r.onlyTrace(t)
	checkTimed(t, tr)
	got := caseJSONL(t, tr)
	var rules []byte
	if findings != nil {
		rules = caseFindings(t, tr.path)
	}
	if *updateCases {
		if findings != nil {
			findings.Data = rules
		}
		if want == nil {
			ar.Files = append(ar.Files, txtar.File{Name: "want.jsonl"})
			want = &ar.Files[len(ar.Files)-1]
		}
		want.Data = got
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want == nil {
		t.Fatalf("%s: no want.jsonl (run with -update to write it)", file)
	}
	if w := normalizeJSONL(t, want.Data); !bytes.Equal(got, w) {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, w)
	}
	if findings != nil && !bytes.Equal(rules, findings.Data) {
		t.Errorf("findings of the recorded trace:\n%s\nwant:\n%s", rules, findings.Data)
	}
}

// buildCase compiles a case's program into the fake app, as setup says,
// and returns the app's path.
func buildCase(t *testing.T, b built, program []byte, setup caseSetup) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "program.c")
	if err := os.WriteFile(src, program, 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "fakeapp")
	args := append([]string{"-O1", "-g", "-Wall", "-Werror", `-DFAKE_CASE="` + src + `"`, "-o", app}, setup.cflags...)
	args = append(append(args, "testdata/fakeapp.c", "-L"+b.dir, "-lfakecupti", "-Wl,-rpath,"+b.dir), setup.ldflags...)
	cmd := exec.Command(shimbuild.CC(), append(args, "-ldl", "-lpthread")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return app
}

// caseFindings returns the rules of the checker's findings of the trace at
// path, one a line.
func caseFindings(t *testing.T, path string) []byte {
	t.Helper()
	r, c, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := checker.Check(path, r)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range res.Findings {
		fmt.Fprintf(&b, "%s %s\n", f.Severity, f.Rule)
	}
	return b.Bytes()
}

// checkTimed checks that the events of synchronous allocations and frees,
// and only those, say how long their call took.
func checkTimed(t *testing.T, tr trace) {
	t.Helper()
	for _, ev := range tr.events {
		if timed := ev.Op == model.OpMalloc || ev.Op == model.OpFree; timed != (ev.Dur != 0) {
			t.Errorf("event %d (%v, %s): dur %d", ev.Seq, ev.Op, tr.tab.String(ev.API), ev.Dur)
		}
	}
}

// runCaseProgram builds the fake app with a case's program.c, runs it
// with the shim injected (and extraEnv), and returns its trace.
func runCaseProgram(t *testing.T, program []byte, setup caseSetup) trace {
	t.Helper()
	b := build(t)
	caseApp := b
	caseApp.app = buildCase(t, b, program, setup)
	r := run(t, caseApp, "case", inject, setup.env...)
	if r.state.ExitCode() != 0 {
		t.Fatalf("fakeapp: %s\nstderr:\n%s", exitDesc(r.state), r.stderr)
	}
	return r.onlyTrace(t)
}

// caseJSONL writes tr's events as JSON Lines without their tid, time and
// stack, one event a line, keys sorted.
func caseJSONL(t *testing.T, tr trace) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := model.NewJSONLWriter(&buf)
	for i := range tr.events {
		if err := w.WriteEvent(&tr.events[i], tr.tab); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return normalizeJSONL(t, buf.Bytes())
}

// normalizeJSONL drops comments and the fields that change from run to
// run, and writes each line's keys in order.
func normalizeJSONL(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		delete(m, "tid")
		delete(m, "time")
		delete(m, "stack")
		delete(m, "dur")
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
