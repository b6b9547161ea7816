package model

import (
	"bytes"
	"io"
	"testing"
)

// benchTrace returns a binary trace of n events in a realistic mix: async
// allocations, launches with addresses, copies and frees on a few streams.
func benchTrace(b *testing.B, n int) []byte {
	t := NewTables()
	api := t.Intern("cudaLaunchKernel")
	kernel := t.Intern("_Z6stencilPfPKfi")
	file := t.Intern("solver.cu")
	t.Stacks = append(t.Stacks, []Frame{{PC: 0x401234, File: file, Line: 42}})
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	ev := Event{TID: 1234, API: api, Stack: 1}
	for i := range n {
		ev.Seq = uint64(i + 1)
		ev.Time = int64(i) * 350
		ev.Stream = 0x55d0c0de0000 + uint64(i%4)*0x100
		ev.Ptrs = ev.Ptrs[:0]
		addr := 0x7f3a00000000 + uint64(i%64)<<20
		switch i % 4 {
		case 0:
			ev.Op, ev.Ptr, ev.Size = OpMallocAsync, addr, 1<<20
		case 1:
			ev.Op, ev.Kernel, ev.Ptrs = OpLaunch, kernel, append(ev.Ptrs, addr, addr+4096)
		case 2:
			ev.Op, ev.Ptr, ev.Src, ev.Size, ev.Kind = OpMemcpyAsync, addr, 0x7ffd00001000, 4096, CopyH2D
		case 3:
			ev.Op, ev.Ptr = OpFreeAsync, addr
		}
		if err := w.WriteEvent(&ev, t); err != nil {
			b.Fatal(err)
		}
		ev = Event{TID: ev.TID, API: api, Stack: 1, Ptrs: ev.Ptrs}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every event of r and returns how many there were.
func readAll(b *testing.B, r Reader) int {
	var ev Event
	n := 0
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func BenchmarkBinaryReader(b *testing.B) {
	const n = 1 << 20
	data := benchTrace(b, n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), "bench.bin") // As the CLI opens traces.
		if err != nil {
			b.Fatal(err)
		}
		events += readAll(b, r)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkJSONLReader(b *testing.B) {
	const n = 1 << 16
	bin := benchTrace(b, n)
	r, err := NewBinaryReader(bytes.NewReader(bin), "bench.bin")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewJSONLWriter(&buf)
	var ev Event
	for r.Next(&ev) == nil {
		if err := w.WriteEvent(&ev, r.Tables()); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for b.Loop() {
		events += readAll(b, NewJSONLReader(bytes.NewReader(data), "bench.jsonl"))
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
