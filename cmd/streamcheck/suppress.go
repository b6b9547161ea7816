package main

// Suppressions and baselines: findings a project has accepted, so that
// only the rest are reported and fail a run.
//
// --suppressions FILE names a line-based file (package suppress has the
// full grammar):
//
//	# comment
//	RULE PATTERN... reason="WHY"
//
//	use-before-alloc      frame=*Trainer::prefetch*  reason="prefetch is ordered by a host barrier streamcheck cannot see"
//	free-while-in-flight  kernel=at::native::*       reason="..."
//	*                     file=third_party/*         reason="..."
//
// RULE is a rule id or "*". Patterns are frame=GLOB (a function name or
// "file:line" of any stack frame of any operation of the finding, the
// allocation included), kernel=GLOB (a kernel name) and file=GLOB (a
// frame's source file); an entry matches when all its patterns do. "*" in
// a glob matches anything, "?" one character; path patterns also match any
// tail of a path after a "/". reason= is required. A malformed entry, an
// unknown rule or key, an entry with no pattern or no reason is an error
// naming the file and line (exit 2, before anything runs). An entry that
// matched no finding gets a warning on stderr:
// "streamcheck: FILE:LINE: suppression matched no finding".
//
// --baseline FILE names a JSON file written by --write-baseline FILE
// (package baseline has the format): the fingerprints of accepted
// findings. A finding whose fingerprint (its rule and call sites, as in
// SARIF's partialFingerprints) is in it is not reported; only new findings
// fail. --write-baseline records every finding that is not suppressed and
// accepts them for this run too. An unreadable or malformed baseline is an
// error (exit 2).
//
// Suppressed and baselined findings are left out of every format and of
// the exit code; the summaries count them.

import (
	"fmt"

	"github.com/streamcheck/streamcheck/baseline"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/report"
)

// acceptHelp is the part of the usage of check, run and demo that explains
// the flags for accepted findings.
const acceptHelp = `
Accepted findings:
  --suppressions FILE lists findings to leave out, one entry a line:
      RULE PATTERN... reason="WHY"
  RULE is a rule id or *; a PATTERN is frame=GLOB (a function name or
  file:line in the stack of any operation of the finding, the allocation
  included), kernel=GLOB or file=GLOB (a source file in those stacks). An
  entry matches when all its patterns do; * matches anything, ? one
  character, and path patterns match any tail of a path after a /. reason=
  is required; # starts a comment. Example:
      use-before-alloc frame=*Trainer::prefetch* reason="ordered by a host barrier"
  An entry that matches nothing is reported on stderr.

  --write-baseline FILE records the current findings' fingerprints (rule and
  call sites); --baseline FILE then leaves them out, so that only new
  findings fail. Suppressed and baselined findings never count for the exit
  code; the summary says how many there were.
`

// leakHelp is the part of the usage of check, run and demo that explains
// --leak-check.
const leakHelp = `
Memory live at exit:
  Stream-ordered memory (cudaMallocAsync, from a pool, a graph's) still
  allocated when a trace ends is no finding by default: programs keep what
  they use until exit. --leak-check summary (the default) adds one line
  saying how many such allocations and bytes were live; --leak-check full
  reports each as a leak warning; --leak-check none says nothing. JSON
  counts them either way (live_at_exit, live_bytes_at_exit).
`

// filterFindings takes the findings that --suppressions or a baseline
// accepts out of a's results, writes --write-baseline, and warns about
// suppression entries that matched nothing. The accepted findings are kept
// in a.Suppressed and a.Baselined, for the summaries.
func (c *cli) filterFindings(a *report.Analysis, o *reportOptions) error {
	if o.supp == nil && o.base == nil && o.writeBaseline == "" {
		return nil
	}
	var current []*checker.Finding
	for _, res := range a.Results {
		kept := make([]*checker.Finding, 0, len(res.Findings))
		for _, f := range res.Findings {
			if o.supp.Match(f) {
				a.Suppressed = append(a.Suppressed, f)
				continue
			}
			current = append(current, f)
			if o.writeBaseline != "" || (o.base != nil && o.base.Contains(f)) {
				a.Baselined = append(a.Baselined, f)
				continue
			}
			kept = append(kept, f)
		}
		res.Findings = kept
	}
	for _, e := range o.supp.Unused() {
		fmt.Fprintf(c.stderr, "streamcheck: %s: suppression matched no finding\n", e.Pos())
	}
	if o.writeBaseline != "" {
		b := baseline.New(current)
		if err := writeOutput(o.writeBaseline, 0o666, b.Write); err != nil {
			return fmt.Errorf("cannot write the baseline: %v", err)
		}
		fmt.Fprintf(c.stderr, "streamcheck: wrote %s to %s\n", report.Plural(len(b.Findings), "finding"), o.writeBaseline)
	}
	return nil
}
