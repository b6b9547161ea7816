package hb

import (
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// Every op's ordering family, as the op spec gives it, has a case in the
// dispatch table's switch (or, on a stream, reaches issue): a family added
// to the spec without its advance function fails here.
func TestDispatchCoversTheSpec(t *testing.T) {
	for _, s := range model.OpSpecs() {
		if advances[s.Op] != s.Order {
			t.Errorf("%s: dispatch table has family %d, the spec %d", s.Name, advances[s.Op], s.Order)
		}
		if s.Order == model.OrderIssue {
			if !s.Op.OnStream() {
				t.Errorf("%s: issued to a stream, but not on one", s.Name)
			}
			continue
		}
		e := New()
		ev := &model.Event{Op: s.Op, Stream: 0x10, Event: 0x20, Ptr: 0x1000, Size: 16, Value: 1}
		var st Step
		if !e.advance(ev, &st) {
			t.Errorf("%s: ordering family %d has no advance function", s.Name, s.Order)
		}
	}
}
