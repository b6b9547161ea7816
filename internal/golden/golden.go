package golden

import (
	"os"
	"path/filepath"
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
// pattern matches (the checker's testdata/*.txtar), for seeding fuzz
// targets.
func Traces(tb testing.TB, pattern string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden files match %s: %v", pattern, err)
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
