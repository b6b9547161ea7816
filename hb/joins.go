package hb

// JoinReason says why the engine ordered an agent after other work.
type JoinReason uint8

const (
	JoinNone JoinReason = iota
	// JoinStreamSync: cudaStreamSynchronize orders the host after the
	// stream's work.
	JoinStreamSync
	// JoinStreamQuery: a cudaStreamQuery that returned success does.
	JoinStreamQuery
	// JoinEventSync: cudaEventSynchronize orders the host after the
	// event's most recent record.
	JoinEventSync
	// JoinEventQuery: a cudaEventQuery that returned success does.
	JoinEventQuery
	// JoinEventWait: cudaStreamWaitEvent orders the stream after the
	// event's most recent record.
	JoinEventWait
	// JoinDeviceSync: a device synchronization orders the host after one
	// stream of the device (one join a stream).
	JoinDeviceSync
	// JoinLegacy: the legacy default stream's implicit synchronization: a
	// legacy stream operation after a blocking stream's work, or a
	// blocking stream's operation after the legacy stream's.
	JoinLegacy
	// JoinPeerCopy: a synchronous peer copy after a legacy or blocking
	// stream of one of its devices.
	JoinPeerCopy
	// JoinBarrier: a stream's operation, or a device synchronization,
	// after the synchronous peer copies that involved its device (From has
	// no agent: the copies may be on several streams).
	JoinBarrier
	// JoinCopy: a synchronous copy or set that returns after completion
	// orders the host after it.
	JoinCopy
	// JoinCopyPresync: a pageable host-to-device copy orders the host after
	// the work issued to its stream before it (not after the copy).
	JoinCopyPresync
	// JoinGraphLaunch: a graph launch after the previous launch of the
	// same executable graph.
	JoinGraphLaunch
	// JoinGraphEventWait: a graph launch after an event that one of the
	// graph's external event wait nodes waits for.
	JoinGraphEventWait
	// JoinValueWait: a stream memory operation's wait for a value after
	// the recorded writes that can give it (From has no agent).
	JoinValueWait
	// JoinHostFunc: a host function that started running (OpHostFnRun)
	// orders the host after the work its stream had before the host
	// function was enqueued.
	JoinHostFunc
)

func (r JoinReason) String() string {
	switch r {
	case JoinStreamSync:
		return "stream sync"
	case JoinStreamQuery:
		return "stream query success"
	case JoinEventSync:
		return "event sync"
	case JoinEventQuery:
		return "event query success"
	case JoinEventWait:
		return "event wait"
	case JoinDeviceSync:
		return "device sync"
	case JoinLegacy:
		return "legacy stream"
	case JoinPeerCopy:
		return "peer copy"
	case JoinBarrier:
		return "peer copy barrier"
	case JoinCopy:
		return "synchronous copy"
	case JoinCopyPresync:
		return "pageable copy presync"
	case JoinGraphLaunch:
		return "previous graph launch"
	case JoinGraphEventWait:
		return "graph event wait"
	case JoinValueWait:
		return "value wait"
	case JoinHostFunc:
		return "host function ran"
	}
	return "none"
}

// HostSync reports whether r orders the host after a stream's work at a
// synchronization: a stream or event synchronization, a query that
// returned success, or a host function that ran.
func (r JoinReason) HostSync() bool {
	return r == JoinStreamSync || r == JoinStreamQuery || r == JoinEventSync || r == JoinEventQuery || r == JoinHostFunc
}

// Record reports whether r joins an event's most recent record: a wait for
// the event, its synchronization, or a query of it that returned success.
func (r JoinReason) Record() bool {
	return r == JoinEventWait || r == JoinEventSync || r == JoinEventQuery
}

// NoAgent is Join.From's agent for a clock that is no one agent's: a
// device's peer-copy barrier, the writes a value wait follows.
const NoAgent AgentID = -1

// Join is one join the engine made for an event: agent Into (the host, or
// a stream) was ordered after From, the last operation of From's agent
// that the joined clock covers (From.Clock is 0 when it covers none, and
// From.Agent is NoAgent for a clock that is no one agent's), because of
// Why. The join every operation issued to a stream makes of the host
// clock is not listed: every such operation makes it.
type Join struct {
	Why  JoinReason
	Into AgentID
	From Epoch
}

// Joins returns the joins the engine made for the step's event, in the
// order it made them: a view into engine state, valid until the next call
// of Apply or ApplyTo.
func (s *Step) Joins() []Join {
	if s.joins == nil {
		return nil
	}
	return (*s.joins)[:s.njoins:s.njoins]
}

// Joined returns the step's first join for reason why, and whether there
// is one.
func (s *Step) Joined(why JoinReason) (Join, bool) {
	for _, j := range s.Joins() {
		if j.Why == why {
			return j, true
		}
	}
	return Join{}, false
}

// join notes that into was ordered after agent a's work, as its clock is
// now, for reason why. Cheap, as it is made on the hot path: a's own
// count (Agent.own) needs no clock read.
func (e *Engine) join(why JoinReason, into AgentID, a *Agent) {
	e.joins = append(e.joins, Join{Why: why, Into: into, From: Epoch{Agent: a.ID, Slot: a.Slot, Clock: a.own}})
}

// joinRecord notes that into was ordered after an event record es (or an
// executable graph's last launch).
func (e *Engine) joinRecord(why JoinReason, into AgentID, es *eventState) {
	e.joins = append(e.joins, Join{Why: why, Into: into, From: Epoch{Agent: es.agent, Slot: e.agents.slot(es.agent), Clock: es.count}})
}

// joinClock notes that into was ordered after a clock that is no one
// agent's.
func (e *Engine) joinClock(why JoinReason, into AgentID) {
	e.joins = append(e.joins, Join{Why: why, Into: into, From: Epoch{Agent: NoAgent}})
}
