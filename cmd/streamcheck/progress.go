package main

import (
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/streamcheck/streamcheck/analysis"
)

// progressDelay is how long an analysis runs before the progress bar
// appears: short ones finish without it.
const progressDelay = time.Second

// progress shows a progress bar on a terminal while traces are analyzed,
// measured in bytes read from the trace files. It appears only after delay,
// and is cleared when the analysis is done, so that nothing of it stays
// above the report.
type progress struct {
	w     io.Writer
	delay time.Duration
	total int64 // Bytes in all inputs that are files.
	done  int64
	name  string // The trace being read.
	begin time.Time
	bar   *progressbar.ProgressBar // Nil until Start, or without files to measure.
}

// newProgress returns a progress bar for w, or nil unless w is a terminal
// (never in tests or CI, whose stderr is a pipe or a file).
func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, delay: progressDelay}
}

// Start sizes the bar for the inputs.
func (p *progress) Start(ins []analysis.Input) {
	p.begin = time.Now()
	for _, in := range ins {
		if in.Path == "" {
			continue
		}
		if st, err := os.Stat(in.Path); err == nil && st.Mode().IsRegular() {
			p.total += st.Size()
		}
	}
	if p.total <= 0 {
		return
	}
	// The bar starts now, so that its rate is bytes over the time since
	// the analysis began from its first frame (one started at the delay
	// would divide what was read before it by almost nothing); what it
	// draws before the delay is dropped.
	p.bar = progressbar.NewOptions64(p.total,
		progressbar.OptionSetWriter(&delayedWriter{w: p.w, from: p.begin.Add(p.delay)}),
		progressbar.OptionSetDescription(p.description()),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// delayedWriter drops what is written to it before from.
type delayedWriter struct {
	w    io.Writer
	from time.Time
}

func (d *delayedWriter) Write(b []byte) (int, error) {
	if time.Now().Before(d.from) {
		return len(b), nil
	}
	return d.w.Write(b)
}

// Wrap returns open with its reader counted.
func (p *progress) Wrap(name string, open func() (io.ReadCloser, error)) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		p.name = name
		if p.bar != nil {
			p.bar.Describe(p.description())
		}
		return &countingReader{rc, p}, nil
	}
}

// description names the trace by its base name, to keep the line within
// the terminal (the bar itself shrinks to fit).
func (p *progress) description() string { return "analyzing " + filepath.Base(p.name) }

// add counts n more bytes read.
func (p *progress) add(n int) {
	p.done += int64(n)
	if p.bar != nil && p.done <= p.total { // A file that grew while read: stop at full.
		_ = p.bar.Add64(int64(n))
	}
}

// Finish clears the bar.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish() // With ClearOnFinish, this erases the line.
	}
}

// countingReader reports the bytes read through it to a progress.
type countingReader struct {
	io.ReadCloser
	p *progress
}

func (r *countingReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	r.p.add(n)
	return n, err
}
