package checker_test

import (
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

// TestLiveAtExit checks that stream-ordered memory live at exit is counted
// with or without leak findings, and reported as leaks only with
// Options.Leaks; cudaMalloc memory is neither.
func TestLiveAtExit(t *testing.T) {
	for _, leaks := range []bool{false, true} {
		res := checkGolden(t, "leak_racy", checker.Options{Leaks: leaks})
		if res.Stats.LiveAtExit != 1 || res.Stats.LiveBytesAtExit != 4096 {
			t.Errorf("Leaks %v: %d allocations, %d bytes live at exit; want 1, 4096", leaks, res.Stats.LiveAtExit, res.Stats.LiveBytesAtExit)
		}
		n := 0
		for _, f := range res.Findings {
			if f.Rule == string(checker.RuleLeak) {
				n++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[leaks]; n != want {
			t.Errorf("Leaks %v: %d leak findings, want %d", leaks, n, want)
		}
	}
	if res := checkGolden(t, "leak_ok", checker.Options{}); res.Stats.LiveAtExit != 0 || res.Stats.LiveBytesAtExit != 0 {
		t.Errorf("freed memory counted live at exit: %+v", res.Stats)
	}
}
