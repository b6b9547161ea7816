package hb

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

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

// chunkBits is log2 of the entries of a chunk: 128 entries, 1 KiB, so that
// the streams of a PyTorch device (its pool of 96, and a few) fit in one.
const (
	chunkBits = 7
	chunkSize = 1 << chunkBits
)

// shareMin is the widest clock that is copied entry by entry rather than
// by sharing chunks: copying a few chunks costs less than copying one
// chunk the first time a clock changes it after sharing it.
const shareMin = 4 * chunkSize

// chunk holds chunkSize consecutive entries of a clock.
type chunk struct {
	// The fields come before the entries, so that a narrow clock's few
	// entries and whether they are shared share a cache line.
	//
	// shared is set once a second clock refers to the chunk: it never
	// changes again, and a clock that would change it copies it first.
	shared bool
	// lin is the lineage of the clock that made the chunk, if its entries
	// only grow, and ver counts the chunks made: of two chunks at the same
	// place in clocks that a clock of one lineage made, the later one
	// holds all of the earlier one and more (a clock makes a chunk only to
	// raise an entry of it), so joins need not compare them.
	lin uint32
	ver uint64
	v   [chunkSize]uint64
}

// chunkVer numbers the chunks made by clocks of a lineage (chunk.ver).
var chunkVer atomic.Uint64

// Clock is a vector clock: entry s is the number of operations counted on
// slot s known to be complete, or ordered before, at a point. Entries past
// the width are zero, so clocks need not be resized when agents are added.
//
// The entries are held in chunks of 128. A clock no wider than shareMin
// owns its chunks and is copied entry by entry, as a plain vector. Wider
// clocks share the chunks they have in common: copying one (an event
// record) copies pointers, and joining one takes the other's chunk where
// that holds all of both, so thousands of streams that learned the same
// host clock hold one copy of it, not one each, and a join skips the
// chunks the two clocks share. A shared chunk is copied before it changes.
type Clock struct {
	ch []*chunk // A nil chunk is all zero.
	n  int32    // Width: entries past it are zero.
	// lin is set on a clock whose entries only grow (an agent's, the
	// host's): the lineage of the chunks it makes (see chunk.lin).
	lin uint32
}

// Covers reports whether the point with clock c is ordered after epoch e.
func (c Clock) Covers(e Epoch) bool {
	return e.Clock == 0 || c.Get(e.Slot) >= e.Clock
}

// Get returns entry s of c, the count on slot s, or 0 past the end.
func (c Clock) Get(s AgentID) uint64 {
	if i := uint(s) >> chunkBits; i < uint(len(c.ch)) {
		if k := c.ch[i]; k != nil {
			return k.v[s&(chunkSize-1)]
		}
	}
	return 0
}

// Len returns the width of c: entries from it on are zero.
func (c Clock) Len() int { return int(c.n) }

// Clone returns a copy of c that later changes of c do not reach.
func (c Clock) Clone() Clock {
	if c.ch == nil {
		return Clock{}
	}
	if c.n <= shareMin {
		var d Clock
		d.set(c)
		return d
	}
	share(c.ch)
	return Clock{ch: slices.Clone(c.ch), n: c.n}
}

// String formats c as a list of its entries.
func (c Clock) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for s := range int(c.n) {
		if s > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, c.Get(AgentID(s)))
	}
	b.WriteByte(']')
	return b.String()
}

// clockOf returns a clock with the given entries.
func clockOf(v ...uint64) Clock {
	var c Clock
	for s, n := range v {
		c.raise(AgentID(s), n)
	}
	c.grow(len(v))
	return c
}

// width returns how many of chunk i's entries are within a clock n wide.
func width(n int32, i int) int { return min(chunkSize, int(n)-i<<chunkBits) }

// chunk returns chunk i of c, nil (all zero) past the end.
func (c Clock) chunk(i int) *chunk {
	if i < len(c.ch) {
		return c.ch[i]
	}
	return nil
}

// entries returns the first n entries of k, a nil chunk's from zero.
func entries(k *chunk, n int) []uint64 {
	if k == nil {
		return zeros[:n]
	}
	return k.v[:n]
}

var zeros [chunkSize]uint64

