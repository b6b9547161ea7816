package hb

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
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

// A clock wider than shareMin is a persistent tree: leaves of chunkSize
// entries under inner nodes of fan children, as deep as its width needs.
// chunkSize entries of 128 bytes keep the copy a change makes small: n
// streams that each wait for the one before hold n clocks that differ
// from each other's predecessor in one path, so n paths of a few hundred
// bytes, where a flat list of chunks held n*n/128 chunk pointers.
const (
	chunkBits = 4
	chunkSize = 1 << chunkBits
	fanBits   = 4
	fan       = 1 << fanBits
)

// shareMin is the widest clock that is a plain vector, copied entry by
// entry: the usual few streams, and a PyTorch device's pool of 96 and a
// few, pay nothing for sharing.
const shareMin = 512

// node is the header of both kinds of tree node.
type node struct {
	// shared is set once a second clock or node refers to the node: it
	// never changes again, and a clock that would change it copies it
	// first. A node under a shared one is not marked until that is
	// copied, but is as good as shared.
	shared bool
	// lin is the lineage of the clock that made the node, if its entries
	// only grow, and ver counts the nodes made: of two nodes at the same
	// place in clocks that a clock of one lineage made, the later one
	// holds all of the earlier one and more (a clock makes a node only to
	// raise an entry under it), so joins need not compare them.
	lin uint32
	ver uint64
}

// chunk is a leaf: chunkSize consecutive entries of a clock.
type chunk struct {
	node
	v [chunkSize]uint64
}

// inner is a node above the leaves: its children are *inner, or *chunk
// one level above the leaves; nil is all zero.
type inner struct {
	node
	kids [fan]unsafe.Pointer
}

// nodeOf returns the header of a node of either kind.
func nodeOf(p unsafe.Pointer) *node { return (*node)(p) }

// chunkVer numbers the nodes made by clocks of a lineage (node.ver).
var chunkVer atomic.Uint64

// vclock is a vector clock: entry s is the number of operations counted on
// slot s known to be complete, or ordered before, at a point. Entries past
// the width are zero, so clocks need not be resized when agents are added.
//
// A clock no wider than shareMin is a plain vector (v), copied entry by
// entry. A wider one is a tree (root, depth levels of inner nodes above
// the leaves) whose nodes clocks share: copying one (an event record)
// copies its root pointer, and joining one takes the other's node where
// that holds all of both, so thousands of streams that learned the same
// host clock hold one copy of it, and a join skips the nodes the two
// clocks share. A shared node is copied before it changes.
type vclock struct {
	v     []uint64       // The entries, while depth is 0.
	root  unsafe.Pointer // Level depth: an *inner; nil is all zero.
	n     int32          // Width, with a tree: entries past it are zero.
	depth uint8          // Inner levels of a tree, 0 for a vector.
	// lin is set on a clock whose entries only grow (an agent's, the
	// host's): the lineage of the nodes it makes (see node.lin).
	lin uint32
}

// shift returns the shift of a slot's child index at an inner node of
// level l (1 is the level above the leaves).
func shift(l uint8) uint { return chunkBits + uint(l-1)*fanBits }

// span returns how many entries a node of level l covers.
func span(l uint8) int { return chunkSize << (uint(l) * fanBits) }

// Covers reports whether the point with clock c is ordered after epoch e.
func (c vclock) Covers(e Epoch) bool {
	return e.Clock == 0 || c.Get(e.Slot) >= e.Clock
}

// Get returns entry s of c, the count on slot s, or 0 past the end.
func (c vclock) Get(s AgentID) uint64 {
	if c.depth == 0 {
		if uint(s) < uint(len(c.v)) {
			return c.v[s]
		}
		return 0
	}
	if uint(s) >= uint(c.n) {
		return 0
	}
	p := c.root
	for l := c.depth; l > 0 && p != nil; l-- {
		p = (*inner)(p).kids[(uint(s)>>shift(l))&(fan-1)]
	}
	if p == nil {
		return 0
	}
	return (*chunk)(p).v[s&(chunkSize-1)]
}

// Len returns the width of c: entries from it on are zero.
func (c vclock) Len() int {
	if c.depth == 0 {
		return len(c.v)
	}
	return int(c.n)
}

// isNil reports whether c never had storage.
func (c vclock) isNil() bool { return c.v == nil && c.depth == 0 }

// clone returns a copy of c that later changes of c do not reach.
func (c vclock) clone() vclock {
	if c.depth == 0 {
		return vclock{v: slices.Clone(c.v)}
	}
	shareNode(c.root)
	return vclock{root: c.root, n: c.n, depth: c.depth}
}

