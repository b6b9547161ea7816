package model

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func readJSONL(t *testing.T, text string) ([]Event, *Tables, error) {
	t.Helper()
	r := NewJSONLReader(strings.NewReader(text), "trace.jsonl")
	events, err := Collect(r)
	return events, r.Tables(), err
}

// everyOp uses every op, with its optional fields somewhere.
const everyOp = `# streams and events
{"op":"stream_create","stream":"s1","flags":"non_blocking","priority":-1}
{"op":"stream_create","stream":"s2","implicit":true,"tid":2}
{"op":"event_create","event":"e1"}
{"op":"pool_create","pool":"p1","device":1}

{"op":"malloc_async","stream":"s1","ptr":"0x7f0000","size":1024,"site":"app.cu:10","time":100}
{"op":"malloc_async","stream":"s1","pool":"p1","ptr":"8323072","size":"0x100"}
{"op":"malloc","ptr":8388608,"size":64}
{"op":"launch","stream":"s1","kernel":"scale","ptrs":["0x7f0000", 8388608]}
{"op":"launch","stream":"legacy"}
{"op":"memcpy_async","stream":"s2","dst":"0x7f0000","src":"0x1000","size":16,"kind":"h2d","pageable":true}
{"op":"memcpy","dst":"0x2000","src":"0x7f0000","size":16,"kind":"d2h"}
{"op":"memcpy","dst":"0x2000","src":"0x7f0000","size":16,"kind":"d2h","pinned":true}
{"op":"memcpy","dst":"0x800000","src":"0x7f0000","size":16,"kind":"d2d"}
{"op":"memcpy","dst":"0x800000","src":"0x7f0000","size":16,"kind":"d2d","peer_src":0,"peer_dst":1}
{"op":"memcpy","dst":"0x800000","src":"0x7f0000","size":16,"kind":"d2d","peer_src":2,"peer_dst":0}
{"op":"memset_async","stream":"per_thread","ptr":"0x7f0000","size":8,"tid":3}
{"op":"memset","ptr":"0x800000","size":8,"result":"cudaErrorInvalidValue"}
{"op":"event_record","event":"e1","stream":"s1"}
{"op":"event_record","event":"e2","stream":"s1"}
{"op":"stream_wait_event","stream":"s2","event":"e1"}
{"op":"host_func","stream":"s2"}
{"op":"capture_begin","stream":"s2"}
{"op":"graph_launch","stream":"s2"}
{"op":"capture_end","stream":"s2"}
{"op":"stream_query","stream":"s1","result":"not_ready"}
{"op":"event_query","event":"e1","result":"success"}
{"op":"stream_sync","stream":"0"}
{"op":"event_sync","event":"e1"}
{"op":"device_sync","api":"cudaThreadSynchronize"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000"}
{"op":"free","ptr":"0x800000","result":2}
{"op":"event_destroy","event":"e1"}
{"op":"stream_destroy","stream":"s1","stack":["scale_kernel app.cu:40","main main.cu:7"]}
{"op":"malloc_async","stream":"legacy","graph":true,"ptr":"0x900000","size":64}
{"op":"memset","stream":"per_thread","ptr":"0x900000","size":8,"tid":4}
{"op":"capture_end","stream":"s2","graph":"g1"}
{"op":"graph_instantiate","graph":"g1","exec":"0x5000"}
{"op":"graph_instantiate","graph":"0x2000","exec":"x1"}
{"op":"graph_launch","stream":"s2","exec":"0x5000"}
{"op":"graph_event_record_node","graph":"g1","event":"e1","node":"n1","lifetime":true}
{"op":"graph_event_wait_node","exec":"0x5000","event":"e2","node":"0x77"}
{"op":"graph_clone","graph":"g3","from":"g1","lifetime":true}
{"op":"graph_clone","graph":"g3","from":"0x7700","conditional":true,"node":"n7"}
{"op":"capture_begin","stream":"s2","graph":"g4","lifetime":true}
{"op":"stream_mem_op","stream":"legacy","graph":"g4","ptr":"0x7f0000","mem_op":"write32","value":"0x5"}
{"op":"stream_mem_op","stream":"s2","ptr":"0x7f0000"}
{"op":"stream_mem_op","stream":"s1","ptr":"0x7f0000","mem_op":"wait64","mem_flags":1073741825,"value":"0xffffffffffffffff"}
{"op":"stream_mem_op","stream":"s1","mem_op":"barrier","mem_flags":1}
# interprocess pools, pointers, events and legacy memory handles
{"op":"pool_export","pool":"p1"}
{"op":"pool_import","pool":"p2"}
{"op":"ptr_export","ptr":"0x7f0000","value":"0x9e3779b97f4a7c15"}
{"op":"ptr_import","ptr":"0xa00000","pool":"p2","size":4096,"value":"0x9e3779b97f4a7c15"}
{"op":"ptr_import","ptr":"0xa10000"}
{"op":"ipc_event_export","event":"e2","value":"0x1234"}
{"op":"ipc_event_open","event":"e3","value":"0x1234"}
{"op":"ipc_mem_export","ptr":"0x800000","value":"0x55"}
{"op":"ipc_mem_open","ptr":"0xb00000","size":64,"value":"0x55"}
{"op":"ipc_mem_close","ptr":"0xb00000"}
{"op":"launch","stream":"s2","ptrs":["0x7f0000"],"weak_ptrs":["0x800000","0x800010"]}
`

