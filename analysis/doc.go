// Package analysis is the driver every command that reports findings goes
// through: it turns command-line arguments into inputs (trace files,
// directories of them searched recursively, "-" for standard input), opens
// each, splits binary traces concatenated into one file into processes of
// their own, checks each with package checker (stacks symbolized), links
// the memory one process of a tree exported to the processes that imported
// it, and returns the report.Analysis that package report formats.
//
// An input that cannot be read at all (missing, not a trace, empty) is an
// error of Analysis.Unreadable; it does not stop the others. A damaged
// trace is a Result with Damage set, analyzed up to the damage.
package analysis
