package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleFreeWhileInFlight is the id of the rule this file defines.
const RuleFreeWhileInFlight RuleID = "free-while-in-flight"

// freeWhileInFlightRule: free-while-in-flight. It is checked by its hook
// below, before free-before-alloc's, and in captures (capture.go).
var freeWhileInFlightRule = &ruleDef{
	rank:     30,
	id:       RuleFreeWhileInFlight,
	severity: SeverityError,
	doc: Documentation{
		Title: "a free is not ordered after an earlier use on another stream, which may still be running",
		Text:  "a free is not ordered after an earlier use on another stream (also `cudaFree` of async memory, `cudaFreeAsync` of `cudaMalloc` memory, and `cudaFreeHost`/`cudaHostUnregister` of host memory that a copy, set, kernel or graph launch may still use: they do not wait; not `cudaFree`/`cuMemFree` of `cudaMalloc`, pitched or managed memory, which waits for its device's work)",
		Why: "cudaFreeAsync frees the memory in the stream order of the free only, and cudaFree of stream-ordered memory does not wait for work that uses it: " +
			"work on another stream that the free is not ordered after may still be using the memory when the pool hands it to another allocation. " +
			"cudaFreeHost and cudaHostUnregister (cuMemFreeHost, cuMemHostUnregister) promise no synchronization either: a pending copy, set or kernel may still read or write the pinned pages.",
		Fix: "Record an event on the using stream after the last use and make the freeing stream wait on it (cudaStreamWaitEvent) before the free, " +
			"or synchronize the host with that stream (or an event recorded after the use) before a host-side free.",
		Ops: freeOps,
	},
	role:  "free",
	other: "earlier use",
	state: func(c *Checker) any { return freeWhileInFlight{c} },
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it", what(op), x.size, what(other))
		if op.Stream == "" && (x.family == famHost || x.family == famRegistered) {
			f.Why = fmt.Sprintf("%s promises no synchronization (CUDA documents no wait for cudaFreeHost, cuMemFreeHost, cudaHostUnregister or cuMemHostUnregister): the page-locked memory can be released while %s still reads or writes it. %s",
				op.API, other.Where(), c.unorderedWhy(other, op))
			f.Fix = fmt.Sprintf("Synchronize %s (cudaStreamSynchronize, or record an event after the use at %s and cudaEventSynchronize it) before the %s at %s.",
				other.StreamRef, other.Site(), op.API, op.Site())
		} else if op.Stream == "" {
			f.Why = fmt.Sprintf("%s does not wait for work that uses the memory: the driver assumes all accesses are complete, but nothing made the host wait for %s.",
				op.API, other.Where())
			f.Fix = fmt.Sprintf("Synchronize %s (cudaStreamSynchronize, or cudaEventSynchronize on an event recorded after the use at %s) before the %s at %s",
				other.StreamRef, other.Site(), op.API, op.Site())
			if op.Op == model.OpVmmUnmap.String() {
				f.Fix += "." // a mapping has no stream-ordered unmap
			} else {
				f.Fix += fmt.Sprintf(", or free with cudaFreeAsync on %s.", other.StreamRef)
			}
		} else {
			f.Why = fmt.Sprintf("The free is ordered on %s only; %s is not ordered before it, so the memory can be reused while that work still runs. %s",
				op.StreamRef, other.Where(), c.unorderedWhy(other, op))
			if op.Op == model.OpGraphLaunch.String() {
				f.Why = "A graph launch frees the memory the graph's last launch allocated and nothing freed since (cudaGraphInstantiateFlagAutoFreeOnLaunch; without it CUDA refuses the launch). " + f.Why
			}
			f.Fix = c.handOffFix(other, op)
		}
	},
	explainCaptured: func(f *Finding, x *explainArgs, k *captureText) {
		op, other := x.op, x.other
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it%s", what(op), x.size, what(other), k.in)
		f.Why = fmt.Sprintf("%s: nothing orders the use at %s before the free at %s, so each launch of the graph may free the memory while that work runs.", k.graph, other.Site(), op.Site())
		f.Fix = k.fix
	},
	missing: missingOther,
}

var _ = register(freeWhileInFlightRule)

// freeWhileInFlight is the rule's hooks.
type freeWhileInFlight struct{ c *Checker }

// onLiveFree reports a use the free is not ordered after. It settles the
// free when it does: an unordered use is reported in preference to an
// unordered allocation (free-before-alloc), being the later of the two, so
// ordering the free after it fixes both.
func (r freeWhileInFlight) onLiveFree(ev *model.Event, st *hb.Step, a *allocation, free access, syncs bool) bool {
	c := r.c
	uses := a.uses()
	hostFree := free.op == model.OpFree && (a.family == famHost || a.family == famRegistered)
	for i := range uses {
		if !st.Clock.Covers(c.epoch(&uses[i])) && !(hostFree && c.hostFuncs.mayHaveReported(&uses[i], free.tid)) {
			c.report(freeWhileInFlightRule, a, free, &uses[i])
			return true
		}
	}
	return false
}

// hostFuncs holds, by stream, the latest host function queued to it
// (cudaLaunchHostFunc, cudaStreamAddCallback) and the thread that queued
// it. A host function runs after its stream's earlier work completed, and
// programs free pinned buffers from the thread it wakes (NVIDIA's
// simpleCallback frees them in a thread the callback starts). A trace that
// does not record when host functions ran cannot tell that thread's free
// from a racy one, so a host free is not reported against a use that such
// a host function follows when another thread frees: a race the host
// function really does not order is missed, never made up. A host function
// with a token (the recorder records when it runs: OpHostFnRun) needs no
// such allowance: its run orders what it reported, and nothing else.
type hostFuncs map[hb.AgentID]hostFuncIssue

type hostFuncIssue struct {
	clock uint64 // Its epoch on the stream.
	tid   uint32
}

// queued notes a host function issued to a stream, unless its run is
// recorded.
func (h *hostFuncs) queued(ev *model.Event, st *hb.Step) {
	if ev.Value != 0 {
		delete(*h, st.Agent)
		return
	}
	if *h == nil {
		*h = hostFuncs{}
	}
	(*h)[st.Agent] = hostFuncIssue{clock: st.Epoch.Clock, tid: ev.TID}
}

// mayHaveReported reports whether a host function queued after use, on
// its stream, by another thread than tid may have told tid that use
// completed.
func (h hostFuncs) mayHaveReported(use *access, tid uint32) bool {
	f, ok := h[use.agent]
	return ok && f.clock > use.clock && f.tid != tid
}
