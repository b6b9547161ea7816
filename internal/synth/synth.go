package synth

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/streamcheck/streamcheck/model"
)

// Version changes whenever Write's output for a given Config changes, so
// caches keyed by Config.Key are invalidated.
const Version = 4

// Config says what trace to generate.
type Config struct {
	Events     int    // Events written, exactly.
	Streams    int    // Created streams (the legacy default stream comes on top); at least 1.
	LiveAllocs int    // Stream-ordered allocations live at once after the working set fills; at least 1.
	Seed       uint64 // Seed of the random source; equal configs give equal traces.
	// Uniform turns off locality: every address an operation names is any
	// allocation of its stream with equal chance, instead of mostly one the
	// stream allocated or received lately. Real programs have strong
	// locality; this is the worst case for the analyzer's caches.
	Uniform bool
}

// Key names the trace a config generates, for use in file names.
func (c Config) Key() string {
	k := fmt.Sprintf("synth-v%d-e%d-s%d-l%d-seed%d", Version, c.Events, c.Streams, c.LiveAllocs, c.Seed)
	if c.Uniform {
		k += "-uniform"
	}
	return k
}

// Stats counts what Write generated.
type Stats struct {
	Events        int // Events written.
	StreamCreates int
	MaxLive       int // Most stream-ordered allocations live at once.
	Allocs, Frees int // cudaMallocAsync and cudaFreeAsync calls.
	Launches      int
	InteriorPtrs  int // Launch parameters that point into an allocation rather than at its start.
	Copies, Sets  int // Asynchronous memcpy and memset calls.
	Records       int // Event records (hand-offs and others).
	Waits         int // Stream waits (hand-offs).
	LegacyOps     int // Synchronous calls on the legacy default stream.
	HostSyncs     int // Stream, event and device synchronizations, and queries.
	Races         int // Deliberately unordered uses.
}

// Tunables of the generated program.
const (
	raceOneIn      = 500_000 // One event in this many is a deliberately racy use.
	recentWindow   = 32      // Operations mostly name one of the allocations their stream got most recently...
	farOneIn       = 8       // ...and one time in this many any allocation the stream owns.
	interiorOneIn  = 8       // One launch parameter in this many points inside its allocation.
	weightBuffers  = 8       // cudaMalloc'd buffers every stream reads (model weights).
	deviceBase     = 0x7f20_0000_0000
	streamRegion   = 0x10_0000_0000 // Address space of one stream's pool.
	weightBase     = 0x7f10_0000_0000
	hostBase       = 0x5600_0000_0000
	streamHandle0  = 0x5555_0000_1000
	eventHandle0   = 0x5555_8000_2000
	poolHandle     = 0x5555_c000_0000
	granule        = 256 // Allocation sizes and interior offsets are multiples of this.
	launchSites    = 6
	otherSitesEach = 2
)

// Allocation size classes (bytes) and how often each is drawn, in 1/100.
var (
	classSize   = [...]uint64{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}
	classWeight = [...]int{20, 20, 18, 15, 12, 8, 5, 2}
)

var kernelNames = []string{
	"gemm_bf16_128x128", "gemm_bf16_64x256", "layernorm_fwd", "layernorm_bwd", "softmax_fwd",
	"softmax_bwd", "attention_fwd", "attention_bwd", "gelu_fwd", "gelu_bwd", "adam_step",
	"reduce_sum", "all_reduce_pack", "all_reduce_unpack", "embedding_gather", "embedding_scatter",
	"dropout_fwd", "cross_entropy", "transpose_021", "cast_fp32_bf16",
}

type stream struct {
	handle   uint64
	event    uint64 // Event handle this stream records for hand-offs.
	recorded bool   // event has been recorded at least once.
	tid      uint32
	blocking bool
	pool     uint64                   // Memory pool handle its allocations come from (0: device default).
	owned    []int32                  // Indices into gen.blocks of the allocations it owns.
	free     [len(classSize)][]uint64 // Freed bases by size class, reused last-in first-out.
	next     uint64                   // Bump pointer into the stream's address region.
}

