package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/timeline"
)

const timelineUsage = `
usage: streamcheck timeline [flags] TRACE|DIR|-...

Timeline writes traces as Chrome/Perfetto trace-event JSON, to open in
https://ui.perfetto.dev or chrome://tracing: one track per stream and one per
host thread that made a call (a stream that never ran anything has none),
every recorded call as a slice, each event record and the wait
or synchronize that joined it as a flow arrow, and each finding as an
instant event (its rule, message, why and fix in the event's arguments) on
the track of its operation.

A trace records when calls were issued, not when their work ran on the GPU:
slices show issue order. Each starts at its call's recorded time and lasts
1 us; a call issued less than 1 us after the previous one is moved later so
that the order stays visible. - is standard input. Each trace is read once,
as it is analyzed.

Several traces (files, and directories, which stand for every trace under
them, recursively, as for check), such as the processes of one recorded
tree, make one timeline: each trace's host and devices are processes of
their own, named with the traced process's pid, and each trace is placed at
its process's start after the earliest one's (a JSON Lines trace without a
"# process" line starts with the earliest). Every trace of several must be
a file: - and pipes are read once only, and a timeline of several reads
each trace's first records before it draws any.

A -o file not finished is removed when a signal ends streamcheck; a -o file is written 0600 (or less, as the umask says) under a
temporary name, renamed into place when complete, and a FIFO or device is
written through, never replaced.

Exit codes:
  0  written (findings do not change the exit code)
  2  bad usage, or an input that could not be read (missing, not a trace,
     or several concatenated traces): nothing is written
  3  a trace was truncated or corrupt; written up to the damage
  killed by SIGPIPE (141 in a shell), without a message, when stdout is a
  pipe whose reader went away
`

// cmdTimeline implements "streamcheck timeline". See timelineUsage.
func (c *cli) cmdTimeline(args []string) int {
	fs := newFlags("timeline")
	output := outputFlag(fs, "write the JSON to `FILE` (default and -: stdout)")
	pos, code, done := c.parseFlags(fs, timelineUsage, args, true)
	if done {
		return code
	}
	if len(pos) == 0 {
		return c.usageLine(fs, "timeline: want a TRACE")
	}
	ins := analysis.Expand(pos, c.stdin)
	for _, in := range ins {
		if in.Path != "" && sameFile(in.Path, *output) {
			return c.usageErrorf("timeline: output %s is the input", shown(*output))
		}
	}
	offsets := make([]int64, len(ins))
	if len(ins) > 1 {
		var err error
		if offsets, err = startOffsets(ins); err != nil {
			return c.usageErrorf("%v", err)
		}
	}
	// The JSON grows with the traces: it is streamed as the analysis reads
	// each trace, and a file that could not be finished is removed.
	var (
		doc      *timeline.Doc
		finish   func(ok bool) error
		damaged  bool
		writeErr error
	)
	begin := func() error {
		if doc != nil {
			return nil
		}
		out, fin, err := c.timelineOutput(*output)
		if err != nil {
			return fmt.Errorf("timeline: %w", err)
		}
		doc, finish = timeline.NewDoc(out, len(ins) > 1), fin
		return nil
	}
	for i, in := range ins {
		var tw *timeline.Writer
		observe := func(tables *model.Tables) (func(*checker.Checker, *model.Event, *hb.Step), error) {
			if err := begin(); err != nil {
				return nil, err
			}
			tw = doc.Trace(tables, offsets[i])
			return tw.Observe, nil
		}
		tr, err := loadTrace(in, observe)
		if err != nil {
			if finish != nil {
				finish(false)
			}
			return c.usageErrorf("%v", err)
		}
		c.replayNotes(tr.res)
		damaged = damaged || tr.res.Damage != nil
		if tw != nil { // nil: cut inside its header, no events
			writeErr = tw.Finish(tr.res)
		}
		if writeErr != nil {
			break
		}
	}
	if writeErr == nil {
		if writeErr = begin(); writeErr == nil {
			writeErr = doc.Close()
		}
	}
	if finish != nil {
		if ferr := finish(writeErr == nil); writeErr == nil {
			writeErr = ferr
		}
	}
	if isBrokenPipe(writeErr) {
		return exitBrokenPipe
	}
	if writeErr != nil {
		return c.usageErrorf("timeline: %v", writeErr)
	}
	if damaged {
		return exitDamaged
	}
	return exitOK
}

// startOffsets returns, for each of several traces, how long after the
// earliest trace's process its process started (ns), read from its first
// records; 0 for a trace that does not say. Each must be a file: it is
// read again to be drawn.
func startOffsets(ins []analysis.Input) ([]int64, error) {
	starts := make([]int64, len(ins))
	earliest := int64(0)
	for i, in := range ins {
		if in.Err != nil {
			return nil, &analysis.InputError{Name: in.Name, Err: in.Err}
		}
		if st, err := os.Stat(in.Path); in.Path == "" || err != nil || !st.Mode().IsRegular() {
			return nil, &analysis.InputError{Name: in.Name, Err: errNotAFile}
		}
		start, err := traceStart(in)
		if err != nil {
			return nil, err
		}
		starts[i] = start
		if start != 0 && (earliest == 0 || start < earliest) {
			earliest = start
		}
	}
	for i, s := range starts {
		if s != 0 {
			starts[i] = s - earliest
		}
	}
	return starts, nil
}

var errNotAFile = errors.New("a timeline of several traces reads each twice: name files, not - or a pipe")

// traceStart returns when the process a trace recorded started (Unix ns),
// from the records before its first event; 0 when it does not say. A
// trace that breaks there is left for its analysis to report.
func traceStart(in analysis.Input) (int64, error) {
	f, err := in.Open()
	if err != nil {
		return 0, &analysis.InputError{Name: in.Name, Err: err}
	}
	defer f.Close()
	r, err := model.NewReader(f, in.Name)
	if err != nil {
		if model.IsDamage(err) {
			return 0, nil
		}
		return 0, &analysis.InputError{Name: in.Name, Err: err}
	}
	var ev model.Event
	r.Next(&ev) // its error, if any, is the analysis's to report
	return r.Tables().Process.Start, nil
}

// timelineOutput opens where the JSON goes: stdout, or the file named
// output (see createOutput). finish(ok) closes it, and puts the file in
// place only if ok.
func (c *cli) timelineOutput(output string) (io.Writer, func(ok bool) error, error) {
	if output == "" {
		return c.stdout, func(bool) error { return nil }, nil
	}
	// 0600, less as the umask says: the timeline holds the whole trace.
	// Half a timeline is no use: it is renamed into place when complete.
	f, err := createOutput(output, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, f.finish, nil
}
