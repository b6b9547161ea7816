package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// goldenTrace is a binary trace assembled byte by byte from
// docs/trace-format.md. It pins the format for the C writer in intercept/.
var goldenTrace = concat(
	// Header: magic, version 1, flags 0, reserved 0.
	[]byte{0x73, 0x74, 0x72, 0x6d, 0x63, 0x68, 0x6b, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
	// String records: kind 2, length, id, text.
	[]byte{0x02, 0x10, 0x01}, []byte("cudaMallocAsync"),
	[]byte{0x02, 0x07, 0x02}, []byte("app.cu"),
	[]byte{0x02, 0x0c, 0x03}, []byte("/lib/app.so"),
	[]byte{0x02, 0x03, 0x04}, []byte("s1"),
	[]byte{0x02, 0x06, 0x05}, []byte("scale"),
	// Module 1: base 0x400000, size 0x1000, path string 3.
	[]byte{0x04, 0x08, 0x01, 0x80, 0x80, 0x80, 0x02, 0x80, 0x20, 0x03},
	// Stack 1, one frame: pc 0x401234, module 1, func 0, file 2, line 42.
	[]byte{0x03, 0x0a, 0x01, 0x01, 0xb4, 0xa4, 0x80, 0x02, 0x01, 0x00, 0x02, 0x2a},
	// Process: pid 4242, ppid 1, exe 3, start -3 (zig-zag 5), version 0.
	[]byte{0x05, 0x06, 0x92, 0x21, 0x01, 0x03, 0x05, 0x00},
	// Name: stream 0x1000 is string 4 ("s1").
	[]byte{0x06, 0x04, 0x01, 0x80, 0x20, 0x04},
	// Event seq 1: stream_create tid 8 stream 0x1000, flags non-blocking, prio -2.
	[]byte{0x10, 0x14,
		0x01, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, // op seq tid device time api stack result
		0x80, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, // stream event ptr size src kind
		0x01, 0x00, 0x00, 0x03, 0x00}, // flags pool kernel prio nptrs
	// Event seq 2: malloc_async tid 7 time 5 api 1 stack 1 stream 0x1000 ptr 0x7f00 size 256.
	[]byte{0x10, 0x17,
		0x0c, 0x02, 0x07, 0x00, 0x0a, 0x01, 0x01, 0x00,
		0x80, 0x20, 0x00, 0x80, 0xfe, 0x01, 0x80, 0x02, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00},
	// A record of an unknown kind (0x7f): skipped.
	[]byte{0x7f, 0x03, 0xaa, 0xbb, 0xcc},
	// Event seq 5: launch device -1 time 9 on stream 1 (read as 0), kernel
	// string 5, ptrs [0x7f00 0x10], graph 0, exec 0x33, peer devices 0 and
	// 0, node 0, memory operation 0, its flags 0 and value 0, the last
	// address weak, 255 ns inside the call, family 0, pitch 0, height 0,
	// attribute 0, no collective sizes (0, 0), no live-only words (0),
	// then a field from a later version (ignored).
	[]byte{0x10, 0x2b,
		0x10, 0x05, 0x07, 0x01, 0x12, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x05, 0x00, 0x02, 0x80, 0xfe, 0x01, 0x10,
		0x00, 0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x01,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x01},
	// Event seq 6: memcpy failed with result 2, dst 0x7f00 src 0x20 size 16, h2d, pageable.
	[]byte{0x10, 0x15,
		0x12, 0x06, 0x07, 0x00, 0x00, 0x00, 0x00, 0x04,
		0x00, 0x00, 0x80, 0xfe, 0x01, 0x10, 0x20, 0x01,
		0x02, 0x00, 0x00, 0x00, 0x00},
	// End: 4 events written, 1 dropped.
	[]byte{0x01, 0x02, 0x04, 0x01},
	// Zeros after the End record (a pre-extended tail the shim could not
	// cut off) end the trace.
	[]byte{0x00, 0x00},
)

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestBinaryGolden(t *testing.T) {
	r, err := NewBinaryReader(bytes.NewReader(goldenTrace), "golden.bin")
	if err != nil {
		t.Fatal(err)
	}
	events, err := Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Seq: 1, Op: OpStreamCreate, TID: 8, Stream: 0x1000, Flags: FlagNonBlocking, Prio: -2},
		{Seq: 2, Op: OpMallocAsync, TID: 7, Time: 5, API: 1, Stack: 1, Stream: 0x1000, Ptr: 0x7f00, Size: 256},
		{Seq: 5, Op: OpLaunch, TID: 7, Device: -1, Time: 9, Kernel: 5, Ptrs: []uint64{0x7f00, 0x10}, Exec: 0x33, Weak: 1, Dur: 255},
		{Seq: 6, Op: OpMemcpy, TID: 7, Result: 2, Ptr: 0x7f00, Size: 16, Src: 0x20, Kind: CopyH2D, Flags: FlagPageable},
	}
	if !reflect.DeepEqual(events, want) {
		t.Errorf("events:\n got %+v\nwant %+v", events, want)
	}
	tb := r.Tables()
	wantTables := &Tables{
		Strings: []string{"", "cudaMallocAsync", "app.cu", "/lib/app.so", "s1", "scale"},
		Stacks:  [][]Frame{nil, {{PC: 0x401234, Module: 1, File: 2, Line: 42}}},
		Modules: []Module{{}, {ID: 1, Base: 0x400000, Size: 0x1000, Path: 3}},
		Names:   map[ObjectKey]StringID{{ObjectStream, 0x1000}: 4},
		Process: Process{PID: 4242, PPID: 1, Exe: 3, Start: -3},
		Events:  4,
		Dropped: 1,
	}
	if !reflect.DeepEqual(tb, wantTables) {
		t.Errorf("tables:\n got %+v\nwant %+v", tb, wantTables)
	}
	if tb.Name(ObjectStream, 0x1000) != "s1" {
		t.Errorf("stream 0x1000 named %q, want s1", tb.Name(ObjectStream, 0x1000))
	}
	// Reading stays at EOF.
	var ev Event
	if err := r.Next(&ev); err != io.EOF {
		t.Errorf("Next after end: %v, want io.EOF", err)
	}
}

