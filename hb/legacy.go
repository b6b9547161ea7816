package hb

// device is what the engine knows of one CUDA device.
type device struct {
	// legacy is the agent registered under the device's legacy-stream key,
	// or 0 (the host, never a stream) while there is none.
	legacy AgentID
	// agents lists every stream agent of the device, for device
	// synchronization.
	agents []AgentID
	// unjoined lists the blocking streams created or given work since the
	// legacy stream last looked, the only ones it may have to join: a
	// stream's own count changes only with its operations.
	unjoined []AgentID
	// barrier is what every stream of the device that synchronizes with
	// the legacy stream is ordered after from its next operation on: the
	// synchronous peer copies (Engine.peerCopy) that involved the device.
	// barrierVer counts its changes.
	barrier    vclock
	barrierVer uint64
}

// Devices returns how many devices the trace's streams were on so far.
func (e *Engine) Devices() int { return len(e.devices) }

// device returns the state of a device, creating it on first use.
func (e *Engine) device(id int32) *device {
	if e.lastDev != nil && e.lastDevID == id {
		return e.lastDev
	}
	d := e.devices[id]
	if d == nil {
		d = &device{}
		e.devices[id] = d
	}
	e.lastDev, e.lastDevID = d, id
	return d
}

// markUnjoined lists a blocking stream for the legacy stream's next look.
func (a *Agent) markUnjoined() {
	if (a.Kind == KindBlocking || a.Kind == KindPerThread) && !a.unjoined {
		a.unjoined = true
		a.dev.unjoined = append(a.dev.unjoined, a.ID)
	}
}
