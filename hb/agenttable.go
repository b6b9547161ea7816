package hb

// agentPageBits is log2 of the agents of a page of agentTable.
const (
	agentPageBits = 10
	agentPageSize = 1 << agentPageBits
)

// agentTable holds the agents by id. A live agent (the host, a stream, or
// a destroyed stream the host is not yet ordered after) is a whole Agent;
// a retired one (pruned: destroyed, its work behind the host, its slot
// handed on) is only what reports and epochs still ask of it, 24 bytes,
// and a page of live agents is dropped once all of its agents retired. A
// program that makes a stream per step kept an Agent of about 260 bytes
// for every stream it ever made: a million of them took 250 MB.
type agentTable struct {
	live  [][]*Agent  // By page: nil once each of its agents retired.
	first []*Agent    // live[0], read first: most programs have fewer agents.
	nlive []uint16    // Live agents of each page.
	recs  [][]retired // By page, made at the first retirement in it.
	n     int
	// shapes are the distinct kinds, devices, threads and implicitness of
	// retired agents, which nearly all share.
	shapes  []agentShape
	shapeOf map[agentShape]uint32
	// residues holds the storage of retired agents' residues, for streams
	// being destroyed.
	residues [][]slotCount
}

// retired is what a retired agent keeps.
type retired struct {
	handle uint64
	ops    uint64
	slot   AgentID
	shape  uint32
}

type agentShape struct {
	kind     StreamKind
	implicit bool
	device   int32
	tid      uint32
}

// add appends a, whose ID is the table's length.
func (t *agentTable) add(a *Agent) {
	p := t.n >> agentPageBits
	if t.n&(agentPageSize-1) == 0 {
		t.live = append(t.live, nil)
		t.nlive = append(t.nlive, 0)
		t.recs = append(t.recs, nil)
	}
	t.live[p] = append(t.live[p], a) // grown as needed: most programs have a few streams
	if p == 0 {
		t.first = t.live[0]
	}
	t.nlive[p]++
	t.n++
}

// get returns the live agent of id, or nil if it retired.
func (t *agentTable) get(id AgentID) *Agent {
	if uint(id) < uint(len(t.first)) {
		return t.first[id]
	}
	if pg := t.live[id>>agentPageBits]; pg != nil {
		return pg[id&(agentPageSize-1)]
	}
	return nil
}

// at returns the agent of id: a live one itself, a retired one rebuilt
// (changing it changes nothing).
func (t *agentTable) at(id AgentID) *Agent {
	if a := t.get(id); a != nil {
		return a
	}
	return t.rebuild(id)
}

// rebuild returns a retired agent rebuilt from what it keeps. Not inlined,
// so that at is.
//
//go:noinline
func (t *agentTable) rebuild(id AgentID) *Agent {
	r := &t.recs[id>>agentPageBits][id&(agentPageSize-1)]
	s := t.shapes[r.shape]
	return &Agent{
		ID: id, Slot: r.slot, Kind: s.kind, Handle: r.handle, Device: s.device, TID: s.tid, Implicit: s.implicit,
		destroyed: true, pruned: true, ops: r.ops,
	}
}

// kind returns the kind of agent id without rebuilding a retired one.
func (t *agentTable) kind(id AgentID) StreamKind {
	if a := t.get(id); a != nil {
		return a.Kind
	}
	return t.shapes[t.recs[id>>agentPageBits][id&(agentPageSize-1)].shape].kind
}

// retire keeps only what a pruned agent is still asked for.
func (t *agentTable) retire(a *Agent) {
	p, i := a.ID>>agentPageBits, a.ID&(agentPageSize-1)
	if t.live[p] == nil || t.live[p][i] != a {
		return
	}
	s := agentShape{kind: a.Kind, implicit: a.Implicit, device: a.Device, tid: a.TID}
	k, ok := t.shapeOf[s]
	if !ok {
		if t.shapeOf == nil {
			t.shapeOf = map[agentShape]uint32{}
		}
		k = uint32(len(t.shapes))
		t.shapes = append(t.shapes, s)
		t.shapeOf[s] = k
	}
	if t.recs[p] == nil {
		t.recs[p] = make([]retired, agentPageSize)
	}
	t.recs[p][i] = retired{handle: a.Handle, ops: a.ops, slot: a.Slot, shape: k}
	t.live[p][i] = nil
	if t.nlive[p]--; t.nlive[p] == 0 && len(t.live[p]) == agentPageSize {
		t.live[p] = nil // full, and all of it retired
		if p == 0 {
			t.first = nil
		}
	}
}

// slot returns the clock slot of agent id.
func (t *agentTable) slot(id AgentID) AgentID {
	if a := t.get(id); a != nil {
		return a.Slot
	}
	return t.recs[id>>agentPageBits][id&(agentPageSize-1)].slot
}
