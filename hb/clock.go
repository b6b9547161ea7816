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
	// The fields come before the entries, so that whether a chunk is
	// shared and its first entries share a cache line.
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

// vclock is a vector clock: entry s is the number of operations counted on
// slot s known to be complete, or ordered before, at a point. Entries past
// the width are zero, so clocks need not be resized when agents are added.
//
// A clock no wider than shareMin is a plain vector (v), copied entry by
// entry. A wider one holds its entries in chunks of 128 (ch), which clocks
// share: copying one (an event record) copies pointers, and joining one
// takes the other's chunk where that holds all of both, so thousands of
// streams that learned the same host clock hold one copy of it, not one
// each, and a join skips the chunks the two clocks share. A shared chunk
// is copied before it changes.
type vclock struct {
	v  []uint64 // The entries, while ch is nil.
	ch []*chunk // A nil chunk is all zero.
	n  int32    // Width, with ch: entries past it are zero.
	// lin is set on a clock whose entries only grow (an agent's, the
	// host's): the lineage of the chunks it makes (see chunk.lin).
	lin uint32
}

// Covers reports whether the point with clock c is ordered after epoch e.
func (c vclock) Covers(e Epoch) bool {
	return e.Clock == 0 || c.Get(e.Slot) >= e.Clock
}

// Get returns entry s of c, the count on slot s, or 0 past the end.
func (c vclock) Get(s AgentID) uint64 {
	if c.ch == nil {
		if uint(s) < uint(len(c.v)) {
			return c.v[s]
		}
		return 0
	}
	if i := uint(s) >> chunkBits; i < uint(len(c.ch)) {
		if k := c.ch[i]; k != nil {
			return k.v[s&(chunkSize-1)]
		}
	}
	return 0
}

// Len returns the width of c: entries from it on are zero.
func (c vclock) Len() int {
	if c.ch == nil {
		return len(c.v)
	}
	return int(c.n)
}

// isNil reports whether c never had storage.
func (c vclock) isNil() bool { return c.v == nil && c.ch == nil }

// clone returns a copy of c that later changes of c do not reach.
func (c vclock) clone() vclock {
	if c.ch == nil {
		return vclock{v: slices.Clone(c.v)}
	}
	share(c.ch)
	return vclock{ch: slices.Clone(c.ch), n: c.n}
}

// String formats c as a list of its entries.
func (c vclock) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for s := range c.Len() {
		if s > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, c.Get(AgentID(s)))
	}
	b.WriteByte(']')
	return b.String()
}

// clockOf returns a clock with the given entries.
func clockOf(v ...uint64) vclock {
	var c vclock
	for s, n := range v {
		c.raise(AgentID(s), n)
	}
	c.grow(len(v))
	return c
}

// width returns how many of chunk i's entries are within a clock n wide.
func width(n int32, i int) int { return min(chunkSize, int(n)-i<<chunkBits) }