func TestJSONLEveryOp(t *testing.T) {
	events, tb, err := readJSONL(t, everyOp)
	if err != nil {
		t.Fatal(err)
	}
	const s1, s2, e1, e2, e3, p1, p2 = 0x1000, 0x1001, 0x1000, 0x1001, 0x1002, 0x1000, 0x1001
	want := []Event{
		{Op: OpStreamCreate, Stream: s1, Flags: FlagNonBlocking, Prio: -1},
		{Op: OpStreamCreate, Stream: s2, Flags: FlagImplicit, TID: 2},
		{Op: OpEventCreate, Event: e1},
		{Op: OpPoolCreate, Pool: p1, Device: 1},
		{Op: OpMallocAsync, Stream: s1, Ptr: 0x7f0000, Size: 1024, Time: 100},
		{Op: OpMallocAsync, Stream: s1, Pool: p1, Ptr: 0x7f0000, Size: 0x100},
		{Op: OpMalloc, Ptr: 0x800000, Size: 64},
		{Op: OpLaunch, Stream: s1, Ptrs: []uint64{0x7f0000, 0x800000}},
		{Op: OpLaunch, Stream: StreamLegacy},
		{Op: OpMemcpyAsync, Stream: s2, Ptr: 0x7f0000, Src: 0x1000, Size: 16, Kind: CopyH2D, Flags: FlagPageable},
		{Op: OpMemcpy, Ptr: 0x2000, Src: 0x7f0000, Size: 16, Kind: CopyD2H, Flags: FlagPageable},
		{Op: OpMemcpy, Ptr: 0x2000, Src: 0x7f0000, Size: 16, Kind: CopyD2H, Flags: FlagPinned},
		{Op: OpMemcpy, Ptr: 0x800000, Src: 0x7f0000, Size: 16, Kind: CopyD2D},
		{Op: OpMemcpy, Ptr: 0x800000, Src: 0x7f0000, Size: 16, Kind: CopyD2D, Flags: FlagPeer, PeerDst: 1},
		{Op: OpMemcpy, Ptr: 0x800000, Src: 0x7f0000, Size: 16, Kind: CopyD2D, Flags: FlagPeer, PeerSrc: 2},
		{Op: OpMemsetAsync, Stream: StreamPerThread, Ptr: 0x7f0000, Size: 8, TID: 3},
		{Op: OpMemset, Ptr: 0x800000, Size: 8, Result: 1},
		{Op: OpEventRecord, Event: e1, Stream: s1},
		{Op: OpEventRecord, Event: e2, Stream: s1},
		{Op: OpStreamWait, Stream: s2, Event: e1},
		{Op: OpHostFunc, Stream: s2},
		{Op: OpCaptureBegin, Stream: s2},
		{Op: OpGraphLaunch, Stream: s2},
		{Op: OpCaptureEnd, Stream: s2},
		{Op: OpStreamQuery, Stream: s1, Result: ResultNotReady},
		{Op: OpEventQuery, Event: e1},
		{Op: OpStreamSync, Stream: StreamLegacy},
		{Op: OpEventSync, Event: e1},
		{Op: OpDeviceSync},
		{Op: OpFreeAsync, Stream: s1, Ptr: 0x7f0000},
		{Op: OpFree, Ptr: 0x800000, Result: 2},
		{Op: OpEventDestroy, Event: e1},
		{Op: OpStreamDestroy, Stream: s1},
		{Op: OpMallocAsync, Stream: StreamLegacy, Flags: FlagGraphAlloc, Ptr: 0x900000, Size: 64},
		{Op: OpMemset, Stream: StreamPerThread, Ptr: 0x900000, Size: 8, TID: 4},
		// Graph names: a canonical hex name is its handle, another gets a synthetic one.
		{Op: OpCaptureEnd, Stream: s2, Graph: 0x1000},
		{Op: OpGraphInstantiate, Graph: 0x1000, Exec: 0x5000},
		{Op: OpGraphInstantiate, Graph: 0x2000, Exec: 0x1000},
		{Op: OpGraphLaunch, Stream: s2, Exec: 0x5000},
		{Op: OpGraphEventRecordNode, Graph: 0x1000, Event: e1, Node: 0x1000, Flags: FlagLifetime},
		{Op: OpGraphEventWaitNode, Exec: 0x5000, Event: e2, Node: 0x77},
		{Op: OpGraphClone, Graph: 0x1001, Src: 0x1000, Flags: FlagLifetime},
		{Op: OpGraphClone, Graph: 0x1001, Src: 0x7700, Flags: FlagConditional, Node: 0x1001},
		{Op: OpCaptureBegin, Stream: s2, Graph: 0x1002, Flags: FlagLifetime},
		{Op: OpStreamMemOp, Graph: 0x1002, Flags: FlagGraphNode, Ptr: 0x7f0000, MemOp: MemOpWrite32, Value: 5},
		{Op: OpStreamMemOp, Stream: s2, Ptr: 0x7f0000},
		{Op: OpStreamMemOp, Stream: s1, Ptr: 0x7f0000, MemOp: MemOpWait64, MemFlags: MemWaitFlush | MemWaitEQ, Value: ^uint64(0)},
		{Op: OpStreamMemOp, Stream: s1, MemOp: MemOpBarrier, MemFlags: 1},
		{Op: OpPoolExport, Pool: p1},
		{Op: OpPoolImport, Pool: p2},
		{Op: OpPtrExport, Ptr: 0x7f0000, Value: 0x9e3779b97f4a7c15},
		{Op: OpPtrImport, Ptr: 0xa00000, Pool: p2, Size: 4096, Value: 0x9e3779b97f4a7c15},
		{Op: OpPtrImport, Ptr: 0xa10000},
		{Op: OpIpcEventExport, Event: e2, Value: 0x1234},
		{Op: OpIpcEventOpen, Event: e3, Value: 0x1234},
		{Op: OpIpcMemExport, Ptr: 0x800000, Value: 0x55},
		{Op: OpIpcMemOpen, Ptr: 0xb00000, Size: 64, Value: 0x55},
		{Op: OpIpcMemClose, Ptr: 0xb00000},
		{Op: OpLaunch, Stream: s2, Ptrs: []uint64{0x7f0000, 0x800000, 0x800010}, Weak: 2},
	}
	if len(events) != len(want) {
		t.Fatalf("got %d events, want %d", len(events), len(want))
	}
	for i := range want {
		w, got := want[i], events[i]
		w.Seq = uint64(i + 1)
		if w.TID == 0 {
			w.TID = 1
		}
		// Tables are checked below; compare the rest field by field.
		got.API, got.Stack, got.Kernel = 0, 0, 0
		if !reflect.DeepEqual(got, w) {
			t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, w.Op, got, w)
		}
	}
	apis := map[int]string{0: "cudaStreamCreateWithFlags", 5: "cudaMallocFromPoolAsync", 4: "cudaMallocAsync",
		9: "cudaMemcpyAsync", 28: "cudaThreadSynchronize", 32: "cudaStreamDestroy", 24: "cudaStreamQuery",
		48: "cudaMemPoolExportToShareableHandle", 51: "cudaMemPoolImportPointer", 54: "cudaIpcOpenEventHandle",
		57: "cudaIpcCloseMemHandle"}
	for i, api := range apis {
		if got := tb.String(events[i].API); got != api {
			t.Errorf("event %d: api %q, want %q", i, got, api)
		}
	}
	if got := tb.String(events[7].Kernel); got != "scale" {
		t.Errorf("kernel %q", got)
	}
	if got := tb.Stack(events[4].Stack); len(got) != 1 || tb.String(got[0].File) != "app.cu" || got[0].Line != 10 || got[0].Func != 0 {
		t.Errorf("site frames %+v", got)
	}
	frames := tb.Stack(events[32].Stack)
	if len(frames) != 2 || tb.String(frames[0].Func) != "scale_kernel" || tb.String(frames[1].File) != "main.cu" || frames[1].Line != 7 {
		t.Errorf("stack frames %+v", frames)
	}
	names := map[ObjectKey]string{
		{ObjectStream, s1}: "s1", {ObjectStream, s2}: "s2",
		{ObjectEvent, e1}: "e1", {ObjectEvent, e2}: "e2", {ObjectEvent, e3}: "e3", {ObjectPool, p1}: "p1",
		{ObjectPool, p2}: "p2",
	}
	for k, name := range names {
		if got := tb.Name(k.Kind, k.Handle); got != name {
			t.Errorf("name of %v: %q, want %q", k, got, name)
		}
	}
	if len(tb.Names) != len(names) {
		t.Errorf("names %v", tb.Names)
	}
	if tb.Events != uint64(len(want)) {
		t.Errorf("Tables.Events = %d", tb.Events)
	}
}

