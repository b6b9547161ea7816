// Package timeline writes a trace as Chrome/Perfetto trace-event JSON
// (https://ui.perfetto.dev, chrome://tracing): one track per stream and one
// per host thread, every recorded call as a slice, each event record joined
// by a wait, an event synchronize or a successful query as a flow arrow (the
// engine's joins, hb.Step.Joins, say which joined), and each finding as an
// instant event on the track of its operation.
//
// A trace records when each call was issued, not when its work ran on the
// GPU. Slices therefore show issue order: each starts at its call's
// recorded time and lasts SliceNS; a call issued less than SliceNS after the
// previous one is moved later so that slices never overlap and the order
// stays visible (hand-written traces without times become one call per
// microsecond).
//
// Tracks: process 1 is the host, with one thread per recorded host thread
// (tids 1, 2, ... in order of their first call, named after the recorded
// thread id; a thread that only issued stream work has an empty track);
// process 2+d is CUDA device d, with one thread per stream (its
// tid is the stream's happens-before agent id, named like findings name the
// stream). The output is deterministic: the same trace gives the same bytes.
package timeline
