package main

import (
	"github.com/streamcheck/streamcheck/analysis"
)

const checkUsage = `
usage: streamcheck check [flags] TRACE|DIR|-...

Check analyzes recorded traces and reports every race or misuse of
stream-ordered memory it finds. Each file is one process; a directory stands
for every *.sctrace and *.jsonl file under it, searched recursively in name
order (a process tree recorded by 'streamcheck record', or a folder of such
recordings), and - for standard input. A trace named twice is analyzed
once. Traces may be binary or JSON Lines.

A truncated or corrupt trace is analyzed up to the damage, and the report
says where it stopped.

Exit codes:
  0  no error findings (warnings allowed)
  1  error findings (or N, with --error-exitcode N)
  2  bad usage, an input that could not be read (missing, or not a trace:
     empty whatever its name, JSON Lines without events, or in neither
     form), or a
     --suppressions or --baseline file that is missing or malformed
  3  a trace was truncated or corrupt, and no error findings
` + acceptHelp + leakHelp

// cmdCheck implements "streamcheck check". See checkUsage.
func (c *cli) cmdCheck(args []string) int {
	fs := newFlags("check")
	var o reportOptions
	o.register(fs, "stdout")
	pos, code, done := c.parseFlags(fs, checkUsage, args, true)
	if done {
		return code
	}
	if err := o.check(); err != nil {
		return c.usageErrorf("check: %v", err)
	}
	if err := o.load(); err != nil {
		return c.usageErrorf("%v", err)
	}
	if len(pos) == 0 {
		return c.usageLine(fs, "check: no trace given (try 'streamcheck demo' for an example)")
	}
	ins := analysis.Expand(pos, c.stdin)
	if err := o.refuseInputs(ins); err != nil {
		return c.usageErrorf("check: %v", err)
	}
	a := analyzeWith(ins, &o, newProgress(c.stderr))
	if err := c.writeReport(a, &o, c.stdout); err != nil {
		if isBrokenPipe(err) {
			return exitBrokenPipe
		}
		return c.usageErrorf("%v", err)
	}
	return exitCode(a, &o)
}
