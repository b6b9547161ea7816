package synth_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/synth"
	"github.com/streamcheck/streamcheck/model"
)

func generate(t *testing.T, cfg synth.Config) ([]byte, synth.Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := synth.Write(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), st
}

// TestReadBack checks that the trace reads back with the requested number of
// events, streams and live allocations, and holds every kind of action.
func TestReadBack(t *testing.T) {
	cfg := synth.Config{Events: 200_000, Streams: 8, LiveAllocs: 1000, Seed: 7}
	data, st := generate(t, cfg)
	r, err := model.NewBinaryReader(bytes.NewReader(data), "synth")
	if err != nil {
		t.Fatal(err)
	}
	var (
		ev                            model.Event
		n, creates, live, maxLive     int
		launches, ptrs, copies, sets  int
		records, waits, legacy, syncs int
		lastSeq                       uint64
		streams                       = map[uint64]bool{}
		liveAt                        = map[uint64]bool{}
		nonBlocking                   int
	)
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		n++
		if ev.Seq <= lastSeq {
			t.Fatalf("seq %d after %d", ev.Seq, lastSeq)
		}
		lastSeq = ev.Seq
		if ev.Op.OnStream() || ev.Op == model.OpStreamSync || ev.Op == model.OpStreamQuery {
			streams[ev.Stream] = true
		}
		switch ev.Op {
		case model.OpStreamCreate:
			creates++
			if ev.Flags&model.FlagNonBlocking != 0 {
				nonBlocking++
			}
		case model.OpMallocAsync:
			if liveAt[ev.Ptr] {
				t.Fatalf("seq %d: allocation at live address %#x", ev.Seq, ev.Ptr)
			}
			liveAt[ev.Ptr] = true
			live++
			maxLive = max(maxLive, live)
		case model.OpFreeAsync:
			if !liveAt[ev.Ptr] {
				t.Fatalf("seq %d: free of %#x, not live", ev.Seq, ev.Ptr)
			}
			delete(liveAt, ev.Ptr)
			live--
		case model.OpLaunch:
			launches++
			if len(ev.Ptrs) < 1 || len(ev.Ptrs) > 4 {
				t.Fatalf("seq %d: launch with %d pointers", ev.Seq, len(ev.Ptrs))
			}
			ptrs += len(ev.Ptrs)
		case model.OpMemcpyAsync:
			copies++
		case model.OpMemsetAsync:
			sets++
		case model.OpEventRecord:
			records++
		case model.OpStreamWait:
			waits++
		case model.OpMemset, model.OpMemcpy:
			if ev.Stream != model.StreamLegacy {
				t.Fatalf("seq %d: synchronous call on stream %#x", ev.Seq, ev.Stream)
			}
			legacy++
		case model.OpStreamSync, model.OpEventSync, model.OpDeviceSync, model.OpStreamQuery:
			syncs++
		}
	}
	if n != cfg.Events || st.Events != cfg.Events {
		t.Errorf("read %d events, generator says %d, want %d", n, st.Events, cfg.Events)
	}
	if r.Tables().Events != uint64(cfg.Events) {
		t.Errorf("end record says %d events, want %d", r.Tables().Events, cfg.Events)
	}
	if creates != cfg.Streams || len(streams) != cfg.Streams {
		t.Errorf("%d stream creates, %d streams used, want %d", creates, len(streams), cfg.Streams)
	}
	if nonBlocking == 0 || nonBlocking == creates {
		t.Errorf("%d of %d streams non-blocking, want a mix", nonBlocking, creates)
	}
	if maxLive != cfg.LiveAllocs || st.MaxLive != cfg.LiveAllocs {
		t.Errorf("at most %d allocations live (generator says %d), want %d", maxLive, st.MaxLive, cfg.LiveAllocs)
	}
	if live != 0 {
		t.Errorf("%d allocations still live at the end, want all freed", live)
	}
	if st.InteriorPtrs == 0 {
		t.Error("no interior pointers")
	}
	for name, count := range map[string]int{
		"launches": launches, "copies": copies, "sets": sets, "records": records,
		"waits": waits, "legacy calls": legacy, "host syncs": syncs,
	} {
		if count < n/1000 {
			t.Errorf("only %d %s in %d events", count, name, n)
		}
	}
	t.Logf("%+v; %.2f pointers per launch, %.1f bytes per event", st, float64(ptrs)/float64(launches), float64(len(data))/float64(n))
}

func TestDeterministic(t *testing.T) {
	cfg := synth.Config{Events: 20_000, Streams: 4, LiveAllocs: 200, Seed: 1}
	a, _ := generate(t, cfg)
	b, _ := generate(t, cfg)
	if !bytes.Equal(a, b) {
		t.Error("equal configs gave different traces")
	}
	cfg.Seed = 2
	c, _ := generate(t, cfg)
	if bytes.Equal(a, c) {
		t.Error("different seeds gave equal traces")
	}
}

// TestOnlyDeliberateRaces checks that the generated program is correct apart
// from the races it injects: without them the checker finds nothing, with
// them it finds something.
func TestOnlyDeliberateRaces(t *testing.T) {
	for _, cfg := range []synth.Config{
		{Events: 300_000, Streams: 8, LiveAllocs: 2000, Seed: 3},
		{Events: 100_000, Streams: 3, LiveAllocs: 50, Seed: 4},
		{Events: 50_000, Streams: 1, LiveAllocs: 10, Seed: 5},
		{Events: 2_000_000, Streams: 8, LiveAllocs: 10_000, Seed: 1},
	} {
		if testing.Short() && cfg.Events > 500_000 {
			continue
		}
		data, st := generate(t, cfg)
		r, err := model.NewBinaryReader(bytes.NewReader(data), "synth")
		if err != nil {
			t.Fatal(err)
		}
		res, err := checker.Check("synth", r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Damage != nil {
			t.Fatalf("%+v: damage: %v", cfg, res.Damage)
		}
		if res.Stats.Events != uint64(cfg.Events) {
			t.Errorf("%+v: checker saw %d events", cfg, res.Stats.Events)
		}
		if st.Races == 0 && len(res.Findings) > 0 {
			for _, f := range res.Findings {
				t.Errorf("%+v: unexpected finding: %s: %s", cfg, f.Rule, f.Message)
			}
		}
		if st.Races > 0 && len(res.Findings) == 0 {
			t.Errorf("%+v: %d injected races, no findings", cfg, st.Races)
		}
		t.Logf("%+v: %d races injected, %d findings", cfg, st.Races, len(res.Findings))
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []synth.Config{{Events: 10}, {Events: 10, Streams: 1}, {Events: -1, Streams: 1, LiveAllocs: 1}} {
		if _, err := synth.Write(io.Discard, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestTinyBudgets(t *testing.T) {
	for n := range 40 {
		cfg := synth.Config{Events: n, Streams: 3, LiveAllocs: 4, Seed: uint64(n)}
		data, _ := generate(t, cfg)
		r, err := model.NewBinaryReader(bytes.NewReader(data), "synth")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := model.Collect(r)
		if err != nil || len(evs) != n {
			t.Errorf("Events=%d: read %d events, err %v", n, len(evs), err)
		}
	}
}