// enc assembles binary records for tests.
type enc struct{ b []byte }

func newEnc() *enc {
	e := &enc{}
	e.b = append(e.b, BinaryMagic...)
	e.b = binary.LittleEndian.AppendUint16(e.b, BinaryVersion)
	e.b = append(e.b, 0, 0, 0, 0, 0, 0)
	return e
}

func (e *enc) record(kind RecordKind, payload []byte) *enc {
	e.b = append(e.b, byte(kind))
	e.b = binary.AppendUvarint(e.b, uint64(len(payload)))
	e.b = append(e.b, payload...)
	return e
}

func (e *enc) str(id uint64, s string) *enc {
	return e.record(RecordString, append(uv(id), s...))
}

func (e *enc) event(f rawEvent) *enc { return e.record(RecordEvent, f.payload()) }

func (e *enc) end(events, dropped uint64) *enc {
	return e.record(RecordEnd, concat(uv(events), uv(dropped)))
}

func uv(v uint64) []byte { return binary.AppendUvarint(nil, v) }
func sv(v int64) []byte  { return binary.AppendVarint(nil, v) }

// rawEvent is an event payload with raw field values, so tests can write
// what a valid Event cannot hold.
type rawEvent struct {
	op, seq, tid                  uint64
	device, time                  int64
	api, stack                    uint64
	result                        int64
	stream, event, ptr, size, src uint64
	kind, flags, pool, kernel     uint64
	prio                          int64
	nptrs                         uint64
	ptrs                          []uint64
	tail                          []byte // Bytes after the addresses (graph, exec).
	cut                           int    // Drop this many bytes from the end.
}

func (f rawEvent) payload() []byte {
	p := concat(uv(f.op), uv(f.seq), uv(f.tid), sv(f.device), sv(f.time), uv(f.api), uv(f.stack), sv(f.result),
		uv(f.stream), uv(f.event), uv(f.ptr), uv(f.size), uv(f.src), uv(f.kind), uv(f.flags), uv(f.pool), uv(f.kernel),
		sv(f.prio), uv(f.nptrs))
	for _, a := range f.ptrs {
		if f.flags&uint64(FlagRawWords) != 0 {
			p = binary.LittleEndian.AppendUint64(p, a) // raw words: 8 bytes each
		} else {
			p = append(p, uv(a)...)
		}
	}
	p = append(p, f.tail...)
	return p[:len(p)-f.cut]
}

func read(data []byte) ([]Event, *Tables, error) {
	r, err := NewBinaryReader(bytes.NewReader(data), "t.bin")
	if err != nil {
		return nil, nil, err
	}
	events, err := Collect(r)
	return events, r.Tables(), err
}

