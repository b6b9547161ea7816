package timeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// slicesOf writes the timeline of a JSON Lines trace (without findings) and
// returns its slices.
func slicesOf(t *testing.T, trace string) []Event {
	t.Helper()
	var b bytes.Buffer
	if _, err := Write(&b, model.NewJSONLReader(strings.NewReader(trace), "t.jsonl"), checker.Options{}); err != nil {
		t.Fatal(err)
	}
	var tf struct{ TraceEvents []Event }
	if err := json.Unmarshal(b.Bytes(), &tf); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var out []Event
	for _, e := range tf.TraceEvents {
		if e.Ph == "X" {
			out = append(out, e)
		}
	}
	return out
}

// TestIssueOrder: slices start at the recorded times, moved later only to
// keep SliceNS between calls; a trace without times gets one call per
// SliceNS.
func TestIssueOrder(t *testing.T) {
	cases := []struct {
		trace string
		want  []float64 // Slice starts, us.
	}{
		{`{"op":"stream_create","stream":"s1"}
{"op":"launch","stream":"s1","kernel":"k"}
{"op":"stream_sync","stream":"s1"}
`, []float64{0, 1, 2}},
		{`{"op":"stream_create","stream":"s1","time":5000}
{"op":"launch","stream":"s1","kernel":"k","time":5200}
{"op":"stream_sync","stream":"s1","time":9000}
`, []float64{5, 6, 9}},
	}
	for _, c := range cases {
		ss := slicesOf(t, c.trace)
		if len(ss) != len(c.want) {
			t.Fatalf("%d slices, want %d", len(ss), len(c.want))
		}
		for i, s := range ss {
			if s.TS != c.want[i] || s.Dur == nil || *s.Dur != float64(SliceNS)/1000 {
				t.Errorf("slice %d (%s) at %v lasting %v, want at %v lasting %v", i, s.Name, s.TS, s.Dur, c.want[i], float64(SliceNS)/1000)
			}
		}
	}
}

// TestTracks: stream work goes on its stream's track in its device's
// process, host calls (a stream's creation among them) on their thread's
// track.
func TestTracks(t *testing.T) {
	ss := slicesOf(t, `{"op":"stream_create","stream":"s1","device":1}
{"op":"launch","stream":"s1","kernel":"k","device":1,"tid":7}
{"op":"device_sync","device":1,"tid":7}
{"op":"malloc","ptr":"0x1000","size":16}
`)
	want := []struct {
		name     string
		pid, tid int
	}{
		{"cudaStreamCreateWithFlags", HostPID, 1}, // the host makes a stream
		{"k", DevicePID(1), 1},
		{"cudaDeviceSynchronize", HostPID, 2}, // Thread 7 is the second seen.
		{"cudaMalloc", HostPID, 1},
	}
	for i, s := range ss {
		if s.Name != want[i].name || s.PID != want[i].pid || s.TID != want[i].tid {
			t.Errorf("slice %d: %s on %d/%d, want %s on %d/%d", i, s.Name, s.PID, s.TID, want[i].name, want[i].pid, want[i].tid)
		}
	}
}

// TestUnusedStreamsHaveNoTrack: a stream that never ran anything (created,
// perhaps destroyed) draws no track; one that did, does.
func TestUnusedStreamsHaveNoTrack(t *testing.T) {
	var out bytes.Buffer
	trace := `{"op":"stream_create","stream":"used"}
{"op":"stream_create","stream":"spare1"}
{"op":"stream_create","stream":"spare2"}
{"op":"launch","stream":"used","kernel":"k"}
{"op":"stream_destroy","stream":"spare2"}
`
	r := model.NewJSONLReader(strings.NewReader(trace), "t.jsonl")
	if _, err := Write(&out, r, checker.Options{}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, `"name":"thread_name"`); n != 2 { // the host thread's and used's
		t.Errorf("%d named tracks, want 2:\n%s", n, got)
	}
	if !strings.Contains(got, `stream used`) || strings.Contains(got, `stream spare`) {
		t.Errorf("tracks:\n%s", got)
	}
}

// TestRejectedCallOnItsStream: a call CUDA rejected (here a second
// cudaFreeAsync, which the checker reports as a double free on its stream)
// is drawn on its stream's track, as reports place it.
func TestRejectedCallOnItsStream(t *testing.T) {
	ss := slicesOf(t, `{"op":"stream_create","stream":"s1"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000","result":"cudaErrorInvalidValue"}
`)
	last := ss[len(ss)-1]
	if last.Name != "cudaFreeAsync" || last.PID != DevicePID(0) || last.TID != ss[1].TID {
		t.Errorf("rejected free on %d/%d, want s1's track %d/%d", last.PID, last.TID, DevicePID(0), ss[1].TID)
	}
}

// TestDevicePIDs: every device, and the "no current context" device -1 the
// recorder can write, gets a process of its own, apart from the host's.
func TestDevicePIDs(t *testing.T) {
	seen := map[int]int32{HostPID: -99}
	for _, d := range []int32{-2, -1, 0, 1, 7} {
		pid := DevicePID(d)
		if other, ok := seen[pid]; ok {
			t.Errorf("device %d and %d share process %d", d, other, pid)
		}
		seen[pid] = d
	}
}

// A node added to a graph by hand is marked as such, not as failed: the
// call succeeded, and its work runs at the graph's launches.
func TestGraphNodeNotFailed(t *testing.T) {
	ss := slicesOf(t, `{"op":"graph_forget","graph":"g","lifetime":true,"api":"cudaGraphCreate"}
{"op":"launch","stream":"legacy","graph":"g","kernel":"k","api":"cudaGraphAddKernelNode"}
{"op":"stream_mem_op","stream":"legacy","graph":"g","ptr":"0x7e0000000000","mem_op":"write32","value":1,"api":"cuGraphAddBatchMemOpNode"}
`)
	for _, s := range ss[1:] {
		if s.Args["failed"] != nil || s.Args["graph_node"] != true {
			t.Errorf("%s: args %v, want graph_node and not failed", s.Name, s.Args)
		}
	}
}

// A stream memory operation's slice says what it does, and whether a wait
// was followed to the writes that can give its value.
func TestMemOpArgs(t *testing.T) {
	ss := slicesOf(t, `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"stream_create","stream":"s2","flags":"non_blocking"}
{"op":"stream_mem_op","stream":"s1","ptr":"0x7e0000000000","mem_op":"write32","value":1}
{"op":"stream_mem_op","stream":"s2","ptr":"0x7e0000000000","mem_op":"wait32","value":1,"mem_flags":1}
`)
	w := ss[len(ss)-1].Args
	if w["mem_op"] != "wait32" || w["ptr"] != "0x7e0000000000" || w["value"] != "0x1" || w["followed"] != true {
		t.Errorf("wait args %v", w)
	}
}

// A trace with no events still names its host process, as every timeline
// does.
func TestNoEventsHasHostTrack(t *testing.T) {
	var trace bytes.Buffer
	if err := model.NewBinaryWriter(&trace).Close(); err != nil {
		t.Fatal(err)
	}
	r, err := model.NewBinaryReader(&trace, "t.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := Write(&b, r, checker.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"process_name"`) {
		t.Errorf("no process_name in the timeline of an empty trace:\n%s", b.String())
	}
}
