package checker

import (
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Folding: every occurrence of one root cause is one Finding (see Finding).

// siteKey identifies a call site for folding repeated findings. Without a
// recorded stack the stream stands in for the site, so hand-written traces
// without sites still keep distinct bugs apart.
type siteKey struct {
	stack  model.StackID
	api    model.StringID
	kernel model.StringID
	agent  hb.AgentID
}

// findingKey identifies a root cause (see Finding): the rule, the two call
// sites and the two streams. The allocation is not part of it: one missing
// wait hits every tensor the two operations touch.
type findingKey struct {
	rule             RuleID
	op, on           siteKey
	opAgent, onAgent hb.AgentID // The stream pair; -1 without another operation.
	capture          bool       // A race inside a captured graph.
	memNote          memNote    // Why a stream-memory-op finding is not followed: one call site can have several.
}

// unorderedUse is the key's rule for use-before-alloc and
// reuse-while-in-flight. Both say that a use is not ordered after another
// stream's work on its addresses (the allocation, or a use of the memory
// the pool gave them before), and the fix of both is the one wait before
// that use: the other operation's site is left out of the key, and the
// finding keeps the rule seen first.
const unorderedUse RuleID = "unordered use"

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

// allocID identifies one allocation for counting the allocations a finding
// hit: the call that made it and its base (a graph launch makes several).
type allocID struct{ seq, base uint64 }

// report records a finding, folding it into an earlier one with the same
// root cause.
func (c *Checker) report(rule *ruleDef, a *allocation, op access, other *access) *pendingFinding {
	return c.reportIn(hb.HostAgent, rule, a, op, other)
}

// reportIn is report for a race between operations captured into a graph
// by the capture begun on stream origin (the host: not captured).
func (c *Checker) reportIn(origin hb.AgentID, rule *ruleDef, a *allocation, op access, other *access) *pendingFinding {
	return c.reportNoted(origin, rule, a, op, other, memNoteNone)
}

// reportNoted is reportIn for a finding with a note (stream-memory-op's).
// It returns the finding the occurrence was folded into (valid until the
// next report).
func (c *Checker) reportNoted(origin hb.AgentID, rule *ruleDef, a *allocation, op access, other *access, note memNote) *pendingFinding {
	key := findingKey{rule: rule.id, op: c.siteOf(&op), on: c.siteOf(other), opAgent: -1, onAgent: -1,
		capture: origin != hb.HostAgent, memNote: note}
	if other != nil {
		// A finding about one operation (a leak, a bad free) is its call
		// site's, whatever stream the call named: threads that each leak
		// a workspace on their own stream at one line are one finding.
		key.opAgent, key.onAgent = op.agent, other.agent
	}
	if rule.unorderedUse {
		key.rule, key.on = unorderedUse, c.siteOf(nil)
	}
	var id allocID
	if a != nil {
		base, _ := a.wholeOf()
		id = allocID{seq: a.alloc.seq, base: base}
	}
	if i, ok := c.findings[key]; ok {
		p := &c.pending[i]
		p.f.Count++
		if rule != p.rule {
			p.also[rule.id]++
		}
		if a != nil {
			p.countAlloc(id)
		}
		return p
	}
	f := &Finding{Rule: string(rule.id), Severity: rule.severity, Count: 1, Trace: c.trace}
	p := pendingFinding{f: f, rule: rule, op: op, capture: origin, memNote: note}
	if a != nil {
		p.hasAlloc, p.alloc, p.family = true, a.alloc, a.family
		p.base, p.size = a.wholeOf() // the rest of a partly reused allocation: name the whole
		p.countAlloc(id)
	}
	if other != nil {
		p.hasOther, p.other = true, *other
	}
	if key.rule == unorderedUse {
		p.also = map[RuleID]int{}
	}
	c.findings[key] = len(c.pending)
	c.order = append(c.order, f)
	c.pending = append(c.pending, p)
	return &c.pending[len(c.pending)-1]
}

// countAlloc counts an allocation the finding hit, once.
func (p *pendingFinding) countAlloc(id allocID) {
	if p.allocs == nil {
		p.allocs = map[allocID]struct{}{}
	}
	if id == p.lastAlloc && len(p.allocs) > 0 {
		return // a loop over one allocation: no map lookup
	}
	p.lastAlloc = id
	if _, ok := p.allocs[id]; ok {
		return
	}
	if len(p.allocs) >= MaxCountedAllocations {
		p.f.AllocationsAtLeast = true
		return
	}
	p.allocs[id] = struct{}{}
}

// pendingFinding keeps what a finding needs until Finish resolves names and
// stacks. Resolution waits for the end of the trace because symbolizing adds
// strings to the tables, which a streaming reader is still filling, and
// because names may be defined after the operations that use them.
type pendingFinding struct {
	f                  *Finding
	rule               *ruleDef
	hasAlloc, hasOther bool
	base, size         uint64
	alloc, op, other   access
	capture            hb.AgentID // See reportIn.
	memNote            memNote    // Why a stream-memory-op finding is not followed.
	family             family     // The allocation's.
	// perf is what a performance lint found (rule_sync_alloc_in_loop.go).
	perf *perfDetail
	// allocs are the distinct allocations the finding hit (see
	// Finding.Allocations), lastAlloc the latest of them.
	allocs    map[allocID]struct{}
	lastAlloc allocID
	// also counts the occurrences folded in under another rule, by rule.
	also map[RuleID]int
}