func TestBinaryCorrupt(t *testing.T) {
	ok := rawEvent{op: uint64(OpDeviceSync), seq: 1}
	tests := []struct {
		name  string
		trace *enc
		field string
		msg   string
	}{
		{"duplicate string id", newEnc().str(1, "a").str(1, "b"), "id", "defines id 1, expected 2"},
		{"string id out of order", newEnc().str(2, "a"), "id", "defines id 2, expected 1"},
		{"string id zero", newEnc().str(0, "a"), "id", "defines id 0"},
		{"unknown op", newEnc().event(rawEvent{op: 99, seq: 1}), "op", "unknown op 99"},
		{"op zero", newEnc().event(rawEvent{op: 0, seq: 1}), "op", "unknown op 0"},
		{"seq repeats", newEnc().event(ok).event(ok), "seq", "seq 1 does not follow seq 1"},
		{"seq goes back", newEnc().event(rawEvent{op: 1, seq: 5}).event(rawEvent{op: 1, seq: 4}), "seq", "seq 4"},
		{"undefined api", newEnc().str(1, "x").event(rawEvent{op: 1, seq: 1, api: 2}), "api", "undefined string id 2"},
		{"undefined stack", newEnc().event(rawEvent{op: 1, seq: 1, stack: 1}), "stack", "undefined stack id 1"},
		{"undefined kernel", newEnc().event(rawEvent{op: 16, seq: 1, kernel: 3}), "kernel", "undefined string id 3"},
		{"bad copy kind", newEnc().event(rawEvent{op: 18, seq: 1, kind: 5}), "kind", "unknown copy kind 5"},
		{"tid overflow", newEnc().event(rawEvent{op: 1, seq: 1, tid: 1 << 32}), "tid", "corrupt event record: tid 4294967296 out of range"},
		{"device overflow", newEnc().event(rawEvent{op: 1, seq: 1, device: 1 << 31}), "device", "device 2147483648 out of range"},
		{"nptrs over limit", newEnc().event(rawEvent{op: 16, seq: 1, nptrs: MaxLaunchPtrs + 1}), "nptrs", "do not fit"},
		{"nptrs past payload", newEnc().event(rawEvent{op: 16, seq: 1, nptrs: 3, ptrs: []uint64{1}}), "nptrs", "do not fit"},
		{"ptrs cut", newEnc().event(rawEvent{op: 16, seq: 1, nptrs: 2, ptrs: []uint64{1, 300}, cut: 1}), "ptrs", "malformed"},
		{"graph malformed", newEnc().event(rawEvent{op: 23, seq: 1, tail: []byte{0x80}}), "graph", "graph malformed"},
		{"exec malformed", newEnc().event(rawEvent{op: 24, seq: 1, tail: []byte{0x01, 0xff}}), "exec", "exec malformed"},
		{"node malformed", newEnc().event(rawEvent{op: 28, seq: 1, tail: []byte{0, 0, 0, 0, 0x80}}), "node", "node malformed"},
		{"weak past nptrs", newEnc().event(rawEvent{op: 16, seq: 1, nptrs: 1, ptrs: []uint64{5}, tail: []byte{0, 0, 0, 0, 0, 0, 0, 0, 2}}), "weak", "2 weak addresses of 1"},
		{"unknown flag", newEnc().event(rawEvent{op: 16, seq: 1, flags: 1 << 11}), "flags", "unknown flag bits 0x800"},
		{"raw words, no raw recorder", newEnc().event(rawEvent{op: 16, seq: 1, flags: 1 << 10}), "flags", "raw launch words from a recorder that does not write them"},
		{"event payload short", newEnc().event(rawEvent{op: 1, seq: 1, cut: 1}), "nptrs", "corrupt event record"},
		{"empty event payload", newEnc().record(RecordEvent, nil), "op", "corrupt event record"},
		{"varint overflow", newEnc().record(RecordEvent, bytes.Repeat([]byte{0xff}, 11)), "op", "malformed"},
		{"stack frames do not fit", newEnc().record(RecordStack, concat(uv(1), uv(1000), uv(1))), "frames", "do not fit"},
		{"stack undefined module", newEnc().record(RecordStack, concat(uv(1), uv(1), uv(0), uv(1), uv(0), uv(0), uv(0))), "module", "undefined module id 1"},
		{"stack undefined file", newEnc().record(RecordStack, concat(uv(1), uv(1), uv(0), uv(0), uv(0), uv(1), uv(0))), "file", "undefined string id 1"},
		{"stack id out of order", newEnc().record(RecordStack, concat(uv(2), uv(0))), "id", "expected 1"},
		{"module undefined path", newEnc().record(RecordModule, concat(uv(1), uv(0), uv(0), uv(7))), "path", "undefined string id 7"},
		{"process undefined exe", newEnc().record(RecordProcess, concat(uv(1), uv(1), uv(2), sv(0), uv(0))), "exe", "undefined string id 2"},
		{"name bad kind", newEnc().record(RecordName, concat([]byte{9}, uv(1), uv(0))), "kind", "unknown object kind 9"},
		{"name undefined string", newEnc().record(RecordName, concat([]byte{1}, uv(0x10), uv(1))), "name", "undefined string id 1"},
		{"end short", newEnc().record(RecordEnd, uv(1)), "dropped", "corrupt end record"},
		{"damage empty", newEnc().record(RecordDamage, nil), "kind", "corrupt damage record"},
		{"end counts more events", newEnc().event(ok).end(2, 0), "events", "counts 2 events, 1 were read"},
		{"event kind damaged", newEnc().event(ok).record(RecordKind(17), rawEvent{op: 1, seq: 2}.payload()).end(2, 0), "events", "counts 2 events, 1 were read"},
		{"record too long", &enc{append(newEnc().b, 0x10, 0x81, 0x80, 0x40)}, "length", "exceeds the 1048576-byte limit"},
		{"record length overflow", &enc{append(newEnc().b, append([]byte{0x10}, bytes.Repeat([]byte{0xff}, 10)...)...)}, "length", "malformed length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.trace.b
			_, _, err := read(data)
			var pe *PositionError
			if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want a *PositionError wrapping ErrCorrupt", err)
			}
			if pe.Field != tc.field || pe.File != "t.bin" || pe.Offset < binaryHeaderLen {
				t.Errorf("err = %#v, want field %q, file t.bin, offset past the header", pe, tc.field)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "t.bin: offset ") {
				t.Errorf("message %q does not start with the position or lacks %q", err, tc.msg)
			}
		})
	}
}

