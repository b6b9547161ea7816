// Package model defines the events streamcheck records and analyzes, and the
// two trace encodings that carry them: a versioned binary format written by
// the recording shim (see docs/trace-format.md) and a JSON Lines form that
// people write by hand and other tools produce.
//
// The package is free of analysis: it only says what happened, in what order.
// Readers stream: memory grows with the number of distinct strings, stacks and
// objects in a trace, never with the number of events.
package model
