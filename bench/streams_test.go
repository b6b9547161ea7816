package bench

import (
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/internal/heapmeter"
	"github.com/streamcheck/streamcheck/internal/synth"
)

// pytorchStreams is the stream count of a PyTorch process on one device:
// its stream pool holds 32 streams per priority per device, with 3
// priorities in recent versions (96 streams), and the default stream and
// a side stream (a data loader's, a communicator's) come on top. The
// legacy default stream is added by the generator itself.
const pytorchStreams = 32*3 + 1

// streamsConfig is the many-stream workload: every stream created (with
// its hand-off event), each used, event records and waits between random
// pairs of streams, and host synchronizations, in events events.
func streamsConfig(streams, events int) synth.Config {
	return synth.Config{Events: events, Streams: streams, LiveAllocs: 2 * streams, Seed: 1}
}

// BenchmarkAnalyzeStreams runs checker.Check over traces with many streams
// alive at once and reports the peak heap of each, which must follow the
// streams' real knowledge of each other, not the square of their number:
// PyTorch's stream count on one device over a million events, and 8,000
// to 16,000 streams at six events a stream (a trace of 1.9 to 3.6 MB).
func BenchmarkAnalyzeStreams(b *testing.B) {
	cases := []synth.Config{streamsConfig(pytorchStreams, 1_000_000)}
	for _, n := range []int{8_000, 10_000, 16_000} {
		cases = append(cases, streamsConfig(n, 6*n))
	}
	for _, cfg := range cases {
		b.Run(fmt.Sprintf("streams=%d", cfg.Streams), func(b *testing.B) {
			benchmarkAnalyze(b, cfg, &heapmeter.Peaks{})
		})
	}
}
