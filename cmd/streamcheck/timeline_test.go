package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/report"
	"github.com/streamcheck/streamcheck/timeline"
)

// timelineTraces returns traces to draw: the hand-written racy traces of
// the checker's tests that use events, host threads and the legacy stream,
// and every recorded trace of a few programs.
func timelineTraces(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"event_sync_racy", "event_rerecord_racy", "multithread_racy", "legacy_nonblocking_racy",
		"event_query_loop_racy", "pingpong_racy", "capture_cross_stream_racy", "double_free_racy", "reuse_while_in_flight_racy"} {
		ar, err := txtar.ParseFile(golden.CheckerFile(t, filepath.Join("..", "..", "checker", "testdata"), name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "trace.jsonl" {
				p := filepath.Join(dir, name+".jsonl")
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
		}
	}
	for _, d := range []string{"event_rerecord_racy-static", "cupy_async_pool_racy-py", "use_before_alloc_racy-shared"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "real", d, "*.sctrace"))
		paths = append(paths, files...)
	}
	return paths
}

type traceFile struct {
	TraceEvents     []map[string]any `json:"traceEvents"`
	DisplayTimeUnit string           `json:"displayTimeUnit"`
}

func timelineOf(t *testing.T, path string) ([]byte, *checker.Result) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(&out, &errb, []string{"timeline", path}); code != exitOK {
		t.Fatalf("timeline %s: exit %d\n%s", path, code, errb.String())
	}
	r, closer, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	res, err := checker.Check(path, r)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), res
}

// TestTimeline checks the trace-event JSON of several traces: it parses,
// every event has the fields its phase needs, every drawn track is named
// exactly once (one per stream and one per host thread, only host threads'
// tracks may be empty), slices on a track
// do not overlap, flows pair up, and every finding is marked.
func TestTimeline(t *testing.T) {
	for _, path := range timelineTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, res := timelineOf(t, path)
			var tf traceFile
			if err := json.Unmarshal(data, &tf); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if tf.DisplayTimeUnit != "ns" {
				t.Errorf("displayTimeUnit %q", tf.DisplayTimeUnit)
			}
			type trackKey struct{ pid, tid int }
			num := func(e map[string]any, k string) (float64, bool) {
				v, ok := e[k].(float64)
				return v, ok
			}
			has := func(e map[string]any, keys ...string) bool {
				for _, k := range keys {
					if _, ok := e[k]; !ok {
						t.Errorf("%v event without %q: %v", e["ph"], k, e)
						return false
					}
				}
				return true
			}
			trackOf := func(e map[string]any) trackKey {
				pid, _ := num(e, "pid")
				tid, _ := num(e, "tid")
				return trackKey{int(pid), int(tid)}
			}
			slices_ := map[trackKey][][2]float64{}
			named := map[trackKey]int{}
			flowStart, flowEnd := map[float64]map[string]any{}, map[float64]map[string]any{}
			var instants []map[string]any
			for _, e := range tf.TraceEvents {
				if !has(e, "name", "ph", "pid", "tid") {
					continue
				}
				switch e["ph"] {
				case "X":
					if has(e, "ts", "dur") {
						ts, _ := num(e, "ts")
						dur, _ := num(e, "dur")
						if dur <= 0 {
							t.Errorf("slice of duration %v: %v", dur, e)
						}
						k := trackOf(e)
						slices_[k] = append(slices_[k], [2]float64{ts, ts + dur})
					}
				case "M":
					args, _ := e["args"].(map[string]any)
					if args == nil {
						t.Errorf("metadata without args: %v", e)
						continue
					}
					switch e["name"] {
					case "thread_name", "process_name":
						if _, ok := args["name"].(string); !ok {
							t.Errorf("%v without a name: %v", e["name"], e)
						}
						if e["name"] == "thread_name" {
							named[trackOf(e)]++
						}
					case "thread_sort_index", "process_sort_index":
						if _, ok := args["sort_index"].(float64); !ok {
							t.Errorf("%v without sort_index: %v", e["name"], e)
						}
					default:
						t.Errorf("unknown metadata %v", e["name"])
					}
				case "s", "f":
					if !has(e, "cat", "id", "ts") {
						continue
					}
					id, _ := num(e, "id")
					m := flowStart
					if e["ph"] == "f" {
						m = flowEnd
						if e["bp"] != "e" {
							t.Errorf("flow end without bp e: %v", e)
						}
					}
					if m[id] != nil {
						t.Errorf("flow id %v used twice for %v", id, e["ph"])
					}
					m[id] = e
				case "i":
					if has(e, "ts", "s") {
						instants = append(instants, e)
					}
				default:
					t.Errorf("unexpected phase %v", e["ph"])
				}
			}

			// Tracks: each drawn one named once, no name without slices, and
			// as many as the trace has host threads, and streams that ran
			// something.
			for k := range slices_ {
				if named[k] != 1 {
					t.Errorf("track %v named %d times", k, named[k])
				}
			}
			streams, threads := 0, 0
			for k, n := range named {
				if slices_[k] == nil && k.pid != timeline.HostPID { // A thread may only issue stream work.
					t.Errorf("track %v named (%d times) but empty", k, n)
				}
				if n != 1 {
					t.Errorf("track %v named %d times", k, n)
				}
				if k.pid == timeline.HostPID {
					threads++
				} else {
					streams++
				}
			}
			// A stream that never ran anything (only created) has no track.
			if streams > res.Stats.Streams || threads != res.Stats.Threads {
				t.Errorf("%d stream and %d thread tracks, want at most %d and %d", streams, threads, res.Stats.Streams, res.Stats.Threads)
			}
			for k, ss := range slices_ {
				for i := 1; i < len(ss); i++ {
					if ss[i][0] < ss[i-1][1] {
						t.Errorf("track %v: slice at %v overlaps the one before (ends %v)", k, ss[i][0], ss[i-1][1])
					}
				}
			}

			// Flows: every start has its end, later, with the same name.
			if len(flowStart) != len(flowEnd) {
				t.Errorf("%d flow starts, %d ends", len(flowStart), len(flowEnd))
			}
			for id, s := range flowStart {
				f := flowEnd[id]
				if f == nil {
					t.Errorf("flow %v has no end", id)
					continue
				}
				sts, _ := num(s, "ts")
				fts, _ := num(f, "ts")
				if fts < sts || s["name"] != f["name"] || s["cat"] != f["cat"] {
					t.Errorf("flow %v: start %v, end %v", id, s, f)
				}
			}

			// Findings: one instant each, in order, with the rule and message.
			if len(instants) != len(res.Findings) {
				t.Fatalf("%d instants for %d findings", len(instants), len(res.Findings))
			}
			for i, e := range instants {
				f := res.Findings[i]
				args, _ := e["args"].(map[string]any)
				if args["rule"] != f.Rule || args["message"] != f.Message {
					t.Errorf("instant %d: args %v, want rule %s and message %q", i, args, f.Rule, f.Message)
				}
				if e["s"] == "t" {
					if k := trackOf(e); slices_[k] == nil {
						t.Errorf("instant %d on track %v, which has no slices", i, k)
					}
				}
			}
		})
	}
}