// share marks chunks as referred to by more than one clock.
func share(ch []*chunk) {
	for _, k := range ch {
		if k != nil {
			k.shared = true
		}
	}
}

// CoversAll reports whether c covers every entry of o: the point with
// clock c is ordered after all that o is.
func (c Clock) CoversAll(o Clock) bool {
	for i, k := range o.ch {
		d := c.chunk(i)
		if k == nil || d == k {
			continue
		}
		ov := k.v[:width(o.n, i)]
		dv := entries(d, len(ov))
		for j, v := range ov {
			if dv[j] < v {
				return false
			}
		}
	}
	return true
}

// above calls f for each entry of c above o's, in slot order.
func (c Clock) above(o Clock, f func(s AgentID, n uint64)) {
	for i, k := range c.ch {
		h := o.chunk(i)
		if k == nil || k == h {
			continue
		}
		cv := k.v[:width(c.n, i)]
		hv := entries(h, len(cv))
		for j, v := range cv {
			if v > hv[j] {
				f(AgentID(i<<chunkBits+j), v)
			}
		}
	}
}

// mut returns chunk i of *c (i within its chunks) for a change: c's own,
// copied first if shared, allocated if nil.
func (c *Clock) mut(i int) *chunk {
	if k := c.ch[i]; k != nil && !k.shared {
		return k
	}
	return c.own(i)
}

func (c *Clock) own(i int) *chunk {
	k := new(chunk)
	if old := c.ch[i]; old != nil {
		k.v = old.v
	}
	if c.lin != 0 {
		k.lin, k.ver = c.lin, chunkVer.Add(1)
	}
	c.ch[i] = k
	return k
}

// join sets *c to the element-wise maximum of *c and o, and reports whether
// that changed *c.
func (c *Clock) join(o Clock) bool {
	// One chunk each, c's its own: the usual few streams.
	if d, k := c.only(), o.only(); d != nil && k != nil && !d.shared {
		c.n = max(c.n, o.n)
		return maxInto(d.v[:], k.v[:o.n]) != 0
	}
	return c.joinChunks(o)
}

// only returns the chunk of a clock of one chunk, or nil.
func (c Clock) only() *chunk {
	if len(c.ch) == 1 {
		return c.ch[0]
	}
	return nil
}

// joinChunks is join for any clocks.
func (c *Clock) joinChunks(o Clock) bool {
	if o.n == 0 {
		return false
	}
	c.grow(int(o.n))
	wide := o.n > shareMin
	var grown uint64
	for i, k := range o.ch {
		d := c.ch[i]
		if k == nil || d == k {
			continue
		}
		ov := k.v[:width(o.n, i)]
		// Chunks of one lineage: the later holds all of the earlier and
		// more.
		lineage := d != nil && k.lin != 0 && k.lin == d.lin
		if lineage && k.ver < d.ver {
			continue
		}
		if d == nil || d.shared {
			// Take o's chunk if it holds all of c's, keep c's if it holds
			// all of o's, and copy c's to change it otherwise.
			var above, below uint64
			switch {
			case lineage, d == nil && k.lin != 0: // a chunk of a lineage is never all zero
				above = 1
			default:
				// Without branches, as below. Entries of k past o's
				// width are zero.
				dv := entries(d, width(c.n, i))
				wv := k.v[:len(dv)]
				for j, v := range dv {
					m := max(v, wv[j])
					above |= m ^ v
					below |= m ^ wv[j]
				}
			}
			if above == 0 {
				continue
			}
			if below == 0 && wide {
				k.shared = true
				c.ch[i], grown = k, 1
				continue
			}
		}
		dv := c.mut(i).v[:len(ov)]
		grown |= maxInto(dv, ov)
	}
	return grown != 0
}

// maxInto sets dv to the element-wise maximum of dv and ov (as long), and
// returns a non-zero value if that changed dv. Without branches: which
// entries grow is unpredictable, and a mispredicted branch costs more than
// storing every entry. Not inlined in joinChunks: there the loop ran out
// of registers and kept its result on the stack.
//
//go:noinline
func maxInto(dv, ov []uint64) uint64 {
	dv = dv[:len(ov)]
	var grown uint64
	for j, v := range ov {
		m := max(dv[j], v)
		grown |= m ^ dv[j]
		dv[j] = m
	}
	return grown
}

