package explain

import (
	"bytes"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

// FuzzExplain builds and renders the explanation of every finding of
// arbitrary JSON Lines input, seeded with the checker's golden traces: no
// input may make it panic, and there is one graph a finding.
func FuzzExplain(f *testing.F) {
	for _, trace := range golden.Traces(f, golden.CheckerPatterns("../checker/testdata", ".txtar")...) {
		f.Add(trace)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := model.NewJSONLReader(bytes.NewReader(data), "fuzz.jsonl")
		res, gs, err := Build("fuzz.jsonl", r, checker.Options{}, Options{})
		if err != nil {
			return
		}
		if len(gs) != len(res.Findings) {
			t.Fatalf("%d graphs for %d findings", len(gs), len(res.Findings))
		}
		var b bytes.Buffer
		for _, g := range gs {
			if err := Text(&b, g); err != nil {
				t.Fatalf("Text: %v", err)
			}
			if err := DOT(&b, g); err != nil {
				t.Fatalf("DOT: %v", err)
			}
		}
	})
}
