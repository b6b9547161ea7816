package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/internal/heapmeter"
	"github.com/streamcheck/streamcheck/internal/synth"
)

// BenchmarkReportMemory measures what a report costs per finding, through
// the path check takes (writeReport): a trace of STREAMCHECK_BENCH_FINDINGS
// (default 50,000) distinct use-after-free findings is analyzed once, then
// reported in each format. Its metrics, per finding: held-B, the heap the
// analysis (the findings) holds; peak-B, the most heap the report took on
// top of it, garbage not yet collected included (the garbage collector lets
// it grow to about held-B); live-B, the most of that the collector found
// live; alloc-B, what the report allocated. bench/report-memory.sh
// runs it against an older commit too.
func BenchmarkReportMemory(b *testing.B) {
	n := 50_000
	if s := os.Getenv("STREAMCHECK_BENCH_FINDINGS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "uaf.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := synth.WriteUseAfterFree(f, n); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	var held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	before := held.HeapAlloc
	a := analysis.Run([]analysis.Input{analysis.FileInput("uaf.jsonl", path)}, analysis.Options{SourceRoot: "/"})
	runtime.GC()
	runtime.ReadMemStats(&held)
	if got := len(a.Results[0].Findings); got != n {
		b.Fatalf("%d findings, want %d", got, n)
	}
	for _, format := range []string{"text", "json", "sarif", "junit"} {
		b.Run(format, func(b *testing.B) {
			o := reportOptions{format: format, root: "/", leakCheck: "summary"}
			c := &cli{stderr: io.Discard}
			var u heapmeter.Usage
			for b.Loop() {
				if u, err = heapmeter.Measure(func(w io.Writer) error { return c.writeReport(a, &o, w) }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(held.HeapAlloc-before)/float64(n), "held-B/finding")
			b.ReportMetric(float64(u.Peak)/float64(n), "peak-B/finding")
			b.ReportMetric(float64(u.Live)/float64(n), "live-B/finding")
			b.ReportMetric(float64(u.Alloc)/float64(n), "alloc-B/finding")
		})
	}
	runtime.KeepAlive(a)
}
