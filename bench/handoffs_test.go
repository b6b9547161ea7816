package bench

import (
	"fmt"
	"io"
	"testing"

	"github.com/streamcheck/streamcheck/internal/heapmeter"
	"github.com/streamcheck/streamcheck/internal/synth"
)

// BenchmarkAnalyzeHandoffs runs checker.Check over chains of streams that
// each wait for the previous one's event, allocate, launch on their own
// buffer and the one handed to them, free that and record their event
// (synth.WriteHandoffs): all alive at the end (live=N), or each destroyed
// once it has handed off, one alive at a time (steps=N, a stream per
// step). Memory must follow the streams alive at once, not the streams
// ever created, nor the square of either.
func BenchmarkAnalyzeHandoffs(b *testing.B) {
	var cases []synth.Handoffs
	for _, n := range []int{10_000, 40_000, 100_000} {
		cases = append(cases, synth.Handoffs{Streams: n})
	}
	for _, n := range []int{100_000, 1_000_000} {
		cases = append(cases, synth.Handoffs{Streams: n, Destroy: true})
	}
	for _, h := range cases {
		name := fmt.Sprintf("live=%d", h.Streams)
		if h.Destroy {
			name = fmt.Sprintf("steps=%d", h.Streams)
		}
		b.Run(name, func(b *testing.B) {
			n, err := synth.WriteHandoffs(io.Discard, h) // the count, also when cached
			if err != nil {
				b.Fatal(err)
			}
			path := cachedTrace(b, "handoffs-v2-"+name, func(w io.Writer) error {
				_, err := synth.WriteHandoffs(w, h)
				return err
			})
			benchmarkAnalyzeFile(b, path, n, &heapmeter.Peaks{})
		})
	}
}
