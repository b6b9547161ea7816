package model

import (
	"reflect"
	"strings"
	"testing"
)

// The op spec's rows are whole and their names unique, so that the C
// header and the JSON Lines names cannot collide.
func TestOpSpecRows(t *testing.T) {
	names, cnames := map[string]Op{}, map[string]Op{}
	for op := OpInvalid + 1; op < opCount; op++ {
		s := op.Spec()
		if s.Op != op || s.Name == "" || s.API == "" || !strings.HasPrefix(s.CName, "OP_") {
			t.Errorf("op %d: incomplete row %+v", op, s)
		}
		if prev, dup := names[s.Name]; dup {
			t.Errorf("ops %d and %d are both named %q", prev, op, s.Name)
		}
		if prev, dup := cnames[s.CName]; dup {
			t.Errorf("ops %d and %d are both %s in C", prev, op, s.CName)
		}
		names[s.Name], cnames[s.CName] = op, op
		if s.Flags&^knownFlags != 0 {
			t.Errorf("%s: flags %#x outside the flag spec", s.Name, s.Flags&^knownFlags)
		}
		if s.required&s.optional != 0 {
			t.Errorf("%s: fields %#x both required and optional", s.Name, s.required&s.optional)
		}
		if op.OnStream() != s.OnStream {
			t.Errorf("%s: OnStream() = %v, the spec says %v (onStreamOps holds 64 ops)", s.Name, op.OnStream(), s.OnStream)
		}
		if got, ok := ParseOp(s.Name); !ok || got != op {
			t.Errorf("ParseOp(%q) = %v, %v", s.Name, got, ok)
		}
	}
	if n := len(OpSpecs()); n != int(opCount)-1 {
		t.Errorf("OpSpecs has %d rows, want %d", n, opCount-1)
	}
	var seen uint32
	for i, f := range flagSpecs {
		// FlagRawWords is the binary recorder's alone: readers resolve it.
		if f.Bit != 1<<i || !strings.HasPrefix(f.CName, "FLAG_") || (len(f.JSON) == 0) != (f.Bit == FlagRawWords) {
			t.Errorf("flag row %d: %+v (want bit %d, a C name and a JSON Lines key)", i, f, i)
		}
		seen |= f.Bit
	}
	if seen != knownFlags {
		t.Errorf("flags %#x, known %#x", seen, knownFlags)
	}
	// The keys the spec documents are the ones the reader decodes.
	tags := map[string]bool{}
	for f := range reflect.TypeFor[jsonLine]().Fields() {
		tags[f.Tag.Get("json")] = true
	}
	for _, s := range OpSpecs() {
		for _, k := range append(s.JSONRequired(), s.JSONOptional()...) {
			if !tags[k] {
				t.Errorf("%s: key %q is not a field of jsonLine", s.Name, k)
			}
		}
	}
}

// setBinaryField gives the event record field name of ev a value of its
// own (none of them 0), as the op spec names the fields.
func setBinaryField(t *testing.T, ev *Event, name string) {
	switch name {
	case "stream":
		ev.Stream = StreamPerThread // the one a synchronous copy or set may name besides the legacy stream
	case "event":
		ev.Event = 0xe000
	case "ptr":
		ev.Ptr = 0x7f0000
	case "size":
		ev.Size = 4096
	case "src":
		ev.Src = 0x7f8000 // an address, or a graph's handle
	case "kind":
		ev.Kind = CopyD2H
	case "pool":
		ev.Pool = 0x9000
	case "kernel":
		// Set with the tables (kernelName).
	case "prio":
		ev.Prio = -2
	case "nptrs", "ptrs":
		ev.Ptrs = []uint64{0x7f0000, 0x7f0100, 0x7f0200}
	case "weak":
		ev.Weak = 1
	case "graph":
		ev.Graph = 0x6000
	case "exec":
		ev.Exec = 0x6800
	case "peer_src":
		ev.PeerSrc = 1
	case "peer_dst":
		ev.PeerDst = 2
	case "node":
		ev.Node = 0x5000
	case "mem_op":
		ev.MemOp = MemOpWrite64
	case "mem_flags":
		ev.MemFlags = MemWriteNoBarrier
	case "value":
		ev.Value = 0xfeed
	case "family":
		ev.Family = FamilyPitched
		if ev.Op == OpFree {
			ev.Family = FamilyHost // a family a free releases
		}
	case "pitch":
		ev.Pitch = 512
	case "height":
		ev.Height = 8
	case "attr":
		ev.Attr = PoolAttrReleaseThreshold
	case "src_size":
		ev.SrcSize = 8192
	case "nranks":
		ev.Ranks = 4
	case "live":
		// Not an Event field: it comes with raw launch words only, which
		// the binary reader resolves (launchwords_test.go).
	default:
		t.Fatalf("the op spec names event field %q, which this test does not know", name)
	}
}

// Every op of the spec, with every field and flag it carries set, comes
// back whole from binary and from JSON Lines; JSON Lines drops the fields
// and flags the spec does not give the op, and keeps all others.
func TestOpSpecRoundTrip(t *testing.T) {
	every := append(append(eventFields[:], "ptrs"), eventTailFields[:]...)
	for _, s := range OpSpecs() {
		t.Run(s.Name, func(t *testing.T) {
			tables := NewTables()
			common := Event{Seq: 1, Op: s.Op, TID: 3, Device: 1, Time: 77, Dur: 1500, Result: ResultNotReady,
				API: tables.Intern("cudaSomething"), Stack: 1}
			tables.Stacks = append(tables.Stacks, []Frame{{File: tables.Intern("app.cu"), Line: 12}})
			full, want := common, common
			for _, name := range every {
				switch name {
				case "op", "seq", "tid", "device", "time", "api", "stack", "result", "flags", "dur":
				default:
					setBinaryField(t, &full, name)
				}
			}
			full.Kernel = tables.Intern("kernel")
			full.Flags = knownFlags &^ FlagRawWords // the recorder's form, which readers resolve
			for _, name := range s.BinaryFields() {
				setBinaryField(t, &want, name)
				if name == "kernel" {
					want.Kernel = full.Kernel
				}
			}
			want.Flags = s.Flags

			bin, err := EncodeBinary(tables, []Event{full})
			if err != nil {
				t.Fatal(err)
			}
			if got := collect(t, binReader(t, bin)); !reflect.DeepEqual(got, resolve([]Event{full}, tables)) {
				t.Errorf("binary changed the event:\n got %+v\nwant %+v", got, resolve([]Event{full}, tables))
			}

			text := encodeJSONL(t, tables, []Event{full})
			got := collect(t, jsonlReader(text))
			// Lines before the op's own create the stream or event it
			// names (the writer's implicit creates).
			got = got[len(got)-1:]
			got[0].Seq = 1
			if w := resolve([]Event{want}, tables); !reflect.DeepEqual(got, w) {
				t.Errorf("JSON Lines:\n%s got %+v\nwant %+v", text, got, w)
			}
			if again := encodeJSONL(t, tables, []Event{want}); again != text {
				t.Errorf("JSON Lines of the fields the op carries differs from the full event's:\n%s\nthen\n%s", text, again)
			}
		})
	}
}
