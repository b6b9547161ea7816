package checker

import (
	"fmt"
	"strings"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RulePoolReleaseChurn is the id of the rule this file defines.
const RulePoolReleaseChurn RuleID = "pool-release-churn"

// poolReleaseChurnRule: pool-release-churn. What pools hold is followed by
// its hooks below (an allocation from a pool, one leaving the live set,
// the pool calls and the host's synchronizations); the finding is made at
// the end of the trace.
var poolReleaseChurnRule = &ruleDef{
	rank:     130,
	endRank:  40,
	state:    func(c *Checker) any { return &poolChurn{c: c} },
	id:       RulePoolReleaseChurn,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "a memory pool with release threshold 0 gives its memory back at synchronizations and grows again, many times",
		Text: "a memory pool whose release threshold is 0 (the default, for created pools and for the default pool) gives its memory back at synchronizations and grows again: " +
			"stream-ordered allocations of a size it held before follow a stream, event or device synchronization at which the pool held no live allocation, at least `--alloc-loop-threshold` times (16 by default); " +
			"not reported once the threshold is set (`pool_set_attr`), nor when no synchronization separates the free from the next allocation, nor for recordings that do not record pool attributes " +
			"(a performance warning: the program is correct)",
		Why: "A pool keeps at most its release threshold of unused memory when the program synchronizes, and the threshold is 0 unless set: " +
			"at each synchronization it gives all its free memory back to the system, and the next allocation has to get it from the driver again, which costs what cudaMalloc costs.",
		Fix: "Set the pool's release threshold to the memory a pass uses, or UINT64_MAX to keep it all: cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes) " +
			"(for the default pool, take it from cudaDeviceGetDefaultMemPool).",
		Ops: []model.Op{model.OpMallocAsync},
	},
	role: "allocation",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, p := x.op, x.perf
		sites := make([]string, 0, len(p.sites))
		for i := range p.sites {
			o := c.resolve("", &p.sites[i])
			sites = append(sites, o.Site())
		}
		f.Message = fmt.Sprintf("%s gave its memory back at a synchronization and grew again %d times: %s at %s allocated %s after a synchronization at which the pool held no live allocation",
			p.pool, p.count, op.API, strings.Join(sites, ", "), p.sizes())
		f.Why = fmt.Sprintf("The release threshold of %s is 0 (the default: it was not set in the trace), so at each synchronization the pool returned its unused memory to the system, "+
			"and the next allocation of the same size had to get it from the driver again. The program is correct, just slower than it needs to be.", p.pool)
		get := ""
		if strings.HasPrefix(p.pool, "the default pool") {
			get = "cudaDeviceGetDefaultMemPool(&pool, device), then "
		}
		f.Fix = fmt.Sprintf("Before the loop, set the release threshold of %s to the memory a pass uses, or UINT64_MAX to keep it all: "+
			"%scudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) with a uint64_t threshold.", p.pool, get)
	},
}

var _ = register(poolReleaseChurnRule)

// maxPerfSites bounds the allocation sites a pool-release-churn finding lists.
const maxPerfSites = 4

// poolKey names a pool: a created or imported pool by its handle, a
// device's default pool (handle 0) by its device.
type poolKey struct {
	device int32
	pool   uint64
}

// poolChurn is what the lint keeps of pools (a live allocation's pool is
// in its record: allocation.pool).
type poolChurn struct {
	c       *Checker
	pools   map[poolKey]*poolUse
	order   []*poolUse
	current map[int32]uint64 // The pool each device allocates from when an allocation names none (device_set_pool).
	last    *poolUse         // The pool of the latest lookup: most programs allocate from one.
}

// poolUse is one pool's state.
type poolUse struct {
	key       poolKey
	index     int    // In poolChurn.order.
	threshold uint64 // The release threshold.
	live      int    // Live allocations.
	// held: it allocated since its memory was last given back; released:
	// a synchronization found it holding no live allocation, and it has
	// not allocated since.
	held, released bool
	// sizes holds the latest distinct sizes it allocated, nSizes of them,
	// the oldest replaced first: a loop that churns allocates few sizes.
	sizes  [8]uint64
	nSizes int
	first  access // The first allocation that made it grow again.
	perfDetail
}

// allocated reports whether the pool allocated size lately.
func (u *poolUse) allocated(size uint64) bool {
	for _, s := range u.sizes[:min(u.nSizes, len(u.sizes))] {
		if s == size {
			return true
		}
	}
	return false
}

// noteSize remembers that the pool allocated size.
func (u *poolUse) noteSize(size uint64) {
	if !u.allocated(size) {
		u.sizes[u.nSizes%len(u.sizes)] = size
		u.nSizes++
	}
}

