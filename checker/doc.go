// Package checker turns a trace into findings: it replays the trace through
// the happens-before engine (package hb), tracks every allocation's address
// range and the streams that used it, and applies the rules in Rules.
//
// Each rule is defined in its own file, rule_<id>.go, which registers it:
// its RuleID, severity and Documentation, the roles its findings give
// their operations, how a finding of it is explained, and its state and
// the hooks the checker calls on it (plugin.go); its golden files are in
// testdata/rules/<id>/. The rest of the package is shared by the rules:
// the event loop (checker.go), which finds each op's allocations, uses and
// frees from the op spec's memory column (model.Op.Mem, model.Op.Uses),
// the memory state (memory.go, allocation.go, addrindex.go), the
// allocation families and which API frees each (family.go) and what
// allocations, frees and uses do to it (lifetime.go, which asks the rules'
// use and free hooks what a use or free met), captures and graphs
// (capture.go, graphs.go), folding occurrences into findings (fold.go) and
// resolving them for reports (resolve.go, explain.go). Options.Observe lets
// a tool follow the analysis event by event (observe.go).
//
// The package knows nothing about command lines or output formats; drivers
// (cmd/streamcheck) format the Findings of a Result, and can describe each
// rule from Rule.Docs and Rule.Help.
package checker