func TestBinaryCorruptOffset(t *testing.T) {
	e := newEnc().str(1, "a")
	off := int64(len(e.b))
	e.str(1, "b")
	_, _, err := read(e.b)
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Offset != off {
		t.Fatalf("err = %v, want offset %d", err, off)
	}
	if want := "t.bin: offset 20: field \"id\": corrupt string record: defines id 1, expected 2 (ids are dense, in order, from 1)"; err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
}

func TestBinaryHeader(t *testing.T) {
	v2 := append([]byte(BinaryMagic), 2, 0, 0, 0, 0, 0, 0, 0)
	flags := append([]byte(BinaryMagic), 1, 0, 1, 0, 0, 0, 0, 0)
	tests := []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"empty", nil, ErrFormat, "no binary trace magic"},
		{"wrong magic", []byte("strmchx\x00\x01\x00\x00\x00\x00\x00\x00\x00"), ErrFormat, "no binary trace magic"},
		{"json", []byte(`{"op":"device_sync"}`), ErrFormat, "no binary trace magic"},
		{"version 2", v2, ErrFormat, "unsupported binary trace format version 2 (this streamcheck reads version 1)"},
		{"header flags", flags, ErrFormat, "unsupported binary trace header flags 0x1"},
		{"cut in magic", []byte("strm"), ErrTruncated, "inside the 16-byte header"},
		{"cut in header", []byte(BinaryMagic + "\x01\x00"), ErrTruncated, "inside the 16-byte header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBinaryReader(bytes.NewReader(tc.data), "h.bin")
			var pe *PositionError
			if !errors.As(err, &pe) || !errors.Is(err, tc.is) || pe.File != "h.bin" {
				t.Fatalf("err = %v, want a *PositionError for h.bin wrapping %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestBinaryTruncated(t *testing.T) {
	e := newEnc().str(1, "cudaLaunchKernel").
		event(rawEvent{op: uint64(OpLaunch), seq: 1, api: 1}).
		event(rawEvent{op: uint64(OpLaunch), seq: 2, api: 1})
	complete := e.b
	tests := []struct {
		name   string
		data   []byte
		events int
		msg    string
	}{
		{"no end record", complete, 2, "end of file before the end record"},
		{"zero kind byte", concat(complete, []byte{0, 0x05, 1, 2, 3, 4, 5}), 2, "the recording stops here"},
		{"zero kind byte then a record", concat(complete, []byte{0}, newEnc().end(2, 0).b[binaryHeaderLen:]), 2, "the recording stops here"},
		{"cut in length", concat(complete, []byte{0x10, 0x80}), 2, "inside a record length"},
		{"cut in payload", concat(complete, []byte{0x10, 0x05, 1, 2}), 2, "inside a record"},
		{"cut in skipped record", concat(complete, []byte{0x40, 0x05, 1, 2}), 2, "inside a record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, _, err := read(tc.data)
			var pe *PositionError
			if !errors.As(err, &pe) || !errors.Is(err, ErrTruncated) {
				t.Fatalf("err = %v, want a *PositionError wrapping ErrTruncated", err)
			}
			if len(events) != tc.events {
				t.Errorf("read %d events before the damage, want %d", len(events), tc.events)
			}
			if pe.Offset != int64(len(complete)) {
				t.Errorf("offset %d, want %d (where the data stops)", pe.Offset, len(complete))
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

// TestBinaryCutEverywhere cuts a small trace at every byte offset: reading
// never panics, returns exactly the events wholly before the cut, and ends
// with ErrTruncated (or ErrFormat for an empty file).
func TestBinaryCutEverywhere(t *testing.T) {
	full := goldenTrace[:len(goldenTrace)-2-4] // Without the End record and trailing bytes.
	all, _, err := read(goldenTrace)
	if err != nil {
		t.Fatal(err)
	}
	// ends[i] is the offset just past event i's record.
	var ends []int
	raw, _ := NewRawReader(bytes.NewReader(goldenTrace), "")
	for {
		rec, err := raw.Next()
		if err != nil {
			break
		}
		if rec.Kind == RecordEvent {
			ends = append(ends, int(rec.Offset)+2+len(rec.Payload))
		}
	}
	for cut := 0; cut <= len(full); cut++ {
		events, _, err := read(full[:cut])
		want := 0
		for want < len(ends) && ends[want] <= cut {
			want++
		}
		switch {
		case cut == 0 && errors.Is(err, ErrFormat):
		case !errors.Is(err, ErrTruncated):
			t.Errorf("cut %d: err = %v, want ErrTruncated", cut, err)
		}
		if len(events) != want || (want > 0 && !reflect.DeepEqual(events, all[:want])) {
			t.Errorf("cut %d: got %d events, want the first %d", cut, len(events), want)
		}
	}
}

func TestBinaryUnknownRecords(t *testing.T) {
	big := bytes.Repeat([]byte{0xee}, 200<<10) // Larger than the read buffer.
	data := newEnc().
		record(0x20, []byte{1, 2, 3}).
		record(0xff, big).
		record(0x11, nil).
		event(rawEvent{op: uint64(OpDeviceSync), seq: 1}).
		record(0x08, big[:10]).
		end(1, 0).b
	events, _, err := read(data)
	if err != nil || len(events) != 1 || events[0].Op != OpDeviceSync {
		t.Fatalf("got %v, %v; want the one device_sync event", events, err)
	}
}

func TestBinaryLargeRecords(t *testing.T) {
	long := strings.Repeat("x", 300<<10) // Goes through the reader's own buffer.
	ptrs := make([]uint64, MaxLaunchPtrs)
	for i := range ptrs {
		ptrs[i] = uint64(i) << 20
	}
	data := newEnc().str(1, long).
		event(rawEvent{op: uint64(OpLaunch), seq: 1, kernel: 1, nptrs: uint64(len(ptrs)), ptrs: ptrs}).
		event(rawEvent{op: uint64(OpLaunch), seq: 2, kernel: 1, nptrs: 1, ptrs: []uint64{7}}).
		end(2, 0).b
	events, tb, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if tb.String(1) != long || !reflect.DeepEqual(events[0].Ptrs, ptrs) || !reflect.DeepEqual(events[1].Ptrs, []uint64{7}) {
		t.Errorf("large records decoded wrong")
	}
}

func TestBinaryNormalizesLegacyStream(t *testing.T) {
	data := newEnc().str(1, "default").
		record(RecordName, concat([]byte{byte(ObjectStream)}, uv(1), uv(1))).
		event(rawEvent{op: uint64(OpStreamSync), seq: 1, stream: 1}).
		event(rawEvent{op: uint64(OpStreamSync), seq: 2, stream: 2}).
		end(2, 0).b
	events, tb, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if events[0].Stream != StreamLegacy || events[1].Stream != StreamPerThread {
		t.Errorf("streams %#x, %#x; want 0 and 2", events[0].Stream, events[1].Stream)
	}
	if tb.Name(ObjectStream, StreamLegacy) != "default" {
		t.Errorf("name of handle 1 not moved to handle 0: %v", tb.Names)
	}
}

// The reader reuses the caller's Event and its Ptrs backing array.
func TestBinaryReusesPtrs(t *testing.T) {
	data := newEnc().
		event(rawEvent{op: uint64(OpLaunch), seq: 1, nptrs: 2, ptrs: []uint64{1, 2}}).
		event(rawEvent{op: uint64(OpLaunch), seq: 2, nptrs: 1, ptrs: []uint64{3}}).
		event(rawEvent{op: uint64(OpDeviceSync), seq: 3}).
		end(3, 0).b
	r, err := NewBinaryReader(bytes.NewReader(data), "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	if err := r.Next(&ev); err != nil || len(ev.Ptrs) != 2 {
		t.Fatal(err, ev)
	}
	first := &ev.Ptrs[0]
	if err := r.Next(&ev); err != nil || !reflect.DeepEqual(ev.Ptrs, []uint64{3}) || &ev.Ptrs[0] != first {
		t.Errorf("second launch: ptrs %v, reused %v", ev.Ptrs, &ev.Ptrs[0] == first)
	}
	if err := r.Next(&ev); err != nil || len(ev.Ptrs) != 0 {
		t.Errorf("device_sync carries ptrs %v", ev.Ptrs)
	}
}

func TestBinaryReaderDoesNotAllocatePerEvent(t *testing.T) {
	e := newEnc().str(1, "cudaLaunchKernel")
	for i := range 1000 {
		e.event(rawEvent{op: uint64(OpLaunch), seq: uint64(i + 1), api: 1, stream: 0x5000, nptrs: 2, ptrs: []uint64{0x7f00, 0x8f00}})
	}
	r, err := NewBinaryReader(bytes.NewReader(e.b), "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	var ev Event
	r.Next(&ev)
	if allocs := testing.AllocsPerRun(500, func() { r.Next(&ev) }); allocs != 0 {
		t.Errorf("%v allocations per event, want 0", allocs)
	}
}

func TestBinaryWriterTranslatesIDs(t *testing.T) {
	// Source tables with ids the writer must renumber: unused strings, a
	// stack whose frames use a module, and names.
	src := NewTables()
	for _, s := range []string{"unused", "cudaLaunchKernel", "k", "f", "a.cu", "/x.so", "stream A", "ev", "pool", "exe", "v1"} {
		src.AddString(s)
	}
	src.Modules = append(src.Modules, Module{}, Module{ID: 2, Base: 0x1000, Size: 0x100, Path: 6})
	src.Stacks = append(src.Stacks, nil, []Frame{{PC: 0x1010, Module: 2, Func: 4, File: 5, Line: 3}, {PC: 9}})
	src.Names[ObjectKey{ObjectStream, 0x77}] = 7
	src.Names[ObjectKey{ObjectEvent, 0x88}] = 8
	src.Names[ObjectKey{ObjectPool, 0x99}] = 9
	src.Process = Process{PID: 3, PPID: 2, Exe: 10, Start: 123, Version: 11}
	src.Dropped = 5
	in := []Event{
		{Seq: 10, Op: OpLaunch, API: 2, Kernel: 3, Stack: 2, Stream: 0x77, Ptrs: []uint64{1, 2}},
		{Seq: 11, Op: OpEventRecord, API: 2, Stream: 0x77, Event: 0x88},
		{Seq: 12, Op: OpMallocAsync, Stream: 0x77, Pool: 0x99, Ptr: 5, Size: 6, Stack: 2},
	}
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	for i := range in {
		if err := w.WriteEvent(&in[i], src); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, tb, err := read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resolve(out, tb), resolve(in, src); !reflect.DeepEqual(got, want) {
		t.Errorf("events differ:\n got %+v\nwant %+v", got, want)
	}
	if len(tb.Strings) != 11 { // Every string but "unused", plus "".
		t.Errorf("output strings %q", tb.Strings)
	}
	if tb.Events != 3 || tb.Dropped != 5 {
		t.Errorf("end record: events %d dropped %d, want 3 and 5", tb.Events, tb.Dropped)
	}
	p := tb.Process
	if p.PID != 3 || p.PPID != 2 || p.Start != 123 || tb.String(p.Exe) != "exe" || tb.String(p.Version) != "v1" {
		t.Errorf("process %+v", p)
	}
	if tb.Module(tb.Stack(out[0].Stack)[0].Module).Base != 0x1000 {
		t.Errorf("module not carried")
	}
}

func TestBinaryWriterRejects(t *testing.T) {
	tb := NewTables()
	tests := []struct {
		name string
		evs  []Event
		msg  string
	}{
		{"invalid op", []Event{{Seq: 1}}, "invalid op 0"},
		{"seq not increasing", []Event{{Seq: 2, Op: OpDeviceSync}, {Seq: 2, Op: OpDeviceSync}}, "seq 2 does not follow seq 2"},
		{"bad kind", []Event{{Seq: 1, Op: OpMemcpy, Kind: 9}}, "invalid copy kind 9"},
		{"string not in tables", []Event{{Seq: 1, Op: OpLaunch, Kernel: 4}}, "string id 4 not in tables"},
		{"stack not in tables", []Event{{Seq: 1, Op: OpLaunch, Stack: 4}}, "stack id 4 not in tables"},
		{"weak past ptrs", []Event{{Seq: 1, Op: OpLaunch, Ptrs: []uint64{1}, Weak: 2}}, "2 weak addresses of 1"},
		{"too many ptrs", []Event{{Seq: 1, Op: OpLaunch, Ptrs: make([]uint64, MaxLaunchPtrs+1)}}, "exceed the limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewBinaryWriter(io.Discard)
			var err error
			for i := range tc.evs {
				if err = w.WriteEvent(&tc.evs[i], tb); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want one containing %q", err, tc.msg)
			}
		})
	}
}

func TestBinaryWriterEmpty(t *testing.T) {
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	events, tb, err := read(buf.Bytes())
	if err != nil || len(events) != 0 || tb.Events != 0 {
		t.Errorf("empty trace: %v %v", events, err)
	}
	if err := w.WriteEvent(&Event{Seq: 1, Op: OpDeviceSync}, tb); err == nil {
		t.Errorf("write after Close succeeded")
	}
}

// resolvedEvent is an event with its table ids replaced by what they name,
// for comparing traces whose tables number things differently.
type resolvedEvent struct {
	Event
	API, Kernel string
	Stack       []string
	Names       [3]string
}

func resolve(events []Event, t *Tables) []resolvedEvent {
	var out []resolvedEvent
	for _, ev := range events {
		r := resolvedEvent{Event: ev, API: t.String(ev.API), Kernel: t.String(ev.Kernel)}
		r.Event.API, r.Event.Kernel, r.Event.Stack = 0, 0, 0
		for _, f := range t.Stack(ev.Stack) {
			m := t.Module(f.Module)
			r.Stack = append(r.Stack, strings.Join([]string{
				t.String(f.Func), t.String(f.File), string(binary.AppendUvarint(nil, uint64(f.Line))),
				string(binary.AppendUvarint(nil, f.PC)), t.String(m.Path), string(binary.AppendUvarint(nil, m.Base)),
			}, "|"))
		}
		r.Names = [3]string{t.Name(ObjectStream, ev.Stream), t.Name(ObjectEvent, ev.Event), t.Name(ObjectPool, ev.Pool)}
		out = append(out, r)
	}
	return out
}

// readUvarints must agree with encoding/binary on every input, valid or not.
func TestReadUvarints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for range 20000 {
		var b []byte
		for range rng.IntN(6) + 1 {
			b = binary.AppendUvarint(b, rng.Uint64()>>rng.UintN(64))
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs,
		binary.AppendUvarint(nil, math.MaxUint64),
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, // Overflows in the 10th byte.
		bytes.Repeat([]byte{0x80}, 11),
		[]byte{0x80, 0x80, 0x80},                               // Cut short.
		[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, // Zero, written long.
		[]byte{0x05, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x01},
	)
	for _, in := range inputs {
		want := []uint64{}
		rest := in
		for len(rest) > 0 {
			v, n := binary.Uvarint(rest)
			if n <= 0 {
				break
			}
			want = append(want, v)
			rest = rest[n:]
		}
		// As RawReader hands it out, with capacity past the end (whose bytes
		// must not matter), and without.
		for _, fill := range []byte{0x80, 0x00, 0xff} {
			padded := append(bytes.Clone(in), bytes.Repeat([]byte{fill}, 8)...)[:len(in)]
			for _, b := range [][]byte{in[:len(in):len(in)], padded} {
				out := make([]uint64, len(want)+1)
				gotRest, n := readUvarints(b, out)
				if n != len(want) || !reflect.DeepEqual(out[:n], want) || !bytes.Equal(gotRest, rest) {
					t.Fatalf("input %x (capacity %d): got %x (rest %x), want %x (rest %x)", in, cap(b), out[:n], gotRest, want, rest)
				}
			}
		}
	}
}

// The writer's exact output for a small trace: definitions first, in order
// of need, then the event, then End.
func TestBinaryWriterBytes(t *testing.T) {
	src := NewTables()
	src.Names[ObjectKey{ObjectStream, 0x1000}] = src.Intern("s1")
	ev := Event{Seq: 1, Op: OpFreeAsync, TID: 1, Time: -1, API: src.Intern("cudaFreeAsync"), Stream: 0x1000, Ptr: 0x7f00}
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	if err := w.WriteEvent(&ev, src); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := concat(
		[]byte(BinaryMagic), []byte{1, 0, 0, 0, 0, 0, 0, 0},
		[]byte{0x02, 0x0e, 0x01}, []byte("cudaFreeAsync"), // String 1.
		[]byte{0x02, 0x03, 0x02}, []byte("s1"), // String 2.
		[]byte{0x06, 0x04, 0x01, 0x80, 0x20, 0x02}, // Name: stream 0x1000 is "s1".
		[]byte{0x10, 0x16, 0x0e, 0x01, 0x01, 0x00, 0x01, 0x01, 0x00, 0x00, // op seq tid device time api stack result
			0x80, 0x20, 0x00, 0x80, 0xfe, 0x01, // stream event ptr
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, // size src kind flags pool kernel prio nptrs
		[]byte{0x01, 0x02, 0x01, 0x00}, // End: 1 event, 0 dropped.
	)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("writer output\n got % x\nwant % x", buf.Bytes(), want)
	}
}

// TestAfterEnd: after the End record, zeros end the trace, another trace's
// header starts a trace of its own (Following), and anything else is
// corrupt: "cat ok.sctrace racy.sctrace" must not read as the clean one.
func TestAfterEnd(t *testing.T) {
	one := goldenTrace[:len(goldenTrace)-2]
	for _, c := range []struct {
		name   string
		data   []byte
		err    string // "" for io.EOF
		traces int
	}{
		{"nothing", one, "", 1},
		{"zeros", concat(one, make([]byte, 100000)), "", 1},
		{"garbage", concat(one, []byte("{\"op\":\"launch\"}\n")), fmt.Sprintf("offset %d: corrupt trace: data after the end record that is not another trace", len(one)), 1},
		{"zeros then garbage", concat(one, []byte{0, 0, 0xff}), fmt.Sprintf("offset %d: corrupt trace: data after the end record", len(one)+2), 1},
		{"two traces", concat(one, one), "", 2},
		{"three, zeros between", concat(one, []byte{0, 0}, one, one), "", 3},
		{"a cut second header", concat(one, []byte(BinaryMagic[:5])), fmt.Sprintf("offset %d: trace truncated", len(one)), 2},
		{"a second trace cut short", concat(one, one[:100]), "trace truncated", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewBinaryReader(bytes.NewReader(c.data), "t.bin")
			if err != nil {
				t.Fatal(err)
			}
			traces := 0
			var last error
			for r != nil {
				traces++
				var evs []Event
				evs, last = Collect(r)
				if last == nil && len(evs) != 4 {
					t.Errorf("trace %d: %d events, want 4", traces, len(evs))
				}
				if last != nil {
					break
				}
				var next *BinaryReader
				next, _, last = r.Following()
				if last != nil {
					traces++
					break
				}
				r = next
			}
			if traces != c.traces {
				t.Errorf("%d traces, want %d", traces, c.traces)
			}
			if c.err == "" && last != nil || c.err != "" && (last == nil || !strings.Contains(last.Error(), c.err) || !IsDamage(last)) {
				t.Errorf("err = %v, want %q", last, c.err)
			}
		})
	}
}
