package checker

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// graveLimit bounds how many freed allocations are remembered for
// use-after-free, double-free and reuse checks; the oldest are forgotten
// first, so memory does not grow with the length of a trace.
const graveLimit = 1 << 16

// access is one operation on an allocation, with what is needed to report
// it later.
type access struct {
	epoch  hb.Epoch
	agent  hb.AgentID
	seq    uint64
	op     model.Op
	api    model.StringID
	kernel model.StringID
	stack  model.StackID
	tid    uint32
	ptr    uint64
}

type allocation struct {
	base, size uint64
	async      bool // Stream-ordered (cudaMallocAsync / from a pool).
	alloc      access
	free       access
	// uses holds the most recent use on each agent: a later use on the same
	// stream is ordered after the earlier ones, so it stands for them.
	uses []access
	// inherited holds uses of freed allocations at the same addresses that
	// were still possibly running when this allocation was made.
	inherited []access
	inGrave   bool
}

// Checker applies the rules to a trace, one event at a time.
type Checker struct {
	trace    string
	tables   *model.Tables
	engine   *hb.Engine
	live     *addrIndex
	grave    *addrIndex
	graveQ   []*allocation // Freed allocations, oldest first, for eviction.
	findings map[findingKey]*Finding
	order    []*Finding
	stats    Stats
	threads  map[uint32]bool
}

// New returns a checker for the trace named trace, whose definitions are in
// tables (a Reader's Tables, which may still grow while events are added).
func New(trace string, tables *model.Tables) *Checker {
	return &Checker{
		trace:    trace,
		tables:   tables,
		engine:   hb.New(),
		live:     newAddrIndex(),
		grave:    newAddrIndex(),
		findings: map[findingKey]*Finding{},
		threads:  map[uint32]bool{},
	}
}

// Check reads r to the end and returns the analysis. A damaged trace is not
// an error: Result.Damage says where reading stopped. The error is non-nil
// only when r fails for another reason (an I/O error).
func Check(trace string, r model.Reader) (*Result, error) {
	c := New(trace, r.Tables())
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return c.Finish(nil), nil
		}
		if err != nil {
			if errors.Is(err, model.ErrTruncated) || errors.Is(err, model.ErrCorrupt) {
				return c.Finish(err), nil
			}
			return c.Finish(err), err
		}
		c.Add(&ev)
	}
}

// Engine exposes the happens-before engine, for explanations.
func (c *Checker) Engine() *hb.Engine { return c.engine }

// Add analyzes one event.
func (c *Checker) Add(ev *model.Event) {
	c.stats.Events++
	c.threads[ev.TID] = true
	st := c.engine.Apply(ev)
	if st.Skipped {
		c.stats.Skipped++
		return
	}
	if st.UnrecordedWait {
		c.report(RuleWaitUnrecordedEvent, nil, c.accessOf(ev, st, 0), nil)
	}
	switch ev.Op {
	case model.OpMallocAsync, model.OpMalloc:
		c.allocate(ev, st)
	case model.OpFreeAsync, model.OpFree:
		c.release(ev, st)
	case model.OpLaunch:
		for i, p := range ev.Ptrs {
			if !seenBefore(ev.Ptrs[:i], p) {
				c.use(ev, st, p)
			}
		}
	case model.OpMemcpy, model.OpMemcpyAsync:
		if ev.Kind.DstDevice() {
			c.use(ev, st, ev.Ptr)
		}
		if ev.Kind.SrcDevice() && ev.Src != ev.Ptr {
			c.use(ev, st, ev.Src)
		}
	case model.OpMemset, model.OpMemsetAsync:
		c.use(ev, st, ev.Ptr)
	}
}

func seenBefore(ps []uint64, p uint64) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

func (c *Checker) accessOf(ev *model.Event, st hb.Step, ptr uint64) access {
	return access{
		epoch: st.Epoch, agent: st.Agent, seq: ev.Seq, op: ev.Op, api: ev.API,
		kernel: ev.Kernel, stack: ev.Stack, tid: ev.TID, ptr: ptr,
	}
}