// onDrop ends a live allocation's part in its pool's count: freed, or
// replaced by an allocation at its addresses without a recorded free.
func (s *poolChurn) onDrop(a *allocation, _ bool) {
	if a.pool != 0 {
		s.order[a.pool-1].live--
		a.pool = 0
	}
}

// maxFollowedPools is how many pools' live allocations are followed (the
// index fits allocation.pool); allocations from pools made after them are
// not counted, and those pools are never found empty.
const maxFollowedPools = 255

// poolOf returns the state of the pool ev names (Pool, or the device's
// current pool).
func (s *poolChurn) poolOf(ev *model.Event) *poolUse {
	key := poolKey{pool: ev.Pool}
	if key.pool == 0 && ev.Op == model.OpMallocAsync {
		key.pool = s.current[ev.Device]
	}
	if key.pool == 0 {
		key.device = ev.Device
	}
	if s.last != nil && s.last.key == key {
		return s.last
	}
	u := s.pools[key]
	if u == nil {
		if s.pools == nil {
			s.pools = map[poolKey]*poolUse{}
		}
		u = &poolUse{key: key, index: len(s.order)}
		u.stream = hb.HostAgent
		s.pools[key] = u
		s.order = append(s.order, u)
	}
	s.last = u
	return u
}

func (s *poolChurn) ops() []model.Op {
	return []model.Op{model.OpPoolCreate, model.OpPoolSetAttr, model.OpDeviceSetPool,
		model.OpStreamSync, model.OpEventSync, model.OpDeviceSync}
}

// onOp follows what pool_create, pool_set_attr and device_set_pool do, and
// the host's synchronizations (not its queries), at which each pool that
// holds no live allocation gives back the memory it grew to.
func (s *poolChurn) onOp(ev *model.Event, _ *hb.Step) {
	switch ev.Op {
	case model.OpPoolCreate:
		u := s.poolOf(ev)
		u.threshold, u.held, u.released = 0, false, false
	case model.OpPoolSetAttr:
		if ev.Attr == model.PoolAttrReleaseThreshold {
			s.poolOf(ev).threshold = ev.Value
		}
	case model.OpDeviceSetPool:
		if s.current == nil {
			s.current = map[int32]uint64{}
		}
		s.current[ev.Device] = ev.Pool
	default:
		for _, u := range s.order {
			if u.live == 0 && u.held {
				u.held, u.released = false, true
			}
		}
	}
}

// onAlloc follows an allocation from a pool (one issued to a stream) a
// that ev made, and counts it when it makes its pool grow again: one after
// a synchronization released the pool's memory, of a size the pool
// allocated before, while its release threshold is 0.
func (s *poolChurn) onAlloc(ev *model.Event, _ *hb.Step, a *allocation) {
	if a == nil || !ev.Op.OnStream() || ev.Flags&model.FlagGraphAlloc != 0 {
		return
	}
	c := s.c
	u := s.poolOf(ev)
	if u.released && u.threshold == 0 && u.allocated(ev.Size) {
		op := a.alloc
		if u.count == 0 {
			u.first = op
		}
		u.addSize(ev.Size)
		u.count++
		if len(u.sites) < maxPerfSites && !c.hasSite(u.sites, &op) {
			u.sites = append(u.sites, op)
		}
	}
	u.released = false
	u.noteSize(ev.Size)
	if u.index < maxFollowedPools {
		u.live++
		u.held = true
		a.pool = uint8(u.index + 1)
	}
}

// hasSite reports whether one of sites is a's call site.
func (c *Checker) hasSite(sites []access, a *access) bool {
	k := c.siteOf(a)
	for i := range sites {
		if c.siteOf(&sites[i]) == k {
			return true
		}
	}
	return false
}

// atEnd reports each pool that grew again at least the threshold's
// times, unless the trace cannot say whether its release threshold was
// set.
func (s *poolChurn) atEnd(bool) {
	c := s.c
	if !c.tables.Process.RecordsPoolAttributes(c.tables) {
		return
	}
	for _, u := range s.order {
		if u.count < c.opts.threshold() {
			continue
		}
		switch name := c.tables.Name(model.ObjectPool, u.key.pool); {
		case u.key.pool == 0:
			u.pool = fmt.Sprintf("the default pool of device %d", u.key.device)
		case name != "":
			u.pool = "pool " + name
		default:
			u.pool = fmt.Sprintf("pool 0x%x", u.key.pool)
		}
		c.reportPerf(poolReleaseChurnRule, u.first, famAsync, &u.perfDetail)
	}
}
