package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/analysis"
)

// TestProgressOnlyOnTerminal: no progress bar unless stderr is a terminal,
// so tests and CI never see one.
func TestProgressOnlyOnTerminal(t *testing.T) {
	t.Setenv("TERM", "xterm")
	if p := newProgress(&bytes.Buffer{}); p != nil {
		t.Error("progress on a buffer")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if p := newProgress(w); p != nil {
		t.Error("progress on a pipe")
	}
	_, term := openPTY(t)
	if p := newProgress(term); p == nil {
		t.Error("no progress on a terminal")
	}
	t.Setenv("TERM", "dumb")
	if p := newProgress(term); p != nil {
		t.Error("progress on a dumb terminal")
	}
}

// TestProgressBar: on a terminal, a long analysis shows a bar naming the
// trace, and the bar is erased when the analysis is done.
func TestProgressBar(t *testing.T) {
	t.Setenv("TERM", "xterm")
	var b strings.Builder
	b.WriteString(`{"op":"stream_create","stream":"s1"}` + "\n")
	for i := range 4000 {
		fmt.Fprintf(&b, `{"op":"malloc_async","stream":"s1","ptr":"0x%x","size":256,"site":"app.cu:10"}`+"\n", 0x10000+i*0x1000)
		fmt.Fprintf(&b, `{"op":"free_async","stream":"s1","ptr":"0x%x","site":"app.cu:11"}`+"\n", 0x10000+i*0x1000)
	}
	trace := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	ctrl, term := openPTY(t)
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(ctrl) // Ends with EIO once the terminal side is closed.
		got <- string(b)
	}()
	p := newProgress(term)
	if p == nil {
		t.Fatal("no progress on a terminal")
	}
	p.delay = 0 // Show it at once: the trace is read in milliseconds.
	a := analysis.Run([]analysis.Input{analysis.FileInput("big.jsonl", trace)}, analysis.Options{SourceRoot: t.TempDir(), LeakCheck: "summary", Progress: p})
	term.Close()
	out := <-got
	if len(a.Results) != 1 || a.Results[0].Stats.Events != 8001 {
		t.Fatalf("analysis: %+v", a)
	}
	if !strings.Contains(out, "analyzing big.jsonl") || !strings.Contains(out, " kB") {
		t.Errorf("no bar naming the trace and its size:\n%q", out)
	}
	// Erased: the output ends by blanking the line and going back to its
	// start.
	last := strings.LastIndex(strings.TrimSuffix(out, "\r"), "\r")
	if !strings.HasSuffix(out, "\r") || last < 0 || strings.TrimSpace(out[last+1:]) != "" {
		t.Errorf("the bar is not erased at the end:\n%q", out)
	}
}

// TestProgressFirstRate: the bar's first frame, drawn once the delay has
// passed, gives the rate over the time since the analysis began, not over
// the instant since the bar appeared.
func TestProgressFirstRate(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := &progress{w: &out, delay: 100 * time.Millisecond}
	p.Start([]analysis.Input{analysis.FileInput("t.jsonl", trace)})
	p.add(100 << 10) // read at once: 100 kB in the first instant
	time.Sleep(150 * time.Millisecond)
	p.add(1)
	if out.Len() == 0 {
		t.Fatal("no frame after the delay")
	}
	// 100 kB over 0.15 s or more is well under 1 MB/s.
	if s := out.String(); !strings.Contains(s, "kB/s") {
		t.Errorf("first frame's rate is not that of the whole read so far:\n%q", s)
	}
	p.Finish()
}
