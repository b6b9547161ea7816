// Package model defines the events streamcheck records and analyzes, and the
// two trace encodings that carry them: a versioned binary format written by
// the recording shim (see docs/trace-format.md) and a JSON Lines form that
// people write by hand and other tools produce.
//
// The package is free of analysis: it only says what happened, in what order.
// One step of decoding looks like analysis: the shim writes a launch's
// parameter words unmatched, and the binary reader finds which of them name
// memory the trace allocated, with the allocation map the shim would have
// kept (launchwords.go), so every reader hands on the same matched events.
// Readers stream: memory grows with the number of distinct strings, stacks and
// objects in a trace (and the live and recently freed allocations), never
// with the number of events.
package model
