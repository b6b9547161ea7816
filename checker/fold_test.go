package checker

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// TestFoldCountsAllocations: one root cause crossed by many allocations is
// one finding that counts each allocation once, however often it was hit,
// and stops remembering allocations at MaxCountedAllocations (saying so).
func TestFoldCountsAllocations(t *testing.T) {
	for _, tc := range []struct {
		rule             RuleID
		allocs, usesEach int
		want             int
		atLeast          bool
	}{
		// Each use of freed memory is reported: three allocations, six uses.
		{rule: RuleUseAfterFree, allocs: 3, usesEach: 2, want: 3},
		{rule: RuleUseBeforeAlloc, allocs: MaxCountedAllocations + 5, usesEach: 1, want: MaxCountedAllocations, atLeast: true},
	} {
		c := New("t", model.NewTables())
		seq := uint64(0)
		add := func(ev model.Event) {
			seq++
			ev.Seq, ev.TID = seq, 1
			c.Add(&ev)
		}
		const s1, s2 = 0x1000, 0x2000
		add(model.Event{Op: model.OpStreamCreate, Stream: s1, Flags: model.FlagNonBlocking})
		add(model.Event{Op: model.OpStreamCreate, Stream: s2, Flags: model.FlagNonBlocking})
		for i := range tc.allocs {
			p := 0x7f00_0000_0000 + uint64(i)<<12
			add(model.Event{Op: model.OpMallocAsync, Stream: s1, Ptr: p, Size: 4096})
			if tc.rule == RuleUseAfterFree {
				add(model.Event{Op: model.OpFreeAsync, Stream: s1, Ptr: p})
			}
			for range tc.usesEach {
				add(model.Event{Op: model.OpLaunch, Stream: s2, Ptrs: []uint64{p}})
			}
		}
		res := c.Finish(nil)
		var got []*Finding
		for _, f := range res.Findings {
			if f.Rule == string(tc.rule) {
				got = append(got, f)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%s, %d allocations: %d findings, want 1", tc.rule, tc.allocs, len(got))
		}
		f := got[0]
		if f.Count != tc.allocs*tc.usesEach || f.Allocations != tc.want || f.AllocationsAtLeast != tc.atLeast {
			t.Errorf("%s: count %d, allocations %d (at least: %v), want %d, %d (%v)",
				tc.rule, f.Count, f.Allocations, f.AllocationsAtLeast, tc.allocs*tc.usesEach, tc.want, tc.atLeast)
		}
	}
}
