package main

import (
	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/report"
)

// shown is a file name as reports and messages show it (analysis.Shown).
func shown(path string) string { return analysis.Shown(path) }

// analyzeWith runs the analysis driver with the report flags' options,
// advancing prog (if not nil) as the inputs are read.
func analyzeWith(ins []analysis.Input, o *reportOptions, prog *progress) *report.Analysis {
	opts := analysis.Options{SourceRoot: o.root, LeakCheck: o.leakCheck, AllocLoopThreshold: o.allocLoopThreshold}
	if prog != nil { // a nil *progress in the interface would not be nil
		opts.Progress = prog
	}
	return analysis.Run(ins, opts)
}

// exitCode applies the exit code table (see the const block in main.go),
// with --error-exitcode for error findings.
func exitCode(a *report.Analysis, o *reportOptions) int {
	t := a.Totals()
	switch {
	case len(a.Unreadable) > 0:
		return exitUsage
	case t.Errors > 0:
		return o.errorExitCode
	case t.Damaged > 0:
		return exitDamaged
	}
	return exitOK
}
