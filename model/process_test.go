package model

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The process record's command line round-trips, and a record without it
// (written before the field existed) still reads.
func TestProcessArgs(t *testing.T) {
	tables := NewTables()
	tables.Process = Process{PID: 7, PPID: 1, Exe: tables.Intern("/usr/bin/python3"), Args: tables.Intern("python3 train.py --steps 3")}
	got := binaryRoundTrip(t, tables, Event{Seq: 1, Op: OpDeviceSync})
	if got := got.String(got.Process.Args); got != "python3 train.py --steps 3" {
		t.Errorf("args = %q", got)
	}

	// An older trace: header, exe string, a five-field process record, End.
	var old []byte
	old = append(old, BinaryMagic...)
	old = binary.LittleEndian.AppendUint16(old, BinaryVersion)
	old = append(old, 0, 0, 0, 0, 0, 0)
	rec := func(kind RecordKind, payload []byte) {
		old = append(old, byte(kind))
		old = binary.AppendUvarint(old, uint64(len(payload)))
		old = append(old, payload...)
	}
	rec(RecordString, append([]byte{1}, "/bin/app"...))
	rec(RecordProcess, []byte{9, 1, 1, 0, 0})
	rec(RecordEnd, []byte{0, 0})
	r, err := NewBinaryReader(bytes.NewReader(old), "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(r); err != nil {
		t.Fatalf("five-field process record: %v", err)
	}
	if p := r.Tables().Process; p.PID != 9 || p.Args != 0 || r.Tables().String(p.Exe) != "/bin/app" {
		t.Errorf("process = %+v", p)
	}
}
