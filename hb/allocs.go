package hb

import "github.com/streamcheck/streamcheck/model"

// advanceAlloc applies a host-side allocation or free (cudaMalloc,
// cudaFree, pool creation), an imported pointer or opened IPC mapping and
// its close, and a VMM mapping and unmapping: an operation of the host,
// which later work follows. An imported pointer or opened mapping is live
// from the call on (its allocation in the other process is ordered by
// means the trace cannot see), as cudaMalloc memory is. Stream-ordered
// allocations (cudaMallocAsync, cudaFreeAsync) are issued to their stream
// (Engine.issue).
func (e *Engine) advanceAlloc(_ *model.Event, st *Step) {
	ep := e.host.tick(HostAgent)
	ep.Agent = HostAgent
	e.hostVer++
	*st = Step{Agent: HostAgent, Epoch: ep, Clock: e.host.view()}
}
