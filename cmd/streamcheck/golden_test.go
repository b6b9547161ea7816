package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

const goldenTrace = "testdata/golden/racy.jsonl"

// checkInProcess runs "streamcheck check" with args and returns its stdout,
// stderr and exit code.
func checkInProcess(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(&out, &errb, append([]string{"check"}, args...))
	return out.String(), errb.String(), code
}

// TestGolden compares each report format for one racy trace, with leak
// findings (--leak-check full: a warning in each format), with
// testdata/golden/racy.{txt,json,sarif,xml}; go test -update rewrites them.
func TestGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "sarif", "junit"} {
		t.Run(format, func(t *testing.T) {
			ext := map[string]string{"text": "txt", "junit": "xml"}[format]
			if ext == "" {
				ext = format
			}
			golden := filepath.Join("testdata", "golden", "racy."+ext)
			// The working directory as source root keeps the SARIF paths
			// independent of where the test runs: the trace's relative
			// paths stay relative, its absolute ones (/src/...) are file
			// URIs.
			got, stderr, code := checkInProcess(t, "--format", format, "--leak-check", "full", "--source-root", ".", goldenTrace)
			if code != exitFindings {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitFindings, stderr)
			}
			if stderr != "" {
				t.Errorf("unexpected stderr:\n%s", stderr)
			}
			matchGolden(t, golden, got)
		})
	}
}

// matchGolden compares got with the golden file, or rewrites the file with
// -update.
func matchGolden(t *testing.T, path, got string) { golden.Match(t, path, got, *update) }

// TestTextNoEscapes: output that is not a terminal is never colored, and
// the text report is stable from run to run.
func TestTextNoEscapes(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	first, _, _ := checkInProcess(t, goldenTrace)
	if strings.Contains(first, "\x1b[") {
		t.Errorf("text report to a non-terminal has escape codes:\n%q", first)
	}
	second, _, _ := checkInProcess(t, goldenTrace)
	if first != second {
		t.Errorf("two runs differ:\n%s\n---\n%s", first, second)
	}
}

