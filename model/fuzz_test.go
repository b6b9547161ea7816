package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// readFuzz reads r to the end, checking that it stops within bound calls
// and only with the errors the Reader contract allows.
func readFuzz(t *testing.T, r Reader, bound int, allowed ...error) []Event {
	var out []Event
	var ev Event
	for range bound {
		err := r.Next(&ev)
		if err == io.EOF {
			return out
		}
		if err != nil {
			var pe *PositionError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PositionError", err)
			}
			for _, a := range allowed {
				if errors.Is(err, a) {
					return out
				}
			}
			t.Fatalf("error %v wraps none of %v", err, allowed)
		}
		out = append(out, ev.Clone())
	}
	t.Fatalf("reader did not stop after %d calls", bound)
	return nil
}

func writeAll(t *testing.T, w Writer, events []Event, tb *Tables) {
	for i := range events {
		if err := w.WriteEvent(&events[i], tb); err != nil {
			t.Fatalf("writing event %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// stripComments drops the comment lines the JSON Lines writer adds.
func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.SplitAfterSeq(s, "\n") {
		if !strings.HasPrefix(line, "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// checkJSONLWriter writes events as JSON Lines and checks that the text
// reads back, and that reading and writing it again changes nothing.
func checkJSONLWriter(t *testing.T, events []Event, tb *Tables) {
	var text1 bytes.Buffer
	writeAll(t, NewJSONLWriter(&text1), events, tb)
	r1 := NewJSONLReader(bytes.NewReader(text1.Bytes()), "text1")
	ev1, err := Collect(r1)
	if err != nil {
		t.Fatalf("writer output does not read back: %v\n%s", err, text1.String())
	}
	var text2 bytes.Buffer
	writeAll(t, NewJSONLWriter(&text2), ev1, r1.Tables())
	r2 := NewJSONLReader(bytes.NewReader(text2.Bytes()), "text2")
	ev2, err := Collect(r2)
	if err != nil {
		t.Fatalf("second writer output does not read back: %v\n%s", err, text2.String())
	}
	if !reflect.DeepEqual(resolve(ev1, r1.Tables()), resolve(ev2, r2.Tables())) {
		t.Fatalf("JSON Lines round trip changed events:\n%s\nthen\n%s", text1.String(), text2.String())
	}
	var text3 bytes.Buffer
	writeAll(t, NewJSONLWriter(&text3), ev2, r2.Tables())
	if stripComments(text3.String()) != stripComments(text2.String()) {
		t.Fatalf("JSON Lines text not stable:\n%s\nthen\n%s", text2.String(), text3.String())
	}
}

func FuzzBinaryReader(f *testing.F) {
	f.Add(goldenTrace) // More seeds are in testdata/fuzz/FuzzBinaryReader.
	// Raw launch words, which the reader matches against its allocation map.
	const a, b = 0x7f0000100000, 0x7f0000200000
	f.Add(rawTrace("streamcheck-intercept 0.3.0", alloc(a, 0x1000), alloc(b, 0x100), free(b),
		launch([]uint64{a, b}, []uint64{a + 8, b + 8}, []uint64{b, a + 16}),
		rawEvent{op: uint64(OpVmmUnmap), ptr: a, size: 0x2000}, launch(nil, []uint64{a}, nil)))
	f.Fuzz(fuzzBinary)
}

func fuzzBinary(t *testing.T, data []byte) {
	r, err := NewBinaryReader(bytes.NewReader(data), "fuzz.bin")
	if err != nil {
		var pe *PositionError
		if !errors.As(err, &pe) || !(errors.Is(err, ErrFormat) || errors.Is(err, ErrTruncated)) {
			t.Fatalf("header error %v", err)
		}
		return
	}
	// Every event takes at least 3 bytes.
	events := readFuzz(t, r, len(data)+1, ErrTruncated, ErrCorrupt)
	tb := r.Tables()

	// What was read writes back to a trace that reads the same.
	var bin bytes.Buffer
	writeAll(t, NewBinaryWriter(&bin), events, tb)
	r2, err := NewBinaryReader(bytes.NewReader(bin.Bytes()), "again.bin")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Collect(r2)
	if err != nil {
		t.Fatalf("writer output does not read back: %v", err)
	}
	if !reflect.DeepEqual(resolve(again, r2.Tables()), resolve(events, tb)) {
		t.Fatalf("binary round trip changed events")
	}
	// The writer learns the dropped count from the tables of the events.
	if len(events) > 0 && r2.Tables().Dropped != tb.Dropped {
		t.Fatalf("dropped %d, want %d", r2.Tables().Dropped, tb.Dropped)
	}
	checkJSONLWriter(t, events, tb)
}

func FuzzJSONLReader(f *testing.F) {
	f.Add(everyOp) // More seeds are in testdata/fuzz/FuzzJSONLReader.
	f.Fuzz(fuzzJSONL)
}

func fuzzJSONL(t *testing.T, text string) {
	checkLineScanner(t, text)
	r := NewJSONLReader(strings.NewReader(text), "fuzz.jsonl")
	// Every event takes at least one line.
	events := readFuzz(t, r, strings.Count(text, "\n")+2, ErrCorrupt, ErrFormat)
	tb := r.Tables()
	// Not a trace is said before any event, or not at all.
	if _, err := Collect(r); errors.Is(err, ErrFormat) && len(events) > 0 {
		t.Fatalf("ErrFormat after %d events: %v", len(events), err)
	}

	// What was read writes back to text that reads the same, handles
	// included.
	var text1 bytes.Buffer
	writeAll(t, NewJSONLWriter(&text1), events, tb)
	r1 := NewJSONLReader(bytes.NewReader(text1.Bytes()), "text1")
	again, err := Collect(r1)
	if err != nil {
		t.Fatalf("writer output does not read back: %v\n%s", err, text1.String())
	}
	if !reflect.DeepEqual(resolve(again, r1.Tables()), resolve(events, tb)) {
		t.Fatalf("JSON Lines round trip changed events:\n%s\nwritten as\n%s", text, text1.String())
	}
	checkJSONLWriter(t, events, tb)

	var bin bytes.Buffer
	writeAll(t, NewBinaryWriter(&bin), events, tb)
	r2, err := NewBinaryReader(bytes.NewReader(bin.Bytes()), "fuzz.bin")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Collect(r2); err != nil || !reflect.DeepEqual(resolve(again, r2.Tables()), resolve(events, tb)) {
		t.Fatalf("binary round trip changed events (%v)", err)
	}
}

// checkLineScanner holds the JSON Lines scanner to encoding/json: every
// line it decodes, encoding/json decodes to the same jsonLine (but for a
// key given twice, which encoding/json takes the last of).
func checkLineScanner(t *testing.T, text string) {
	var s lineScanner
	for line := range strings.SplitSeq(text, "\n") {
		b := bytes.TrimSpace([]byte(line))
		var fast, slow jsonLine
		dup, ok := s.scan(b, &fast)
		if !ok || dup != "" {
			continue
		}
		fast.stackRaw = nil
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("the scanner decodes a line encoding/json refuses (%v): %q", err, line)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("the scanner and encoding/json differ on %q:\n%+v\n%+v", line, fast, slow)
		}
	}
}
