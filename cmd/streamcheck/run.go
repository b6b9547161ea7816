package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

const runUsage = `
usage: streamcheck run [flags] -- PROGRAM [ARG...]

Run records PROGRAM like 'streamcheck record', into a temporary directory
(or --keep DIR), then analyzes every trace in it (all processes of the
tree) like 'streamcheck check'. The report goes to stderr, never stdout,
which stays the program's; -o FILE writes it to a file instead.

Exit codes, the first that applies:
  the program's  if the program failed: its exit code (128+N if signal N
                 killed it; 126 or 127 if it could not be started). The
                 report is still printed: a failing program is never hidden
  2              bad usage, the shim was not found or is not an ELF shared
                 object for this machine, a trace is unreadable, or a
                 --suppressions or --baseline file is missing or malformed
                 (checked before the program starts)
  1              error findings
  3              a trace was truncated or corrupt
  4              the shim reported that it could not record (its message is
                 printed), or, with --preload, no process loaded it
  0              otherwise
If the program made no CUDA call at all, run prints "streamcheck: no CUDA
activity was recorded" and exits with the program's code.
` + acceptHelp + leakHelp

// cmdRun implements "streamcheck run". Its exit code is, the first that
// applies: the program's own code when it failed (never hide a failing
// program; the report is still printed); 2 for bad usage, a missing shim or
// an unreadable trace; 1 for error findings; 3 for a damaged trace; 4 when
// the shim left a streamcheck-*.error file saying it could not record, or
// (preloaded) no process loaded it; else 0. With no trace written at all it prints "no CUDA activity was recorded"
// and exits with the program's code.
func (c *cli) cmdRun(args []string) int {
	fs := newFlags("run")
	var o reportOptions
	o.register(fs, "stderr")
	keep := fs.String("keep", "", "record into `DIR` and keep the traces (default: a temporary directory, removed)")
	preload := fs.Bool("preload", false, "load the shim with LD_PRELOAD instead of CUDA_INJECTION64_PATH")
	backend := backendFlag(fs)
	argv, code, done := c.parseFlags(fs, runUsage, args, false)
	if done {
		return code
	}
	if err := c.useBackend(*backend, preload); err != nil {
		return c.usageErrorf("run: %v", err)
	}
	if err := o.check(); err != nil {
		return c.usageErrorf("run: %v", err)
	}
	if err := o.load(); err != nil {
		return c.usageErrorf("%v", err)
	}
	if len(argv) == 0 {
		fmt.Fprintln(c.stderr, "streamcheck run: no program given")
		printUsage(c.stderr, fs, runUsage)
		return exitUsage
	}
	// Find out now, not after a run that may take hours, that the report
	// or the baseline could not be written.
	for _, out := range []string{o.output, o.writeBaseline} {
		if err := checkWritable(out); err != nil {
			return c.usageErrorf("run: %v", err)
		}
	}

	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "streamcheck-run-")
		if err != nil {
			return c.usageErrorf("%v", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return c.usageErrorf("%v", err)
		}
		// Old traces would be analyzed as if this run had written them.
		if rec, err := scanRecording(dir); err == nil && len(rec.traces)+len(rec.failures) > 0 {
			return c.usageErrorf("run: %s already holds traces; --keep needs an empty or new directory", shown(dir))
		}
	}

	progCode, loaded, err := c.record(dir, *preload, argv)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return progCode
	}
	rec, err := scanRecording(dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return firstNonZero(progCode, exitUsage)
	}
	rec.noteNotLoaded(loaded)
	c.printShimFailures(rec)
	outcome := &programOutcome{ExitCode: progCode, Recorded: len(rec.traces) > 0, NotRecorded: rec.failures}
	if len(rec.traces) == 0 {
		// A CI step that uploads the report finds one, saying why it
		// holds no findings, rather than none.
		if o.output != "" || o.writeBaseline != "" {
			a := analyzeInputs(nil, o.root, o.leakCheck, o.allocLoopThreshold, nil)
			a.program = outcome
			if err := c.writeReport(a, &o, c.stderr); err != nil {
				fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
				return firstNonZero(progCode, exitUsage)
			}
		}
		if len(rec.failures) == 0 {
			fmt.Fprintln(c.stderr, "streamcheck: "+noCUDAActivity)
			return progCode
		}
		return firstNonZero(progCode, exitNotRecorded)
	}

	// Traces are named by their base name, or by their path when kept, so
	// that the report names files the user can find.
	ins := make([]input, len(rec.traces))
	for i, name := range rec.traces {
		display := name
		if *keep != "" {
			display = filepath.Join(*keep, name)
		}
		ins[i] = recordedInput(shown(display), filepath.Join(dir, name))
	}
	a := analyzeInputs(ins, o.root, o.leakCheck, o.allocLoopThreshold, newProgress(c.stderr))
	a.program = outcome
	if err := c.writeReport(a, &o, c.stderr); err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return firstNonZero(progCode, exitUsage)
	}
	code = a.exitCode()
	if code == exitOK && len(rec.failures) > 0 {
		code = exitNotRecorded
	}
	return firstNonZero(progCode, code)
}

func firstNonZero(codes ...int) int {
	for _, c := range codes {
		if c != 0 {
			return c
		}
	}
	return 0
}

// checkWritable makes sure the file path can be written, leaving it as it
// was (a file created to find out is removed again); "" is fine.
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		os.Remove(path)
	}
	return nil
}