// tick advances slot s in *c and returns the new epoch (its Agent unset).
func (c *Clock) tick(s AgentID) Epoch {
	if k := c.only(); k != nil && !k.shared && int32(s) < c.n {
		k.v[s&(chunkSize-1)]++
		return Epoch{Slot: s, Clock: k.v[s&(chunkSize-1)]}
	}
	return c.tickSlow(s)
}

func (c *Clock) tickSlow(s AgentID) Epoch {
	c.grow(int(s) + 1)
	k := c.mut(int(s) >> chunkBits)
	n := &k.v[s&(chunkSize-1)]
	*n++
	return Epoch{Slot: s, Clock: *n}
}

// raise sets slot s of *c to n if it is below, and reports whether it was.
func (c *Clock) raise(s AgentID, n uint64) bool {
	if c.Get(s) >= n {
		return false
	}
	c.grow(int(s) + 1)
	c.mut(int(s) >> chunkBits).v[s&(chunkSize-1)] = n
	return true
}

// narrow is the storage of a clock of one chunk: the chunk, and the
// clock's list of chunks next to it, in one object, so that reading an
// entry misses the cache once, not twice. The list is the clock's alone;
// the chunk can be shared as any other.
type narrow struct {
	ch [1]*chunk
	k  chunk
}

// grow makes *c at least n entries wide; entries past the end are zero.
func (c *Clock) grow(n int) {
	if n <= int(c.n) {
		return
	}
	c.n = int32(n)
	if len(c.ch) == 0 && n <= chunkSize {
		nw := new(narrow)
		nw.ch[0] = &nw.k
		c.ch = nw.ch[:]
		return
	}
	if m := (n + chunkSize - 1) >> chunkBits; m > len(c.ch) {
		c.ch = append(c.ch, make([]*chunk, m-len(c.ch))...)
	}
}

// set copies o into *c: entry by entry into c's own chunks if o is no
// wider than shareMin, sharing o's chunks otherwise.
func (c *Clock) set(o Clock) {
	if o.n > shareMin {
		share(o.ch)
		c.ch, c.n, c.lin = append(c.ch[:0], o.ch...), o.n, 0
		return
	}
	if cap(c.ch) == 0 && len(o.ch) == 1 && o.ch[0] != nil {
		c.grow(int(o.n)) // in a narrow
	}
	old, oldch := c.n, c.ch
	c.ch, c.n, c.lin = c.ch[:0], o.n, 0
	for i, src := range o.ch {
		var k *chunk // Read before the append below overwrites oldch[i].
		if i < len(oldch) && oldch[i] != nil && !oldch[i].shared {
			k = oldch[i]
		}
		w := width(o.n, i)
		switch {
		case k == nil && src == nil:
		case k == nil:
			k = new(chunk)
			copy(k.v[:w], src.v[:w])
		default:
			k.lin = 0 // its entries may fall
			clear(k.v[w:max(w, width(old, i))])
			copy(k.v[:w], entries(src, w))
		}
		c.ch = append(c.ch, k)
	}
}

// meet sets *c to the element-wise minimum of *c and o.
func (c *Clock) meet(o Clock) {
	c.lin = 0 // its entries fall
	if o.n < c.n {
		// Entries past o's width are zero there.
		c.n = o.n
		c.ch = c.ch[:(int(o.n)+chunkSize-1)>>chunkBits]
		if j := o.n & (chunkSize - 1); j != 0 {
			if k := c.ch[len(c.ch)-1]; k != nil && slices.ContainsFunc(k.v[j:], func(v uint64) bool { return v != 0 }) {
				m := c.mut(len(c.ch) - 1)
				m.lin = 0
				clear(m.v[j:])
			}
		}
	}
	for i, d := range c.ch {
		k := o.chunk(i)
		if d == nil || d == k {
			continue
		}
		dv := d.v[:width(c.n, i)]
		ov := entries(k, len(dv))
		for j, v := range dv {
			if v > ov[j] {
				m := c.mut(i)
				m.lin = 0
				mv := m.v[:len(ov)]
				for j, v := range ov {
					mv[j] = min(mv[j], v)
				}
				break
			}
		}
	}
}
