package model

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// hit reports whether word names a live range of m, or a remembered freed
// one unless liveOnly: one search, the reference for the sorted walk.
func (m *launchWords) hit(word uint64, liveOnly bool) bool {
	j := m.upper(word)
	return j > 0 && m.rs[j-1].names(word, liveOnly)
}

// tail encodes the optional event fields 21.. in order (graph, exec,
// peer_src, peer_dst, node, mem_op, mem_flags, value, weak, dur, family,
// pitch, height, attr, src_size, nranks, live).
func tail(weak, live uint64) []byte {
	f := make([]byte, 0, 17)
	for i := 0; i < 8; i++ {
		f = append(f, 0)
	}
	f = append(f, uv(weak)...)
	for i := 0; i < 7; i++ {
		f = append(f, 0)
	}
	return append(f, uv(live)...)
}

// rawTrace is a trace by a recorder of version that writes events evs.
func rawTrace(version string, evs ...rawEvent) []byte {
	e := newEnc().str(1, version).str(2, "k").
		record(RecordProcess, concat(uv(7), uv(1), uv(0), sv(0), uv(1)))
	for i, ev := range evs {
		ev.seq = uint64(i + 1)
		e = e.event(ev)
	}
	return e.end(uint64(len(evs)), 0).b
}

func alloc(ptr, size uint64) rawEvent {
	return rawEvent{op: uint64(OpMalloc), ptr: ptr, size: size}
}

func free(ptr uint64) rawEvent { return rawEvent{op: uint64(OpFree), ptr: ptr} }

// launch is a raw launch: strong words, then weak, then live-only ones.
func launch(strong, weak, live []uint64) rawEvent {
	ptrs := append(append(append([]uint64(nil), strong...), weak...), live...)
	return rawEvent{op: uint64(OpLaunch), kernel: 2, flags: uint64(FlagRawWords), nptrs: uint64(len(ptrs)), ptrs: ptrs,
		tail: tail(uint64(len(weak)+len(live)), uint64(len(live)))}
}

// The reader matches a raw launch's words as the shim's map would have:
// live allocations and remembered frees, interior words, table words only
// against live ones; strong sorted and unique, weak less the strong.
func TestRawLaunchWordsResolved(t *testing.T) {
	const a, b, c = 0x7f0000100000, 0x7f0000200000, 0x7f0000300000
	data := rawTrace("streamcheck-intercept 0.3.0 (trace format 1; backend interpose)",
		alloc(a, 0x1000), alloc(b, 0x1000), alloc(c, 0x1000), free(c),
		// strong: b twice, a+8 (interior), 0x10 (no allocation); weak: a (also
		// strong? no: a+8 is strong, a is not), c (freed: kept), b (strong:
		// dropped); live-only: c (freed: dropped), a+16.
		launch([]uint64{b, a + 8, b, 0x10}, []uint64{c, a, b}, []uint64{c, a + 16}),
		// Freed memory in a table, and nothing that matches.
		launch(nil, nil, []uint64{c}),
		launch([]uint64{c + 0x1000}, nil, nil),
	)
	evs, _, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]uint64
	var weak []uint32
	for _, ev := range evs {
		if ev.Op != OpLaunch {
			continue
		}
		if ev.Flags&FlagRawWords != 0 {
			t.Errorf("seq %d: the reader kept the raw flag", ev.Seq)
		}
		got = append(got, ev.Ptrs)
		weak = append(weak, ev.Weak)
	}
	want := [][]uint64{{a + 8, b, a, a + 16, c}, {}, {}}
	if len(got) != 3 || !reflect.DeepEqual(got[0], want[0]) || len(got[1]) != 0 || len(got[2]) != 0 {
		t.Errorf("ptrs %#x, want %#x", got, want)
	}
	if !reflect.DeepEqual(weak, []uint32{3, 0, 0}) {
		t.Errorf("weak counts %v, want [3 0 0]", weak)
	}
}

