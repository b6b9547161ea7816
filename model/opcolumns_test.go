package model

import "testing"

// Every row fills the analyzer's columns consistently: an ordering family
// (OrderIssue exactly for the ops on a stream), the addresses of a use
// and only of a use, a category, and an event for the ops that name one.
func TestOpColumns(t *testing.T) {
	for _, s := range OpSpecs() {
		switch {
		case s.Order == orderUnset || s.Order >= OrderCount:
			t.Errorf("%s: no ordering family", s.Name)
		case (s.Order == OrderIssue) != s.OnStream:
			t.Errorf("%s: ordering family %d, on a stream %v: an op on a stream is issued to it, and only such an op", s.Name, s.Order, s.OnStream)
		}
		if s.Mem >= memCount {
			t.Errorf("%s: memory effect %d outside the spec", s.Name, s.Mem)
		}
		if (s.Mem == MemUse) != (len(s.Uses) > 0) {
			t.Errorf("%s: %s with %d addresses: a use names its addresses, and only a use", s.Name, s.Mem, len(s.Uses))
		}
		for _, u := range s.Uses {
			if u.Field == AddrNone || u.Field >= addrCount || u.Access&^ReadWrite != 0 || u.Access == 0 {
				t.Errorf("%s: address %v outside the spec", s.Name, u)
			}
		}
		if s.Category == categoryUnset || s.Category >= categoryCount {
			t.Errorf("%s: no timeline category", s.Name)
		}
		if s.NamesEvent && s.required&jEvent == 0 {
			t.Errorf("%s: names an event but a line of it need not carry one", s.Name)
		}
		if s.Op.Mem() != s.Mem || s.Op.Order() != s.Order || s.Op.Category() != s.Category || s.Op.NamesEvent() != s.NamesEvent {
			t.Errorf("%s: the tables by op disagree with the row", s.Name)
		}
	}
}
