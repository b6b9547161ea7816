package main

import (
	"fmt"
	"io"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/timeline"
)

const timelineUsage = `
usage: streamcheck timeline [flags] TRACE|DIR|-

Timeline writes one trace as Chrome/Perfetto trace-event JSON, to open in
https://ui.perfetto.dev or chrome://tracing: one track per stream and one per
host thread that made a call (a stream that never ran anything has none),
every recorded call as a slice, each event record and the wait
or synchronize that joined it as a flow arrow, and each finding as an
instant event (its rule, message, why and fix in the event's arguments) on
the track of its operation.

A trace records when calls were issued, not when their work ran on the GPU:
slices show issue order. Each starts at its call's recorded time and lasts
1 us; a call issued less than 1 us after the previous one is moved later so
that the order stays visible. A directory stands for the one trace under
it (name one of them when it holds several); - is standard input. The trace
is read once, as it is analyzed.

A -o file not finished is removed when a signal ends streamcheck; a -o file is written 0600 (or less, as the umask says) under a
temporary name, renamed into place when complete, and a FIFO or device is
written through, never replaced.

Exit codes:
  0  written (findings do not change the exit code)
  2  bad usage, or an input that could not be read (missing, not a trace,
     or several concatenated traces)
  3  the trace was truncated or corrupt; written up to the damage
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
	if len(pos) != 1 {
		return c.usageLine(fs, "timeline: want exactly one TRACE")
	}
	ins := analysis.Expand(pos, c.stdin)
	if len(ins) > 1 {
		return c.usageErrorf("timeline: %s holds %d traces; a timeline shows one: name one of them", shown(pos[0]), len(ins))
	}
	in := ins[0]
	if in.Path != "" && sameFile(in.Path, *output) {
		return c.usageErrorf("timeline: output %s is the input", shown(*output))
	}
	// The JSON grows with the trace: it is streamed as the analysis reads
	// the trace, and a file that could not be finished is removed.
	var (
		tw     *timeline.Writer
		finish func(ok bool) error
	)
	observe := func(tables *model.Tables) (func(*checker.Checker, *model.Event, *hb.Step), error) {
		out, fin, err := c.timelineOutput(*output)
		if err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		tw, finish = timeline.New(out, tables), fin
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
	if tw == nil { // Cut inside its header: no events.
		var out io.Writer
		if out, finish, err = c.timelineOutput(*output); err != nil {
			return c.usageErrorf("timeline: %v", err)
		}
		_, err = io.WriteString(out, "{\"traceEvents\":[],\n\"displayTimeUnit\":\"ns\"}\n")
	} else {
		err = tw.Finish(tr.res)
	}
	if ferr := finish(err == nil); err == nil {
		err = ferr
	}
	if isBrokenPipe(err) {
		return exitBrokenPipe
	}
	if err != nil {
		return c.usageErrorf("timeline: %v", err)
	}
	if tr.res.Damage != nil {
		return exitDamaged
	}
	return exitOK
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