// Raw words are refused from recorders that do not write them, and a live
// count is checked against the weak one.
func TestRawLaunchWordsRefused(t *testing.T) {
	l := launch([]uint64{1}, []uint64{2}, nil)
	bad := l
	bad.tail = tail(1, 2)
	noFlag := l
	noFlag.flags = 0
	noFlag.tail = tail(1, 1)
	for _, tc := range []struct {
		name, version string
		ev            rawEvent
		field, msg    string
	}{
		{"older shim", "streamcheck-intercept 0.2.0 (trace format 1)", l, "flags", "does not write them"},
		{"other recorder", "tracegen 1.0", l, "flags", "does not write them"},
		{"live above weak", "streamcheck-intercept 0.3.0", bad, "live", "2 live-only words of 1 weak"},
		{"live without the flag", "streamcheck-intercept 0.3.0", noFlag, "live", "raw words: false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(rawTrace(tc.version, tc.ev))
			if err == nil || !strings.Contains(err.Error(), `field "`+tc.field+`"`) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want field %q and %q", err, tc.field, tc.msg)
			}
		})
	}
}

func TestRecordsRawLaunchWords(t *testing.T) {
	for v, want := range map[string]bool{
		"streamcheck-intercept 0.1.3":                   false,
		"streamcheck-intercept 0.2.0 (trace format 1)":  false,
		"streamcheck-intercept 0.3.0 (trace format 1)":  true,
		"streamcheck-intercept 1.0.0":                   true,
		"":                                              false,
		"streamcheck synth":                             false,
		"streamcheck-intercept0.3.0":                    false,
		"streamcheck-intercept 0.10.0 (trace format 1)": true,
	} {
		if got := recordsRawLaunchWords(v); got != want {
			t.Errorf("recordsRawLaunchWords(%q) = %v, want %v", v, got, want)
		}
	}
}

// The map follows the shim's: a pool's range handed out again flips in
// place, an overlapping allocation replaces what it overlaps, an unmap frees
// every mapping it covers, and only the last recentFrees frees are kept.
func TestLaunchWordsMap(t *testing.T) {
	var m launchWords
	m.add(0x1000, 0x100)
	m.free(0x1000)
	if !m.hit(0x1080, false) || m.hit(0x1080, true) {
		t.Fatal("a freed range: want a hit for weak words, none for table words")
	}
	m.add(0x1000, 0x100) // the pool hands it out again
	if !m.hit(0x1080, true) || len(m.los) != 1 {
		t.Fatalf("reused range: hit %v, %d ranges", m.hit(0x1080, true), len(m.los))
	}
	m.add(0x1080, 0x200) // overlaps: the old range goes
	if m.hit(0x1000, false) || !m.hit(0x1200, true) || len(m.los) != 1 {
		t.Fatalf("overlap: %#x", m.los)
	}
	m.add(0x2000, 0x10)
	m.add(0x2010, 0x10)
	m.add(0x2030, 0x10)
	m.freeRange(0x2000, 0x2020) // the first two mappings
	if m.hit(0x2008, true) || m.hit(0x2018, true) || !m.hit(0x2038, true) {
		t.Fatal("unmap: want the two mappings freed, the third live")
	}
	// Fill the ring: the first frees are forgotten.
	for i := uint64(0); i < recentFrees+deadBatch; i++ {
		base := 0x100000 + i*0x100
		m.add(base, 0x100)
		m.free(base)
	}
	if m.hit(0x2008, false) || m.hit(0x100000, false) {
		t.Error("the oldest frees are still remembered")
	}
	if last := uint64(0x100000 + (recentFrees+deadBatch-1)*0x100); !m.hit(last, false) {
		t.Error("the latest free is forgotten")
	}
	if m.ringLen != recentFrees || len(m.los) > recentFrees+deadBatch+4 {
		t.Errorf("ring %d, %d ranges kept", m.ringLen, len(m.los))
	}
}

