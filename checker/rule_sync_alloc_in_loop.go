package checker

import (
	"fmt"
	"time"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// RuleSyncAllocInLoop is the id of the rule this file defines.
const RuleSyncAllocInLoop RuleID = "sync-alloc-in-loop"

// syncAllocInLoopRule: sync-alloc-in-loop. Allocations, their frees and
// the GPU work between them are counted by its hooks below; the finding is
// made at the end of the trace.
var syncAllocInLoopRule = &ruleDef{
	rank:     120,
	endRank:  30,
	state:    func(c *Checker) any { return &syncAllocs{c: c} },
	id:       RuleSyncAllocInLoop,
	severity: SeverityWarning,
	doc: Documentation{
		Title: "one call site allocates with cudaMalloc (or pinned host memory) again and again, with GPU work between the calls",
		Text: "one call site allocates with `cudaMalloc`, `cudaMallocPitch` or a pinned-host allocator (`cudaMallocHost`, `cudaHostAlloc`) at least `--alloc-loop-threshold` times (16 by default), " +
			"with GPU work launched between its calls: reported once per site, with the count, the sizes and the host time spent inside those calls and their frees (a performance warning: the program is correct). " +
			"A pinned-host site whose calls and frees took under 1% of the time between its first and last pass is not reported (pinned allocation does not wait for the device: its cost is the host time measured)",
		Why: "cudaMalloc and cudaFree synchronize the device: every kernel and copy already in flight has to complete before they return, and pinned host allocation is a costly operating-system call. " +
			"Inside a loop that launches work this is a device-wide stall on every pass: the program is still correct, just quietly paying.",
		Fix: "Allocate with cudaMallocAsync and free with cudaFreeAsync on the stream the surrounding work runs on (the pool keeps the memory between passes), or allocate once outside the loop and reuse the buffer.",
		Ops: []model.Op{model.OpMalloc},
	},
	role: "allocation",
	explain: func(c *Checker, f *Finding, x *explainArgs) {
		op, p := x.op, x.perf
		mem := x.family.describe("")
		f.Message = fmt.Sprintf("%s at %s allocated %s %d times, with GPU work launched between the calls (%s)", op.API, op.Site(), mem, p.count, p.sizes())
		frees := ""
		if p.frees > 0 {
			frees = fmt.Sprintf(" and the %d frees of that memory", p.frees)
		}
		if p.dur > 0 {
			f.Message += fmt.Sprintf("; the host spent %s inside those calls%s", time.Duration(p.dur), frees)
		} else {
			f.Message += "; the trace does not record the time spent inside the calls"
		}
		f.Why = "Each of these calls is costly (cudaMalloc and cudaFree wait for the work in flight; pinned host allocation is an operating-system call that locks pages), " +
			"so every pass of the loop stalls the GPU work around it. The program is correct, just slower than it needs to be."
		if x.family == famHost {
			f.Fix = fmt.Sprintf("Allocate the pinned buffer once, outside the loop, and reuse it in every pass, instead of calling %s at %s each time.", op.API, op.Site())
			return
		}
		on := "on the stream the surrounding work runs on"
		if p.stream != hb.HostAgent {
			on = "on " + c.streamRefOf(p.stream) + " (where the work between the calls runs)"
		}
		f.Fix = fmt.Sprintf("Instead of %s at %s, allocate with cudaMallocAsync and free with cudaFreeAsync %s, or allocate once outside the loop and reuse the buffer.", op.API, op.Site(), on)
	},
}

var _ = register(syncAllocInLoopRule)

// DefaultAllocLoopThreshold is how many times one site must allocate (or a
// pool grow again) before a performance lint reports it, unless
// Options.AllocLoopThreshold says otherwise.
const DefaultAllocLoopThreshold = 16

// perfDetail is what a performance lint's finding reports besides its
// operation: how often, the sizes, the host time, the stream the work ran
// on, the pool and the other allocation sites.
type perfDetail struct {
	count, frees     int
	minSize, maxSize uint64
	dur              uint64
	stream           hb.AgentID // HostAgent: none known
	pool             string
	sites            []access // pool-release-churn: the allocation sites, at most maxPerfSites
	lastWork         uint64   // sync-alloc-in-loop: the GPU work issued up to the site's last counted call
}

// sizes says the sizes allocated: "4096 bytes each", "1024 to 8192 bytes".
func (p *perfDetail) sizes() string {
	if p.minSize == p.maxSize {
		return fmt.Sprintf("%d bytes each", p.minSize)
	}
	return fmt.Sprintf("%d to %d bytes", p.minSize, p.maxSize)
}

func (p *perfDetail) addSize(size uint64) {
	if p.count == 0 || size < p.minSize {
		p.minSize = size
	}
	p.maxSize = max(p.maxSize, size)
}

// syncAllocs is what the lint keeps: by allocation site, its calls.
type syncAllocs struct {
	c     *Checker
	sites map[siteKey]*syncSite
	order []*syncSite
	// work counts the GPU work issued so far, and lastAgent is the stream
	// of the latest.
	work      uint64
	lastAgent hb.AgentID
}

type syncSite struct {
	first  access
	family family
	// firstTime and lastTime are the host times of the first and the last
	// counted call: the span the loop's passes took.
	firstTime, lastTime int64
	perfDetail
}

// pinnedShareFloor: a pinned-host site is reported only when its calls and
// frees took at least 1/pinnedShareFloor of the time its passes spanned.
// Pinned allocation does not wait for the device, so its whole cost is the
// host time the trace measures; XLA's host allocator pins a few bytes per
// step at about 10 µs a call, well under 1% of a training step.
const pinnedShareFloor = 100

// threshold returns the count a performance lint reports from.
func (o *Options) threshold() int {
	if o.AllocLoopThreshold > 0 {
		return o.AllocLoopThreshold
	}
	return DefaultAllocLoopThreshold
}

// workOps are the ops that issue GPU work: kernels, copies and sets, and
// graph launches, as the op spec's categories and memory columns say.
var workOps = model.OpsWith(func(s model.OpSpec) bool {
	return (s.Mem == model.MemUse || s.Mem == model.MemGraph) && (s.Category == model.CatWork || s.Category == model.CatCopy)
})

func (s *syncAllocs) ops() []model.Op { return workOps }

// onOp counts GPU work issued on the stream of st.
func (s *syncAllocs) onOp(_ *model.Event, st *hb.Step) {
	s.work++
	s.lastAgent = st.Agent
}

// syncFamily reports whether the lint counts allocations of f: the ones
// cudaMalloc and cudaFree synchronize for, and pinned host memory.
func syncFamily(f family) bool { return f == famDevice || f == famPitched || f == famHost }

// onAlloc counts a synchronous allocation. A call counts as a pass when
// GPU work was issued since the site's previous call.
func (s *syncAllocs) onAlloc(ev *model.Event, st *hb.Step, _ *allocation) {
	f := familyOf(ev)
	if ev.Ptr == 0 || !syncFamily(f) {
		return
	}
	c := s.c
	a := c.accessOf(ev, st, ev.Ptr)
	key := c.siteOf(&a)
	site := s.sites[key]
	if site == nil {
		if s.sites == nil {
			s.sites = map[siteKey]*syncSite{}
		}
		site = &syncSite{first: a, family: f}
		site.stream = hb.HostAgent
		s.sites[key] = site
		s.order = append(s.order, site)
	} else if s.work == site.lastWork {
		return // no GPU work since the site's last call: not a loop around work
	}
	if site.count == 0 {
		site.firstTime = ev.Time
	}
	site.lastTime = ev.Time
	site.addSize(ev.Size)
	site.count++
	site.dur += ev.Dur
	site.lastWork = s.work
	if s.work > 0 {
		site.stream = s.lastAgent
	}
}

// onFree adds the time of a synchronous free (not one issued to a stream)
// of a live allocation to its site's.
func (s *syncAllocs) onFree(ev *model.Event) {
	if ev.Op.OnStream() || len(s.sites) == 0 {
		return
	}
	a := s.c.allocs.at(ev.Ptr)
	if a == nil || a.freed || !syncFamily(a.family) {
		return
	}
	if site := s.sites[s.c.siteOf(&a.alloc)]; site != nil {
		site.frees++
		site.dur += ev.Dur
	}
}

// atEnd reports each site that allocated in a loop around GPU work at
// least the threshold's times, unless it is a pinned-host site whose
// measured cost is a negligible share of its loop's time.
func (s *syncAllocs) atEnd(bool) {
	c := s.c
	for _, site := range s.order {
		if site.count >= c.opts.threshold() && !site.negligible() {
			c.reportPerf(syncAllocInLoopRule, site.first, site.family, &site.perfDetail)
		}
	}
}

// negligible reports whether the site pins host memory and its calls and
// frees took under 1/pinnedShareFloor of the span of its passes. Without
// recorded durations or times nothing is negligible.
func (s *syncSite) negligible() bool {
	span := s.lastTime - s.firstTime
	return s.family == famHost && s.dur > 0 && span > 0 && s.dur*pinnedShareFloor < uint64(span)
}

// reportPerf reports a performance lint's finding about the operation op.
func (c *Checker) reportPerf(rule *ruleDef, op access, f family, d *perfDetail) {
	n := len(c.pending)
	c.report(rule, nil, op, nil)
	if len(c.pending) > n { // not folded into an earlier finding at the same operation
		p := &c.pending[n]
		p.perf, p.family = d, f
	}
}