// shareNode marks a node as referred to by more than one clock or node.
func shareNode(p unsafe.Pointer) {
	if p != nil {
		nodeOf(p).shared = true
	}
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

// stamp gives a node c makes c's lineage.
func (c *vclock) stamp(h *node) {
	if c.lin != 0 {
		h.lin, h.ver = c.lin, chunkVer.Add(1)
	}
}

// toTree turns vector c into a tree, when it grows past shareMin.
func (c *vclock) toTree() {
	v := c.v
	c.v, c.root, c.n, c.depth = nil, nil, int32(len(v)), 1
	for span(c.depth) < len(v) {
		c.depth++
	}
	for base := 0; base < len(v); base += chunkSize {
		seg := v[base:min(len(v), base+chunkSize)]
		// A node of a lineage is never all zero (see joinNode).
		if slices.ContainsFunc(seg, func(x uint64) bool { return x != 0 }) {
			copy(c.mutChunk(AgentID(base)).v[:], seg)
		}
	}
}

// setEntries makes c the clock with entries v (which it keeps): a vector
// if no wider than shareMin.
func (c *vclock) setEntries(v []uint64) {
	c.v, c.root, c.n, c.depth, c.lin = v, nil, 0, 0, 0
	if len(v) > shareMin {
		c.toTree()
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

// nodeAt returns c's node of level l (0: a leaf) that covers slot base, if
// c is a tree at least that deep, or nil.
func (c *vclock) nodeAt(l uint8, base int) unsafe.Pointer {
	if c.depth < l || c.depth == 0 || base >= span(c.depth) {
		return nil
	}
	p := c.root
	for k := c.depth; k > l && p != nil; k-- {
		p = (*inner)(p).kids[(uint(base)>>shift(k))&(fan-1)]
	}
	return p
}

// eachChunk calls f for each chunk under p (a node of level l covering
// slots from base) that is not other's node at its place, with the
// chunk's first slot, and stops when f returns false.
func eachChunk(p unsafe.Pointer, l uint8, base int, other *vclock, f func(base int, k *chunk) bool) bool {
	if p == nil || other.nodeAt(l, base) == p {
		return true
	}
	if l == 0 {
		return f(base, (*chunk)(p))
	}
	for i, kid := range (*inner)(p).kids {
		if !eachChunk(kid, l-1, base+i*span(l-1), other, f) {
			return false
		}
	}
	return true
}

// coversAll reports whether c covers every entry of o: the point with
// clock c is ordered after all that o is.
func (c vclock) coversAll(o vclock) bool {
	if o.depth == 0 {
		for s, v := range o.v {
			if c.Get(AgentID(s)) < v {
				return false
			}
		}
		return true
	}
	return eachChunk(o.root, o.depth, 0, &c, func(base int, k *chunk) bool {
		for j, v := range k.v {
			if v != 0 && c.Get(AgentID(base+j)) < v {
				return false
			}
		}
		return true
	})
}

// above calls f for each entry of c above o's, in slot order.
func (c vclock) above(o vclock, f func(s AgentID, n uint64)) {
	if c.depth == 0 {
		for s, v := range c.v {
			if v > o.Get(AgentID(s)) {
				f(AgentID(s), v)
			}
		}
		return
	}
	eachChunk(c.root, c.depth, 0, &o, func(base int, k *chunk) bool {
		for j, v := range k.v {
			if s := AgentID(base + j); v > o.Get(s) {
				f(s, v)
			}
		}
		return true
	})
}

// mutInner returns the inner node *pp for a change: c's own, copied first
// if shared (its children then shared by two), made if nil.
func (c *vclock) mutInner(pp *unsafe.Pointer) *inner {
	in := c.writable(*pp, *pp != nil && nodeOf(*pp).shared)
	*pp = unsafe.Pointer(in)
	return in
}

// mutChunk returns the chunk of slot s of tree *c (s within its width)
// for a change, copying the shared nodes on its path.
func (c *vclock) mutChunk(s AgentID) *chunk {
	pp := &c.root
	for l := c.depth; l > 0; l-- {
		pp = &c.mutInner(pp).kids[(uint(s)>>shift(l))&(fan-1)]
	}
	old := (*chunk)(*pp)
	if old != nil && !old.shared {
		return old
	}
	k := new(chunk)
	if old != nil {
		k.v = old.v
	}
	c.stamp(&k.node)
	*pp = unsafe.Pointer(k)
	return k
}

// join sets *c to the element-wise maximum of *c and o, and reports whether
// that changed *c.
func (c *vclock) join(o *vclock) bool {
	// Two vectors, o no wider: the usual few streams.
	if c.depth == 0 && o.depth == 0 && len(o.v) <= len(c.v) {
		return maxInto(c.v, o.v) != 0
	}
	return c.joinSlow(o)
}

func (c *vclock) joinSlow(o *vclock) bool {
	switch {
	case c.depth == 0 && o.depth == 0:
		c.grow(len(o.v)) // no wider than shareMin, or a tree now
		if c.depth != 0 {
			return c.joinVector(o.v)
		}
		return maxInto(c.v, o.v) != 0
	case o.depth == 0:
		return c.joinVector(o.v)
	}
	if o.root == nil {
		c.grow(int(o.n))
		return false
	}
	c.grow(int(o.n)) // into a tree: o is wider than shareMin
	if c.depth == 0 {
		c.toTree()
	}
	root, grown := c.joinNode(c.root, o.root, c.depth, o.depth, false)
	c.root = root
	return grown
}

// joinVector is join for c a tree and a vector ov.
func (c *vclock) joinVector(ov []uint64) bool {
	c.grow(len(ov))
	var grown uint64
	for base := 0; base < len(ov); base += chunkSize {
		seg := ov[base:min(len(ov), base+chunkSize)]
		if !anyAbove(entries((*chunk)(c.nodeAt(0, base)), len(seg)), seg) {
			continue
		}
		grown |= maxInto(c.mutChunk(AgentID(base)).v[:len(seg)], seg)
	}
	return grown != 0
}

// entries returns the first n entries of k, a nil chunk's from zero.
func entries(k *chunk, n int) []uint64 {
	if k == nil {
		return zeros[:n]
	}
	return k.v[:n]
}

var zeros [chunkSize]uint64

// anyAbove reports whether an entry of ov is above dv's (as long).
func anyAbove(dv, ov []uint64) bool {
	for j, v := range ov {
		if v > dv[j] {
			return true
		}
	}
	return false
}

// allZero reports whether the node p of level l holds only zeros.
func allZero(p unsafe.Pointer, l uint8) bool {
	switch {
	case p == nil:
		return true
	case nodeOf(p).lin != 0:
		return false // a node of a lineage is never all zero
	case l == 0:
		return (*chunk)(p).v == [chunkSize]uint64{}
	}
	for _, k := range (*inner)(p).kids {
		if !allZero(k, l-1) {
			return false
		}
	}
	return true
}

// joinNode returns the node of level l holding the element-wise maximum
// of c's node d there and o's node k of level kl (kl <= l: then k stands
// for the node whose first child, level after level, it is), and whether
// that differs from d. It takes k itself where k holds all of d, keeps d
// where d holds all of k, and changes d in place only if d is c's alone
// (not shared, nor under a shared node: frozen).
func (c *vclock) joinNode(d, k unsafe.Pointer, l, kl uint8, frozen bool) (unsafe.Pointer, bool) {
	if k == nil || d == k {
		return d, false
	}
	if d != nil {
		frozen = frozen || nodeOf(d).shared
	}
	if l > kl { // k is under d's first child
		var d0 unsafe.Pointer
		if d != nil {
			d0 = (*inner)(d).kids[0]
		}
		n0, grown := c.joinNode(d0, k, l-1, kl, frozen)
		if !grown {
			return d, false
		}
		in := c.writable(d, frozen)
		in.kids[0] = n0
		return unsafe.Pointer(in), true
	}
	if d == nil {
		if allZero(k, l) {
			return nil, false
		}
		shareNode(k)
		return k, true
	}
	dh, kh := nodeOf(d), nodeOf(k)
	if kh.lin != 0 && kh.lin == dh.lin {
		// Nodes of one lineage: the later holds all of the earlier.
		if kh.ver < dh.ver {
			return d, false
		}
		shareNode(k)
		return k, true
	}
	if l == 0 {
		return c.joinChunk((*chunk)(d), (*chunk)(k), frozen)
	}
	din, kin := (*inner)(d), (*inner)(k)
	var kids [fan]unsafe.Pointer
	changed, allK := false, true
	for i := range kids {
		n, grown := c.joinNode(din.kids[i], kin.kids[i], l-1, l-1, frozen)
		kids[i] = n
		changed = changed || grown
		allK = allK && n == kin.kids[i]
	}
	switch {
	case !changed:
		return d, false
	case allK:
		shareNode(k)
		return k, true
	}
	in := c.writable(d, frozen)
	in.kids = kids
	return unsafe.Pointer(in), true
}

// writable returns inner node d (nil: a new one) to change: itself if c's
// alone, else a copy whose children are then shared by two.
func (c *vclock) writable(d unsafe.Pointer, frozen bool) *inner {
	if d != nil && !frozen {
		return (*inner)(d)
	}
	in := new(inner)
	if d != nil {
		in.kids = (*inner)(d).kids
		for _, k := range in.kids {
			shareNode(k)
		}
	}
	c.stamp(&in.node)
	return in
}

// joinChunk is joinNode for two leaves.
func (c *vclock) joinChunk(d, k *chunk, frozen bool) (unsafe.Pointer, bool) {
	if !frozen {
		return unsafe.Pointer(d), maxIntoChunk(d.v[:], k.v[:]) != 0
	}
	// Take k if it holds all of d, keep d if it holds all of k, and copy
	// d to change it otherwise. Without branches, as in maxInto.
	var above, below uint64
	for j, v := range d.v {
		m := max(v, k.v[j])
		above |= m ^ v
		below |= m ^ k.v[j]
	}
	switch {
	case above == 0:
		return unsafe.Pointer(d), false
	case below == 0:
		shareNode(unsafe.Pointer(k))
		return unsafe.Pointer(k), true
	}
	n := &chunk{v: d.v}
	c.stamp(&n.node)
	maxInto(n.v[:], k.v[:])
	return unsafe.Pointer(n), true
}

// maxIntoChunk is maxInto, not inlined in joinChunk: there the loop ran
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
	if int(s) < len(c.v) && c.depth == 0 {
		n := &c.v[s]
		*n++
		return Epoch{Slot: s, Clock: *n}
	}
	return c.tickSlow(s)
}

func (c *vclock) tickSlow(s AgentID) Epoch {
	c.grow(int(s) + 1)
	if c.depth == 0 {
		c.v[s]++
		return Epoch{Slot: s, Clock: c.v[s]}
	}
	k := c.mutChunk(s)
	k.v[s&(chunkSize-1)]++
	return Epoch{Slot: s, Clock: k.v[s&(chunkSize-1)]}
}

// raise sets slot s of *c to n if it is below, and reports whether it was.
func (c *vclock) raise(s AgentID, n uint64) bool {
	if c.Get(s) >= n {
		return false
	}
	c.grow(int(s) + 1)
	if c.depth == 0 {
		c.v[s] = n
	} else {
		c.mutChunk(s).v[s&(chunkSize-1)] = n
	}
	return true
}

// grow makes *c at least n entries wide; entries past the end are zero.
func (c *vclock) grow(n int) {
	if c.depth == 0 && n <= len(c.v) {
		return
	}
	c.growSlow(n)
}

func (c *vclock) growSlow(n int) {
	if c.depth == 0 {
		switch {
		case n <= len(c.v):
			return
		case n <= shareMin:
			c.v = append(c.v, make([]uint64, n-len(c.v))...)
			return
		}
		c.toTree()
	}
	if n <= int(c.n) {
		return
	}
	c.n = int32(n)
	for span(c.depth) < n {
		// A new root above the old: its first child.
		if c.root != nil {
			in := &inner{}
			in.kids[0] = c.root
			c.stamp(&in.node)
			c.root = unsafe.Pointer(in)
		}
		c.depth++
	}
}

// set copies o into *c: entry by entry if o is a vector, sharing o's
// tree otherwise.
// Only clocks of no lineage are set (event records, scratch clocks):
// setting one's entries lower would break what its lineage promises.
func (c *vclock) set(o *vclock) {
	if o.depth != 0 || c.depth != 0 {
		c.setSlow(o)
		return
	}
	c.v = append(c.v[:0], o.v...)
}

func (c *vclock) setSlow(o *vclock) {
	switch {
	case o.depth == 0:
		c.v, c.root, c.n, c.depth, c.lin = append(c.v[:0], o.v...), nil, 0, 0, 0
	case o.n <= shareMin:
		c.setEntries(o.dense())
	default:
		shareNode(o.root)
		c.v, c.root, c.n, c.depth, c.lin = nil, o.root, o.n, o.depth, 0
	}
}

// meet sets *c to the element-wise minimum of *c and o.
func (c *vclock) meet(o vclock) {
	if c.depth != 0 || o.depth != 0 {
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