// BenchmarkRawLaunchWords reads PyTorch-like launches (a 512-byte
// descriptor's 3 pointers; every fourth launch a table of 96 live tensors
// and 32 freed ones) among 2,000 allocations, written raw (the reader
// matches them) and as matched addresses, for what matching costs the
// analyzer now that the shim does not.
func BenchmarkRawLaunchWords(b *testing.B) {
	const nalloc, nlaunch = 2000, 1 << 15
	var evs []rawEvent
	live := make([]uint64, nalloc)
	for i := range live {
		live[i] = 0x7f0000000000 + uint64(i)*0x2000
		evs = append(evs, alloc(live[i], 0x1000+uint64(i%16)*0x100))
	}
	freed := make([]uint64, 64)
	for i := range freed {
		freed[i] = 0x7f1000000000 + uint64(i)*0x1000
		evs = append(evs, alloc(freed[i], 0x1000), free(freed[i]))
	}
	rawFrom := len(evs)
	for i := 0; i < nlaunch; i++ {
		strong := []uint64{live[(i*7)%nalloc]}
		weak := []uint64{live[(i*13)%nalloc], live[(i*29)%nalloc]}
		var table []uint64
		if i%4 == 0 {
			for k := 0; k < 96; k++ {
				table = append(table, live[(k*17+i)%nalloc]+8*uint64(k%4))
			}
			for k := 0; k < 32; k++ {
				table = append(table, freed[k%len(freed)])
			}
		}
		evs = append(evs, launch(strong, weak, table))
	}
	raw := rawTrace("streamcheck-intercept 0.3.0", evs...)
	// The same launches matched, as a shim before raw words wrote them.
	matched, tab, err := read(raw)
	if err != nil {
		b.Fatal(err)
	}
	tab.Process.Version = tab.Intern("streamcheck-intercept 0.2.0 (trace format 1)")
	enc, err := EncodeBinary(tab, matched)
	if err != nil {
		b.Fatal(err)
	}
	if len(matched) != len(evs) || len(matched[rawFrom].Ptrs) == 0 {
		b.Fatalf("%d events, first launch %#x", len(matched), matched[rawFrom].Ptrs)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"raw", raw}, {"matched", enc}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			events := 0
			for b.Loop() {
				r, err := NewBinaryReader(bytes.NewReader(c.data), "bench.bin")
				if err != nil {
					b.Fatal(err)
				}
				events += readAll(b, r)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// The sorted walk gives what a search a word gives: random maps (allocations,
// frees, reuse, overlaps, unmaps) and random launches, against a plain
// per-word reference.
func TestResolveMatchesPerWordSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var m launchWords
		var bases []uint64
		for op := 0; op < 300; op++ {
			switch x := rng.IntN(10); {
			case x < 6:
				b := 0x1000 + uint64(rng.IntN(400))*0x40
				m.add(b, uint64(1+rng.IntN(0x100)))
				bases = append(bases, b)
			case x < 9 && len(bases) > 0:
				m.free(bases[rng.IntN(len(bases))])
			case len(bases) > 0:
				b := bases[rng.IntN(len(bases))]
				m.freeRange(b, b+uint64(rng.IntN(0x400)))
			}
		}
		word := func() uint64 { return 0xf00 + uint64(rng.IntN(400*0x40+0x200)) }
		var strong, weak, live []uint64
		for i := rng.IntN(20); i > 0; i-- {
			strong = append(strong, word())
		}
		for i := rng.IntN(20); i > 0; i-- {
			weak = append(weak, word())
		}
		for i := rng.IntN(40); i > 0; i-- {
			live = append(live, word())
		}
		// The reference: each word searched, then sorted, deduplicated, merged.
		var rs, rw []uint64
		for _, w := range strong {
			if m.hit(w, false) {
				rs = append(rs, w)
			}
		}
		for i, w := range append(append([]uint64(nil), weak...), live...) {
			if m.hit(w, i >= len(weak)) {
				rw = append(rw, w)
			}
		}
		rs = sortedUnique(rs)
		rw = slices.DeleteFunc(sortedUnique(rw), func(w uint64) bool { _, ok := slices.BinarySearch(rs, w); return ok })
		ev := launch(strong, weak, live)
		e := Event{Op: OpLaunch, Flags: FlagRawWords, Ptrs: ev.ptrs, Weak: uint32(len(weak) + len(live))}
		m.resolve(&e, len(live))
		want := append(append([]uint64{}, rs...), rw...)
		if !slices.Equal(e.Ptrs, want) || int(e.Weak) != len(rw) {
			t.Fatalf("round %d: resolve %#x (%d weak), per-word %#x (%d weak)", round, e.Ptrs, e.Weak, want, len(rw))
		}
	}
}
