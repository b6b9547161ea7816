package checker

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// Every op's memory column, as the op spec gives it, has its handler in
// the checker: an allocation is counted, a free is counted, and a use
// reaches the use check at each address field its row names. An op added
// to the spec with a memory effect or an address field the checker does
// not handle fails here.
func TestCheckerCoversTheSpec(t *testing.T) {
	for _, s := range model.OpSpecs() {
		ev := model.Event{Op: s.Op, Seq: 1, Stream: 0x10, Ptr: 0x1000, Src: 0x2000, Size: 16,
			Kind: model.CopyD2D, MemOp: model.MemOpWrite32, Ptrs: []uint64{0x3000}}
		c := New("spec", model.NewTables())
		c.Add(&ev)
		st := c.stats
		switch s.Mem {
		case model.MemAlloc, model.MemAllocOrdered:
			if st.Allocations != 1 {
				t.Errorf("%s: %s, but no allocation was counted", s.Name, s.Mem)
			}
		case model.MemFree, model.MemUnmap:
			if st.Frees != 1 {
				t.Errorf("%s: %s, but no free was counted", s.Name, s.Mem)
			}
		case model.MemUse:
			if n := st.Uses + st.UnknownAddressUses; n != uint64(len(s.Uses)) {
				t.Errorf("%s: uses %v, but %d uses were checked", s.Name, s.Uses, n)
			}
		case model.MemNone, model.MemGraph:
			// A graph launch's effects are its graph's (graphs_test.go).
			if st.Allocations+st.Frees+st.Uses+st.UnknownAddressUses != 0 {
				t.Errorf("%s: %s, but the checker counted %+v", s.Name, s.Mem, st)
			}
		default:
			t.Errorf("%s: memory effect %s has no handler", s.Name, s.Mem)
		}
	}
}

// Every rule's state has at least one hook: a state the checker never
// calls is a rule that never runs.
func TestRuleStatesHaveHooks(t *testing.T) {
	c := New("hooks", model.NewTables())
	for i, d := range ruleDefs {
		s := c.plugins.states[i]
		if (d.state == nil) != (s == nil) {
			t.Errorf("%s: state %v from constructor %v", d.id, s, d.state != nil)
		}
		if s == nil {
			continue
		}
		switch s.(type) {
		case allocHook, freeHook, dropHook, syncHook, opHook, endHook,
			freedUseHook, unorderedUseHook, badFreeHook, liveFreeHook, refusedFreeHook, rejectedHook:
		default:
			t.Errorf("%s: state %T has no hook", d.id, s)
		}
	}
}