func (c *Checker) allocate(ev *model.Event, st hb.Step) {
	c.stats.Allocations++
	a := &allocation{base: ev.Ptr, size: ev.Size, async: ev.Op == model.OpMallocAsync, alloc: c.accessOf(ev, st, ev.Ptr)}
	if a.size == 0 {
		a.size = 1
	}
	// A range cannot be live twice; a missed free (for instance by a call
	// the shim does not see) must not leave a stale entry that hides this one.
	for _, old := range c.live.overlapping(a.base, a.size) {
		c.live.remove(old)
	}
	// Uses of freed memory at these addresses stay relevant even when they
	// are ordered before this allocation: a use of the new memory on another
	// stream may be ordered after neither.
	for _, old := range c.grave.overlapping(a.base, a.size) {
		a.inherited = append(a.inherited, old.uses...)
		c.grave.remove(old)
		old.inGrave = false
	}
	c.live.insert(a)
}

func (c *Checker) release(ev *model.Event, st hb.Step) {
	if ev.Ptr == 0 {
		return // cudaFree(NULL) is a valid no-op.
	}
	c.stats.Frees++
	free := c.accessOf(ev, st, ev.Ptr)
	a := c.live.byBase[ev.Ptr]
	if a == nil {
		if g := c.grave.byBase[ev.Ptr]; g != nil {
			c.report(RuleDoubleFree, g, free, &g.free)
			return
		}
		if in := c.live.find(ev.Ptr); in != nil {
			c.report(RuleInvalidFree, in, free, nil)
			return
		}
		c.report(RuleInvalidFree, nil, free, nil)
		return
	}
	// An unordered use is reported in preference to an unordered
	// allocation: it is the later of the two, so ordering the free after it
	// fixes both.
	inFlight := false
	for i := range a.uses {
		if !st.Clock.Covers(a.uses[i].epoch) {
			c.report(RuleFreeWhileInFlight, a, free, &a.uses[i])
			inFlight = true
			break
		}
	}
	if !inFlight && !st.Clock.Covers(a.alloc.epoch) {
		c.report(RuleFreeBeforeAlloc, a, free, &a.alloc)
	}
	a.free = free
	c.live.remove(a)
	a.inGrave = true
	c.grave.insert(a)
	c.graveQ = append(c.graveQ, a)
	c.evictGrave()
}

// evictGrave forgets the oldest freed allocations beyond graveLimit.
func (c *Checker) evictGrave() {
	for c.grave.len() > graveLimit && len(c.graveQ) > 0 {
		old := c.graveQ[0]
		c.graveQ[0] = nil
		c.graveQ = c.graveQ[1:]
		if old.inGrave {
			c.grave.remove(old)
			old.inGrave = false
		}
	}
	// Entries already removed by reuse stay queued until they reach the
	// front; compact when the queue is mostly such entries.
	if len(c.graveQ) > 2*graveLimit {
		q := c.graveQ[:0]
		for _, a := range c.graveQ {
			if a.inGrave {
				q = append(q, a)
			}
		}
		c.graveQ = append([]*allocation(nil), q...)
	}
}

func (c *Checker) use(ev *model.Event, st hb.Step, addr uint64) {
	if addr == 0 {
		return
	}
	a := c.live.find(addr)
	if a == nil {
		if g := c.grave.find(addr); g != nil {
			c.stats.Uses++
			c.report(RuleUseAfterFree, g, c.accessOf(ev, st, addr), &g.free)
		}
		return
	}
	c.stats.Uses++
	if !st.Clock.Covers(a.alloc.epoch) {
		u := c.accessOf(ev, st, addr)
		reported := false
		for i := range a.inherited {
			if !st.Clock.Covers(a.inherited[i].epoch) {
				c.report(RuleReuseWhileInFlight, a, u, &a.inherited[i])
				reported = true
				break
			}
		}
		if !reported {
			c.report(RuleUseBeforeAlloc, a, u, &a.alloc)
		}
	}
	for i := range a.uses {
		if a.uses[i].agent == st.Agent {
			a.uses[i] = c.accessOf(ev, st, addr)
			return
		}
	}
	a.uses = append(a.uses, c.accessOf(ev, st, addr))
}

// Finish ends the analysis: it reports leaks (only for a complete trace,
// since a damaged one stops before the frees) and returns the result.
func (c *Checker) Finish(damage error) *Result {
	if damage == nil {
		var leaks []*allocation
		for _, a := range c.live.byBase {
			if a.async {
				leaks = append(leaks, a)
			}
		}
		sort.Slice(leaks, func(i, j int) bool { return leaks[i].alloc.seq < leaks[j].alloc.seq })
		for _, a := range leaks {
			c.report(RuleLeak, a, a.alloc, nil)
		}
	}
	streams := 0
	for _, a := range c.engine.Agents() {
		if a.Kind != hb.KindHost {
			streams++
		}
	}
	c.stats.Streams = streams
	c.stats.Threads = len(c.threads)
	return &Result{Trace: c.trace, Findings: c.order, Stats: c.stats, Damage: damage, Tables: c.tables}
}

