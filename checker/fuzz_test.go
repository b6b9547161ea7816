package checker_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

// FuzzCheck runs the whole analysis (JSON Lines reader, happens-before
// engine, rules, explanations) on arbitrary input, seeded with every golden
// trace: no input may make it panic, and every finding must be complete.
func FuzzCheck(f *testing.F) {
	for _, trace := range golden.Traces(f, golden.CheckerPatterns("testdata", ".txtar")...) {
		f.Add(trace)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := checker.Check("fuzz.jsonl", model.NewJSONLReader(bytes.NewReader(data), "fuzz.jsonl"))
		if err != nil {
			return // Not a damage error: nothing more to check.
		}
		for _, fd := range res.Findings {
			if len(fd.Ops) == 0 || fd.Message == "" || fd.Why == "" || fd.Count < 1 {
				t.Fatalf("incomplete finding %+v", fd)
			}
			if _, err := checker.LookupRule(fd.Rule); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzCheckBinary is FuzzCheck for the binary format, seeded with small
// traces the shim recorded on a GPU.
func FuzzCheckBinary(f *testing.F) {
	traces, _ := filepath.Glob(filepath.Join("..", "testdata", "real", "*", "*.sctrace"))
	for _, path := range traces {
		if data, err := os.ReadFile(path); err == nil && len(data) < 8<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := model.NewBinaryReader(bytes.NewReader(data), "fuzz.sctrace")
		if err != nil {
			return
		}
		res, err := checker.Check("fuzz.sctrace", r)
		if err != nil {
			return
		}
		for _, fd := range res.Findings {
			if len(fd.Ops) == 0 || fd.Message == "" || fd.Why == "" || fd.Count < 1 {
				t.Fatalf("incomplete finding %+v", fd)
			}
		}
	})
}
