package model

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Writer writes events to a trace. WriteEvent takes each event with the
// tables its ids refer to; every call must pass the same Tables (it may have
// grown in between). Close finishes the trace and flushes it, but does not
// close the underlying io.Writer.
type Writer interface {
	WriteEvent(ev *Event, t *Tables) error
	// Close ends a complete trace.
	Close() error
	// Source gives the writer the source's tables when no event was
	// written, before Close or CloseDamaged, so that a trace with no events
	// keeps its process and its dropped count. After an event it does
	// nothing.
	Source(t *Tables) error
	// CloseDamaged ends a trace copied from a damaged source, keeping the
	// damage visible to readers of the output: a binary trace ends with a
	// Damage record quoting note and no End record, a JSON Lines trace with
	// a comment quoting note; the readers report either as the damage.
	CloseDamaged(note string) error
}

// BinaryWriter writes binary format version 1. It emits the definitions an
// event needs just before the event, numbering them densely itself, so the
// output is valid whatever ids the source tables use.
type BinaryWriter struct {
	w       *bufio.Writer
	err     error // Sticky once set.
	closed  bool
	src     *Tables // Tables of the last event, for Close.
	strings []StringID
	stacks  []StackID
	modules []uint32
	names   map[ObjectKey]StringID // Source name id last written per handle.
	nStr    StringID
	nStack  StackID
	nMod    uint32
	events  uint64
	lastSeq uint64
	payload []byte
}

// NewBinaryWriter returns a writer to w. The header is written on the first
// WriteEvent or Close.
func NewBinaryWriter(w io.Writer) *BinaryWriter {
	return &BinaryWriter{w: bufio.NewWriterSize(w, 64<<10), names: map[ObjectKey]StringID{}}
}

// WriteEvent writes ev, preceded by the definitions and names it needs.
func (w *BinaryWriter) WriteEvent(ev *Event, t *Tables) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("binary trace writer: write after Close")
	}
	w.err = w.writeEvent(ev, t)
	return w.err
}

func (w *BinaryWriter) writeEvent(ev *Event, t *Tables) error {
	if !ev.Op.Valid() {
		return fmt.Errorf("binary trace writer: seq %d: invalid op %d", ev.Seq, ev.Op)
	}
	if w.events > 0 && ev.Seq <= w.lastSeq {
		return fmt.Errorf("binary trace writer: seq %d does not follow seq %d", ev.Seq, w.lastSeq)
	}
	if ev.Kind > CopyH2H {
		return fmt.Errorf("binary trace writer: seq %d: invalid copy kind %d", ev.Seq, ev.Kind)
	}
	if !ev.MemOp.Valid() {
		return fmt.Errorf("binary trace writer: seq %d: invalid memory operation %d", ev.Seq, ev.MemOp)
	}
	if !ev.Family.Valid() || (ev.Op == OpFree && !ev.Family.Frees()) {
		return fmt.Errorf("binary trace writer: seq %d: invalid allocation family %d", ev.Seq, ev.Family)
	}
	if len(ev.Ptrs) > MaxLaunchPtrs {
		return fmt.Errorf("binary trace writer: seq %d: %d launch addresses exceed the limit of %d", ev.Seq, len(ev.Ptrs), MaxLaunchPtrs)
	}
	if int(ev.Weak) > len(ev.Ptrs) {
		return fmt.Errorf("binary trace writer: seq %d: %d weak addresses of %d", ev.Seq, ev.Weak, len(ev.Ptrs))
	}
	if ev.Flags&FlagRawWords != 0 {
		// Readers resolve raw words; only the shim writes them.
		return fmt.Errorf("binary trace writer: seq %d: raw launch words (flag bit 10) are the recorder's form: write the matched addresses", ev.Seq)
	}
	if err := w.Source(t); err != nil {
		return err
	}
	w.src = t
	api, err := w.str(t, ev.API)
	if err != nil {
		return err
	}
	kernel, err := w.str(t, ev.Kernel)
	if err != nil {
		return err
	}
	stack, err := w.stack(t, ev.Stack)
	if err != nil {
		return err
	}
	if len(t.Names) > 0 {
		for _, k := range [...]ObjectKey{{ObjectStream, ev.Stream}, {ObjectEvent, ev.Event}, {ObjectPool, ev.Pool}} {
			if err := w.name(t, k); err != nil {
				return err
			}
		}
	}
	p := w.payload[:0]
	p = binary.AppendUvarint(p, uint64(ev.Op))
	p = binary.AppendUvarint(p, ev.Seq)
	p = binary.AppendUvarint(p, uint64(ev.TID))
	p = binary.AppendVarint(p, int64(ev.Device))
	p = binary.AppendVarint(p, ev.Time)
	p = binary.AppendUvarint(p, uint64(api))
	p = binary.AppendUvarint(p, uint64(stack))
	p = binary.AppendVarint(p, int64(ev.Result))
	p = binary.AppendUvarint(p, ev.Stream)
	p = binary.AppendUvarint(p, ev.Event)
	p = binary.AppendUvarint(p, ev.Ptr)
	p = binary.AppendUvarint(p, ev.Size)
	p = binary.AppendUvarint(p, ev.Src)
	p = binary.AppendUvarint(p, uint64(ev.Kind))
	p = binary.AppendUvarint(p, uint64(ev.Flags))
	p = binary.AppendUvarint(p, ev.Pool)
	p = binary.AppendUvarint(p, uint64(kernel))
	p = binary.AppendVarint(p, int64(ev.Prio))
	p = binary.AppendUvarint(p, uint64(len(ev.Ptrs)))
	for _, a := range ev.Ptrs {
		p = binary.AppendUvarint(p, a)
	}
	// Optional fields: most events leave them out, and each is written
	// only with those after it that are set.
	tail := [len(eventTailFields)]uint64{ev.Graph, ev.Exec, uint64(uint32(ev.PeerSrc)), uint64(uint32(ev.PeerDst)), ev.Node,
		uint64(ev.MemOp), uint64(ev.MemFlags), ev.Value, uint64(ev.Weak), ev.Dur, uint64(ev.Family), ev.Pitch, ev.Height, uint64(ev.Attr),
		ev.SrcSize, uint64(ev.Ranks)}
	n := len(tail)
	for n > 0 && tail[n-1] == 0 {
		n--
	}
	for _, x := range tail[:n] {
		p = binary.AppendUvarint(p, x)
	}
	w.payload = p
	if err := w.record(RecordEvent, p); err != nil {
		return err
	}
	w.events++
	w.lastSeq = ev.Seq
	return nil
}