func TestJSONReport(t *testing.T) {
	out, _, code := checkInProcess(t, "--format", "json", "--leak-check", "full", goldenTrace)
	if code != exitFindings {
		t.Fatalf("exit code %d, want %d", code, exitFindings)
	}
	var rep struct {
		Findings []struct {
			Rule       string `json:"rule"`
			Severity   string `json:"severity"`
			Message    string `json:"message"`
			Allocation *struct {
				Ptr  string `json:"ptr"`
				Size uint64 `json:"size"`
				API  string `json:"api"`
			} `json:"allocation"`
			Operations []struct {
				Role   string `json:"role"`
				API    string `json:"api"`
				Stream string `json:"stream"`
			} `json:"operations"`
			Why   string `json:"why"`
			Fix   string `json:"fix"`
			Count int    `json:"count"`
			Trace string `json:"trace"`
		} `json:"findings"`
		Traces []struct {
			File   string  `json:"file"`
			Events uint64  `json:"events"`
			Damage *string `json:"damage"`
		} `json:"traces"`
		Summary struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Summary.Errors != 2 || rep.Summary.Warnings != 1 || len(rep.Findings) != 3 {
		t.Fatalf("summary %+v with %d findings, want 2 errors, 1 warning", rep.Summary, len(rep.Findings))
	}
	f := rep.Findings[0]
	if f.Rule != string(checker.RuleUseBeforeAlloc) || f.Severity != "error" || f.Count != 2 || f.Trace != goldenTrace {
		t.Errorf("first finding = %+v", f)
	}
	if f.Allocation == nil || f.Allocation.Ptr != "0x7f0000000000" || f.Allocation.Size != 4096 || f.Allocation.API != "cudaMallocAsync" {
		t.Errorf("allocation = %+v", f.Allocation)
	}
	if len(f.Operations) == 0 || f.Operations[0].Role != "use" || f.Operations[0].Stream != "s2" || f.Why == "" || f.Fix == "" {
		t.Errorf("operations = %+v, why %q, fix %q", f.Operations, f.Why, f.Fix)
	}
	if rep.Findings[2].Severity != "warning" || rep.Findings[2].Rule != string(checker.RuleLeak) {
		t.Errorf("third finding = %+v, want the leak warning", rep.Findings[2])
	}
	if len(rep.Traces) != 1 || rep.Traces[0].File != goldenTrace || rep.Traces[0].Events != 14 || rep.Traces[0].Damage != nil {
		t.Errorf("traces = %+v", rep.Traces)
	}
	if !strings.Contains(out, `"damage": null`) {
		t.Errorf("a complete trace should have \"damage\": null")
	}
}

func TestSARIFReport(t *testing.T) {
	out, _, code := checkInProcess(t, "--format", "sarif", "--leak-check", "full", "--source-root", "/src", goldenTrace)
	if code != exitFindings {
		t.Fatalf("exit code %d, want %d", code, exitFindings)
	}
	rep, err := sarif.FromString(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Validate(); err != nil {
		t.Fatalf("SARIF does not validate against the 2.1.0 schema: %v", err)
	}
	if rep.Version != "2.1.0" || len(rep.Runs) != 1 {
		t.Fatalf("version %q with %d runs", rep.Version, len(rep.Runs))
	}
	r := rep.Runs[0]
	if *r.Tool.Driver.Name != "streamcheck" {
		t.Errorf("driver %q", *r.Tool.Driver.Name)
	}
	if len(r.Tool.Driver.Rules) != len(checker.Rules) {
		t.Fatalf("%d rules, want %d", len(r.Tool.Driver.Rules), len(checker.Rules))
	}
	for i, rule := range checker.Rules {
		d := r.Tool.Driver.Rules[i]
		if *d.ID != rule.ID || *d.ShortDescription.Text != rule.Doc || d.DefaultConfiguration.Level != rule.Severity.String() {
			t.Errorf("rule %d = %s %q %s, want %s", i, *d.ID, *d.ShortDescription.Text, d.DefaultConfiguration.Level, rule.ID)
		}
	}
	if len(r.Results) != 3 {
		t.Fatalf("%d results, want 3", len(r.Results))
	}
	res := r.Results[0]
	if *res.RuleID != string(checker.RuleUseBeforeAlloc) || res.Level != "error" || r.Tool.Driver.Rules[res.RuleIndex].ID == nil || *r.Tool.Driver.Rules[res.RuleIndex].ID != *res.RuleID {
		t.Errorf("result 0: rule %s index %d level %s", *res.RuleID, res.RuleIndex, res.Level)
	}
	loc := res.Locations[0].PhysicalLocation
	if *loc.ArtifactLocation.URI != "app/main.cu" || *loc.Region.StartLine != 41 {
		t.Errorf("result 0 at %s:%d, want app/main.cu:41 (relative to --source-root)", *loc.ArtifactLocation.URI, *loc.Region.StartLine)
	}
	if len(res.RelatedLocations) != 1 || *res.RelatedLocations[0].PhysicalLocation.ArtifactLocation.URI != "app/buffers.cu" {
		t.Errorf("related locations of result 0: want the allocation at app/buffers.cu")
	}
	// A site outside the source root stays absolute, as a file URI.
	out2, _, _ := checkInProcess(t, "--format", "sarif", "--source-root", "/elsewhere", goldenTrace)
	if !strings.Contains(out2, `"uri": "file:///src/app/main.cu"`) {
		t.Errorf("a path outside the source root should be a file:// URI")
	}
	// The leak has no stack: it is located at the trace, a relative path
	// taken from the current directory (outside /src here: a file URI).
	abs, _ := filepath.Abs(goldenTrace)
	if uri := *r.Results[2].Locations[0].PhysicalLocation.ArtifactLocation.URI; uri != "file://"+filepath.ToSlash(abs) {
		t.Errorf("leak located at %s, want the trace, file://%s", uri, abs)
	}
	// Under the source root, the trace is relative to it.
	cwd, _ := os.Getwd()
	out4, _, _ := checkInProcess(t, "--format", "sarif", "--source-root", filepath.Dir(cwd), goldenTrace)
	if want := `"uri": "streamcheck/` + filepath.ToSlash(goldenTrace) + `"`; !strings.Contains(out4, want) {
		t.Errorf("with the parent directory as source root, want %s in:\n%s", want, out4)
	}
	// Fingerprints depend on sites, not on addresses or where the trace is.
	fp := res.PartialFingerprints[fingerprintKey]
	if len(fp) != 32 {
		t.Errorf("fingerprint %q", fp)
	}
	dir := t.TempDir()
	moved := filepath.Join(dir, "moved.jsonl")
	data, _ := os.ReadFile(goldenTrace)
	os.WriteFile(moved, bytes.ReplaceAll(data, []byte("0x7f0000"), []byte("0x7e0000")), 0o644)
	out3, _, _ := checkInProcess(t, "--format", "sarif", moved)
	rep3, err := sarif.FromString(out3)
	if err != nil {
		t.Fatal(err)
	}
	for i, res3 := range rep3.Runs[0].Results {
		if a, b := r.Results[i].PartialFingerprints[fingerprintKey], res3.PartialFingerprints[fingerprintKey]; a != b {
			t.Errorf("result %d: fingerprint changed from %s to %s", i, a, b)
		}
	}
	seen := map[string]bool{}
	for _, res := range r.Results {
		fp := res.PartialFingerprints[fingerprintKey]
		if seen[fp] {
			t.Errorf("two results share fingerprint %s", fp)
		}
		seen[fp] = true
	}
}

// TestGoldenRealTrace pins the text report for three races recorded by the
// shim on a GPU (testdata/real): both call sites must name the test
// program's own source lines, and the fix sentence must name them too; the
// streams are named by the programs' variables; in the two-GPU recording,
// each stream's device is named.
func TestGoldenRealTrace(t *testing.T) {
	// Copies named after the cases keep the report free of the recording's
	// process ids, which name the trace files.
	tmp := t.TempDir()
	var traces []string
	for _, c := range []string{"use_before_alloc_racy-static", "free_while_in_flight_racy-static", "multi_device_event_racy-static", "graph_event_node_racy-static"} {
		found, err := filepath.Glob(filepath.Join("..", "..", "testdata", "real", c, "*.sctrace"))
		if err != nil || len(found) != 1 {
			t.Fatalf("%s: want one recorded trace, found %v (%v)", c, found, err)
		}
		data, err := os.ReadFile(found[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, c+".sctrace"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		traces = append(traces, c+".sctrace")
	}
	// The programs' sources, where the recordings' paths lead, name the
	// streams as the programs do.
	if err := os.CopyFS(filepath.Join(tmp, "testdata", "cuda"), os.DirFS(filepath.Join("..", "..", "testdata", "cuda"))); err != nil {
		t.Fatal(err)
	}
	golden, _ := filepath.Abs(filepath.Join("testdata", "golden", "real.txt"))
	t.Chdir(tmp)
	got, stderr, code := checkInProcess(t, append([]string{"--no-color"}, traces...)...)
	if code != exitFindings {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitFindings, stderr)
	}
	for _, want := range []string{
		"at main testdata/cuda/use_before_alloc_racy.cu:17", // the cudaMallocAsync
		"at main testdata/cuda/use_before_alloc_racy.cu:20", // the <<<>>> on the other stream
		"at main testdata/cuda/free_while_in_flight_racy.cu:22",
		"fix: Record an event on stream `s1` after the cudaMallocAsync at main testdata/cuda/use_before_alloc_racy.cu:17",
		// The graph's captured kernel that read the freed memory.
		"in the graph: cudaLaunchKernel of sc_read_spin on stream `s1` (non-blocking stream), tid",
		"at main testdata/cuda/graph_event_node_racy.cu:26",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	matchGolden(t, golden, got)
}

// A finding from an interpreter's process names the script: the native stack
// alone would show only the interpreter.
func TestProcessLineForInterpreters(t *testing.T) {
	for _, c := range []struct {
		exe, args string
		want      bool
	}{
		{"/usr/bin/python3.12", "python3 train.py --steps 3", true},
		{"/work/build/app", "./app --small", false},
	} {
		tables := model.NewTables()
		tables.Process = model.Process{PID: 42, Exe: tables.Intern(c.exe), Args: tables.Intern(c.args)}
		events := []model.Event{
			{Op: model.OpStreamCreate, Stream: 0x10},
			{Op: model.OpStreamCreate, Stream: 0x20},
			{Op: model.OpMallocAsync, Stream: 0x10, Ptr: 0x7f00, Size: 64},
			{Op: model.OpLaunch, Stream: 0x20, Ptrs: []uint64{0x7f00}},
		}
		path := filepath.Join(t.TempDir(), "p.sctrace")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := model.NewBinaryWriter(f)
		for i := range events {
			events[i].Seq = uint64(i + 1)
			if err := w.WriteEvent(&events[i], tables); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.CloseDamaged("test"); err != nil { // No leak report: keep the output to the one finding.
			t.Fatal(err)
		}
		f.Close()
		out, _, _ := checkInProcess(t, "--no-color", path)
		line := "  process: " + c.args + " (pid 42)\n"
		if strings.Contains(out, line) != c.want {
			t.Errorf("%s: process line present = %v, want %v\n%s", c.exe, !c.want, c.want, out)
		}
	}
}

// A graph launch's result points, among its related locations, at the line
// in the graph that made the use: the captured kernel.
func TestSARIFGraphNode(t *testing.T) {
	found, err := filepath.Glob(filepath.Join("..", "..", "testdata", "real", "graph_event_node_racy-static", "*.sctrace"))
	if err != nil || len(found) != 1 {
		t.Fatalf("want one recorded trace, found %v (%v)", found, err)
	}
	out, _, code := checkInProcess(t, "--format", "sarif", found[0])
	if code != exitFindings {
		t.Fatalf("exit code %d, want %d", code, exitFindings)
	}
	rep, err := sarif.FromString(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Runs[0].Results {
		if *res.RuleID != string(checker.RuleFreeWhileInFlight) {
			continue
		}
		for _, rl := range res.RelatedLocations {
			loc := rl.PhysicalLocation
			if strings.Contains(*rl.Message.Text, "in the graph: cudaLaunchKernel of sc_read_spin") &&
				strings.HasSuffix(*loc.ArtifactLocation.URI, "testdata/cuda/graph_event_node_racy.cu") && *loc.Region.StartLine == 26 {
				return
			}
		}
		t.Fatalf("no related location at the captured kernel (graph_event_node_racy.cu:26) in %+v", res.RelatedLocations)
	}
	t.Fatal("no free-while-in-flight result")
}