type block struct {
	base, size uint64
	class      uint8
	owner      int32 // Index into gen.streams.
	at         int32 // Index in the owner's owned list.
}

type sites struct {
	launch, malloc, free, memcpy, memset, record, wait, sync, legacy, setup []model.StackID
}

type gen struct {
	cfg     Config
	rng     *rand.Rand
	w       *model.BinaryWriter
	t       *model.Tables
	ev      model.Event
	written int
	time    int64
	stats   Stats

	streams  []stream
	blocks   []block
	spare    []int32 // Free slots in blocks.
	live     int
	weights  []uint64
	blocking []int32 // Indices of blocking streams.

	api     map[model.Op]model.StringID
	kernels []model.StringID
	sites   sites
}

// Write generates the trace cfg describes and writes it to w in the binary
// format.
func Write(w io.Writer, cfg Config) (Stats, error) {
	if cfg.Events < 0 || cfg.Streams < 1 || cfg.LiveAllocs < 1 {
		return Stats{}, errors.New("synth: need Events >= 0, Streams >= 1 and LiveAllocs >= 1")
	}
	g := &gen{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed_5eed_5eed_5eed)),
		w:   model.NewBinaryWriter(w),
		t:   model.NewTables(),
	}
	g.defineTables()
	g.setup()
	for g.written < cfg.Events {
		if cfg.Events-g.written <= g.live+2 {
			g.teardown()
			break
		}
		g.step()
	}
	if err := g.w.Close(); err != nil {
		return g.stats, err
	}
	return g.stats, nil
}

func (g *gen) defineTables() {
	t := g.t
	t.Process = model.Process{PID: 4242, PPID: 1, Exe: t.Intern("/opt/train/bin/train"), Start: 1_700_000_000_000_000_000, Version: t.Intern("synth")}
	t.Modules = append(t.Modules, model.Module{ID: 1, Base: 0x5600_0000_0000 - 0x1000_0000, Size: 0x80_0000, Path: t.Intern("/opt/train/bin/train")})
	g.api = map[model.Op]model.StringID{}
	for op, name := range map[model.Op]string{
		model.OpStreamCreate: "cudaStreamCreateWithFlags", model.OpEventCreate: "cudaEventCreateWithFlags",
		model.OpPoolCreate: "cudaMemPoolCreate", model.OpMalloc: "cudaMalloc",
		model.OpMallocAsync: "cudaMallocAsync", model.OpFreeAsync: "cudaFreeAsync",
		model.OpLaunch: "cudaLaunchKernel", model.OpMemcpyAsync: "cudaMemcpyAsync",
		model.OpMemsetAsync: "cudaMemsetAsync", model.OpEventRecord: "cudaEventRecord",
		model.OpStreamWait: "cudaStreamWaitEvent", model.OpStreamSync: "cudaStreamSynchronize",
		model.OpEventSync: "cudaEventSynchronize", model.OpStreamQuery: "cudaStreamQuery",
		model.OpDeviceSync: "cudaDeviceSynchronize", model.OpMemset: "cudaMemset",
		model.OpMemcpy: "cudaMemcpy",
	} {
		g.api[op] = t.Intern(name)
	}
	for _, k := range kernelNames {
		g.kernels = append(g.kernels, t.Intern(k))
	}
	file := t.Intern("train.cu")
	callers := []model.Frame{
		{PC: 0x5600_0000_0000 - 0x1000_0000 + 0x4000, Module: 1, Func: t.Intern("train_step"), File: file, Line: 211},
		{PC: 0x5600_0000_0000 - 0x1000_0000 + 0x2000, Module: 1, Func: t.Intern("main"), File: file, Line: 480},
	}
	line := uint32(20)
	newSites := func(fn string, n int) []model.StackID {
		var ids []model.StackID
		for range n {
			line += 7
			inner := model.Frame{PC: 0x5600_0000_0000 - 0x1000_0000 + 0x8000 + uint64(line)*16, Module: 1, Func: t.Intern(fn), File: file, Line: line}
			ids = append(ids, model.StackID(len(t.Stacks)))
			t.Stacks = append(t.Stacks, append([]model.Frame{inner}, callers...))
		}
		return ids
	}
	g.sites = sites{
		launch: newSites("launch_layer", launchSites),
		malloc: newSites("alloc_activation", otherSitesEach),
		free:   newSites("release_activation", otherSitesEach),
		memcpy: newSites("stage_batch", otherSitesEach),
		memset: newSites("zero_grad", otherSitesEach),
		record: newSites("signal_ready", otherSitesEach),
		wait:   newSites("await_ready", otherSitesEach),
		sync:   newSites("checkpoint", otherSitesEach),
		legacy: newSites("debug_dump", otherSitesEach),
		setup:  newSites("init_device", 1),
	}
}

