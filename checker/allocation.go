package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// access is one operation on an allocation, with what is needed to report
// it later. It is kept small (48 bytes): allocations hold one per stream
// that used them, and the hot loop of a large trace is mostly cache misses
// on them.
type access struct {
	// clock is the operation's epoch on agent (hb.Step.Epoch, whose agent
	// is always Step.Agent); 0 for operations no one is ordered after.
	// These two come first: they are what a use reads.
	clock  uint64
	agent  hb.AgentID
	tid    uint32
	seq    uint64
	ptr    uint64
	api    model.StringID
	kernel model.StringID // A collective's: its size (packCollectiveBytes).
	stack  model.StackID
	op     model.Op
	// rejected says CUDA refused the call (it returned an error): it
	// changed nothing, but what it names is still the program's.
	rejected bool
}

// epoch returns the operation's happens-before epoch.
func (c *Checker) epoch(a *access) hb.Epoch { return c.engine.EpochOf(a.agent, a.clock) }

func (c *Checker) accessOf(ev *model.Event, st *hb.Step, ptr uint64) access {
	a := access{
		clock: st.Epoch.Clock, agent: st.Agent, seq: ev.Seq, op: ev.Op, api: ev.API,
		kernel: ev.Kernel, stack: ev.Stack, tid: ev.TID, ptr: ptr, rejected: ev.Failed(),
	}
	if ev.Op == model.OpCollective {
		a.kernel = packCollectiveBytes(collectiveBytes(ev)) // see collective.go
	}
	return a
}

// allocation is one allocation, live or freed.
//
// A large trace's analysis touches thousands of these records in no
// particular order, so their layout matters: what a use of an allocation on
// a stream that used it before reads and writes (freed, nUses, useBuf[0])
// comes first, in the first 64 bytes (TestAllocationLayout checks).
type allocation struct {
	freed  bool   // In the grave: freed, remembered for later checks.
	async  bool   // Stream-ordered (cudaMallocAsync / from a pool).
	family family // The API family that made it, and must free it (family.go).
	// pool is, for a live stream-ordered allocation, 1 + the index of its
	// pool in poolChurn.order (pool-release-churn), 0 if not followed. A
	// byte that fits the padding here: records of 288 bytes fill a size
	// class of the allocator, and one more word made them 320.
	pool  uint8
	nUses uint32 // Length of uses().
	// The most recent use on each agent (see uses): in useBuf while they
	// fit, then all in extra. Most allocations are used on one or two
	// streams, and keeping those uses in the record itself means a use reads
	// no pointer before it can look at them.
	useBuf     [2]access
	base, size uint64
	alloc      access
	extra      []access
	// inherited holds the uses of the freed allocations whose addresses
	// this one took over.
	inherited []access
	free      access
	// older and newer link the freed allocations in the order they were
	// freed (see graveOrder).
	older, newer *allocation
	// wholeSize is set on a record of the rest of a freed allocation that
	// a new one partly reused (see keepRest): the size of the allocation it
	// was part of, which started at alloc.ptr. Reports name that one.
	wholeSize uint64
}

// wholeOf returns the base and size of the allocation a record's addresses
// were part of (see wholeSize).
func (a *allocation) wholeOf() (base, size uint64) {
	if a.wholeSize != 0 {
		return a.alloc.ptr, a.wholeSize
	}
	return a.base, a.size
}

// uses returns the most recent use on each agent, in the order the agents
// first used the allocation: a later use on the same stream is ordered
// after the earlier ones, so it stands for them.
func (a *allocation) uses() []access {
	if int(a.nUses) <= len(a.useBuf) {
		return a.useBuf[:a.nUses]
	}
	return a.extra
}

// addUse records the first use on an agent; a buffer it needs comes from p.
func (a *allocation) addUse(u access, p *bufPool) {
	switch n := int(a.nUses); {
	case n < len(a.useBuf):
		a.useBuf[n] = u
	case n == len(a.useBuf):
		a.extra = append(append(p.get(), a.useBuf[:]...), u)
	default:
		a.extra = append(a.extra, u)
	}
	a.nUses++
}

// clear empties a record for reuse, giving its buffers back to p.
//
// Only what is read before it is written is reset (base, size, async, alloc
// and free are set when they take effect; useBuf is read up to nUses), so
// that reusing a cold record does not write all of its cache lines.
func (a *allocation) clear(p *bufPool) {
	p.put(a.extra)
	p.put(a.inherited)
	a.freed, a.nUses = false, 0
	a.extra, a.inherited = nil, nil
	a.older, a.newer, a.wholeSize, a.pool = nil, nil, 0, 0
}

// bufPool keeps the buffers of forgotten allocations' extra and inherited
// uses for new allocations. A buffer goes back when its record is cleared,
// so memory follows what the live and remembered allocations need instead
// of creeping up with the length of a trace, and reuse makes no garbage.
type bufPool struct {
	free [][]access
}

// bufCap is the capacity of pooled buffers: what most allocations need.
// Larger buffers are left to the garbage collector.
const bufCap = 4

func (p *bufPool) get() []access {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return make([]access, 0, bufCap)
}

func (p *bufPool) put(b []access) {
	if cap(b) == bufCap {
		p.free = append(p.free, b[:0])
	}
}
