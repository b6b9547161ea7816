// Package explain draws why a finding is a bug: a small happens-before graph
// of the operations in conflict, the synchronization between their streams
// that does exist, and the ordering that is missing.
//
// A Recorder follows the checker's one pass over a trace (an observer:
// checker.Options.Observe) and keeps what the graphs may need, since the
// findings are known only at the end; Graphs then picks, for each finding,
// the synchronization operations that touch the finding's streams between
// its first and last operation: event records and waits on those streams,
// stream, event and device synchronization and successful queries of them,
// host-blocking synchronous copies, and operations on the legacy default
// stream when a finding's stream is a blocking one (the legacy stream's
// implicit joins). Whether a synchronization or query joined, and which
// stream, is the engine's answer (hb.Step.Joins), not decided again here.
// At most Options.MaxVertices operations are kept; a note
// vertex says how many were left out. A wait's event record is added even
// when it came before the finding's first operation (a stale record is a
// common bug).
//
// Vertices are the operations, named "op<seq>" after their position in the
// trace. Edges are the happens-before relation among them, as the engine in
// package hb decides it, reduced to the orderings that are not implied by
// others: stream order (consecutive operations on one stream), an event
// record to its wait or synchronize, a stream's work to the host call that
// waited for it, a host call to the work issued after it, and the legacy
// stream's implicit joins. One more edge, of kind EdgeMissing, goes from the
// operation that should come first to the one that should wait for it.
//
// DOT writes a graph in the Graphviz language and Text as plain text. Both
// are deterministic: vertices in trace order, edges by their end points, no
// map order; the same trace gives byte-identical output.
package explain
