package checker

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// A rule plugs into the checker from its own file (rule_<id>.go): it
// registers its definition (register, from the file's init), and a rule
// with state of its own gives a constructor (ruleDef.state) whose value
// implements the hooks below that the rule needs. The checker makes one
// state per trace and calls the hooks of every registered rule that has
// them; it keeps only the memory state all rules share (live allocations,
// the grave, graphs, captures) and says what a use or free met there (the
// use and free hooks); each rule decides what of that it reports.

// allocHook is called after an allocation (model.Mem's allocations) is
// recorded: a is its record, nil for one of no bytes at address 0.
type allocHook interface {
	onAlloc(ev *model.Event, st *hb.Step, a *allocation)
}

// freeHook is called before a free (model.MemFree) is applied, while the
// allocation at its address is still live.
type freeHook interface {
	onFree(ev *model.Event)
}

// dropHook is called when a live allocation leaves the live set: freed, or
// replaced by an allocation at its addresses with no recorded free.
type dropHook interface {
	onDrop(a *allocation, freed bool)
}

// syncHook is called after an op whose spec says it waits for other work
// (a stream's wait for an event, the host's synchronizations and queries,
// a host function's run).
type syncHook interface {
	onSync(ev *model.Event, st *hb.Step)
}

// opHook is called after each op that ops lists, once the checker has
// applied it (an op of model.MemUse: once its uses are checked): a rule
// follows the uses, pools or synchronizations it cares about by their ops,
// and events of other ops cost it nothing.
type opHook interface {
	ops() []model.Op
	onOp(ev *model.Event, st *hb.Step)
}

// The use and free hooks are chains: the rules that have one are asked in
// turn (ruleDef.precedence, then rank) until one settles the event (returns
// true: it reported it, or found it no bug), and the rest are not asked.

// freedUseHook is asked about a use of memory the checker holds freed (in
// the grave), at addr in a. The use is not recorded.
type freedUseHook interface {
	onFreedUse(ev *model.Event, st *hb.Step, a *allocation, addr uint64) bool
}

// unorderedUseHook is asked about the first use of the live allocation a
// on an agent (a stream, or the host) that is not ordered after the
// allocation. The use is recorded after.
type unorderedUseHook interface {
	onUnorderedUse(ev *model.Event, st *hb.Step, a *allocation, addr uint64) bool
}

// badFreeHook is asked about a free that CUDA accepted of an address where
// no live allocation starts: a is nil (none starts there) or freed.
type badFreeHook interface {
	onBadFree(ev *model.Event, a *allocation, free access) bool
}

// liveFreeHook is asked about the free of the live allocation a, before it
// is released. syncs says the free waited for its device's work: its uses
// there were dropped.
type liveFreeHook interface {
	onLiveFree(ev *model.Event, st *hb.Step, a *allocation, free access, syncs bool) bool
}

// refusedFreeHook is asked about a free of the live allocation a that CUDA
// refused: it changed nothing, and is a bug only for a reason other than
// its address.
type refusedFreeHook interface {
	onRefusedFree(ev *model.Event, a *allocation, free access) bool
}

// rejectedHook is called with a call CUDA refused that was not captured:
// it changed nothing, but what it names is still the program's.
type rejectedHook interface {
	onRejected(ev *model.Event)
}

// endHook is called when the trace ends (complete: not cut by damage), in
// the order of the rules' endRank: a rule that looks at others' findings
// ranks after them.
type endHook interface {
	atEnd(complete bool)
}

// registered holds the rules registered so far; ruleDefs orders them.
var registered []*ruleDef

// register adds a rule: its file defines the rule as
// `var xRule = &ruleDef{...}` and registers it with `var _ = register(xRule)`,
// which runs as the package's variables are initialized, before any init
// function (rules.go's orders them).
func register(d *ruleDef) *ruleDef {
	registered = append(registered, d)
	return d
}

// sortedRules returns the registered rules by rank: the order of Rules.
func sortedRules() []*ruleDef {
	defs := slices.Clone(registered)
	slices.SortStableFunc(defs, func(a, b *ruleDef) int { return cmp.Compare(a.rank, b.rank) })
	return defs
}

// plugins are one trace's rule states, by hook.
type plugins struct {
	states []any // By rule, in ruleDefs' order; nil for a rule with none.
	alloc  []allocHook
	free   []freeHook
	drop   []dropHook
	sync   []syncHook
	byOp   [256][]opHook
	end    []endHook

	freedUse     []freedUseHook
	unorderedUse []unorderedUseHook
	badFree      []badFreeHook
	liveFree     []liveFreeHook
	refusedFree  []refusedFreeHook
	rejected     []rejectedHook
}

// waits marks the ops whose Sync column says they wait for other work.
var waits = func() (w [256]bool) {
	for _, s := range model.OpSpecs() {
		switch s.Sync {
		case model.SyncWaitEvent, model.SyncHostStream, model.SyncHostEvent, model.SyncHostDevice, model.SyncHostFunc:
			w[s.Op] = true
		}
	}
	return w
}()

// plugIn makes each rule's state for c and files its hooks.
func (c *Checker) plugIn() {
	p := &c.plugins
	type ranked struct {
		h    endHook
		rank int
	}
	var ends []ranked
	for _, d := range ruleDefs {
		var s any
		if d.state != nil {
			s = d.state(c)
		}
		p.states = append(p.states, s)
		if s == nil {
			continue
		}
		file(s, &p.alloc)
		file(s, &p.free)
		file(s, &p.drop)
		file(s, &p.sync)
		if h, ok := s.(opHook); ok {
			for _, op := range h.ops() {
				p.byOp[op] = append(p.byOp[op], h)
			}
		}
		if h, ok := s.(endHook); ok {
			ends = append(ends, ranked{h, d.endRank})
		}
	}
	for _, d := range chainOrder() {
		s := p.states[slices.Index(ruleDefs, d)]
		file(s, &p.freedUse)
		file(s, &p.unorderedUse)
		file(s, &p.badFree)
		file(s, &p.liveFree)
		file(s, &p.refusedFree)
		file(s, &p.rejected)
	}
	slices.SortStableFunc(ends, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	for _, e := range ends {
		p.end = append(p.end, e.h)
	}
}

// chainOrder returns the rules in the order chains ask them: by
// precedence, then rank.
func chainOrder() []*ruleDef {
	defs := slices.Clone(ruleDefs)
	slices.SortStableFunc(defs, func(a, b *ruleDef) int { return cmp.Compare(a.precedence, b.precedence) })
	return defs
}

// file adds s to hooks if it is a hook of their kind.
func file[H any](s any, hooks *[]H) {
	if h, ok := s.(H); ok {
		*hooks = append(*hooks, h)
	}
}

// stateOf returns rule d's state in c (nil if it has none).
func (c *Checker) stateOf(d *ruleDef) any {
	for i, r := range ruleDefs {
		if r == d {
			return c.plugins.states[i]
		}
	}
	return nil
}

// dropped tells the rules that the live allocation a left the live set.
func (c *Checker) dropped(a *allocation, freed bool) {
	for _, h := range c.plugins.drop {
		h.onDrop(a, freed)
	}
}