func (g *gen) pick(ids []model.StackID) model.StackID { return ids[g.rng.IntN(len(ids))] }

// begin starts a new event with the fields every event has; the caller fills
// in the op's own fields and calls flush.
func (g *gen) begin(op model.Op, s *stream, site model.StackID) *model.Event {
	g.time += 200 + int64(g.rng.IntN(1800))
	g.ev = model.Event{
		Seq: uint64(g.written) + 1, Op: op, TID: 1, Time: g.time,
		API: g.api[op], Stack: site, Ptrs: g.ev.Ptrs[:0],
	}
	if s != nil {
		g.ev.Stream, g.ev.TID = s.handle, s.tid
	}
	return &g.ev
}

func (g *gen) flush() {
	if g.written >= g.cfg.Events {
		return
	}
	if err := g.w.WriteEvent(&g.ev, g.t); err != nil {
		return // Sticky in the writer; Close reports it.
	}
	g.written++
	g.stats.Events++
}

func (g *gen) full() bool { return g.written >= g.cfg.Events }

// setup creates the streams, their events, a pool and the weight buffers.
func (g *gen) setup() {
	site := g.sites.setup[0]
	ev := g.begin(model.OpPoolCreate, nil, site)
	ev.Pool = poolHandle
	g.flush()
	g.t.Names[model.ObjectKey{Kind: model.ObjectPool, Handle: poolHandle}] = g.t.Intern("activations")
	for i := range g.cfg.Streams {
		s := stream{
			handle:   streamHandle0 + uint64(i)*0x100,
			event:    eventHandle0 + uint64(i)*0x40,
			tid:      1 + uint32(i%2),
			blocking: i%3 == 0,
			next:     deviceBase + uint64(i)*streamRegion,
		}
		if i%4 == 1 {
			s.pool = poolHandle
		}
		role := [...]string{"compute", "copy", "comm"}[i%3]
		g.t.Names[model.ObjectKey{Kind: model.ObjectStream, Handle: s.handle}] = g.t.Intern(fmt.Sprintf("%s%d", role, i))
		g.t.Names[model.ObjectKey{Kind: model.ObjectEvent, Handle: s.event}] = g.t.Intern(fmt.Sprintf("ready%d", i))
		if s.blocking {
			g.blocking = append(g.blocking, int32(i))
		}
		g.streams = append(g.streams, s)
	}
	for i := range g.streams {
		s := &g.streams[i]
		if g.full() {
			return
		}
		ev := g.begin(model.OpStreamCreate, s, site)
		if !s.blocking {
			ev.Flags = model.FlagNonBlocking
		}
		ev.Prio = -int32(i % 2)
		g.flush()
		g.stats.StreamCreates++
		ev = g.begin(model.OpEventCreate, nil, site)
		ev.TID = s.tid
		ev.Event = s.event
		g.flush()
	}
	for i := range weightBuffers {
		if g.full() {
			return
		}
		ev := g.begin(model.OpMalloc, nil, site)
		ev.Ptr = weightBase + uint64(i)*(64<<20)
		ev.Size = 48 << 20
		g.flush()
		g.weights = append(g.weights, ev.Ptr)
	}
}

