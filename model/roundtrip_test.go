package model

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// convert copies every event of r to w and closes w.
func convert(t *testing.T, r Reader, w Writer) {
	t.Helper()
	var ev Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvent(&ev, r.Tables()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func toBinary(t *testing.T, r Reader) []byte {
	var buf bytes.Buffer
	convert(t, r, NewBinaryWriter(&buf))
	return buf.Bytes()
}

func toJSONL(t *testing.T, r Reader) string {
	var buf bytes.Buffer
	convert(t, r, NewJSONLWriter(&buf))
	return buf.String()
}

// encodeJSONL writes events, with the definitions in src they use, as JSON
// Lines: the JSON Lines twin of EncodeBinary, for tests.
func encodeJSONL(t *testing.T, src *Tables, events []Event) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	for i := range events {
		if err := w.WriteEvent(&events[i], src); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func binReader(t *testing.T, data []byte) Reader {
	r, err := NewBinaryReader(bytes.NewReader(data), "t.bin")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jsonlReader(text string) Reader { return NewJSONLReader(strings.NewReader(text), "t.jsonl") }

func collect(t *testing.T, r Reader) []resolvedEvent {
	t.Helper()
	events, err := Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	return resolve(events, r.Tables())
}

// JSON Lines -> binary -> JSON Lines -> binary: every step keeps the
// events, names, strings and stacks, and the second binary trace is
// byte-identical to the first.
func TestRoundTripEveryOp(t *testing.T) {
	want := collect(t, jsonlReader(everyOp))
	bin1 := toBinary(t, jsonlReader(everyOp))
	if got := collect(t, binReader(t, bin1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("JSON Lines -> binary changed events:\n got %+v\nwant %+v", got, want)
	}
	text := toJSONL(t, binReader(t, bin1))
	if got := collect(t, jsonlReader(text)); !reflect.DeepEqual(got, want) {
		t.Fatalf("binary -> JSON Lines changed events:\n got %+v\nwant %+v\n%s", got, want, text)
	}
	bin2 := toBinary(t, jsonlReader(text))
	if !bytes.Equal(bin1, bin2) {
		t.Errorf("binary -> JSON Lines -> binary is not byte-identical")
	}
	if text2 := toJSONL(t, jsonlReader(text)); text2 != text {
		t.Errorf("JSON Lines -> JSON Lines changed the text:\n%s\nthen\n%s", text, text2)
	}
}

// A binary trace as the shim writes it: unnamed driver handles, streams and
// events created before recording began, unsymbolized stacks, failed calls.
func shimTrace() ([]Event, *Tables) {
	t := NewTables()
	api := t.Intern("cudaMallocAsync")
	// Appended as is, not interned (Intern escapes control characters):
	// the writer must escape whatever a table holds.
	t.Strings = append(t.Strings, "cu\"Launch\nKernel\x01\xff")
	weird := StringID(len(t.Strings) - 1)
	t.Modules = append(t.Modules, Module{ID: 1, Base: 0x400000, Size: 0x1000, Path: t.Intern("/bin/app")})
	t.Stacks = append(t.Stacks, []Frame{{PC: 0x400123, Module: 1}, {PC: 0x400456, Module: 1}})
	t.Process = Process{PID: 77, PPID: 1, Exe: t.Intern("/bin/app"), Start: 1700000000000000000}
	t.Dropped = 3
	events := []Event{
		{Seq: 3, Op: OpMallocAsync, TID: 1, API: api, Stack: 1, Stream: 0x55aa00, Ptr: 0x7f00, Size: 256},
		{Seq: 4, Op: OpStreamWait, TID: 5, Device: 1, Time: 9, Stream: 0x55aa00, Event: 0x66bb00},
		{Seq: 7, Op: OpLaunch, TID: 5, API: weird, Stream: 0x55aa00, Ptrs: []uint64{0x7f00}},
		{Seq: 8, Op: OpEventRecord, TID: 1, Stream: 0x55cc00, Event: 0x66cc00},
		{Seq: 9, Op: OpMemcpy, TID: 1, Result: 12345, Ptr: 1, Src: 2, Size: 3, Kind: CopyH2D},
		{Seq: 10, Op: OpStreamDestroy, TID: 1, Stream: 0x55aa00},
		{Seq: 11, Op: OpMemset, TID: 2, Stream: StreamPerThread, Ptr: 0x7f00, Size: 16},
	}
	return events, t
}

func TestJSONLWriterImplicitCreates(t *testing.T) {
	events, src := shimTrace()
	text := encodeJSONL(t, src, events)
	want := `# process 77 (parent 1), exe "/bin/app", command "", started 1700000000000000000 ns after the Unix epoch, recorder ""
{"op":"stream_create","stream":"0x55aa00","implicit":true,"api":""}
{"op":"malloc_async","stream":"0x55aa00","ptr":"0x7f00","size":256,"stack":[{"pc":"0x400123","module":"/bin/app","base":"0x400000","size":4096},{"pc":"0x400456","module":"/bin/app","base":"0x400000","size":4096}]}
{"op":"event_create","event":"0x66bb00","implicit":true,"tid":5,"device":1,"api":"","time":9}
{"op":"stream_wait_event","stream":"0x55aa00","event":"0x66bb00","tid":5,"device":1,"api":"","time":9}
{"op":"launch","stream":"0x55aa00","ptrs":["0x7f00"],"tid":5,"api":"cu\"Launch\nKernel\u0001\ufffd"}
{"op":"stream_create","stream":"0x55cc00","implicit":true,"api":""}
{"op":"event_record","stream":"0x55cc00","event":"0x66cc00","api":""}
{"op":"memcpy","dst":"0x1","src":"0x2","size":3,"kind":"h2d","pageable":false,"result":12345,"api":""}
{"op":"stream_destroy","stream":"0x55aa00","api":""}
{"op":"memset","stream":"per_thread","ptr":"0x7f00","size":16,"tid":2,"api":""}
# the recorder dropped 3 events
`
	if text != want {
		t.Errorf("output:\n%s\nwant:\n%s", text, want)
	}
}

func TestBinaryToJSONLKeepsHandles(t *testing.T) {
	events, src := shimTrace()
	var bin bytes.Buffer
	w := NewBinaryWriter(&bin)
	for i := range events {
		if err := w.WriteEvent(&events[i], src); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	text := toJSONL(t, binReader(t, bin.Bytes()))
	got, err := Collect(jsonlReader(text))
	if err != nil {
		t.Fatal(err)
	}
	// Hex names give back their handles; the synthesized creates are the
	// only additions.
	var streams, evs []uint64
	implicit := 0
	for _, ev := range got {
		if ev.Op == OpStreamCreate || ev.Op == OpEventCreate {
			if ev.Flags != FlagImplicit {
				t.Errorf("create without the implicit flag: %+v", ev)
			}
			implicit++
			continue
		}
		streams, evs = append(streams, ev.Stream), append(evs, ev.Event)
	}
	if implicit != 3 || !reflect.DeepEqual(streams, []uint64{0x55aa00, 0x55aa00, 0x55aa00, 0x55cc00, 0, 0x55aa00, StreamPerThread}) ||
		!reflect.DeepEqual(evs, []uint64{0, 0x66bb00, 0, 0x66cc00, 0, 0, 0}) {
		t.Errorf("handles changed: streams %#x events %#x (%d implicit creates)", streams, evs, implicit)
	}
}

func TestJSONLWriterNames(t *testing.T) {
	src := NewTables()
	src.Names[ObjectKey{ObjectStream, 0x10}] = src.Intern("s")
	src.Names[ObjectKey{ObjectStream, 0x20}] = src.Intern("s")
	src.Names[ObjectKey{ObjectStream, 0x30}] = src.Intern("legacy")
	src.Names[ObjectKey{ObjectStream, 0x40}] = src.Intern("s#2")
	src.Names[ObjectKey{ObjectEvent, 0x10}] = src.Intern("s")
	src.Names[ObjectKey{ObjectPool, 0x10}] = src.Intern("big pool")
	events := []Event{
		{Seq: 1, Op: OpStreamCreate, Stream: 0x10, TID: 1},
		{Seq: 2, Op: OpStreamDestroy, Stream: 0x10, TID: 1},
		{Seq: 3, Op: OpStreamCreate, Stream: 0x20, TID: 1},
		{Seq: 4, Op: OpStreamSync, Stream: 0x10, TID: 1}, // Use after destroy: must still mean 0x10.
		{Seq: 5, Op: OpStreamCreate, Stream: 0x30, TID: 1},
		{Seq: 6, Op: OpStreamCreate, Stream: 0x40, TID: 1},
		{Seq: 7, Op: OpEventRecord, Stream: 0x20, Event: 0x10, TID: 1},
		{Seq: 8, Op: OpMallocAsync, Stream: 0x30, Pool: 0x10, TID: 1},
		{Seq: 9, Op: OpStreamCreate, Stream: 0x10, TID: 1}, // Handle reuse keeps the name.
	}
	text := encodeJSONL(t, src, events)
	r := jsonlReader(text)
	got, err := Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range got {
		names = append(names, r.Tables().Name(ObjectStream, ev.Stream))
	}
	want := []string{"s", "s", "s#2", "s", "legacy#2", "s#2#2", "s#2", "legacy#2", "s"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("stream names %q, want %q\n%s", names, want, text)
	}
	if got[0].Stream == got[2].Stream || got[3].Stream != got[0].Stream || got[8].Stream != got[0].Stream {
		t.Errorf("distinct source streams share a handle, or one stream got two")
	}
	if n := r.Tables().Name(ObjectPool, got[7].Pool); n != "big pool" {
		t.Errorf("pool name %q", n)
	}
}

func TestNewReaderSniffs(t *testing.T) {
	bin := toBinary(t, jsonlReader(everyOp))
	tests := []struct {
		name   string
		data   []byte
		binary bool
		is     error // From NewReader, or nil.
	}{
		{"binary", bin, true, nil},
		{"jsonl", []byte(everyOp), false, nil},
		{"jsonl after blank lines and a byte order mark", []byte("\xef\xbb\xbf\n\n  {\"op\":\"device_sync\"}\n"), false, nil},
		{"empty", nil, false, ErrFormat},
		{"blank", []byte(" \n\n\t"), false, ErrFormat},
		{"binary cut in magic", bin[:3], true, ErrTruncated},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, false, ErrFormat},
		{"zeros", make([]byte, 100), false, ErrFormat},
		{"binary version 9", append([]byte(BinaryMagic), 9, 0, 0, 0, 0, 0, 0, 0), true, ErrFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), "x")
			if tc.is != nil {
				var pe *PositionError
				if !errors.Is(err, tc.is) || !errors.As(err, &pe) || pe.File != "x" {
					t.Fatalf("err = %v, want a *PositionError for x wrapping %v", err, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, isBin := r.(*BinaryReader); isBin != tc.binary {
				t.Errorf("got %T", r)
			}
			if _, err := Collect(r); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.jsonl")
	if err := os.WriteFile(path, []byte(everyOp+"{\"op\":\"nope\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	events, err := Collect(r)
	if len(events) != 59 || err == nil || !strings.HasPrefix(err.Error(), path+":63: field \"op\"") {
		t.Errorf("got %d events, err %v", len(events), err)
	}
	missing := filepath.Join(dir, "missing.bin")
	if _, _, err := Open(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Open of a missing file: %v", err)
	}
}

// EncodeBinary numbers unnumbered events by place, keeps given numbers, and
// writes the definitions the events use.
func TestEncodeBinary(t *testing.T) {
	tables := NewTables()
	tables.Stacks = append(tables.Stacks, []Frame{{PC: 0x1234, Func: tables.Intern("main")}})
	data, err := EncodeBinary(tables, []Event{
		{Op: OpDeviceSync, API: tables.Intern("cudaDeviceSynchronize"), Stack: 1},
		{Op: OpStreamSync, Stream: 0x10, Seq: 9},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewBinaryReader(bytes.NewReader(data), "t.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Collect(r)
	if err != nil {
		t.Fatalf("trace not complete: %v", err)
	}
	if len(evs) != 2 || evs[0].Seq != 1 || evs[1].Seq != 9 || evs[1].Stream != 0x10 {
		t.Fatalf("events %+v", evs)
	}
	tb := r.Tables()
	if got := tb.String(evs[0].API); got != "cudaDeviceSynchronize" {
		t.Errorf("api %q", got)
	}
	if st := tb.Stack(evs[0].Stack); len(st) != 1 || st[0].PC != 0x1234 || tb.String(st[0].Func) != "main" {
		t.Errorf("stack %+v", st)
	}
}

// TestJSONLKeepsProcessAndModules: a trace converted to JSON Lines reads
// back with its process record (reports name the pid and program by it)
// and the module of every frame (reports fold CUDA's and libc's frames
// away by it, and baselines fingerprint unresolved frames by it).
func TestJSONLKeepsProcessAndModules(t *testing.T) {
	events, src := shimTrace()
	src.Process.Args = src.Intern(`app --name "x y"`)
	src.Process.Version = src.Intern("streamcheck-intercept 1")
	text := encodeJSONL(t, src, events)
	r := jsonlReader(text)
	got, err := Collect(r)
	if err != nil {
		t.Fatal(err)
	}
	tb := r.Tables()
	p := tb.Process
	if p.PID != 77 || p.PPID != 1 || p.Start != src.Process.Start || tb.String(p.Exe) != "/bin/app" ||
		tb.String(p.Args) != `app --name "x y"` || tb.String(p.Version) != "streamcheck-intercept 1" {
		t.Errorf("process %+v (exe %q, args %q, version %q)", p, tb.String(p.Exe), tb.String(p.Args), tb.String(p.Version))
	}
	var frames []Frame
	for _, ev := range got {
		if ev.Op == OpMallocAsync {
			frames = tb.Stack(ev.Stack)
		}
	}
	if len(frames) != 2 {
		t.Fatalf("frames %+v", frames)
	}
	for i, f := range frames {
		m := tb.Module(f.Module)
		want := src.Stacks[1][i]
		if tb.String(m.Path) != "/bin/app" || m.Base != 0x400000 || m.Size != 0x1000 || f.PC != want.PC {
			t.Errorf("frame %+v: module %+v (%q), want pc %#x in /bin/app at 0x400000, 4096 bytes", f, m, tb.String(m.Path), want.PC)
		}
	}
}

// TestJSONLFramesUnambiguous: frames with a module are objects, so no
// module path or function name can be misread as the other.
func TestJSONLFramesUnambiguous(t *testing.T) {
	src := NewTables()
	src.Modules = append(src.Modules, Module{ID: 1, Base: 0x7f0000000000, Size: 0x2000, Path: src.Intern("/opt/proj (in dev)/libfoo.so")})
	src.Stacks = append(src.Stacks, []Frame{
		{PC: 0x7f0000001234, Module: 1},
		{Func: src.Intern("wrapper (in /lib/x86_64-linux-gnu/libc.so.6)"), File: src.Intern("w.c"), Line: 3},
		{PC: 0x7f0000001300, Module: 1, Func: src.Intern("foo"), File: src.Intern("foo.c"), Line: 9},
		// A Python frame as the shim records it: a trampoline's pc, no
		// module, and the line its function is at.
		{PC: 0x7f1000000040, Line: 42},
	})
	text := encodeJSONL(t, src, []Event{{Op: OpDeviceSync, TID: 1, Stack: 1}})
	r := jsonlReader(text)
	got, err := Collect(r)
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v\n%s", got, err, text)
	}
	tb := r.Tables()
	type flat struct {
		PC               uint64
		Func, File       string
		Line             uint32
		Module           string
		Base, ModuleSize uint64
	}
	flatten := func(tb *Tables, fs []Frame) []flat {
		var out []flat
		for _, f := range fs {
			m := tb.Module(f.Module)
			out = append(out, flat{f.PC, tb.String(f.Func), tb.String(f.File), f.Line, tb.String(m.Path), m.Base, m.Size})
		}
		return out
	}
	if g, w := flatten(tb, tb.Stack(got[0].Stack)), flatten(src, src.Stacks[1]); !reflect.DeepEqual(g, w) {
		t.Errorf("frames read back\n %+v\nwant\n %+v\n%s", g, w, text)
	}
}

// TestPrintableEscapes: Printable escapes every unsafe rune as
// strconv.QuoteRune does, and a string full of NUL bytes costs one
// allocation, not one a byte.
func TestPrintableEscapes(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unsafeRune(r) {
			continue
		}
		q := strconv.QuoteRune(r)
		if got, want := Printable("a"+string(r)+"b"), "a"+q[1:len(q)-1]+"b"; got != want {
			t.Errorf("Printable(%U) = %q, want %q", r, got, want)
		}
	}
	if got := Printable("x\xff\x00"); got != "x\xff\\x00" {
		t.Errorf("an invalid byte: %q", got)
	}
	nuls := strings.Repeat("\x00", 1<<16)
	if n := testing.AllocsPerRun(5, func() { Printable(nuls) }); n > 1 {
		t.Errorf("Printable of %d NUL bytes: %.0f allocations, want 1", len(nuls), n)
	}
}
