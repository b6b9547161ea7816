package hb

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// After each legacy-stream operation, the legacy stream holds every live
// blocking stream's own count, as the implicit synchronization requires:
// it looked at all that could have new work (the unjoined list), in random
// programs of blocking, non-blocking and per-thread streams, handles
// reused after destroys, events, waits and syncs.
func TestLegacyJoinsEveryBlockingStream(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		e := New()
		var seq uint64
		apply := func(ev model.Event) Step {
			seq++
			ev.Seq = seq
			return e.Apply(&ev)
		}
		handles := []uint64{0x1000, 0x1001, 0x1002, 0x1003, 0x1004}
		alive := map[uint64]bool{}
		for range 150 {
			h := handles[r.IntN(len(handles))]
			tid := uint32(1 + r.IntN(2))
			stream := h
			if !alive[h] {
				switch r.IntN(3) {
				case 0:
					stream = model.StreamLegacy
				case 1:
					stream = model.StreamPerThread
				}
			}
			switch x := r.IntN(10); {
			case x == 0 && !alive[h]:
				var flags uint32
				if r.IntN(3) == 0 {
					flags = model.FlagNonBlocking
				}
				apply(model.Event{Op: model.OpStreamCreate, Stream: h, Flags: flags, TID: tid})
				alive[h] = true
			case x == 1 && alive[h]:
				apply(model.Event{Op: model.OpStreamDestroy, Stream: h, TID: tid})
				alive[h] = false
			case x == 2:
				apply(model.Event{Op: model.OpEventRecord, Stream: stream, Event: uint64(1 + r.IntN(3)), TID: tid})
			case x == 3:
				apply(model.Event{Op: model.OpStreamWait, Stream: stream, Event: uint64(1 + r.IntN(3)), TID: tid})
			case x == 4:
				apply(model.Event{Op: model.OpStreamSync, Stream: stream, TID: tid})
			default:
				if r.IntN(3) == 0 {
					stream = model.StreamLegacy
				}
				st := apply(model.Event{Op: model.OpLaunch, Stream: stream, TID: tid})
				if stream != model.StreamLegacy {
					continue
				}
				l := e.agents.at(st.Agent)
				for _, id := range l.dev.agents {
					b := e.agents.at(id)
					if (b.Kind == KindBlocking || b.Kind == KindPerThread) && !b.destroyed && l.clock.Get(b.Slot) < b.clock.Get(b.Slot) {
						t.Fatalf("seed %d, call %d: the legacy stream holds %d of stream %d's %d operations",
							seed, seq, l.clock.Get(b.Slot), id, b.clock.Get(b.Slot))
					}
				}
			}
		}
	}
}
