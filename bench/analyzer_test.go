package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/heapmeter"
	"github.com/streamcheck/streamcheck/internal/synth"
	"github.com/streamcheck/streamcheck/model"
)

// The workload of the performance goal: 10 million events, 8 streams, a
// working set of 10,000 live allocations. Run with -cpu 1: the goal is for
// one core.
var goal = synth.Config{Events: 10_000_000, Streams: 8, LiveAllocs: 10_000, Seed: 1}

// traceFile returns the path of the trace cfg generates, writing it on first
// use. Traces are cached in os.TempDir() by config (and generator version),
// so only the first run of a benchmark pays for generation.
func traceFile(b *testing.B, cfg synth.Config) string {
	b.Helper()
	return cachedTrace(b, cfg.Key(), func(w io.Writer) error {
		_, err := synth.Write(w, cfg)
		return err
	})
}

// cachedTrace returns the path of the trace named key in the cache,
// writing it with write on first use.
func cachedTrace(b *testing.B, key string, write func(io.Writer) error) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "streamcheck-bench")
	path := filepath.Join(dir, key+".trace")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name()) // Fails harmlessly after the rename.
	if err := write(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path
}

// analyze runs checker.Check over the binary trace at path. The file is
// handed to model.NewBinaryReader as it is: the reader buffers its input
// itself (64 KiB reads), and another buffer in front would only add a copy.
// wrap, if not nil, wraps the model reader.
func analyze(b *testing.B, path string, want int, wrap func(model.Reader) model.Reader) *checker.Result {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	br, err := model.NewBinaryReader(f, path)
	if err != nil {
		b.Fatal(err)
	}
	var r model.Reader = br
	if wrap != nil {
		r = wrap(r)
	}
	res, err := checker.Check(path, r)
	if err != nil {
		b.Fatal(err)
	}
	if res.Damage != nil || res.Stats.Events != uint64(want) {
		b.Fatalf("analyzed %d events, want %d; damage: %v", res.Stats.Events, want, res.Damage)
	}
	return res
}

// BenchmarkAnalyze10M measures end-to-end analysis of the goal workload:
// decoding the binary trace and applying every rule. One op is the whole
// trace; events/s is the figure the goal is stated in.
func BenchmarkAnalyze10M(b *testing.B) {
	benchmarkAnalyze(b, goal, nil)
}

// BenchmarkRead10M only decodes the goal workload's trace, with no
// analysis: the part of BenchmarkAnalyze10M's time that is model's binary
// reader.
func BenchmarkRead10M(b *testing.B) {
	path := traceFile(b, goal)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := model.NewBinaryReader(f, path)
		if err != nil {
			b.Fatal(err)
		}
		var ev model.Event
		for {
			err := r.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
		f.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkAnalyze10MUniform is BenchmarkAnalyze10M without locality: every
// address names any allocation of its stream with equal chance, so nearly
// every use misses the CPU caches. It bounds how much the goal's number owes
// to the locality real programs have.
func BenchmarkAnalyze10MUniform(b *testing.B) {
	cfg := goal
	cfg.Uniform = true
	benchmarkAnalyze(b, cfg, nil)
}

// BenchmarkAnalyzeScaling runs the goal workload's shape at three lengths and
// reports the peak heap of each: it must not grow with the number of events.
func BenchmarkAnalyzeScaling(b *testing.B) {
	for _, n := range []int{1_000_000, 3_000_000, 10_000_000} {
		cfg := goal
		cfg.Events = n
		b.Run(fmt.Sprintf("events=%dM", n/1_000_000), func(b *testing.B) {
			benchmarkAnalyze(b, cfg, &heapmeter.Peaks{})
		})
	}
}

func benchmarkAnalyze(b *testing.B, cfg synth.Config, peak *heapmeter.Peaks) {
	benchmarkAnalyzeFile(b, traceFile(b, cfg), cfg.Events, peak)
}

// benchmarkAnalyzeFile is benchmarkAnalyze for the trace at path, of
// the given number of events.
func benchmarkAnalyzeFile(b *testing.B, path string, nevents int, peak *heapmeter.Peaks) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var wrap func(model.Reader) model.Reader
	if peak != nil {
		wrap = func(r model.Reader) model.Reader { return &sampledReader{Reader: r, peak: peak} }
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	runtime.GC() // Start from the same clean heap every run.
	b.ResetTimer()
	cpu0 := cpuTime()
	runs := 0
	var findings int
	for b.Loop() {
		if peak != nil {
			peak.Reset()
		}
		res := analyze(b, path, nevents, wrap)
		findings = len(res.Findings)
		runs++
	}
	b.StopTimer()
	events := float64(nevents) * float64(runs)
	secs := b.Elapsed().Seconds()
	b.ReportMetric(events/secs, "events/s")
	b.ReportMetric(secs*1e9/events, "ns/event")
	// CPU time is what "on one core" means, and unlike wall time it does not
	// count time the process waited for a busy machine.
	b.ReportMetric(events/(cpuTime()-cpu0).Seconds(), "events/cpu-s")
	b.ReportMetric(float64(findings), "findings")
	if peak != nil {
		b.ReportMetric(float64(peak.Objects)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(peak.Live)/(1<<20), "peak-live-MB")
		b.ReportMetric(float64(peak.Goal)/(1<<20), "heap-goal-MB")
	}
}

// cpuTime returns the CPU time (user and system) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampleEvery is how many events pass between heap samples (about a
// millisecond of analysis).
const sampleEvery = 1 << 13

// sampledReader samples the heap every sampleEvery events, in the analyzing
// goroutine itself, so the measurement neither races nor needs a second core.
type sampledReader struct {
	model.Reader
	peak *heapmeter.Peaks
	n    int
}

func (r *sampledReader) Next(ev *model.Event) error {
	if r.n++; r.n%sampleEvery == 0 {
		r.peak.Sample()
	}
	err := r.Reader.Next(ev)
	if err != nil {
		// At the end of the trace the analysis holds the most it will: a
		// collection now measures the live heap exactly (a few ms).
		runtime.GC()
		r.peak.Sample()
	}
	return err
}
