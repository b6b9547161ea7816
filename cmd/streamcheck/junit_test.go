package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
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
	if s.Name != goldenTrace || s.Tests != len(checker.Rules)+1 || s.Failures != 2 || s.Errors != 0 || doc.Failures != 2 {
		t.Errorf("suite %s: %d tests, %d failures, %d errors", s.Name, s.Tests, s.Failures, s.Errors)
	}
	for i, r := range checker.Rules {
		c := s.Cases[i]
		if c.Name != r.ID || c.Classname != "streamcheck" {
			t.Errorf("case %d = %s.%s, want streamcheck.%s", i, c.Classname, c.Name, r.ID)
		}
		failed := c.Failure != nil
		if want := r.ID == string(checker.RuleUseBeforeAlloc) || r.ID == string(checker.RuleFreeWhileInFlight); failed != want {
			t.Errorf("%s failed: %v, want %v", r.ID, failed, want)
		}
	}
	f := s.Cases[0].Failure
	if !strings.HasPrefix(f.Message, "cudaLaunchKernel of scale on stream s2 uses 4096 bytes") ||
		!strings.Contains(f.Body, "\n  allocation: 4096 bytes") || !strings.Contains(f.Body, "\n  fix: Record an event") {
		t.Errorf("failure of use-before-alloc: message %q, body:\n%s", f.Message, f.Body)
	}
	leak := s.Cases[slices.IndexFunc(checker.Rules, func(r checker.Rule) bool { return r.ID == string(checker.RuleLeak) })]
	if leak.Name != string(checker.RuleLeak) || leak.Failure != nil || leak.SystemOut == nil || !strings.HasPrefix(*leak.SystemOut, "warning[leak]") {
		t.Errorf("the leak warning should pass with its report in system-out: %+v", leak)
	}
	if last := s.Cases[len(s.Cases)-1]; last.Name != junitReadCase || last.Error != nil {
		t.Errorf("last case %s, error %v: want a passing %s", last.Name, last.Error, junitReadCase)
	}
}

// TestJUnitEdges: several error findings of one rule are one failure that
// counts them; a damaged trace errs in read-trace; an unreadable input is a
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
	f := s.Cases[0].Failure
	if f == nil || !strings.HasPrefix(f.Message, "3 findings; the first: cudaLaunchKernel of k\uFFFD on stream s2") {
		t.Fatalf("use-before-alloc failure: %+v", f)
	}
	if n := strings.Count(f.Body, "error[use-before-alloc]"); n != 3 {
		t.Errorf("failure body has %d findings, want 3", n)
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
