package hb

// AgentID indexes an agent (the host, or one stream incarnation).
type AgentID int32

// HostAgent is the agent of all host threads.
const HostAgent AgentID = 0

// Epoch is one point of one agent's history: the agent's Clock-th operation.
type Epoch struct {
	Agent AgentID
	Clock uint64
}

// Clock is a vector clock: Clock[a] is the number of agent a's operations
// known to be complete, or ordered before, at a point. Entries past the end
// are zero, so clocks need not be resized when agents are added.
type Clock []uint64

// Covers reports whether the point with clock c is ordered after epoch e.
func (c Clock) Covers(e Epoch) bool {
	if e.Clock == 0 {
		return true
	}
	return int(e.Agent) < len(c) && c[e.Agent] >= e.Clock
}

// Get returns c[a], or 0 past the end.
func (c Clock) Get(a AgentID) uint64 {
	if int(a) < len(c) {
		return c[a]
	}
	return 0
}

// join sets *c to the element-wise maximum of *c and o, and reports whether
// that changed *c.
func (c *Clock) join(o Clock) bool {
	if len(o) > len(*c) {
		*c = append(*c, make([]uint64, len(o)-len(*c))...)
	}
	d := (*c)[:len(o)]
	// Without branches: which entries grow is unpredictable, and a
	// mispredicted branch costs more than storing every entry.
	var grown uint64
	for i, v := range o {
		m := max(d[i], v)
		grown |= m ^ d[i]
		d[i] = m
	}
	return grown != 0
}

// tick advances agent a in *c and returns the new epoch.
func (c *Clock) tick(a AgentID) Epoch {
	if int(a) >= len(*c) {
		*c = append(*c, make([]uint64, int(a)+1-len(*c))...)
	}
	(*c)[a]++
	return Epoch{a, (*c)[a]}
}

// set copies o into *c, reusing its storage.
func (c *Clock) set(o Clock) {
	*c = append((*c)[:0], o...)
}
