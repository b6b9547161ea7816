package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Match fails t unless got equals the contents of the file at path; with
// update it writes got to the file instead.
func Match(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\n--- got\n%s", path, got)
	}
}

// Traces returns the trace.jsonl section of every txtar golden file that
// one of patterns matches (the checker's testdata/*.txtar and
// testdata/rules/*/*.txtar: see CheckerPatterns), for seeding fuzz targets.
func Traces(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	var files []string
	for _, pattern := range patterns {
		m, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatalf("%s: %v", pattern, err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		tb.Fatalf("no golden files match %s", strings.Join(patterns, " or "))
	}
	var traces [][]byte
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		for _, sec := range ar.Files {
			if sec.Name == "trace.jsonl" {
				traces = append(traces, sec.Data)
			}
		}
	}
	return traces
}

// CheckerPatterns returns the globs of the checker's txtar golden files
// whose names end in suffix (".txtar", "_racy.txtar"), in its testdata
// folder dir: those about no one rule are in dir itself, each rule's in
// dir/rules/<rule id>.
func CheckerPatterns(dir, suffix string) []string {
	return []string{filepath.Join(dir, "*"+suffix), filepath.Join(dir, "rules", "*", "*"+suffix)}
}

// CheckerFiles returns the checker's txtar golden files in its testdata
// folder dir whose names end in suffix (see CheckerPatterns), in the
// patterns' order and, within each, by path.
func CheckerFiles(tb testing.TB, dir, suffix string) []string {
	tb.Helper()
	var files []string
	for _, pattern := range CheckerPatterns(dir, suffix) {
		m, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatalf("%s: %v", pattern, err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		tb.Fatalf("no golden files in %s", dir)
	}
	return files
}

// CheckerFile returns the path of the checker's golden file name.txtar in
// its testdata folder dir, or in the folder of the rule it is about.
func CheckerFile(tb testing.TB, dir, name string) string {
	tb.Helper()
	for _, pattern := range CheckerPatterns(dir, ".txtar") {
		m, err := filepath.Glob(filepath.Join(filepath.Dir(pattern), name+".txtar"))
		if err != nil {
			tb.Fatal(err)
		}
		if len(m) == 1 {
			return m[0]
		}
	}
	tb.Fatalf("no golden file %s.txtar in %s", name, dir)
	return ""
}
