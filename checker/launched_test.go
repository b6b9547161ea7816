package checker

import (
	"slices"
	"testing"
)

// launchedWork gives each launch the items it replayed, shared between the
// launches of one executable graph and told apart from another's.
func TestLaunchedWork(t *testing.T) {
	a := []graphUse{{addr: 1}, {addr: 2}}
	b := []graphUse{{addr: 3}}
	var l launchedWork
	l.add(10, a)
	l.add(11, b)
	l.add(12, a)
	l.add(13, nil) // no known work: nothing noted
	l.add(14, a[:1])
	for _, c := range []struct {
		seq  uint64
		want []graphUse
	}{{10, a}, {11, b}, {12, a}, {13, nil}, {14, a[:1]}, {9, nil}} {
		if got := l.at(c.seq); !slices.Equal(got, c.want) {
			t.Errorf("launch %d replayed %v, want %v", c.seq, got, c.want)
		}
	}
	if len(l.works) != 3 {
		t.Errorf("%d distinct works kept, want 3 (a, b, a's prefix)", len(l.works))
	}
}
