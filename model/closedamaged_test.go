package model

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCloseDamagedKeepsDamageVisible(t *testing.T) {
	tables := NewTables()
	ev := Event{Seq: 1, Op: OpDeviceSync, API: tables.Intern("cudaDeviceSynchronize")}

	var bin bytes.Buffer
	bw := NewBinaryWriter(&bin)
	if err := bw.WriteEvent(&ev, tables); err != nil {
		t.Fatal(err)
	}
	if err := bw.CloseDamaged("x.sctrace: offset 99: trace truncated"); err != nil {
		t.Fatal(err)
	}
	r, err := NewBinaryReader(&bin, "out.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	events, err := Collect(r)
	if len(events) != 1 || !errors.Is(err, ErrTruncated) {
		t.Errorf("binary output: %d events, err %v; want 1 event then ErrTruncated", len(events), err)
	}

	var text bytes.Buffer
	jw := NewJSONLWriter(&text)
	if err := jw.WriteEvent(&ev, tables); err != nil {
		t.Fatal(err)
	}
	if err := jw.CloseDamaged("x.sctrace: offset 99: trace truncated"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(text.String(), "# the source trace is damaged: x.sctrace: offset 99: trace truncated\n") {
		t.Errorf("JSON Lines output does not end with the damage note:\n%s", text.String())
	}
	// Read back, the note is the trace's damage again.
	events, err = Collect(NewJSONLReader(strings.NewReader(text.String()), "out.jsonl"))
	if len(events) != 1 || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "x.sctrace: offset 99") {
		t.Errorf("JSON Lines read back: %d events, err %v; want 1 event then the damage, ErrTruncated", len(events), err)
	}
}

// TestJSONLKeepsDropped reads back the dropped count a converted trace
// notes in a comment.
func TestJSONLKeepsDropped(t *testing.T) {
	tables := NewTables()
	tables.Dropped = 4
	text, got := jsonlRoundTrip(t, tables, Event{Seq: 1, Op: OpDeviceSync})
	if got.Dropped != 4 {
		t.Errorf("dropped %d after the round trip, want 4:\n%s", got.Dropped, text)
	}
}

// binaryRoundTrip is jsonlRoundTrip for the binary form: the tables read.
func binaryRoundTrip(t *testing.T, tables *Tables, events ...Event) *Tables {
	t.Helper()
	var bin bytes.Buffer
	writeTrace(t, NewBinaryWriter(&bin), tables, events)
	r, err := NewBinaryReader(&bin, "out.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(r); err != nil {
		t.Fatal(err)
	}
	return r.Tables()
}

// jsonlRoundTrip writes events with tables through a JSONLWriter (with no
// events, only its Source), closes it and reads the text back: the text and
// the tables read.
func jsonlRoundTrip(t *testing.T, tables *Tables, events ...Event) (string, *Tables) {
	t.Helper()
	var text bytes.Buffer
	writeTrace(t, NewJSONLWriter(&text), tables, events)
	r := NewJSONLReader(strings.NewReader(text.String()), "out.jsonl")
	if _, err := Collect(r); err != nil {
		t.Fatal(err)
	}
	return text.String(), r.Tables()
}

// TestCloseDamagedKeepsCorrupt copies a corrupt source: the output is
// corrupt too, with the source's reason, not merely truncated.
func TestCloseDamagedKeepsCorrupt(t *testing.T) {
	var bin bytes.Buffer
	bw := NewBinaryWriter(&bin)
	// A control character in the note (a forged trace) is escaped when read.
	if err := bw.CloseDamaged("x.sctrace: offset 40: field \"seq\": corrupt event record\nstreamcheck: \x1b[31mforged"); err != nil {
		t.Fatal(err)
	}
	r, err := NewBinaryReader(&bin, "out.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Collect(r)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `x.sctrace: offset 40: field "seq"`) {
		t.Errorf("read back: %v; want ErrCorrupt quoting the source", err)
	}
	if strings.ContainsAny(err.Error(), "\n\x1b") || !strings.Contains(err.Error(), `\nstreamcheck: \x1b[31mforged`) {
		t.Errorf("read back: %q; want the note's control characters escaped", err)
	}
}

// TestSourceKeepsEventlessTrace copies a trace without events (every call
// failed to be recorded): Source hands the writers the source's tables, so
// the process and the dropped count survive the copy.
func TestSourceKeepsEventlessTrace(t *testing.T) {
	tables := NewTables()
	tables.Process = Process{PID: 7, PPID: 1, Exe: tables.Intern("/bin/app")}
	tables.Dropped = 3

	if got := binaryRoundTrip(t, tables); got.Process.PID != 7 || got.Dropped != 3 {
		t.Errorf("binary copy: pid %d, dropped %d; want 7 and 3", got.Process.PID, got.Dropped)
	}

	text, got := jsonlRoundTrip(t, tables)
	if got.Dropped != 3 || !strings.Contains(text, "# process 7 ") {
		t.Errorf("JSON Lines copy lost the process or the dropped count:\n%s", text)
	}
}

// writeTrace gives w the source tables, writes events and closes w.
func writeTrace(t *testing.T, w Writer, tables *Tables, events []Event) {
	t.Helper()
	if err := w.Source(tables); err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if err := w.WriteEvent(&events[i], tables); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseDamagedKeepsDropped: a damaged source that also dropped events
// (a JSON Lines trace can say both) keeps its dropped count in the binary
// copy, whose Damage record stands in for the End record that holds it.
func TestCloseDamagedKeepsDropped(t *testing.T) {
	src := "{\"op\":\"malloc\",\"ptr\":\"0x10\",\"size\":8}\n# the recorder dropped 3 events\n# the source trace is damaged: x.sctrace: offset 9: trace truncated: cut\n"
	r := NewJSONLReader(strings.NewReader(src), "in.jsonl")
	var bin bytes.Buffer
	w := NewBinaryWriter(&bin)
	var ev Event
	for {
		err := r.Next(&ev)
		if err == nil {
			if err := w.WriteEvent(&ev, r.Tables()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !IsDamage(err) {
			t.Fatal(err)
		}
		w.Source(r.Tables())
		if err := w.CloseDamaged(err.Error()); err != nil {
			t.Fatal(err)
		}
		break
	}
	br, err := NewBinaryReader(&bin, "out.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	events, err := Collect(br)
	if len(events) != 1 || !errors.Is(err, ErrTruncated) || br.Tables().Dropped != 3 {
		t.Errorf("read back %d events, err %v, dropped %d; want 1, truncated, 3", len(events), err, br.Tables().Dropped)
	}
}