// Source implements Writer: the header and the process, once.
func (w *BinaryWriter) Source(t *Tables) error {
	if w.err != nil || w.src != nil {
		return w.err
	}
	w.writeHeader()
	if t.Process != (Process{}) {
		if err := w.writeProcess(t); err != nil {
			w.err = err
			return err
		}
	}
	w.src = t
	return nil
}

// Close writes the End record (events written, and the source's dropped
// count) and flushes.
func (w *BinaryWriter) Close() error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	if w.src == nil {
		w.writeHeader()
	}
	var dropped uint64
	if w.src != nil {
		dropped = w.src.Dropped
	}
	p := binary.AppendUvarint(w.payload[:0], w.events)
	p = binary.AppendUvarint(p, dropped)
	if err := w.record(RecordEnd, p); err != nil {
		w.err = err
		return err
	}
	w.err = w.w.Flush()
	return w.err
}

// EncodeBinary returns events, and the definitions in tables they use, as
// one complete binary trace; an event whose Seq is 0 is numbered by its
// place (1, 2, ...). For tests and tools that build a trace in memory.
func EncodeBinary(tables *Tables, events []Event) ([]byte, error) {
	var buf bytes.Buffer
	w := NewBinaryWriter(&buf)
	for i := range events {
		ev := events[i]
		if ev.Seq == 0 {
			ev.Seq = uint64(i + 1)
		}
		if err := w.WriteEvent(&ev, tables); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Damage record payloads start with how the source ended; the Dropped
// kinds follow it with the source's dropped count (a uvarint), which the
// missing End record would have held, then the note.
const (
	damageTruncated        byte = 1
	damageCorrupt          byte = 2
	damageTruncatedDropped byte = 3
	damageCorruptDropped   byte = 4
)

// CloseDamaged ends the output with a Damage record quoting note, and no
// End record: readers stop there with the source's damage (truncated if
// note says the source was, else corrupt), and readers that skip the
// record still find the trace truncated.
func (w *BinaryWriter) CloseDamaged(note string) error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	if w.src == nil {
		w.writeHeader()
	}
	const maxNote = 4096
	if len(note) > maxNote {
		note = note[:maxNote]
	}
	how := damageCorrupt
	if noteTruncated(note) {
		how = damageTruncated
	}
	p := append(w.payload[:0], how)
	if w.src != nil && w.src.Dropped > 0 {
		p[0] += damageTruncatedDropped - damageTruncated
		p = binary.AppendUvarint(p, w.src.Dropped)
	}
	if err := w.record(RecordDamage, append(p, note...)); err != nil {
		w.err = err
		return err
	}
	w.err = w.w.Flush()
	return w.err
}

func (w *BinaryWriter) writeHeader() {
	var h [binaryHeaderLen]byte
	copy(h[:], BinaryMagic)
	binary.LittleEndian.PutUint16(h[8:], BinaryVersion)
	w.w.Write(h[:]) // A write error stays in the bufio.Writer and surfaces on the next write or Flush.
}

func (w *BinaryWriter) record(kind RecordKind, payload []byte) error {
	if len(payload) > MaxRecordLen {
		return fmt.Errorf("binary trace writer: %s record of %d bytes exceeds the %d-byte limit", recordName(kind), len(payload), MaxRecordLen)
	}
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = byte(kind)
	n := binary.PutUvarint(head[1:], uint64(len(payload)))
	w.w.Write(head[:1+n])
	_, err := w.w.Write(payload)
	return err
}

// str returns the output id of source string id, writing its String record
// the first time.
func (w *BinaryWriter) str(t *Tables, id StringID) (StringID, error) {
	if id == 0 {
		return 0, nil
	}
	if int(id) >= len(t.Strings) {
		return 0, fmt.Errorf("binary trace writer: string id %d not in tables", id)
	}
	w.strings = grow(w.strings, int(id))
	if out := w.strings[id]; out != 0 {
		return out, nil
	}
	p := binary.AppendUvarint(nil, uint64(w.nStr+1))
	p = append(p, t.Strings[id]...)
	if err := w.record(RecordString, p); err != nil {
		return 0, err
	}
	w.nStr++
	w.strings[id] = w.nStr
	return w.nStr, nil
}

func (w *BinaryWriter) stack(t *Tables, id StackID) (StackID, error) {
	if id == 0 {
		return 0, nil
	}
	if int(id) >= len(t.Stacks) {
		return 0, fmt.Errorf("binary trace writer: stack id %d not in tables", id)
	}
	w.stacks = grow(w.stacks, int(id))
	if out := w.stacks[id]; out != 0 {
		return out, nil
	}
	frames := t.Stacks[id]
	p := binary.AppendUvarint(nil, uint64(w.nStack+1))
	p = binary.AppendUvarint(p, uint64(len(frames)))
	for _, f := range frames {
		mod, err := w.module(t, f.Module)
		if err != nil {
			return 0, err
		}
		fn, err := w.str(t, f.Func)
		if err != nil {
			return 0, err
		}
		file, err := w.str(t, f.File)
		if err != nil {
			return 0, err
		}
		p = binary.AppendUvarint(p, f.PC)
		p = binary.AppendUvarint(p, uint64(mod))
		p = binary.AppendUvarint(p, uint64(fn))
		p = binary.AppendUvarint(p, uint64(file))
		p = binary.AppendUvarint(p, uint64(f.Line))
	}
	if err := w.record(RecordStack, p); err != nil {
		return 0, err
	}
	w.nStack++
	w.stacks[id] = w.nStack
	return w.nStack, nil
}

func (w *BinaryWriter) module(t *Tables, id uint32) (uint32, error) {
	if id == 0 {
		return 0, nil
	}
	if int64(id) >= int64(len(t.Modules)) {
		return 0, fmt.Errorf("binary trace writer: module id %d not in tables", id)
	}
	w.modules = grow(w.modules, int(id))
	if out := w.modules[id]; out != 0 {
		return out, nil
	}
	m := t.Modules[id]
	path, err := w.str(t, m.Path)
	if err != nil {
		return 0, err
	}
	p := binary.AppendUvarint(nil, uint64(w.nMod+1))
	p = binary.AppendUvarint(p, m.Base)
	p = binary.AppendUvarint(p, m.Size)
	p = binary.AppendUvarint(p, uint64(path))
	if err := w.record(RecordModule, p); err != nil {
		return 0, err
	}
	w.nMod++
	w.modules[id] = w.nMod
	return w.nMod, nil
}

// name writes a Name record for k when the source names it and the name
// differs from the one last written for it.
func (w *BinaryWriter) name(t *Tables, k ObjectKey) error {
	id, ok := t.Names[k]
	if !ok || id == 0 || w.names[k] == id {
		return nil
	}
	out, err := w.str(t, id)
	if err != nil {
		return err
	}
	p := append(w.payload[:0], byte(k.Kind))
	p = binary.AppendUvarint(p, k.Handle)
	p = binary.AppendUvarint(p, uint64(out))
	w.payload = p
	if err := w.record(RecordName, p); err != nil {
		return err
	}
	w.names[k] = id
	return nil
}

func (w *BinaryWriter) writeProcess(t *Tables) error {
	exe, err := w.str(t, t.Process.Exe)
	if err != nil {
		return err
	}
	version, err := w.str(t, t.Process.Version)
	if err != nil {
		return err
	}
	args, err := w.str(t, t.Process.Args)
	if err != nil {
		return err
	}
	p := binary.AppendUvarint(nil, uint64(t.Process.PID))
	p = binary.AppendUvarint(p, uint64(t.Process.PPID))
	p = binary.AppendUvarint(p, uint64(exe))
	p = binary.AppendVarint(p, t.Process.Start)
	p = binary.AppendUvarint(p, uint64(version))
	p = binary.AppendUvarint(p, uint64(args))
	return w.record(RecordProcess, p)
}

// grow extends s with zeros so that index i is valid.
func grow[T any](s []T, i int) []T {
	if i < len(s) {
		return s
	}
	return append(s, make([]T, i+1-len(s))...)
}
