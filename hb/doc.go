// Package hb computes the happens-before relation of a CUDA trace.
//
// Each stream and the host are agents with vector clocks. An operation issued
// to a stream gets an Epoch (its stream's agent, the agent's clock slot and
// the count on that slot); operation A happens before operation B exactly
// when B's clock covers A's epoch. A destroyed stream keeps only the
// entries of its clock that the host has not reached, and its slot is
// handed to the next stream once the host is ordered after its work, or
// at once to a stream whose first operation waits for all of that work
// (a hand-off chain), so memory and clock width follow the streams alive
// at once; once pruned, a stream keeps 24 bytes (Engine.Agent rebuilds it).
// Clocks wider than 512 slots are persistent trees whose nodes clocks
// share and copy on write (see Clock), so that thousands of streams alive
// at once, which mostly know the same (what the host knew when they last
// did work, or what the stream before them in a chain knew), hold that
// once, not once each.
// The engine follows CUDA's documented ordering rules:
//
//   - Work issued by the host is ordered after everything the host knew to be
//     complete when it issued the work. All host threads form one agent,
//     ordered as their calls were recorded (each when it returned), so
//     ordering between threads that the trace cannot see (a join, a flag)
//     never becomes a false alarm. The price: a call that overlapped another
//     thread's synchronization and returned first counts as covered by it,
//     which may hide a race between the threads themselves.
//   - The legacy default stream waits for all blocking streams of its device
//     before each operation, and blocking streams wait for it. Non-blocking
//     streams take part in neither. A blocking stream destroyed with work
//     still running is waited for until that work is done (measured on
//     CUDA 13.0). Each host thread's per-thread default
//     stream is a blocking stream.
//   - An event record snapshots its stream's clock; a wait joins the snapshot
//     of the most recent record issued before it. Waiting on an event never
//     recorded orders nothing (Step.UnrecordedWait; also for an event opened
//     from another process's handle, whose records there this trace does
//     not see: the checker decides across processes).
//   - Stream, event and device synchronization, and queries that returned
//     success, order the host after the work they cover.
//   - A host function that started running (OpHostFnRun, linked by its
//     token to the OpHostFunc that enqueued it) orders the host, every
//     thread, after the work issued to its stream before the enqueue: the
//     function may tell any thread by means the trace cannot see. A thread
//     it did not tell is ordered too, which can hide a race, never make
//     one up. A captured host function's runs order nothing.
//   - Synchronous cudaMemcpy runs on the default stream; device-to-host and
//     host-to-host copies, and copies from pinned host memory, return to the
//     host only after completion. A pageable host-to-device copy first
//     synchronizes its stream, so the host is ordered after the work issued
//     there before it, but not after the copy itself; device-to-device copies
//     do not synchronize the host. A synchronous cudaMemset returns after
//     completion only when it sets pinned host memory.
//   - A synchronous peer copy (cudaMemcpyPeer) waits for the legacy and
//     blocking streams of the current, source and destination devices, and
//     they wait for it, as the legacy stream does on one device, and a
//     device synchronization of any of them waits for it (measured on two
//     H200s; non-blocking streams take part in neither).
//   - A stream's wait for a value in memory (cuStreamWaitValue32/64) is
//     ordered after the recorded writes of values (cuStreamWriteValue32/64,
//     atomic reductions) before it that can meet its condition, by the
//     8-byte block of memory they touch: all but those overwritten, before
//     the wait, by a write of a value that does not (with a memory
//     barrier). The memory is assumed not to meet the condition before
//     those writes. A wait no recorded write can meet, one met by a write
//     without a memory barrier, at memory a graph writes, or after an
//     operation the trace does not describe, orders nothing (Step.MemWait
//     says which); a write that may have met an earlier followed wait
//     first is flagged (Step.MemLateWrite).
//   - Operations on a stream that is being captured into a graph do not run
//     when issued and are not ordered with the work outside the capture;
//     Step.CaptureOrigin and Step.Capture tell which capture they belong to
//     (the checker makes a graph launch use what the captured work used).
//     Among themselves they are ordered as the graph will run them: by
//     clocks of the capture's own (Step.Local, Step.LocalClock), which
//     stream order and the event records and waits of the capture advance.
//   - A graph launch is one operation on its stream, ordered after the
//     previous launch of the same executable graph. Event records and waits
//     captured with the external flags take effect at each launch: the
//     launch joins the waited events' snapshots before it, and the recorded
//     events snapshot the launch, as if at the end of the graph's work.
//
// Implicit synchronization of cudaMalloc/cudaFree is deliberately not
// modelled: the CUDA programming guide says programs must not rely on it.
//
// # Dispatch
//
// Engine.ApplyTo first sets apart the events that order nothing or are
// captured: failed calls, a graph's memory nodes and nodes added to a
// graph by hand. Operations issued to a stream (Op.OnStream: most events)
// go to Engine.issue, which orders them after the host, the peer-copy
// barrier and the legacy stream as their kind says, then makes the op's
// own joins (an event wait, a followed wait for a value, a graph launch's
// previous launch and external event waits) and gives it its epoch. Every
// other op is applied by its ordering family's advance function: the op
// spec's Order column (model.Op.Order) fills the table advances, indexed
// by op, at init: streams and events as objects (streams.go),
// synchronization and queries (syncs.go), allocations, imported pointers
// and mappings (allocs.go), synchronous copies and sets (copies.go),
// graphs (graphs.go) and host functions' runs (hostfuncs.go); OrderNothing
// is a host call that orders nothing. The table holds the family
// (Engine.advance switches on it, a jump table) rather than function
// values: the compiler cannot see what an indirect call keeps, so the
// caller's event and Step would escape to the heap. TestDispatchCoversTheSpec
// fails when a family of the spec has no case.
//
// # Joins
//
// Each ordering the engine makes for an event is a Join in its Step
// (Step.Joins, a view of a list the engine empties at each event, valid
// until the next Apply, as Step.Clock is): the agent ordered after (Into:
// the host or a stream), the work it was ordered after (From: an agent
// and its last operation that the joined clock covers, or NoAgent for a
// device's peer-copy barrier and the writes a value wait follows) and the
// rule that made it (Why: JoinStreamSync, JoinStreamQuery, JoinEventSync,
// JoinEventQuery, JoinEventWait, JoinDeviceSync, JoinLegacy,
// JoinPeerCopy, JoinBarrier, JoinCopy, JoinCopyPresync, JoinGraphLaunch,
// JoinGraphEventWait, JoinValueWait, JoinHostFunc). A query appears only when it
// returned success, a wait or event synchronization only for a recorded
// event, and a device synchronization has a join for every stream of its
// device. Operations captured into a graph list none (their order in the
// capture is Step.LocalClock), but for a synchronous copy's JoinCopy,
// which orders the host after its stream's work outside the capture. The
// join of the host clock that every operation issued to a stream makes is
// not listed. Callers that show ordering (explain, timeline) draw these
// joins rather than apply CUDA's rules again. The list lives in the
// engine, not in the Step, whose size shows in the time per event.
package hb
