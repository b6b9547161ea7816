package hb

// AgentID indexes an agent (the host, or one stream incarnation).
type AgentID int32

// HostAgent is the agent of all host threads.
const HostAgent AgentID = 0

// Epoch is one point of one agent's history: the Clock-th operation counted
// on the agent's slot.
type Epoch struct {
	Agent AgentID // The host or stream incarnation (reports name it).
	// Slot is the agent's index in clocks. A destroyed stream's slot is
	// handed to a later stream once the host is ordered after its work; the
	// count goes on from there, so the old epochs stay covered by every
	// clock that joined the host since.
	Slot  AgentID
	Clock uint64
}

// Clock is a vector clock: Clock[s] is the number of operations counted on
// slot s known to be complete, or ordered before, at a point. Entries past
// the end are zero, so clocks need not be resized when agents are added.
type Clock []uint64

// Covers reports whether the point with clock c is ordered after epoch e.
func (c Clock) Covers(e Epoch) bool {
	if e.Clock == 0 {
		return true
	}
	return int(e.Slot) < len(c) && c[e.Slot] >= e.Clock
}

// coversAll reports whether c covers every entry of o: the point with
// clock c is ordered after all that o is.
func (c Clock) coversAll(o Clock) bool {
	for s, n := range o {
		if c.Get(AgentID(s)) < n {
			return false
		}
	}
	return true
}

// Get returns c[s], the count on slot s, or 0 past the end.
func (c Clock) Get(s AgentID) uint64 {
	if int(s) < len(c) {
		return c[s]
	}
	return 0
}

// join sets *c to the element-wise maximum of *c and o, and reports whether
// that changed *c.
func (c *Clock) join(o Clock) bool {
	c.grow(len(o))
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

// tick advances slot s in *c and returns the new epoch (its Agent unset).
func (c *Clock) tick(s AgentID) Epoch {
	c.grow(int(s) + 1)
	(*c)[s]++
	return Epoch{Slot: s, Clock: (*c)[s]}
}

// raise sets slot s of *c to n if it is below, and reports whether it was.
func (c *Clock) raise(s AgentID, n uint64) bool {
	if c.Get(s) >= n {
		return false
	}
	c.grow(int(s) + 1)
	(*c)[s] = n
	return true
}

// grow makes *c at least n entries long; entries past the end are zero.
func (c *Clock) grow(n int) {
	if n > len(*c) {
		*c = append(*c, make([]uint64, n-len(*c))...)
	}
}

// set copies o into *c, reusing its storage.
func (c *Clock) set(o Clock) {
	*c = append((*c)[:0], o...)
}

// meet sets *c to the element-wise minimum of *c and o.
func (c *Clock) meet(o Clock) {
	if len(o) < len(*c) {
		*c = (*c)[:len(o)] // entries past o's end are zero there
	}
	for i := range *c {
		(*c)[i] = min((*c)[i], o[i])
	}
}
