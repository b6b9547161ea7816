package hb

import (
	"slices"
	"testing"
)

func TestClockCovers(t *testing.T) {
	c := Clock{3, 0, 5}
	for _, tc := range []struct {
		e    Epoch
		want bool
	}{
		{Epoch{Slot: 0, Clock: 0}, true},  // The zero epoch: nothing to be ordered after.
		{Epoch{Slot: 7, Clock: 0}, true},  // Clock 0 of any agent, even one past the end.
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
	if (Clock(nil)).Covers(Epoch{Slot: 0, Clock: 1}) {
		t.Error("nil clock covers a non-zero epoch")
	}
}

func TestClockGet(t *testing.T) {
	c := Clock{4, 9}
	if c.Get(0) != 4 || c.Get(1) != 9 || c.Get(2) != 0 || c.Get(100) != 0 {
		t.Errorf("Get on %v: %d %d %d %d", c, c.Get(0), c.Get(1), c.Get(2), c.Get(100))
	}
}

func TestClockJoin(t *testing.T) {
	c := Clock{1, 5}
	if !c.join(Clock{2, 3, 0, 7}) {
		t.Error("join that raised entries reported no change")
	}
	if want := (Clock{2, 5, 0, 7}); !slices.Equal(c, want) {
		t.Errorf("join = %v, want %v (element-wise maximum, grown to the longer)", c, want)
	}
	if c.join(Clock{2, 1}) || c.join(nil) {
		t.Error("join of a covered clock reported a change")
	}
	if want := (Clock{2, 5, 0, 7}); !slices.Equal(c, want) {
		t.Errorf("join of a covered clock changed it: %v", c)
	}
	o := Clock{9}
	c.join(o)
	o[0] = 0
	if c[0] != 9 {
		t.Error("join kept a reference to its argument")
	}
}

func TestClockTick(t *testing.T) {
	var c Clock
	if e := c.tick(2); e != (Epoch{Slot: 2, Clock: 1}) || !slices.Equal(c, Clock{0, 0, 1}) {
		t.Errorf("first tick of agent 2: epoch %+v, clock %v", e, c)
	}
	if e := c.tick(2); e != (Epoch{Slot: 2, Clock: 2}) {
		t.Errorf("second tick: epoch %+v", e)
	}
	if e := c.tick(0); e != (Epoch{Slot: 0, Clock: 1}) || !slices.Equal(c, Clock{1, 0, 2}) {
		t.Errorf("tick of agent 0: epoch %+v, clock %v", e, c)
	}
	if !c.Covers(Epoch{Slot: 2, Clock: 2}) || c.Covers(Epoch{Slot: 2, Clock: 3}) {
		t.Error("a clock must cover its own ticks and nothing later")
	}
}

func TestClockSet(t *testing.T) {
	c := make(Clock, 0, 8)
	c.set(Clock{1, 2, 3})
	if !slices.Equal(c, Clock{1, 2, 3}) || cap(c) != 8 {
		t.Errorf("set = %v (cap %d), want a copy in the existing storage", c, cap(c))
	}
	c.set(Clock{4})
	if !slices.Equal(c, Clock{4}) {
		t.Errorf("set to a shorter clock = %v", c)
	}
}