// step emits one action of the steady state (one or two events).
func (g *gen) step() {
	if g.rng.IntN(raceOneIn) == 0 && g.race() {
		return
	}
	filling := g.live < g.cfg.LiveAllocs
	r := g.rng.IntN(1000)
	switch {
	case filling && r < 500:
		g.alloc(g.randomStream())
	case r < 180:
		if filling {
			g.alloc(g.randomStream())
		} else {
			g.free()
		}
	case r < 650:
		g.launch()
	case r < 740:
		g.memcpy()
	case r < 790:
		g.memset()
	case r < 850:
		if g.cfg.Events-g.written >= g.live+5 {
			g.handoff()
		} else {
			g.launch()
		}
	case r < 890:
		g.record(&g.streams[g.randomStream()])
	case r < 910:
		g.legacy()
	default:
		g.hostSync(r)
	}
}

func (g *gen) randomStream() int { return g.rng.IntN(len(g.streams)) }

// streamWithBlocks returns a random stream that owns an allocation, or -1.
func (g *gen) streamWithBlocks() int {
	i := g.randomStream()
	for range g.streams {
		if len(g.streams[i].owned) > 0 {
			return i
		}
		i = (i + 1) % len(g.streams)
	}
	return -1
}

// streamToUse returns a random stream that owns an allocation for an
// operation to use; when none does, it makes an allocation instead and
// returns nil.
func (g *gen) streamToUse() *stream {
	si := g.streamWithBlocks()
	if si < 0 {
		g.alloc(g.randomStream())
		return nil
	}
	return &g.streams[si]
}

func (g *gen) randomClass() int {
	r := g.rng.IntN(100)
	for c, w := range classWeight {
		if r < w {
			return c
		}
		r -= w
	}
	return 0
}

func (g *gen) alloc(si int) {
	s := &g.streams[si]
	c := g.randomClass()
	var base uint64
	if n := len(s.free[c]); n > 0 {
		base = s.free[c][n-1]
		s.free[c] = s.free[c][:n-1]
	} else if d := g.poolDonor(c); d >= 0 && g.cfg.Events-g.written >= g.live+6 {
		// The pool hands out memory another stream freed once this stream
		// waits for an event recorded after the free (the default pool's
		// cudaMemPoolReuseFollowEventDependencies); so the pool's footprint
		// stays within what is live at its peak.
		from := &g.streams[d]
		g.record(from)
		g.wait(s, from)
		n := len(from.free[c])
		base = from.free[c][n-1]
		from.free[c] = from.free[c][:n-1]
	} else {
		base = s.next
		s.next += classSize[c]
	}
	size := classSize[c] - granule*uint64(g.rng.IntN(int(classSize[c]/granule/2)))
	ev := g.begin(model.OpMallocAsync, s, g.pick(g.sites.malloc))
	ev.Ptr, ev.Size, ev.Pool = base, size, s.pool
	g.flush()
	g.stats.Allocs++

	b := block{base: base, size: size, class: uint8(c)}
	var id int32
	if n := len(g.spare); n > 0 {
		id = g.spare[n-1]
		g.spare = g.spare[:n-1]
		g.blocks[id] = b
	} else {
		id = int32(len(g.blocks))
		g.blocks = append(g.blocks, b)
	}
	g.own(id, si)
	g.live++
	g.stats.MaxLive = max(g.stats.MaxLive, g.live)
}

// poolDonor returns a stream holding freed memory of size class c, or -1.
func (g *gen) poolDonor(c int) int {
	i := g.randomStream()
	for range g.streams {
		if len(g.streams[i].free[c]) > 0 {
			return i
		}
		i = (i + 1) % len(g.streams)
	}
	return -1
}

// wait makes stream b wait for the last record of a's event.
func (g *gen) wait(b, a *stream) {
	ev := g.begin(model.OpStreamWait, b, g.pick(g.sites.wait))
	ev.Event = a.event
	g.flush()
	g.stats.Waits++
}

func (g *gen) own(id int32, si int) {
	s := &g.streams[si]
	b := &g.blocks[id]
	b.owner, b.at = int32(si), int32(len(s.owned))
	s.owned = append(s.owned, id)
}

