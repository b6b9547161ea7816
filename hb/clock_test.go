package hb

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestClockCovers(t *testing.T) {
	c := clockOf(3, 0, 5)
	for _, tc := range []struct {
		e    Epoch
		want bool
	}{
		{Epoch{Slot: 0, Clock: 0}, true},  // The zero epoch: nothing to be ordered after.
		{Epoch{Slot: 7, Clock: 0}, true},  // vclock 0 of any agent, even one past the end.
		{Epoch{Slot: 0, Clock: 3}, true},  // Equal.
		{Epoch{Slot: 0, Clock: 2}, true},  // Earlier.
		{Epoch{Slot: 0, Clock: 4}, false}, // Later.
		{Epoch{Slot: 1, Clock: 1}, false}, // An agent the clock knows nothing of.
		{Epoch{Slot: 2, Clock: 5}, true},
		{Epoch{Slot: 3, Clock: 1}, false}, // Past the end reads as 0.
	} {
		if got := c.Covers(tc.e); got != tc.want {
			t.Errorf("%v.Covers(%+v) = %v, want %v", c, tc.e, got, tc.want)
		}
	}
	if (vclock{}).Covers(Epoch{Slot: 0, Clock: 1}) {
		t.Error("nil clock covers a non-zero epoch")
	}
}

func TestClockGet(t *testing.T) {
	c := clockOf(4, 9)
	if c.Get(0) != 4 || c.Get(1) != 9 || c.Get(2) != 0 || c.Get(100) != 0 {
		t.Errorf("Get on %v: %d %d %d %d", c, c.Get(0), c.Get(1), c.Get(2), c.Get(100))
	}
}

func TestClockJoin(t *testing.T) {
	c := clockOf(1, 5)
	if !c.join(ref(clockOf(2, 3, 0, 7))) {
		t.Error("join that raised entries reported no change")
	}
	if want := clockOf(2, 5, 0, 7); !same(c, want) {
		t.Errorf("join = %v, want %v (element-wise maximum, grown to the longer)", c, want)
	}
	if c.join(ref(clockOf(2, 1))) || c.join(ref(vclock{})) {
		t.Error("join of a covered clock reported a change")
	}
	if want := clockOf(2, 5, 0, 7); !same(c, want) {
		t.Errorf("join of a covered clock changed it: %v", c)
	}
	o := clockOf(9)
	c.join(&o)
	o.raise(0, 10)
	if c.Get(0) != 9 {
		t.Error("join kept a reference to its argument")
	}
}

func TestClockTick(t *testing.T) {
	var c vclock
	if e := c.tick(2); e != (Epoch{Slot: 2, Clock: 1}) || !same(c, clockOf(0, 0, 1)) {
		t.Errorf("first tick of agent 2: epoch %+v, clock %v", e, c)
	}
	if e := c.tick(2); e != (Epoch{Slot: 2, Clock: 2}) {
		t.Errorf("second tick: epoch %+v", e)
	}
	if e := c.tick(0); e != (Epoch{Slot: 0, Clock: 1}) || !same(c, clockOf(1, 0, 2)) {
		t.Errorf("tick of agent 0: epoch %+v, clock %v", e, c)
	}
	if !c.Covers(Epoch{Slot: 2, Clock: 2}) || c.Covers(Epoch{Slot: 2, Clock: 3}) {
		t.Error("a clock must cover its own ticks and nothing later")
	}
}

func TestClockSet(t *testing.T) {
	c := clockOf(9, 9, 9, 9)
	k := &c.v[0]
	c.set(ref(clockOf(1, 2, 3)))
	if !same(c, clockOf(1, 2, 3)) || &c.v[0] != k {
		t.Errorf("set = %v, want a copy in the existing storage", c)
	}
	c.set(ref(clockOf(4)))
	if !same(c, clockOf(4)) || c.Get(1) != 0 {
		t.Errorf("set to a shorter clock = %v", c)
	}
}

// same reports whether a and b have the same width and entries.
func same(a, b vclock) bool {
	return a.Len() == b.Len() && slices.Equal(dense(a), dense(b))
}

