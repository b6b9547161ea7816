package hb

import "github.com/streamcheck/streamcheck/model"

// The advance functions of the host's synchronization: stream, event and
// device synchronization, and queries, which synchronize when they
// returned success. Each join they make is in the Step (Step.Joins).

// syncReason is why a synchronization (cudaStreamSynchronize,
// cudaEventSynchronize) or a query (cudaStreamQuery, cudaEventQuery)
// orders the host after the work it asks about: sync for the former, query
// for a query that returned success; JoinNone for one that did not (not
// ready), which orders nothing. The one place of the rule: explain and
// timeline read the joins it leads to (Step.Joins).
func syncReason(ev *model.Event, sync, query JoinReason) JoinReason {
	switch {
	case ev.Op == model.OpStreamSync || ev.Op == model.OpEventSync:
		return sync
	case ev.Result == model.ResultSuccess:
		return query
	}
	return JoinNone
}

// advanceStreamSync applies cudaStreamSynchronize and cudaStreamQuery.
func (e *Engine) advanceStreamSync(ev *model.Event, st *Step) {
	a := e.Stream(ev.Stream, ev.Device, ev.TID)
	if why := syncReason(ev, JoinStreamSync, JoinStreamQuery); why != JoinNone {
		e.hostJoin(&a.clock)
		e.join(why, HostAgent, a)
	}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// advanceEventSync applies cudaEventSynchronize and cudaEventQuery.
func (e *Engine) advanceEventSync(ev *model.Event, st *Step) {
	es := e.events[ev.Event]
	if es == nil || !es.recorded {
		// cudaEventSynchronize on an event never recorded returns at once.
		*st = Step{Agent: HostAgent, Clock: e.host.view(), UnrecordedWait: ev.Op == model.OpEventSync}
		return
	}
	if why := syncReason(ev, JoinEventSync, JoinEventQuery); why != JoinNone {
		e.hostJoin(&es.snap)
		e.joinRecord(why, HostAgent, es)
	}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// advanceDeviceSync applies a device (or context) synchronization: the
// host joins every stream of the device, and its peer-copy barrier.
func (e *Engine) advanceDeviceSync(ev *model.Event, st *Step) {
	if d := e.devices[ev.Device]; d != nil {
		for _, id := range d.agents {
			// The host holds a stream's own count only by having
			// joined its clock at that count, and the clock changes
			// only with the count: nothing new to join then.
			a := e.agents.at(id)
			if e.host.Get(a.Slot) < a.count() && a.joinTo(&e.host) {
				e.hostVer++
			}
			e.join(JoinDeviceSync, HostAgent, a)
		}
		// It waits for the peer copies to or from the device too, even
		// one issued on another device (measured on two H200s:
		// scripts/probe/peer_copy_order.cu).
		if d.barrierVer != 0 {
			e.hostJoin(&d.barrier)
			e.joinClock(JoinBarrier, HostAgent)
		}
	}
	*st = Step{Agent: HostAgent, Clock: e.host.view()}
}

// eventWait orders stream a after the most recent record of the event
// it waits for (waited), if there is one.
func (e *Engine) eventWait(a *Agent, waited *eventState, st *Step) {
	if waited == nil || !waited.recorded {
		st.UnrecordedWait = true
		return
	}
	a.clock.join(&waited.snap)
	e.joinRecord(JoinEventWait, a.ID, waited)
}