func (g *gen) disown(id int32) {
	b := &g.blocks[id]
	s := &g.streams[b.owner]
	last := s.owned[len(s.owned)-1]
	s.owned[b.at] = last
	g.blocks[last].at = b.at
	s.owned = s.owned[:len(s.owned)-1]
}

// free frees a random allocation on its owning stream.
func (g *gen) free() {
	si := g.streamWithBlocks()
	if si < 0 {
		return
	}
	s := &g.streams[si]
	g.freeBlock(s.owned[g.rng.IntN(len(s.owned))])
}

func (g *gen) freeBlock(id int32) {
	b := g.blocks[id]
	s := &g.streams[b.owner]
	ev := g.begin(model.OpFreeAsync, s, g.pick(g.sites.free))
	ev.Ptr = b.base
	g.flush()
	g.stats.Frees++
	g.disown(id)
	s.free[b.class] = append(s.free[b.class], b.base)
	g.spare = append(g.spare, id)
	g.live--
}

// blockOf returns an allocation s owns for an operation to use: usually one
// of the recentWindow it allocated or was handed most recently (the end of
// its owned list), as a kernel consumes what the previous kernels produced.
func (g *gen) blockOf(s *stream) *block {
	n := len(s.owned)
	i := g.rng.IntN(n)
	if !g.cfg.Uniform && n > recentWindow && g.rng.IntN(farOneIn) != 0 {
		i = n - 1 - g.rng.IntN(recentWindow)
	}
	return &g.blocks[s.owned[i]]
}

// pointer returns an address in an allocation of s (see blockOf): usually
// its base, sometimes an interior address.
func (g *gen) pointer(s *stream) uint64 {
	b := g.blockOf(s)
	return b.base + g.offset(b)
}

// offset is where in b a pointer to it points: usually the start, now and
// then (one in interiorOneIn) a granule inside.
func (g *gen) offset(b *block) uint64 {
	if g.rng.IntN(interiorOneIn) == 0 && b.size > granule {
		g.stats.InteriorPtrs++
		return granule * uint64(1+g.rng.IntN(int(b.size/granule)-1))
	}
	return 0
}

func (g *gen) launch() {
	s := g.streamToUse()
	if s == nil {
		return
	}
	ev := g.begin(model.OpLaunch, s, g.pick(g.sites.launch))
	ev.Kernel = g.kernels[g.rng.IntN(len(g.kernels))]
	n := 1 + g.rng.IntN(4)
	for i := range n {
		if i > 0 && g.rng.IntN(4) == 0 {
			ev.Ptrs = append(ev.Ptrs, g.weights[g.rng.IntN(len(g.weights))])
		} else {
			ev.Ptrs = append(ev.Ptrs, g.pointer(s))
		}
	}
	g.flush()
	g.stats.Launches++
}

func (g *gen) memcpy() {
	s := g.streamToUse()
	if s == nil {
		return
	}
	b := g.blockOf(s)
	ev := g.begin(model.OpMemcpyAsync, s, g.pick(g.sites.memcpy))
	host := hostBase + uint64(g.rng.IntN(1<<20))*granule
	ev.Size = b.size
	switch g.rng.IntN(3) {
	case 0:
		ev.Kind, ev.Ptr, ev.Src, ev.Flags = model.CopyH2D, b.base, host, model.FlagPinned
	case 1:
		ev.Kind, ev.Ptr, ev.Src, ev.Flags = model.CopyD2H, host, b.base, model.FlagPinned
	default:
		// From another of the stream's allocations, or a part of one, no
		// more than both hold: CUDA rejects a copy that overruns either.
		src := g.blockOf(s)
		off := g.offset(src)
		ev.Kind, ev.Ptr, ev.Src = model.CopyD2D, b.base, src.base+off
		ev.Size = min(b.size, src.size-off)
	}
	g.flush()
	g.stats.Copies++
}

func (g *gen) memset() {
	s := g.streamToUse()
	if s == nil {
		return
	}
	b := g.blockOf(s)
	ev := g.begin(model.OpMemsetAsync, s, g.pick(g.sites.memset))
	ev.Ptr, ev.Size = b.base, b.size
	g.flush()
	g.stats.Sets++
}