// chunk returns chunk i of c, nil (all zero) past the end or for a vector.
func (c vclock) chunk(i int) *chunk {
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

// toChunks turns vector c into chunks, when it grows past shareMin.
func (c *vclock) toChunks() {
	w := len(c.v)
	ch := make([]*chunk, (w+chunkSize-1)>>chunkBits)
	for i := range ch {
		seg := c.v[i<<chunkBits : min(w, (i+1)<<chunkBits)]
		if slices.ContainsFunc(seg, func(v uint64) bool { return v != 0 }) {
			// A chunk of a lineage is never all zero (see joinChunks).
			k := &chunk{}
			copy(k.v[:], seg)
			if c.lin != 0 {
				k.lin, k.ver = c.lin, chunkVer.Add(1)
			}
			ch[i] = k
		}
	}
	c.v, c.ch, c.n = nil, ch, int32(w)
}

// setEntries makes c the clock with entries v (which it keeps): a vector
// if no wider than shareMin.
func (c *vclock) setEntries(v []uint64) {
	c.v, c.ch, c.n, c.lin = v, nil, 0, 0
	if len(v) > shareMin {
		c.toChunks()
	}
}

// dense returns the entries of c as a new vector.
func (c vclock) dense() []uint64 {
	v := make([]uint64, c.Len())
	for s := range v {
		v[s] = c.Get(AgentID(s))
	}
	return v
}

// coversAll reports whether c covers every entry of o: the point with
// clock c is ordered after all that o is.
func (c vclock) coversAll(o vclock) bool {
	if o.ch == nil {
		for s, v := range o.v {
			if c.Get(AgentID(s)) < v {
				return false
			}
		}
		return true
	}
	for i, k := range o.ch {
		if k == nil || c.chunk(i) == k {
			continue
		}
		base := i << chunkBits
		for j, v := range k.v[:width(o.n, i)] {
			if c.Get(AgentID(base+j)) < v {
				return false
			}
		}
	}
	return true
}

// above calls f for each entry of c above o's, in slot order.
func (c vclock) above(o vclock, f func(s AgentID, n uint64)) {
	if c.ch == nil {
		for s, v := range c.v {
			if v > o.Get(AgentID(s)) {
				f(AgentID(s), v)
			}
		}
		return
	}
	for i, k := range c.ch {
		if k == nil || k == o.chunk(i) {
			continue
		}
		base := i << chunkBits
		for j, v := range k.v[:width(c.n, i)] {
			if s := AgentID(base + j); v > o.Get(s) {
				f(s, v)
			}
		}
	}
}

// mut returns chunk i of *c (i within its chunks) for a change: c's own,
// copied first if shared, allocated if nil.
func (c *vclock) mut(i int) *chunk {
	if k := c.ch[i]; k != nil && !k.shared {
		return k
	}
	return c.own(i)
}

func (c *vclock) own(i int) *chunk {
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
func (c *vclock) join(o *vclock) bool {
	// Two vectors, o no wider: the usual few streams.
	if c.ch == nil && o.ch == nil && len(o.v) <= len(c.v) {
		return maxInto(c.v, o.v) != 0
	}
	return c.joinSlow(o)
}

func (c *vclock) joinSlow(o *vclock) bool {
	switch {
	case c.ch == nil && o.ch == nil:
		c.grow(len(o.v)) // no wider than shareMin
		return maxInto(c.v, o.v) != 0
	case o.ch == nil:
		return c.joinVector(o.v)
	case c.ch == nil:
		c.grow(int(o.n)) // into chunks: o is wider than shareMin
		if c.ch == nil {
			c.toChunks()
		}
	}
	return c.joinChunks(o)
}

// joinVector is join for c in chunks and a vector ov.
func (c *vclock) joinVector(ov []uint64) bool {
	c.grow(len(ov))
	var grown uint64
	for i := 0; i<<chunkBits < len(ov); i++ {
		seg := ov[i<<chunkBits : min(len(ov), (i+1)<<chunkBits)]
		dv := entries(c.ch[i], len(seg))
		if !anyAbove(dv, seg) {
			continue
		}
		grown |= maxInto(c.mut(i).v[:len(seg)], seg)
	}
	return grown != 0
}

// anyAbove reports whether an entry of ov is above dv's (as long).
func anyAbove(dv, ov []uint64) bool {
	for j, v := range ov {
		if v > dv[j] {
			return true
		}
	}
	return false
}

// joinChunks is join for two clocks in chunks.
func (c *vclock) joinChunks(o *vclock) bool {
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
		grown |= maxIntoChunk(dv, ov)
	}
	return grown != 0
}

// maxIntoChunk is maxInto, not inlined in joinChunks: there the loop ran
// out of registers and kept its result on the stack.
//
//go:noinline
func maxIntoChunk(dv, ov []uint64) uint64 { return maxInto(dv, ov) }

// maxInto sets dv to the element-wise maximum of dv and ov (as long), and
// returns a non-zero value if that changed dv. Without branches: which
// entries grow is unpredictable, and a mispredicted branch costs more than
// storing every entry.
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
func (c *vclock) tick(s AgentID) Epoch {
	if int(s) < len(c.v) && c.ch == nil {
		n := &c.v[s]
		*n++
		return Epoch{Slot: s, Clock: *n}
	}
	return c.tickSlow(s)
}

func (c *vclock) tickSlow(s AgentID) Epoch {
	c.grow(int(s) + 1)
	if c.ch == nil {
		c.v[s]++
		return Epoch{Slot: s, Clock: c.v[s]}
	}
	k := c.mut(int(s) >> chunkBits)
	k.v[s&(chunkSize-1)]++
	return Epoch{Slot: s, Clock: k.v[s&(chunkSize-1)]}
}

// raise sets slot s of *c to n if it is below, and reports whether it was.
func (c *vclock) raise(s AgentID, n uint64) bool {
	if c.Get(s) >= n {
		return false
	}
	c.grow(int(s) + 1)
	if c.ch == nil {
		c.v[s] = n
	} else {
		c.mut(int(s) >> chunkBits).v[s&(chunkSize-1)] = n
	}
	return true
}

// grow makes *c at least n entries wide; entries past the end are zero.
func (c *vclock) grow(n int) {
	if c.ch == nil && n <= len(c.v) {
		return
	}
	c.growSlow(n)
}

func (c *vclock) growSlow(n int) {
	if c.ch == nil {
		switch {
		case n <= len(c.v):
			return
		case n <= shareMin:
			c.v = append(c.v, make([]uint64, n-len(c.v))...)
			return
		}
		c.toChunks()
	}
	if n <= int(c.n) {
		return
	}
	c.n = int32(n)
	if m := (n + chunkSize - 1) >> chunkBits; m > len(c.ch) {
		c.ch = append(c.ch, make([]*chunk, m-len(c.ch))...)
	}
}

// set copies o into *c: entry by entry if o is a vector, sharing o's
// chunks otherwise.
// Only clocks of no lineage are set (event records, scratch clocks):
// setting one's entries lower would break what its lineage promises.
func (c *vclock) set(o *vclock) {
	if o.ch != nil || c.ch != nil {
		c.setSlow(o)
		return
	}
	c.v = append(c.v[:0], o.v...)
}

func (c *vclock) setSlow(o *vclock) {
	switch {
	case o.ch == nil:
		c.v, c.ch, c.n, c.lin = append(c.v[:0], o.v...), nil, 0, 0
	case o.n <= shareMin:
		c.setEntries(o.dense())
	default:
		share(o.ch)
		c.ch, c.n, c.lin = append(c.ch[:0], o.ch...), o.n, 0
	}
}

// meet sets *c to the element-wise minimum of *c and o.
func (c *vclock) meet(o vclock) {
	if c.ch != nil || o.ch != nil {
		v := make([]uint64, min(c.Len(), o.Len()))
		for s := range v {
			v[s] = min(c.Get(AgentID(s)), o.Get(AgentID(s)))
		}
		c.setEntries(v)
		return
	}
	c.lin = 0 // its entries fall
	if len(o.v) < len(c.v) {
		c.v = c.v[:len(o.v)] // entries past o's end are zero there
	}
	for i := range c.v {
		c.v[i] = min(c.v[i], o.v[i])
	}
}

// Clock is a vector clock as the engine shows it (Step.Clock,
// HostClock): a view of one of its clocks (see vclock), valid until the
// next call of Apply or ApplyTo unless cloned. The zero Clock is all zero.
type Clock struct{ c *vclock }

// view returns a Clock that shows c.
func (c *vclock) view() Clock { return Clock{c} }

// Covers reports whether the point with clock c is ordered after epoch e.
func (c Clock) Covers(e Epoch) bool {
	return e.Clock == 0 || c.Get(e.Slot) >= e.Clock
}

// Get returns entry s of c, the count on slot s, or 0 past the end.
func (c Clock) Get(s AgentID) uint64 {
	if c.c == nil {
		return 0
	}
	return c.c.Get(s)
}

// Len returns the width of c: entries from it on are zero.
func (c Clock) Len() int {
	if c.c == nil {
		return 0
	}
	return c.c.Len()
}

// CoversAll reports whether c covers every entry of o: the point with
// clock c is ordered after all that o is.
func (c Clock) CoversAll(o Clock) bool {
	if o.c == nil {
		return true
	}
	if c.c == nil {
		return (&vclock{}).coversAll(*o.c)
	}
	return c.c.coversAll(*o.c)
}

// Clone returns a copy of c that the engine's later changes do not reach.
func (c Clock) Clone() Clock {
	if c.c == nil {
		return Clock{}
	}
	d := c.c.clone()
	return Clock{&d}
}

// String formats c as a list of its entries.
func (c Clock) String() string {
	if c.c == nil {
		return "[]"
	}
	return c.c.String()
}