func dense(c vclock) []uint64 {
	v := make([]uint64, c.Len())
	for s := range v {
		v[s] = c.Get(AgentID(s))
	}
	return v
}

// TestClockAgainstDense applies random operations to clocks of up to a few
// chunks, which share chunks, and to plain vectors, and compares them
// after each: sharing never lets a change of one clock reach another, and
// the chunks' lineages never make a join skip what it must take.
func TestClockAgainstDense(t *testing.T) {
	// Trees of two inner levels, and of three (grown from two).
	testClockAgainstDense(t, shareMin+2*chunkSize+5, 20_000)
	testClockAgainstDense(t, span(2)+span(1)+7, 4_000)
}

func testClockAgainstDense(t *testing.T, width, steps int) {
	rng := rand.New(rand.NewPCG(1, uint64(width)))
	const n = 6
	clocks := make([]vclock, n)
	ref := make([][]uint64, n)
	// The first clocks only grow, as agents' do: their chunks have a
	// lineage, which joins trust instead of comparing entries.
	const growing = 3
	for i := range growing {
		clocks[i].lin = uint32(i) + 1
	}
	at := func(v []uint64, s int) uint64 {
		if s < len(v) {
			return v[s]
		}
		return 0
	}
	for step := range steps {
		i, j := rng.IntN(n), rng.IntN(n)
		s := rng.IntN(width)
		if rng.IntN(4) == 0 {
			s = rng.IntN(chunkSize / 4) // mostly narrow clocks, some wide
		}
		op := rng.IntN(6)
		if i < growing {
			op %= 3
		}
		switch op {
		case 0:
			clocks[i].tick(AgentID(s))
			ref[i] = append(ref[i], make([]uint64, max(0, s+1-len(ref[i])))...)
			ref[i][s]++
		case 1:
			v := uint64(rng.IntN(50))
			if got, want := clocks[i].raise(AgentID(s), v), at(ref[i], s) < v; got != want {
				t.Fatalf("step %d: raise reported %v, want %v", step, got, want)
			}
			if at(ref[i], s) < v {
				ref[i] = append(ref[i], make([]uint64, max(0, s+1-len(ref[i])))...)
				ref[i][s] = v
			}
		case 2:
			o := ref[j]
			changed := false
			r := append([]uint64(nil), ref[i]...)
			r = append(r, make([]uint64, max(0, len(o)-len(r)))...)
			for s, v := range o {
				if v > r[s] {
					r[s], changed = v, true
				}
			}
			if got := clocks[i].join(&clocks[j]); got != changed {
				t.Fatalf("step %d: join reported %v, want %v", step, got, changed)
			}
			ref[i] = r
		case 3:
			clocks[i].set(&clocks[j])
			ref[i] = append([]uint64(nil), ref[j]...)
		case 4:
			clocks[i].meet(clocks[j])
			r := ref[i][:min(len(ref[i]), len(ref[j]))]
			for s := range r {
				r[s] = min(r[s], ref[j][s])
			}
			ref[i] = append([]uint64(nil), r...)
		case 5:
			clocks[i] = clocks[j].clone()
			ref[i] = append([]uint64(nil), ref[j]...)
		}
		for k := range clocks {
			if got := dense(clocks[k]); !slices.Equal(got, ref[k]) && !(len(got) == 0 && len(ref[k]) == 0) {
				t.Fatalf("step %d: clock %d = %v, want %v", step, k, got, ref[k])
			}
		}
		if got, want := clocks[i].coversAll(clocks[j]), coversAllDense(ref[i], ref[j]); got != want {
			t.Fatalf("step %d: CoversAll = %v, want %v", step, got, want)
		}
	}
}

func coversAllDense(c, o []uint64) bool {
	for s, v := range o {
		if s >= len(c) && v > 0 || s < len(c) && c[s] < v {
			return false
		}
	}
	return true
}

// ref returns a pointer to a copy of c.
func ref(c vclock) *vclock { return &c }
