package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/report"
)

const runUsage = `
usage: streamcheck run [flags] -- PROGRAM [ARG...]

Run records PROGRAM like 'streamcheck record', into a temporary directory
(or --keep DIR), then analyzes every trace in it (all processes of the
tree, also those the program left running, waited for up to --grace) like
'streamcheck check'. The report goes to stderr, never stdout, which stays
the program's; -o FILE writes it to a file instead.

Exit codes, the first that applies:
  the program's  if the program failed: its exit code (128+N if signal N
                 killed it; 126 or 127 if it could not be started). The
                 report is still printed: a failing program is never hidden
  2              bad usage, the shim was not found or is not an ELF shared
                 object for this machine, a trace is unreadable, a
                 --suppressions or --baseline file is missing or malformed,
                 or the --keep DIR is in use by another record or run
                 (checked before the program starts)
  1              error findings (or N, with --error-exitcode N)
  3              a trace was truncated or corrupt
  4              the shim reported that it could not record (its message is
                 printed), or, preloaded (the default backend, or
                 --preload), no process loaded it, or none wrote a trace and
                 one that loaded it did not say at exit that it made no
                 CUDA call (a shell; a process started with LD_PRELOAD
                 removed may have made the CUDA calls)
  0              otherwise
Every report states the program's exit status (text: its last line, "the
program exited with code N"; JSON: program.exit_code; SARIF: the
invocation's exitCode; JUnit: the program suite's exit_code property). If
the program made no CUDA call at all, run still writes its report, prints
"streamcheck: no CUDA activity was recorded" and exits with the program's
code.
` + acceptHelp + leakHelp

// cmdRun implements "streamcheck run". Its exit code is, the first that
// applies: the program's own code when it failed (never hide a failing
// program; the report is still printed); 2 for bad usage, a missing shim or
// an unreadable trace; 1 for error findings; 3 for a damaged trace; 4 when
// the shim left a streamcheck-*.error file saying it could not record, or
// (preloaded) no process loaded it or one is unaccounted for; else 0. With no trace written at all it prints "no CUDA activity was recorded"
// and exits with the program's code.
func (c *cli) cmdRun(args []string) int {
	fs := newFlags("run")
	var o reportOptions
	o.register(fs, "stderr")
	keep := fs.String("keep", "", "record into `DIR` and keep the traces (default: a temporary directory, removed)")
	preload := fs.Bool("preload", false, "with --backend cupti, load the shim with LD_PRELOAD instead of CUDA_INJECTION64_PATH (the interpose backend always preloads it)")
	backend := backendFlag(fs)
	grace := fs.Duration("grace", defaultGrace, graceHelp)
	argv, code, done := c.parseFlags(fs, runUsage, args, false)
	if done {
		return code
	}
	if err := c.useBackend(*backend, preload); err != nil {
		return c.usageErrorf("run: %v", err)
	}
	if *grace < 0 {
		return c.usageErrorf("run: --grace %v: want 0 or more", *grace)
	}
	if err := o.check(); err != nil {
		return c.usageErrorf("run: %v", err)
	}
	if err := o.load(); err != nil {
		return c.usageErrorf("%v", err)
	}
	if err := o.refuseInputs(nil); err != nil {
		return c.usageErrorf("run: %v", err)
	}
	if len(argv) == 0 {
		return c.usageLine(fs, "run: no program given")
	}
	// Find out now, not after a run that may take hours, that the report
	// or the baseline could not be written.
	for _, out := range []string{o.output, o.writeBaseline} {
		if err := checkOutput(out); err != nil {
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
		// Claimed first, so that no other run can write traces between
		// the check that it is empty and this run's start.
		release, err := claimDir(dir)
		if err != nil {
			return c.usageErrorf("run: %v", err)
		}
		defer release()
		// Old traces would be analyzed as if this run had written them.
		if rec, err := scanRecording(dir); err == nil && len(rec.traces)+len(rec.failures) > 0 {
			return c.usageErrorf("run: %s already holds traces; --keep needs an empty or new directory", shown(dir))
		}
	}

	progCode, seen, err := c.record(dir, *preload, *grace, argv)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return progCode
	}
	rec, err := scanRecording(dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return firstNonZero(progCode, exitUsage)
	}
	rec.noteUnrecorded(*preload, seen, c.backend)
	c.printShimFailures(rec)
	outcome := &report.Program{ExitCode: progCode, Recorded: len(rec.traces) > 0, NotRecorded: rec.failures}
	if len(rec.traces) == 0 {
		// The report is written all the same, saying how the program
		// ended and why it holds no findings: a CI step that uploads it
		// finds one, and JSON, SARIF and JUnit on stderr are still
		// reports.
		{
			a := analyzeWith(nil, &o, nil)
			a.Program = outcome
			if err := c.writeReport(a, &o, c.stderr); err != nil {
				fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
				return firstNonZero(progCode, exitUsage)
			}
		}
		if len(rec.failures) == 0 {
			fmt.Fprintln(c.stderr, "streamcheck: "+report.NoCUDAActivity)
			return progCode
		}
		return firstNonZero(progCode, exitNotRecorded)
	}

	// Traces are named by their base name, or by their path when kept, so
	// that the report names files the user can find.
	ins := make([]analysis.Input, len(rec.traces))
	for i, name := range rec.traces {
		display := name
		if *keep != "" {
			display = filepath.Join(*keep, name)
		}
		ins[i] = analysis.RecordedInput(shown(display), filepath.Join(dir, name))
	}
	a := analyzeWith(ins, &o, newProgress(c.stderr))
	a.Program = outcome
	if err := c.writeReport(a, &o, c.stderr); err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return firstNonZero(progCode, exitUsage)
	}
	code = exitCode(a, &o)
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
