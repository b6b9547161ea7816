package hb

import "github.com/streamcheck/streamcheck/model"

// Host functions (cudaLaunchHostFunc, cudaStreamAddCallback) that ran. A
// host function starts only after all work issued to its stream before it
// completed; the recorder writes an OpHostFnRun, on the thread that runs
// the function, as it starts, with the token of the OpHostFunc that
// enqueued it. The host is then ordered after that work, as after a
// successful query: every host call recorded after the run, on any
// thread, since the function may tell other threads by means the trace
// cannot see (a condition variable, a future). A thread that was not told
// is ordered too; that can hide a race, never make one up. A function may
// start before the call that enqueued it returns, and so be recorded before
// its enqueue: that run orders the host once the enqueue is recorded.

// maxPendingHostFns bounds the host functions kept waiting for their run:
// a recorder whose runs go unrecorded (a driver that ignores the shim's
// trampoline) must not make the engine keep a clock per host function.
const maxPendingHostFns = 4096

// hostFns holds the enqueued host functions whose run is not yet recorded.
type hostFns struct {
	byToken map[uint64]*eventState
	order   []uint64 // Tokens in enqueue order, for dropping the oldest.
	head    int      // order[head:] are the tokens that may still be pending.
	// ranEarly holds the tokens of runs recorded before their enqueue.
	ranEarly map[uint64]bool
}

// enqueued notes host function token as issued on a, whose clock now ends
// with it: its run orders the host after a's work so far. A token enqueued
// again (a recorder's counter cannot wrap in practice) takes the new place.
func (e *Engine) hostFnEnqueued(token uint64, a *Agent) {
	h := &e.hostFns
	if h.byToken == nil {
		h.byToken = map[uint64]*eventState{}
	}
	if h.ranEarly[token] {
		// It already ran: the host follows the stream's work before it
		// from here on.
		delete(h.ranEarly, token)
		recordOn(h.byToken, token, a)
		e.hostFnRan(token)
		return
	}
	if _, ok := h.byToken[token]; !ok {
		h.order = append(h.order, token)
	}
	recordOn(h.byToken, token, a)
	for len(h.byToken) > maxPendingHostFns && h.head < len(h.order) {
		delete(h.byToken, h.order[h.head])
		h.head++
	}
	// Runs leave their tokens in order: rebuilt from the pending ones
	// when it is mostly done tokens, so it follows what is pending.
	if len(h.order)-h.head > 2*len(h.byToken)+64 {
		keep := h.order[:0]
		for _, t := range h.order[h.head:] {
			if _, ok := h.byToken[t]; ok {
				keep = append(keep, t)
			}
		}
		h.order, h.head = keep, 0
	}
}

// advanceHostFnRun applies OpHostFnRun: the host joins the work before
// the run's host function, if its enqueue is known. A run whose enqueue
// the trace does not have (captured into a graph, dropped, or from before
// recording began) orders nothing.
func (e *Engine) advanceHostFnRun(ev *model.Event, st *Step) {
	h := &e.hostFns
	if ev.Value != 0 && !e.hostFnRan(ev.Value) {
		// Not enqueued yet, as far as the trace goes: remembered for its
		// enqueue (bounded like the pending ones).
		if h.ranEarly == nil || len(h.ranEarly) >= maxPendingHostFns {
			h.ranEarly = map[uint64]bool{}
		}
		h.ranEarly[ev.Value] = true
	}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// hostFnRan joins the host after the work before host function token, if
// its enqueue is pending, and reports whether it was.
func (e *Engine) hostFnRan(token uint64) bool {
	h := &e.hostFns
	es := h.byToken[token]
	if es == nil {
		return false
	}
	e.hostJoin(&es.snap)
	e.joinRecord(JoinHostFunc, HostAgent, es)
	// One run per enqueue: its token is done (the order list drops it
	// lazily, as the oldest).
	delete(h.byToken, token)
	return true
}
