// Package report writes the findings of an analysis in the formats
// streamcheck offers: a text report for people, JSON, SARIF 2.1.0 for code
// scanning services and JUnit XML for CI systems.
//
// Each format is a Formatter, found by name in the registry (Lookup, Names).
// A Formatter writes an Analysis, the checker's results for a set of traces
// together with what the driver knows about them (inputs it could not read,
// findings it left out, how the recorded program ended), as Options say.
//
// The package knows nothing about command lines: drivers (cmd/streamcheck)
// parse flags, decide colors and exit codes, and pick a Formatter.
//
// Formatters write as they go, a finding at a time, so that the memory a
// report needs does not grow with the findings beyond the findings
// themselves: a trace with hundreds of thousands of distinct findings is
// reported as SARIF or JSON without building the document first.
package report
