package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// junitDoc is what CI systems read of a JUnit report, decoded with
// encoding/xml independently of the types that wrote it.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			SystemOut *string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, out string) *junitDoc {
	t.Helper()
	if !strings.HasPrefix(out, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration:\n%s", out)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out)
	}
	return &doc
}

func TestJUnitReport(t *testing.T) {
	out, stderr, code := checkInProcess(t, "--format", "junit", "--leak-check", "full", goldenTrace)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	doc := parseJUnit(t, out)
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	// One testcase per finding, and read-trace: the counts are the text
	// report's (2 errors, 1 warning).
	if s.Name != goldenTrace || s.Tests != 4 || s.Failures != 2 || s.Errors != 0 || doc.Failures != 2 || doc.Tests != 4 {
		t.Errorf("suite %s: %d tests, %d failures, %d errors", s.Name, s.Tests, s.Failures, s.Errors)
	}
	wantClass := []string{"use-before-alloc: /src/app/main.cu", "free-while-in-flight: app.cu", "leak", "streamcheck"} // the leak's call has no site
	for i, c := range s.Cases {
		if i < len(wantClass) && c.Classname != wantClass[i] {
			t.Errorf("case %d %q: classname %q, want %q", i, c.Name, c.Classname, wantClass[i])
		}
	}
	f := s.Cases[0].Failure
	if f == nil || !strings.HasPrefix(f.Message, "cudaLaunchKernel of scale on stream s2 uses 4096 bytes") || f.Type != string(checker.RuleUseBeforeAlloc) ||
		!strings.Contains(f.Body, "\n  allocation: 4096 bytes") || !strings.Contains(f.Body, "\n  fix: Record an event") {
		t.Fatalf("failure of use-before-alloc: %+v", f)
	}
	if s.Cases[0].Name != f.Message {
		t.Errorf("case named %q, not by its finding", s.Cases[0].Name)
	}
	leak := s.Cases[2]
	if leak.Failure != nil || leak.SystemOut == nil || !strings.HasPrefix(*leak.SystemOut, "warning[leak]") {
		t.Errorf("the leak warning should pass with its report in system-out: %+v", leak)
	}
	if last := s.Cases[len(s.Cases)-1]; last.Name != junitReadCase || last.Error != nil {
		t.Errorf("last case %s, error %v: want a passing %s", last.Name, last.Error, junitReadCase)
	}
	if strings.Contains(out, "<skipped") {
		t.Errorf("skipped testcases in the report:\n%s", out)
	}
}

// TestJUnitEdges: several error findings of one rule are a failing
// testcase each; a damaged trace errs in read-trace; an unreadable input is a
// suite of its own; characters XML cannot hold are replaced.
func TestJUnitEdges(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.jsonl")
	os.WriteFile(two, []byte(`{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x1000","size":16,"site":"a.cu:1"}
{"op":"launch","stream":"s2","kernel":"k\ufffe","ptrs":["0x1000"],"site":"a.cu:2"}
{"op":"malloc_async","stream":"s1","ptr":"0x2000","size":16,"site":"a.cu:3"}
{"op":"launch","stream":"s2","kernel":"j","ptrs":["0x2000"],"site":"a.cu:4"}
{"op":"malloc_async","stream":"s1","ptr":"0x3000","size":16,"site":"a.cu:5"}
{"op":"launch","stream":"s2","kernel":"j","ptrs":["0x3000"],"site":"a.cu:6"}
{"op":"teleport"}
`), 0o644)
	out, _, code := checkInProcess(t, "--format", "junit", two, filepath.Join(dir, "missing.jsonl"))
	if code != exitUsage {
		t.Errorf("exit code %d, want %d", code, exitUsage)
	}
	doc := parseJUnit(t, out)
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, want 2", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests != 4 || s.Failures != 3 {
		t.Errorf("%d tests, %d failures; want 4 and 3", s.Tests, s.Failures)
	}
	f := s.Cases[0].Failure
	if f == nil || !strings.HasPrefix(f.Message, "cudaLaunchKernel of k\uFFFD on stream s2") || s.Cases[0].Classname != "use-before-alloc: a.cu" {
		t.Fatalf("use-before-alloc failure: %+v", s.Cases[0])
	}
	read := s.Cases[len(s.Cases)-1]
	if read.Name != junitReadCase || read.Error == nil || !strings.Contains(read.Error.Message, `unknown op "teleport"`) || s.Errors != 1 {
		t.Errorf("damaged trace: read-trace %+v, %d errors", read.Error, s.Errors)
	}
	bad := doc.Suites[1]
	if bad.Name != filepath.Join(dir, "missing.jsonl") || len(bad.Cases) != 1 || bad.Cases[0].Error == nil ||
		!strings.Contains(bad.Cases[0].Error.Message, "no such file") {
		t.Errorf("unreadable input: %+v", bad)
	}
}
