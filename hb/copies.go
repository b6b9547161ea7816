package hb

import (
	"slices"

	"github.com/streamcheck/streamcheck/model"
)

// advanceCopy applies a synchronous cudaMemcpy or cudaMemset: issued to
// the default stream, with the host ordered after it when it returns after
// completion (hostWaitsFor).
func (e *Engine) advanceCopy(ev *model.Event, st *Step) {
	if ev.Flags&model.FlagPeer != 0 && ev.Op == model.OpMemcpy {
		e.peerCopy(ev, st)
		return
	}
	// A pageable host-to-device copy synchronizes its stream before it
	// starts: the host is ordered after the work issued there before the
	// copy, though not after the copy itself.
	presync := ev.Op == model.OpMemcpy && ev.Kind == model.CopyH2D && ev.Flags&model.FlagPageable != 0
	var a *Agent
	var before uint64 // a's last operation's count before the copy
	if presync {
		a = e.Stream(ev.Stream, ev.Device, ev.TID)
		e.scratch.set(&a.clock)
		before = a.own
	}
	e.issue(ev, st)
	switch {
	case hostWaitsFor(ev):
		e.hostJoin(st.Clock.c)
		e.join(JoinCopy, HostAgent, e.agents.at(st.Agent))
	case presync && !st.Skipped:
		e.hostJoin(&e.scratch)
		e.joins = append(e.joins, Join{Why: JoinCopyPresync, Into: HostAgent, From: Epoch{Agent: a.ID, Slot: a.Slot, Clock: before}})
	}
}

// peerCopy applies a synchronous peer copy (cudaMemcpyPeer), asynchronous
// with respect to the host. The runtime API says it is "serialized with
// respect to all pending and future asynchronous work in to the current
// device, srcDevice, and dstDevice"; measured on two H200s (CUDA 13.0,
// scripts/probe/peer_copy_order.cu), it waits for the legacy and blocking
// streams of the source and destination devices, not for their
// non-blocking streams: the legacy stream's rule, on every device of the
// copy. So it is issued to the current device's default stream after
// joining those streams of the three devices, and becomes their barrier:
// each of them is ordered after it from its next operation on. A device
// synchronization of any of the devices waits for it (measured too).
func (e *Engine) peerCopy(ev *model.Event, st *Step) {
	a := e.Stream(ev.Stream, ev.Device, ev.TID)
	if a.capturing {
		e.issue(ev, st) // captured: it runs at the graph's launches
		return
	}
	devs := []int32{ev.Device, ev.PeerSrc, ev.PeerDst}
	slices.Sort(devs)
	devs = slices.Compact(devs)
	for _, d := range devs {
		for _, id := range e.device(d).agents {
			if b := e.agents.at(id); b != a && b.Kind != KindNonBlocking {
				// Joined before a joins the host clock in issue: a residue
				// is exact once that is done (see Agent.joinTo).
				b.joinTo(&a.clock)
				e.join(JoinPeerCopy, a.ID, b)
			}
		}
	}
	e.issue(ev, st)
	for _, d := range devs {
		dv := e.device(d)
		dv.barrier.join(st.Clock.c)
		dv.barrierVer++
	}
	a.barrierSeen = a.dev.barrierVer // a's own clock holds the barrier
}

// hostWaitsFor reports whether a synchronous cudaMemcpy or cudaMemset
// returns only after it completed, per the runtime's "API synchronization
// behavior": a memset does when it sets pinned host memory.
func hostWaitsFor(ev *model.Event) bool {
	if ev.Op == model.OpMemset {
		return ev.Flags&model.FlagPinned != 0
	}
	switch ev.Kind {
	case model.CopyD2H, model.CopyH2H:
		return true
	case model.CopyH2D:
		return ev.Flags&model.FlagPinned != 0
	}
	return false
}