func (g *gen) record(s *stream) {
	ev := g.begin(model.OpEventRecord, s, g.pick(g.sites.record))
	ev.Event = s.event
	g.flush()
	s.recorded = true
	g.stats.Records++
}

// handoff records an event on one stream, makes another wait for it, and
// moves a few of the first stream's allocations to the second.
func (g *gen) handoff() {
	from := g.streamWithBlocks()
	if from < 0 || len(g.streams) < 2 {
		g.launch()
		return
	}
	to := (from + 1 + g.rng.IntN(len(g.streams)-1)) % len(g.streams)
	a, b := &g.streams[from], &g.streams[to]
	g.record(a)
	g.wait(b, a)
	for n := 1 + g.rng.IntN(3); n > 0 && len(a.owned) > 0; n-- {
		id := a.owned[g.rng.IntN(len(a.owned))]
		g.disown(id)
		g.own(id, to)
	}
}

// legacy issues a synchronous set or copy on the legacy default stream, of
// an allocation owned by a blocking stream (which the legacy stream is
// ordered with).
func (g *gen) legacy() {
	var s *stream
	if len(g.blocking) > 0 {
		s = &g.streams[g.blocking[g.rng.IntN(len(g.blocking))]]
	}
	if s == nil || len(s.owned) == 0 {
		g.launch()
		return
	}
	b := g.blockOf(s)
	if g.rng.IntN(2) == 0 {
		ev := g.begin(model.OpMemset, nil, g.pick(g.sites.legacy))
		ev.TID = s.tid
		ev.Ptr, ev.Size = b.base, b.size
	} else {
		ev := g.begin(model.OpMemcpy, nil, g.pick(g.sites.legacy))
		ev.TID = s.tid
		ev.Kind, ev.Ptr, ev.Src, ev.Size, ev.Flags = model.CopyD2H, hostBase, b.base, min(b.size, 4096), model.FlagPageable
	}
	g.flush()
	g.stats.LegacyOps++
}

// hostSync makes the host wait for, or ask about, a stream or an event.
func (g *gen) hostSync(r int) {
	s := &g.streams[g.randomStream()]
	site := g.pick(g.sites.sync)
	switch {
	case r < 940:
		g.begin(model.OpStreamSync, s, site)
	case r < 970 && s.recorded:
		ev := g.begin(model.OpEventSync, nil, site)
		ev.TID, ev.Event = s.tid, s.event
	case r < 999:
		ev := g.begin(model.OpStreamQuery, s, site)
		if g.rng.IntN(5) != 0 {
			ev.Result = model.ResultNotReady
		}
	default:
		g.begin(model.OpDeviceSync, nil, site)
	}
	g.flush()
	g.stats.HostSyncs++
}

// race uses an allocation on a stream it was never handed to, and then frees
// it on its owner at once, so the free cannot be ordered after that use.
func (g *gen) race() bool {
	from := g.streamWithBlocks()
	if from < 0 || len(g.streams) < 2 {
		return false
	}
	a := &g.streams[from]
	id := a.owned[g.rng.IntN(len(a.owned))]
	ev := g.begin(model.OpLaunch, &g.streams[(from+1)%len(g.streams)], g.pick(g.sites.launch))
	ev.Kernel = g.kernels[0]
	ev.Ptrs = append(ev.Ptrs, g.blocks[id].base)
	g.flush()
	g.stats.Launches++
	g.stats.Races++
	g.freeBlock(id)
	return true
}

// teardown frees every live allocation, then synchronizes the device, until
// the event budget is spent.
func (g *gen) teardown() {
	for i := range g.streams {
		for len(g.streams[i].owned) > 0 && !g.full() {
			s := &g.streams[i]
			g.freeBlock(s.owned[len(s.owned)-1])
		}
	}
	for !g.full() {
		g.begin(model.OpDeviceSync, nil, g.sites.sync[0])
		g.flush()
		g.stats.HostSyncs++
	}
}
