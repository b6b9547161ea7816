package checker

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// countFreedUses is a rule's state for TestNewRulePlugsIn: it counts the
// uses of freed memory it is asked about, and settles none.
type countFreedUses struct{ n *int }

func (r countFreedUses) onFreedUse(*model.Event, *hb.Step, *allocation, uint64) bool {
	*r.n++
	return false
}

// TestNewRulePlugsIn: a rule registered as its file registers it is asked
// by the checker's chains, before the rules it precedes, with no edit
// anywhere else (the registry, plugIn, the checker's memory checks).
func TestNewRulePlugsIn(t *testing.T) {
	saved, savedDefs := registered, ruleDefs
	defer func() { registered, ruleDefs = saved, savedDefs }()
	n := 0
	register(&ruleDef{rank: 1000, precedence: -2, id: "count-freed-uses",
		state: func(*Checker) any { return countFreedUses{&n} }})
	ruleDefs = sortedRules()
	trace := `{"op":"stream_create","stream":"s1"}
{"op":"malloc_async","stream":"s1","ptr":"0x1000","size":64}
{"op":"free_async","stream":"s1","ptr":"0x1000"}
{"op":"launch","stream":"s1","kernel":"k","ptrs":["0x1000"]}
`
	res, err := Check("t.jsonl", model.NewJSONLReader(strings.NewReader(trace), "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the new rule was asked about %d freed uses, want 1", n)
	}
	if len(res.Findings) != 1 || res.Findings[0].Rule != string(RuleUseAfterFree) {
		t.Errorf("findings %v, want the use after free (the new rule settles nothing)", res.Findings)
	}
}