// TestTimelineFlows: a record waited on and synchronized is drawn as two
// arrows, from the record's stream to the waiting stream and to the host.
func TestTimelineFlows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flows.jsonl")
	trace := `{"op":"stream_create","stream":"a"}
{"op":"stream_create","stream":"b"}
{"op":"event_record","event":"ready","stream":"a"}
{"op":"stream_wait_event","stream":"b","event":"ready"}
{"op":"event_sync","event":"ready","tid":2}
{"op":"event_query","event":"ready","result":"not_ready"}
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := timelineOf(t, path)
	var tf traceFile
	if err := json.Unmarshal(data, &tf); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tf.TraceEvents {
		if e["ph"] == "s" || e["ph"] == "f" {
			got = append(got, fmt.Sprintf("%v %v pid=%v tid=%v id=%v", e["ph"], e["name"], e["pid"], e["tid"], e["id"]))
		}
	}
	// The record is on stream a (agent 1), the wait on b (agent 2), the
	// synchronize on host thread 2 (the second thread seen); the query that
	// said "not ready" joined nothing.
	want := []string{
		"s event ready pid=2 tid=1 id=4", "f event ready pid=2 tid=2 id=4",
		"s event ready pid=2 tid=1 id=5", "f event ready pid=1 tid=2 id=5",
	}
	if !slices.Equal(got, want) {
		t.Errorf("flows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTimelineDeterministic: the same trace gives the same bytes.
func TestTimelineDeterministic(t *testing.T) {
	for _, path := range timelineTraces(t) {
		a, _ := timelineOf(t, path)
		b, _ := timelineOf(t, path)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ", filepath.Base(path))
		}
	}
}

// TestOnePassFromPipe: explain and timeline read a trace once, as it is
// analyzed, so a pipe or FIFO serves as well as a file, with no temporary
// file anywhere (TMPDIR is a directory that does not exist).
func TestOnePassFromPipe(t *testing.T) {
	trace := filepath.Join("..", "..", "testdata", "real", "reuse_while_in_flight_racy-static")
	files, _ := filepath.Glob(filepath.Join(trace, "*.sctrace"))
	if len(files) != 1 {
		t.Fatalf("want one trace in %s, got %v", trace, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	n := 0
	fifoOf := func(data []byte) string {
		n++
		fifo := filepath.Join(dir, fmt.Sprintf("%d.fifo", n))
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(data)
			f.Close()
		}()
		return fifo
	}
	for _, cmd := range []string{"explain", "timeline"} {
		var want, wantErr bytes.Buffer
		wantCode := run(&want, &wantErr, []string{cmd, files[0]})
		if wantCode != exitFindings && wantCode != exitOK || want.Len() == 0 {
			t.Fatalf("%s of the file: exit %d, %q", cmd, wantCode, wantErr.String())
		}
		fifo := fifoOf(data)
		var got, gotErr bytes.Buffer
		code := run(&got, &gotErr, []string{cmd, fifo})
		if code != wantCode {
			t.Errorf("%s of a FIFO: exit %d, want %d (as from the file)\n%s", cmd, code, wantCode, gotErr.String())
		}
		if g, w := strings.ReplaceAll(got.String(), fifo, "TRACE"), strings.ReplaceAll(want.String(), files[0], "TRACE"); g != w {
			t.Errorf("%s of a FIFO differs from the file's:\n%s\nwant\n%s", cmd, g, w)
		}
	}
	// Not a trace: the usual one-line error.
	var out, errb bytes.Buffer
	if code := run(&out, &errb, []string{"explain", fifoOf([]byte("garbage\n"))}); code != exitUsage || !strings.Contains(errb.String(), "not a streamcheck trace") {
		t.Errorf("explain of garbage from a FIFO: exit %d, %q", code, errb.String())
	}
}

// TestConvertKeepsReports: the recordings in testdata/real, converted to
// JSON Lines and back to binary, give the same reports as the recordings
// (stacks, their modules, the process, names), so a converted trace can
// stand in for the recording. The -shared and Python recordings (their
// stacks cross the most modules) keep it to a few seconds.
func TestConvertKeepsReports(t *testing.T) {
	var traces []string
	for _, pat := range []string{"*-shared", "*-py"} {
		found, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "real", pat, "*.sctrace"))
		traces = append(traces, found...)
	}
	if len(traces) < 60 {
		t.Fatalf("only %d recorded traces", len(traces))
	}
	// The text report, and the JSON and SARIF ones, which hold every
	// frame's pc and module and the baseline fingerprints.
	report := func(path string) string {
		var all strings.Builder
		for _, format := range []string{"text", "json", "sarif"} {
			var out, errb bytes.Buffer
			code := run(&out, &errb, []string{"check", "--format", format, path})
			fmt.Fprintf(&all, "%s: exit %d\n%s%s", format, code, out.String(), errb.String())
		}
		// The copies are in a temporary directory, outside the source
		// root: SARIF names them by escaped file URIs (a subtest's "#01"
		// becomes "%2301").
		wd, _ := os.Getwd()
		s := strings.ReplaceAll(all.String(), report.FileURI(path, wd), "TRACE")
		s = strings.ReplaceAll(s, path, "TRACE")
		return strings.ReplaceAll(s, filepath.Base(path), "TRACE")
	}
	for _, tr := range traces {
		t.Run(filepath.Base(filepath.Dir(tr)), func(t *testing.T) {
			t.Parallel()
			want := report(tr)
			dir := t.TempDir()
			jl, bin := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "c.sctrace")
			var out, errb bytes.Buffer
			if code := run(&out, &errb, []string{"convert", "-o", jl, tr}); code != exitOK {
				t.Fatalf("convert: exit %d %s", code, errb.String())
			}
			if code := run(&out, &errb, []string{"convert", "-o", bin, jl}); code != exitOK {
				t.Fatalf("convert back: exit %d %s", code, errb.String())
			}
			for _, p := range []string{jl, bin} {
				if got := report(p); got != want {
					t.Errorf("converted to %s, reports differently:\n%s\nwant\n%s", filepath.Ext(p), got, want)
				}
			}
		})
	}
}
