package checker_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/synth"
	"github.com/streamcheck/streamcheck/model"
)

// TestHandoffsThroughDestroyedStreams: streams hand buffers on by events,
// each destroyed once it has handed off and never waited for by the host
// (synth.WriteHandoffs), the engine giving each new stream the slot of the
// one it waited for. A correct chain is clean, through 2,000 streams; a
// stream that uses and frees the buffer handed to it without waiting for
// the event races with the work of a destroyed stream, and that race is
// found, whether the program makes a new stream handle each step or
// reuses one.
func TestHandoffsThroughDestroyedStreams(t *testing.T) {
	for _, h := range []synth.Handoffs{
		{Streams: 2000, Destroy: true},
		{Streams: 2000, Destroy: true, Reuse: true},
		{Streams: 2000, Destroy: true, Race: 1500},
		{Streams: 2000, Destroy: true, Reuse: true, Race: 1500},
		{Streams: 300, Race: 200},
	} {
		t.Run(fmt.Sprintf("%+v", h), func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := synth.WriteHandoffs(&buf, h); err != nil {
				t.Fatal(err)
			}
			r, err := model.NewBinaryReader(&buf, "handoffs.trace")
			if err != nil {
				t.Fatal(err)
			}
			res, err := checker.Check("handoffs.trace", r)
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range res.Findings {
				rules = append(rules, f.Rule)
			}
			if h.Race == 0 && len(rules) != 0 {
				t.Fatalf("a correct chain of hand-offs gives %v", rules)
			}
			if h.Race != 0 && !slices.Contains(rules, string(checker.RuleFreeWhileInFlight)) {
				t.Fatalf("a free of a buffer a destroyed stream used, not ordered after that use, gives %v, want %s", rules, checker.RuleFreeWhileInFlight)
			}
		})
	}
}