// siteKey identifies a call site for folding repeated findings. Without a
// recorded stack the stream stands in for the site, so hand-written traces
// without sites still keep distinct bugs apart.
type siteKey struct {
	stack  model.StackID
	api    model.StringID
	kernel model.StringID
	agent  hb.AgentID
}

type findingKey struct {
	rule          string
	alloc, op, on siteKey
}

func (c *Checker) siteOf(a *access) siteKey {
	if a == nil {
		return siteKey{agent: -1}
	}
	k := siteKey{stack: a.stack, api: a.api, kernel: a.kernel}
	if a.stack == 0 {
		k.agent = a.agent
	}
	return k
}

// report records a finding, folding it into an earlier one from the same
// call sites.
func (c *Checker) report(rule string, a *allocation, op access, other *access) {
	key := findingKey{rule: rule, op: c.siteOf(&op), on: c.siteOf(other)}
	if a != nil {
		key.alloc = c.siteOf(&a.alloc)
	} else {
		key.alloc = c.siteOf(nil)
	}
	if f := c.findings[key]; f != nil {
		f.Count++
		return
	}
	f := &Finding{Rule: rule, Severity: severityOf(rule), Count: 1, Trace: c.trace}
	if a != nil {
		f.Alloc = &Alloc{Ptr: a.base, Size: a.size, Op: c.resolve("allocation", &a.alloc)}
	}
	f.Ops = append(f.Ops, c.resolve(roleOf(rule), &op))
	if other != nil {
		f.Ops = append(f.Ops, c.resolve(otherRoleOf(rule), other))
	}
	c.explain(f, a)
	c.findings[key] = f
	c.order = append(c.order, f)
}

func roleOf(rule string) string {
	switch rule {
	case RuleFreeWhileInFlight, RuleFreeBeforeAlloc, RuleDoubleFree, RuleInvalidFree:
		return "free"
	case RuleLeak:
		return "allocation"
	case RuleWaitUnrecordedEvent:
		return "wait"
	}
	return "use"
}

func otherRoleOf(rule string) string {
	switch rule {
	case RuleFreeWhileInFlight:
		return "earlier use"
	case RuleReuseWhileInFlight:
		return "use of the freed allocation"
	case RuleUseAfterFree, RuleDoubleFree:
		return "free"
	}
	return "allocation"
}

// resolve turns an access into a reportable Op with names from the tables.
func (c *Checker) resolve(role string, a *access) Op {
	o := Op{
		Role: role, Seq: a.seq, API: c.tables.String(a.api), Op: a.op.String(), TID: a.tid,
		Kernel: c.tables.String(a.kernel), Ptr: a.ptr, StackID: a.stack, Agent: a.agent,
	}
	if o.API == "" {
		o.API = a.op.String()
	}
	if a.agent != hb.HostAgent {
		ag := c.engine.Agent(a.agent)
		o.Stream = c.StreamName(ag)
		o.StreamKind = ag.Kind.String()
	}
	for _, f := range c.tables.Stack(a.stack) {
		fr := Frame{Func: c.tables.String(f.Func), File: c.tables.String(f.File), Line: int(f.Line), PC: f.PC}
		if f.Module != 0 {
			m := c.tables.Module(f.Module)
			fr.Module = c.tables.String(m.Path)
			if f.PC >= m.Base {
				fr.PC = f.PC - m.Base
			}
		}
		o.Stack = append(o.Stack, fr)
	}
	return o
}

// StreamName returns a stream's display name: the name the trace gives it,
// or a description of a default stream, or its handle.
func (c *Checker) StreamName(a *hb.Agent) string {
	switch a.Kind {
	case hb.KindHost:
		return "host"
	case hb.KindLegacy:
		return "legacy"
	case hb.KindPerThread:
		return fmt.Sprintf("per_thread(tid %d)", a.TID)
	}
	if n := c.tables.Name(model.ObjectStream, a.Handle); n != "" {
		return n
	}
	return fmt.Sprintf("0x%x", a.Handle)
}
