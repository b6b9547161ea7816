// Package checker turns a trace into findings: it replays the trace through
// the happens-before engine (package hb), tracks every allocation's address
// range and the streams that used it, and applies the rules in Rules.
//
// The package knows nothing about command lines or output formats; drivers
// (cmd/streamcheck) format the Findings of a Result.
package checker