func TestJSONLHandles(t *testing.T) {
	events, tb, err := readJSONL(t, `
{"op":"stream_create","stream":"0x55"}
{"op":"stream_create","stream":"a"}
{"op":"stream_create","stream":"0x1001"}
{"op":"stream_create","stream":"0x55"}
{"op":"stream_destroy","stream":"a"}
{"op":"stream_create","stream":"a"}
{"op":"stream_create","stream":"0x2"}
{"op":"stream_create","stream":"legacy"}
{"op":"event_create","event":"0x0"}
{"op":"malloc_async","stream":"a","pool":"0x0","ptr":1,"size":1}
{"op":"malloc_async","stream":"a","pool":"0x1000","ptr":1,"size":1}
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, ev := range events {
		switch {
		case ev.Op == OpEventCreate:
			got = append(got, ev.Event)
		case ev.Op == OpMallocAsync:
			got = append(got, ev.Pool)
		default:
			got = append(got, ev.Stream)
		}
	}
	// "0x55" spells its handle; "a" gets the first synthetic handle; a name
	// keeps its handle when created again; a reserved or taken handle spelled
	// in hex gets a synthetic one.
	// Pools have handles of their own.
	want := []uint64{0x55, 0x1000, 0x1001, 0x55, 0x1000, 0x1000, 0x1002, 0, 0, 0x1000, 0x1001}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handles %#x, want %#x", got, want)
	}
	for k, name := range map[ObjectKey]string{{ObjectStream, 0x55}: "", {ObjectStream, 0x1000}: "a", {ObjectStream, 0x1002}: "0x2", {ObjectPool, 0x1000}: "0x0", {ObjectPool, 0x1001}: "0x1000"} {
		if got := tb.Name(k.Kind, k.Handle); got != name {
			t.Errorf("name of %v: %q, want %q", k, got, name)
		}
	}
	if events[8].Event != 0 || tb.Name(ObjectEvent, 0) != "" {
		t.Errorf("event 0x0 should keep handle 0: %#x", events[8].Event)
	}
}

func TestJSONLErrors(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
		field      string
		msg        string // The whole message.
	}{
		{"unknown stream", "{\"op\":\"device_sync\"}\n\n# x\n{\"op\":\"stream_sync\",\"stream\":\"s9\"}", 4, "stream",
			`trace.jsonl:4: field "stream": unknown stream name "s9" (not created before)`},
		{"unknown event", `{"op":"event_sync","event":"e"}`, 1, "event", `trace.jsonl:1: field "event": unknown event name "e" (not created before)`},
		{"wait on unknown event", `{"op":"stream_wait_event","stream":"legacy","event":"e"}`, 1, "event", `unknown event name "e"`},
		{"missing op", "{\"op\":\"device_sync\"}\n{\"stream\":\"s\"}", 2, "op", `trace.jsonl:2: field "op": missing`},
		{"graph of wrong type", `{"op":"device_sync","graph":5}`, 1, "graph", `trace.jsonl:1: field "graph": got 5, want true, false or a graph's name`},
		{"graph name not a string", `{"op":"capture_end","stream":"legacy","graph":true}`, 1, "graph", `trace.jsonl:1: field "graph": got true, want the graph's name`},
		{"graph alloc not a boolean", `{"op":"malloc_async","stream":"legacy","ptr":1,"size":1,"graph":"g"}`, 1, "graph", `trace.jsonl:1: field "graph": got "g", want true or false`},
		{"unknown op", `{"op":"mallocc"}`, 1, "op", `trace.jsonl:1: field "op": unknown op "mallocc"`},
		{"op wrong type", "{\"op\":\"device_sync\"}\n{\"op\":3}", 2, "op", `trace.jsonl:2: field "op": got a JSON number, want string`},
		{"missing stream", `{"op":"launch"}`, 1, "stream", `trace.jsonl:1: field "stream": missing (required by launch)`},
		{"missing ptr", `{"op":"free"}`, 1, "ptr", `field "ptr": missing (required by free)`},
		{"null ptr", `{"op":"free","ptr":null}`, 1, "ptr", `field "ptr": missing (required by free)`},
		{"missing size", `{"op":"malloc","ptr":1}`, 1, "size", `field "size": missing (required by malloc)`},
		{"missing dst", `{"op":"memcpy","src":1,"size":1,"kind":"d2d"}`, 1, "dst", `field "dst": missing`},
		{"missing kind", `{"op":"memcpy","dst":1,"src":1,"size":1}`, 1, "kind", `field "kind": missing`},
		{"bad kind", `{"op":"memcpy","dst":1,"src":1,"size":1,"kind":"up"}`, 1, "kind", `unknown copy kind "up"`},
		{"missing pool", `{"op":"pool_create"}`, 1, "pool", `field "pool": missing (required by pool_create)`},
		{"missing query result", `{"op":"stream_query","stream":"legacy"}`, 1, "result", `field "result": missing (required by stream_query)`},
		{"bad address", `{"op":"free","ptr":"0xzz"}`, 1, "ptr", `field "ptr": got "0xzz", want a number`},
		{"negative address", `{"op":"free","ptr":-1}`, 1, "ptr", `got -1`},
		{"float size", `{"op":"malloc","ptr":1,"size":1.5}`, 1, "size", `got 1.5`},
		{"bad ptrs element", `{"op":"launch","stream":"legacy","ptrs":["0x1",true]}`, 1, "ptrs", `element 1: got true`},
		{"bad weak_ptrs element", `{"op":"launch","stream":"legacy","weak_ptrs":[-1]}`, 1, "weak_ptrs", `element 0`},
		{"ptrs not a list", `{"op":"launch","stream":"legacy","ptrs":"0x1"}`, 1, "ptrs", `got a JSON string, want list`},
		{"tid negative", `{"op":"device_sync","tid":-1}`, 1, "tid", `got a JSON number -1, want number from 0 to 4294967295`},
		{"stream not a string", `{"op":"stream_sync","stream":5}`, 1, "stream", `got a JSON number, want string`},
		{"bad memory operation", `{"op":"stream_mem_op","stream":"legacy","mem_op":"poll"}`, 1, "mem_op", `unknown memory operation "poll"`},
		{"bad memory value", `{"op":"stream_mem_op","stream":"legacy","mem_op":"wait32","value":-3}`, 1, "value", `got -3`},
		{"pool export without a pool", `{"op":"pool_export"}`, 1, "pool", `missing`},
		{"import without a pointer", `{"op":"ptr_import","pool":"p"}`, 1, "ptr", `missing`},
		{"bad import key", `{"op":"ptr_import","ptr":"0x10","value":true}`, 1, "value", `got true`},
		{"ipc event open without an event", `{"op":"ipc_event_open","value":"0x1"}`, 1, "event", `missing`},
		{"bad flags", `{"op":"stream_create","stream":"s","flags":"fast"}`, 1, "flags", `unknown stream flags "fast"`},
		{"bad malloc kind", `{"op":"malloc","ptr":1,"size":1,"kind":"pinned"}`, 1, "kind", `unknown allocation kind "pinned"`},
		{"free of a malloc kind", `{"op":"free","ptr":1,"kind":"registered"}`, 1, "kind", `unknown free kind "registered" (want device, host or unregister)`},
		{"pitched without pitch", `{"op":"malloc","ptr":1,"size":1,"kind":"pitched","height":2}`, 1, "pitch", `missing (required by a pitched malloc)`},
		{"height not pitched", `{"op":"malloc","ptr":1,"size":1,"height":2}`, 1, "height", `only a pitched malloc`},
		{"attr missing", `{"op":"pool_set_attr","pool":"default","value":0}`, 1, "attr", `missing (required by pool_set_attr)`},
		{"value missing", `{"op":"pool_set_attr","pool":"default","attr":"release_threshold"}`, 1, "value", `missing (required by pool_set_attr)`},
		{"bad attr", `{"op":"pool_set_attr","pool":"default","attr":"threshold","value":0}`, 1, "attr", `unknown pool attribute "threshold"`},
		{"bad dur", `{"op":"device_sync","dur":-5}`, 1, "dur", `got -5`},
		{"bad result", `{"op":"free","ptr":1,"result":true}`, 1, "result", `got true`},
		{"misspelt result", `{"op":"free","ptr":1,"result":"sucess"}`, 1, "result", `unknown result "sucess"`},
		{"site and stack", `{"op":"device_sync","site":"a.cu:1","stack":["b.cu:2"]}`, 1, "site", `give site or stack, not both`},
		{"empty name", `{"op":"stream_create","stream":""}`, 1, "stream", `field "stream": empty name`},
		{"not an object", "{\"op\":\"device_sync\"}\n[1,2]", 2, "", `trace.jsonl:2: line is a JSON array, not an object`},
		{"bad json", "# process 1 (parent 0), exe \"a\", command \"a\", started 0 ns after the Unix epoch, recorder \"x\"\n{\"op\":\"device_sync\",}", 2, "", `trace.jsonl:2: invalid JSON (byte 21): invalid character '}' looking for beginning of object key string`},
		{"trailing garbage", "{\"op\":\"device_sync\"}\n{\"op\":\"device_sync\"} x", 2, "", `invalid JSON`},
		{"key given twice", "{\"op\":\"device_sync\"}\n{\"op\":\"free\",\"ptr\":1,\"ptr\":2}", 2, "ptr",
			`trace.jsonl:2: field "ptr": given twice (a key may appear once in a line)`},
		{"key given twice, case folded", `{"op":"free","ptr":1,"PTR":2}`, 1, "ptr", `field "ptr": given twice`},
		{"key given twice, escaped", `{"op":"free","ptr":1,"p\u0074r":2}`, 1, "ptr", `field "ptr": given twice`},
		{"key given twice, line left to encoding/json", `{"op":"device_sync","tid":1,"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `,"tid":2}`,
			1, "tid", `field "tid": given twice`},
		{"dropped count too large", "# the recorder dropped 18446744073709551616 events\n{\"op\":\"device_sync\"}", 1, "",
			`trace.jsonl:1: the recorder's dropped-events count "18446744073709551616" is not a number from 0 to 18446744073709551615`},
		{"dropped count not a number", "{\"op\":\"device_sync\"}\n# the recorder dropped -3 events", 2, "", `dropped-events count "-3"`},
		{"long line", "{\"op\":\"device_sync\"}\n{\"op\":\"device_sync\",\"api\":\"" + strings.Repeat("x", MaxLineLen) + "\"}\n", 2, "",
			`trace.jsonl:2: line longer than 1048576 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readJSONL(t, tc.text)
			var pe *PositionError
			if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want a *PositionError wrapping ErrCorrupt", err)
			}
			if pe.Line != tc.line || pe.Field != tc.field || pe.File != "trace.jsonl" || pe.Offset != 0 {
				t.Errorf("position %+v, want line %d field %q", pe, tc.line, tc.field)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.msg) || strings.Contains(msg, "\n") {
				t.Errorf("message:\n got %s\nwant it to contain %s", msg, tc.msg)
			}
		})
	}
}

func TestJSONLErrorIsSticky(t *testing.T) {
	r := NewJSONLReader(strings.NewReader("{\"op\":\"device_sync\"}\n{\"op\":\"x\"}\n{\"op\":\"device_sync\"}\n"), "t")
	var ev Event
	if err := r.Next(&ev); err != nil {
		t.Fatal(err)
	}
	first := r.Next(&ev)
	if first == nil || r.Next(&ev) != first {
		t.Errorf("error not sticky: %v", first)
	}
}

func TestJSONLLineLimit(t *testing.T) {
	// A line of exactly MaxLineLen bytes is accepted.
	prefix, suffix := `{"op":"device_sync","api":"`, `"}`
	line := prefix + strings.Repeat("y", MaxLineLen-len(prefix)-len(suffix)) + suffix
	events, _, err := readJSONL(t, line+"\n")
	if err != nil || len(events) != 1 {
		t.Errorf("line of %d bytes: %v", len(line), err)
	}
}

func TestJSONLStacks(t *testing.T) {
	events, tb, err := readJSONL(t, `
{"op":"device_sync","site":"app.cu:42"}
{"op":"device_sync","stack":["app.cu:42"]}
{"op":"device_sync","stack":["  app.cu:42 "]}
{"op":"device_sync","stack":["run()","void f(int, int) dir/my.cu:7","0x401000","C:\\src\\x.cu:3","main","a.cu:x"]}
{"op":"device_sync","stack":[]}
{"op":"device_sync","site":"main"}
`)
	if err != nil {
		t.Fatal(err)
	}
	if events[0].Stack == 0 || events[1].Stack != events[0].Stack || events[2].Stack != events[0].Stack {
		t.Errorf("identical stacks got ids %d %d %d", events[0].Stack, events[1].Stack, events[2].Stack)
	}
	if events[4].Stack != 0 {
		t.Errorf("empty stack got id %d", events[4].Stack)
	}
	type frame struct {
		PC         uint64
		Func, File string
		Line       uint32
	}
	var got []frame
	for _, f := range tb.Stack(events[3].Stack) {
		got = append(got, frame{f.PC, tb.String(f.Func), tb.String(f.File), f.Line})
	}
	want := []frame{
		{Func: "run()"},
		{Func: "void f(int, int)", File: "dir/my.cu", Line: 7},
		{PC: 0x401000},
		{File: `C:\src\x.cu`, Line: 3},
		{Func: "main"},
		{Func: "a.cu:x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("frames:\n got %+v\nwant %+v", got, want)
	}
	if f := tb.Stack(events[5].Stack); len(f) != 1 || tb.String(f[0].Func) != "main" {
		t.Errorf("site main: %+v", f)
	}
}

func TestJSONLResults(t *testing.T) {
	tests := []struct {
		result string
		want   int32
	}{
		{`"success"`, 0}, {`"cudaSuccess"`, 0}, {`"not_ready"`, ResultNotReady}, {`"cudaErrorNotReady"`, ResultNotReady},
		{`"cudaErrorInvalidValue"`, 1}, {`"cudaErrorMemoryAllocation"`, 2}, {`"cudaErrorIllegalAddress"`, 700},
		{`"cudaErrorSomethingNew"`, resultUnknown}, {`"CUDA_ERROR_LAUNCH_TIMEOUT"`, resultUnknown}, {`"error"`, resultUnknown},
		{`"719"`, 719}, {`98`, 98}, {`-5`, -5},
	}
	for _, tc := range tests {
		events, _, err := readJSONL(t, `{"op":"free","ptr":1,"result":`+tc.result+`}`)
		if err != nil || events[0].Result != tc.want {
			t.Errorf("result %s: got %v, %v; want %d", tc.result, events, err, tc.want)
		}
	}
}

func TestJSONLDefaults(t *testing.T) {
	events, tb, err := readJSONL(t, "\xef\xbb\xbf"+`{"op":"memcpy","dst":1,"src":2,"size":3,"kind":"h2h","pageable":false}
{"op":"memcpy","dst":1,"src":2,"size":3,"kind":"default"}
{"op":"memcpy_async","stream":"legacy","dst":1,"src":2,"size":3,"kind":"h2d"}
{"op":"memset","ptr":1,"size":3,"pageable":true}
{"op":"launch","stream":"per_thread","tid":9,"device":2,"time":-4,"api":"cuLaunchKernel","unknown":{"x":[1]},"graph":null}
{"op":"device_sync","api":""}
`)
	if err != nil {
		t.Fatal(err)
	}
	flags := []uint32{0, 0, 0, FlagPageable}
	for i, f := range flags {
		if events[i].Flags != f {
			t.Errorf("event %d: flags %#x, want %#x", i, events[i].Flags, f)
		}
	}
	l := events[4]
	if l.TID != 9 || l.Device != 2 || l.Time != -4 || tb.String(l.API) != "cuLaunchKernel" || l.Stream != StreamPerThread ||
		l.Flags != 0 || l.Graph != 0 { // "graph": null is no graph node

		t.Errorf("launch %+v", l)
	}
	if events[5].API != 0 {
		t.Errorf("explicit empty api got %q", tb.String(events[5].API))
	}
}

// TestPrintableStrings: names and notes from a trace reach terminals and
// line-oriented reports, so their control characters are escaped when read:
// a stream name cannot break a report line or forge one, nor send escape
// sequences to a terminal.
func TestPrintableStrings(t *testing.T) {
	text := `{"op":"stream_create","stream":"s\nerror[fake] forged","flags":"non_blocking"}
{"op":"launch","stream":"s\nerror[fake] forged","kernel":"k\u001b[31mred","api":"cudaLaunchKernel\u0085"}
`
	events, tb, err := readJSONL(t, text)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{tb.Name(ObjectStream, events[0].Stream), tb.String(events[1].Kernel), tb.String(events[1].API)}
	want := []string{`s\nerror[fake] forged`, `k\x1b[31mred`, `cudaLaunchKernel\u0085`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("strings %q, want %q", got, want)
	}
	for _, s := range []string{"plain", "ünïcode ✓ — “quoted”", "", "\xff\xc2 not UTF-8"} {
		if Printable(s) != s {
			t.Errorf("Printable(%q) = %q, want it unchanged", s, Printable(s))
		}
	}
	for in, want := range map[string]string{
		"a\u202eb":   `a\u202eb`, // a right-to-left override would reverse what follows
		"l1\u2028l2": `l1\u2028l2`,
		"a\u061cb":   `a\u061cb`,
		"\xff\n\xc3": `` + "\xff" + `\n` + "\xc3", // invalid bytes stay as they are
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestJSONLSyncCopyStream: a synchronous copy or set names the legacy or
// the per-thread default stream, or none; another stream would take it
// off the default streams and hide its ordering.
func TestJSONLSyncCopyStream(t *testing.T) {
	_, _, err := readJSONL(t, `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"memcpy","stream":"s1","dst":"0x1","src":"0x2","size":1,"kind":"d2d"}
`)
	var pe *PositionError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Field != "stream" || !strings.Contains(err.Error(), `not "s1"`) {
		t.Errorf("memcpy on a created stream: %v", err)
	}
}

// TestJSONLNotATrace: input that never starts as a trace is ErrFormat (not
// a trace: exit 2), named in the message; damage (exit 3) is for a trace
// that starts valid and breaks later.
func TestJSONLNotATrace(t *testing.T) {
	for _, c := range []struct{ name, text, msg string }{
		{"comments only", "# a\n\n# b\n", `trace.jsonl: not a streamcheck trace: no events (only blank lines and comments)`},
		{"blank lines", "\n   \n", `no events`},
		{"markdown", "# streamcheck\n\nstreamcheck finds races\n", `trace.jsonl:3: not a streamcheck trace: line 3 is not a JSON Lines event (a JSON object with an "op")`},
		{"other JSON Lines", `{"level":"info","msg":"x"}`, `line 1 is not a JSON Lines event`},
		{"an op of another type", `{"op":3}`, `line 1 is not a JSON Lines event`},
		{"array", `[1,2]`, `line 1 is not a JSON Lines event`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readJSONL(t, c.text)
			if !errors.Is(err, ErrFormat) || IsDamage(err) || err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want ErrFormat saying %q", err, c.msg)
			}
		})
	}
	// A converted trace without events says it is one.
	var b bytes.Buffer
	w := NewJSONLWriter(&b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if evs, err := Collect(NewJSONLReader(bytes.NewReader(b.Bytes()), "empty.jsonl")); err != nil || len(evs) != 0 {
		t.Errorf("a written trace without events: %v, %v\n%s", evs, err, b.String())
	}
}

// The allocation families, the VMM and pool ops and a call's duration read
// as the trace format says, and write back the same.
func TestJSONLFamilies(t *testing.T) {
	const text = `{"op":"malloc","ptr":"0x1000","size":65536,"kind":"pitched","pitch":1024,"height":64,"dur":2500}
{"op":"malloc","ptr":"0x30000","size":4096,"kind":"host"}
{"op":"malloc","ptr":"0x40000","size":4096,"kind":"registered"}
{"op":"malloc","ptr":"0x50000","size":4096,"kind":"managed"}
{"op":"malloc","ptr":"0x60000","size":4096,"kind":"device"}
{"op":"free","ptr":"0x30000","kind":"host"}
{"op":"free","ptr":"0x40000","kind":"unregister"}
{"op":"free","ptr":"0x50000"}
{"op":"vmm_map","ptr":"0x70000","size":2097152}
{"op":"vmm_unmap","ptr":"0x70000","size":2097152}
{"op":"pool_set_attr","pool":"default","attr":"release_threshold","value":18446744073709551615}
{"op":"pool_create","pool":"p1"}
{"op":"device_set_pool","pool":"p1","device":1}
{"op":"pool_trim","pool":"p1","value":0}
`
	events, tables, err := readJSONL(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		api    string
		family Family
	}{
		{"cudaMallocPitch", FamilyPitched}, {"cudaMallocHost", FamilyHost}, {"cudaHostRegister", FamilyRegistered},
		{"cudaMallocManaged", FamilyManaged}, {"cudaMalloc", FamilyDevice}, {"cudaFreeHost", FamilyHost},
		{"cudaHostUnregister", FamilyRegistered}, {"cudaFree", FamilyDevice}, {"cuMemMap", 0}, {"cuMemUnmap", 0},
		{"cudaMemPoolSetAttribute", 0}, {"cudaMemPoolCreate", 0}, {"cudaDeviceSetMemPool", 0}, {"cudaMemPoolTrimTo", 0},
	}
	for i, w := range want {
		if ev := events[i]; tables.String(ev.API) != w.api || ev.Family != w.family {
			t.Errorf("line %d: api %s family %v, want %s %v", i+1, tables.String(ev.API), ev.Family, w.api, w.family)
		}
	}
	if ev := events[0]; ev.Pitch != 1024 || ev.Height != 64 || ev.Dur != 2500 {
		t.Errorf("pitched malloc: pitch %d height %d dur %d", ev.Pitch, ev.Height, ev.Dur)
	}
	if ev := events[10]; ev.Pool != 0 || ev.Attr != PoolAttrReleaseThreshold || ev.Value != ^uint64(0) {
		t.Errorf("pool_set_attr: pool %#x attr %v value %#x", ev.Pool, ev.Attr, ev.Value)
	}
	if ev := events[12]; ev.Pool == 0 || ev.Device != 1 {
		t.Errorf("device_set_pool: pool %#x device %d", ev.Pool, ev.Device)
	}
	written := encodeJSONL(t, tables, events)
	again, _, err := readJSONL(t, written)
	if err != nil {
		t.Fatalf("%v\n%s", err, written)
	}
	for i := range events {
		a, e := again[i], events[i]
		if a.Family != e.Family || a.Pitch != e.Pitch || a.Height != e.Height || a.Dur != e.Dur || a.Attr != e.Attr || a.Value != e.Value || (a.Pool == 0) != (e.Pool == 0) {
			t.Errorf("line %d written as\n%s", i+1, strings.Split(written, "\n")[i])
		}
	}
	if !strings.Contains(written, `{"op":"pool_set_attr","pool":"default","attr":"release_threshold","value":"0xffffffffffffffff"}`) {
		t.Errorf("the default pool's attribute is written otherwise:\n%s", written)
	}
}
