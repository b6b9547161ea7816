package model

import (
	"encoding/binary"
	"io"
	"math"
	"math/bits"
)

// BinaryReader reads a binary trace (docs/trace-format.md) and checks it as
// it goes: definitions must be dense and defined before use, event fields in
// range, seq strictly increasing. Whatever the input, it does not panic, and
// it allocates only for definitions (bounded by the file's size) and to grow
// the caller's Event.Ptrs; reading an event allocates nothing.
type BinaryReader struct {
	raw     *RawReader
	file    string
	tables  *Tables
	lastSeq uint64
	nevents uint64 // events read, for the End record's count
	haveSeq bool
	err     error // Sticky once set.
	// words resolves raw launch words (launchwords.go), for recorders
	// that write them; nil for others.
	words *launchWords
}

// NewBinaryReader reads the header of a binary trace. file names the trace in
// errors.
func NewBinaryReader(r io.Reader, file string) (*BinaryReader, error) {
	raw, err := NewRawReader(r, file)
	if err != nil {
		return nil, err
	}
	return &BinaryReader{raw: raw, file: file, tables: NewTables()}, nil
}

// Tables returns the definitions read so far.
func (r *BinaryReader) Tables() *Tables { return r.tables }

// Following returns, once Next returned io.EOF, a reader of the trace that
// follows this one in the same file (traces concatenated with cat: each is
// a process of its own), and its offset; nil when none follows. An error is
// damage: the following trace's header is cut short or not readable.
func (r *BinaryReader) Following() (*BinaryReader, int64, error) {
	if r.err != io.EOF {
		return nil, 0, nil
	}
	raw, off, err := r.raw.Following()
	if raw == nil {
		return nil, off, err
	}
	return &BinaryReader{raw: raw, file: r.file, tables: NewTables()}, off, nil
}

// Next implements Reader.
func (r *BinaryReader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	// Most records are short events, wholly buffered.
	if p, off, ok := r.raw.nextEvent(); ok {
		if err := r.event(p, ev); err != nil {
			return r.fail(off, err)
		}
		return nil
	}
	for {
		rec, err := r.raw.Next()
		if err != nil {
			r.err = err
			return err
		}
		if rec.Kind == RecordEvent {
			err = r.event(rec.Payload, ev)
		} else {
			err = r.definition(rec.Kind, rec.Payload)
		}
		if err != nil {
			return r.fail(rec.Offset, err)
		}
		switch rec.Kind {
		case RecordEvent:
			return nil
		case RecordEnd:
			r.err = r.raw.AfterEnd()
			return r.err
		}
	}
}

// fail makes err, about the record at offset off, the reader's sticky error.
func (r *BinaryReader) fail(off int64, err error) error {
	pe := &PositionError{File: r.file, Offset: off, Err: err}
	if fe, ok := err.(*fieldError); ok {
		pe.Field, pe.Err = fe.field, fe.err
	}
	r.err = pe
	return pe
}

// fieldError names the field a decoding error is about.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }

func fieldErr(field, format string, args ...any) error {
	return &fieldError{field, corruptf(format, args...)}
}

func recordName(k RecordKind) string {
	switch k {
	case RecordEnd:
		return "end"
	case RecordString:
		return "string"
	case RecordStack:
		return "stack"
	case RecordModule:
		return "module"
	case RecordProcess:
		return "process"
	case RecordName:
		return "name"
	case RecordDamage:
		return "damage"
	case RecordEvent:
		return "event"
	}
	return "unknown"
}

// Payload fields of each record kind, in order (all uvarint-encoded; signed
// ones are zig-zag).
var (
	eventFields = [...]string{"op", "seq", "tid", "device", "time", "api", "stack", "result", "stream", "event", "ptr", "size", "src", "kind", "flags", "pool", "kernel", "prio", "nptrs"}
	// eventTailFields follow the addresses; a record may end before any.
	eventTailFields = [...]string{"graph", "exec", "peer_src", "peer_dst", "node", "mem_op", "mem_flags", "value", "weak", "dur", "family", "pitch", "height", "attr", "src_size", "nranks", "live"}
	endFields       = [...]string{"events", "dropped"}
	stackFields     = [...]string{"id", "frames"}
	frameFields     = [...]string{"pc", "module", "func", "file", "line"}
	moduleFields    = [...]string{"id", "base", "size", "path"}
	processFields   = [...]string{"pid", "ppid", "exe", "start", "version"}
	nameFields      = [...]string{"handle", "name"}
	stringFields    = [...]string{"id"}
)

// decode reads one uvarint per name from p into v, returning the rest of p.
func decode(kind RecordKind, p []byte, names []string, v []uint64) ([]byte, error) {
	rest, n := readUvarints(p, v[:len(names)])
	if n < len(names) {
		return nil, fieldErr(names[n], "corrupt %s record: malformed or missing value", recordName(kind))
	}
	return rest, nil
}

// readUvarints decodes len(out) uvarints from b. It returns the bytes after
// them and how many it decoded: fewer than len(out) means value n is cut
// short or overflows 64 bits. This is the hot path of trace reading.
//
// When b has at least 8 bytes of capacity past its end (RawReader's
// payloads do), each value is decoded from one 64-bit load, which saves the
// bounds checks of a byte-by-byte decode; the bytes past the end only fill
// the load and are masked off.
func readUvarints(b []byte, out []uint64) ([]byte, int) {
	if cap(b)-len(b) < 8 {
		return readUvarintsSafe(b, out)
	}
	i := 0
	for k := range out {
		if i >= len(b) {
			return b[i:], k
		}
		u := binary.LittleEndian.Uint64(b[i : i+8 : cap(b)])
		if u&0x80 == 0 { // Half the fields are one-byte values (mostly zero).
			out[k] = u & 0x7f
			i++
			continue
		}
		stops := ^u & 0x8080808080808080
		n := bits.TrailingZeros64(stops)/8 + 1 // Bytes in this value.
		if stops == 0 || i+n > len(b) {
			// Longer than 8 bytes, cut short or malformed: decode the rest
			// byte by byte.
			rest, m := readUvarintsSafe(b[i:], out[k:])
			return rest, k + m
		}
		out[k] = packUvarint(u, n)
		i += n
	}
	return b[i:], len(out)
}

// packUvarint returns the value of the n-byte uvarint (n <= 8) in the low
// bytes of u.
func packUvarint(u uint64, n int) uint64 {
	x := u & 0x7f7f7f7f7f7f7f7f & (1<<(8*n) - 1)
	// Pack the 7-bit groups together: pairs, then quads, then all.
	x = x&0x007f007f007f007f | (x&0x7f007f007f007f00)>>1
	x = x&0x00003fff00003fff | (x&0x3fff00003fff0000)>>2
	return x&0x000000000fffffff | (x&0x0fffffff00000000)>>4
}

// readUvarintsSafe is readUvarints for any b: it reads no byte past len(b).
func readUvarintsSafe(b []byte, out []uint64) ([]byte, int) {
	i := 0
	for k := range out {
		if i < len(b) && b[i] < 0x80 {
			out[k] = uint64(b[i])
			i++
			continue
		}
		if len(b)-i >= 8 {
			u := binary.LittleEndian.Uint64(b[i:])
			if stops := ^u & 0x8080808080808080; stops != 0 {
				n := bits.TrailingZeros64(stops)/8 + 1 // Bytes in this value.
				out[k] = packUvarint(u, n)
				i += n
				continue
			}
		}
		var x uint64
		j, s := i, uint(0)
		for {
			if j >= len(b) || j-i == binary.MaxVarintLen64 {
				return b[i:], k
			}
			c := b[j]
			j++
			if c < 0x80 {
				if s == 63 && c > 1 {
					return b[i:], k
				}
				x |= uint64(c) << s
				break
			}
			x |= uint64(c&0x7f) << s
			s += 7
		}
		out[k] = x
		i = j
	}
	return b[i:], len(out)
}

func unzigzag(u uint64) int64 {
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func fitsInt32(v int64) bool { return v == int64(int32(v)) }

// eventRangeErr names the event field whose value does not fit its type.
func eventRangeErr(v []uint64) error {
	for i, x := range v {
		switch i {
		case 2, 14: // tid, flags
			if x > math.MaxUint32 {
				return fieldErr(eventFields[i], "corrupt event record: %s %d out of range", eventFields[i], x)
			}
		case 3, 7, 17: // device, result, prio
			if s := unzigzag(x); !fitsInt32(s) {
				return fieldErr(eventFields[i], "corrupt event record: %s %d out of range", eventFields[i], s)
			}
		}
	}
	return nil
}

func toUint32(kind RecordKind, field string, v uint64) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, fieldErr(field, "corrupt %s record: %s %d out of range", recordName(kind), field, v)
	}
	return uint32(v), nil
}

func (r *BinaryReader) event(p []byte, ev *Event) error {
	t := r.tables
	var v [len(eventFields)]uint64
	rest, err := decode(RecordEvent, p, eventFields[:], v[:])
	if err != nil {
		return err
	}
	op, seq, api, stack, kind, kernel, nptrs := v[0], v[1], v[5], v[6], v[13], v[16], v[18]
	if op == 0 || op >= uint64(opCount) {
		return fieldErr("op", "corrupt event record: unknown op %d", op)
	}
	if r.haveSeq && seq <= r.lastSeq {
		return fieldErr("seq", "corrupt event record: seq %d does not follow seq %d", seq, r.lastSeq)
	}
	if api >= uint64(len(t.Strings)) {
		return fieldErr("api", "corrupt event record: undefined string id %d", api)
	}
	if stack >= uint64(len(t.Stacks)) {
		return fieldErr("stack", "corrupt event record: undefined stack id %d", stack)
	}
	if kind > uint64(CopyH2H) {
		return fieldErr("kind", "corrupt event record: unknown copy kind %d", kind)
	}
	if kernel >= uint64(len(t.Strings)) {
		return fieldErr("kernel", "corrupt event record: undefined string id %d", kernel)
	}
	device, result, prio := unzigzag(v[3]), unzigzag(v[7]), unzigzag(v[17])
	if v[2] > math.MaxUint32 || v[14] > math.MaxUint32 || !fitsInt32(device) || !fitsInt32(result) || !fitsInt32(prio) {
		return eventRangeErr(v[:])
	}
	// A flag changes what an event means: one this reader does not know
	// (from a newer recorder) must stop it, not be read past.
	if unknown := v[14] &^ uint64(knownFlags); unknown != 0 {
		return fieldErr("flags", "corrupt event record: unknown flag bits %#x (recorded by a newer streamcheck?)", unknown)
	}
	// Each address takes at least one byte (a raw word eight), which
	// bounds the allocation.
	raw := uint32(v[14])&FlagRawWords != 0
	width := uint64(1)
	if raw {
		width = 8
	}
	if nptrs > MaxLaunchPtrs || nptrs*width > uint64(len(rest)) {
		return fieldErr("nptrs", "corrupt event record: %d addresses do not fit (limit %d, %d bytes left)", nptrs, MaxLaunchPtrs, len(rest))
	}
	ptrs := ev.Ptrs[:0]
	if nptrs > 0 {
		if uint64(cap(ptrs)) < nptrs {
			ptrs = make([]uint64, nptrs)
		}
		ptrs = ptrs[:nptrs]
		if raw {
			for i := range ptrs {
				ptrs[i] = binary.LittleEndian.Uint64(rest[8*i:])
			}
			rest = rest[8*nptrs:]
		} else {
			var n int
			if rest, n = readUvarints(rest, ptrs); n < len(ptrs) {
				return fieldErr("ptrs", "corrupt event record: address %d of %d malformed or missing", n, nptrs)
			}
		}
	}
	// Fields added later, each optional: absent is zero.
	var graph [len(eventTailFields)]uint64
	if len(rest) > 0 {
		if tail, n := readUvarints(rest, graph[:]); n < len(graph) && len(tail) > 0 {
			return fieldErr(eventTailFields[n], "corrupt event record: %s malformed", eventTailFields[n])
		}
	}
	for i := 2; i < 4; i++ {
		if graph[i] > math.MaxUint32 {
			return fieldErr(eventTailFields[i], "corrupt event record: device %d out of range", graph[i])
		}
	}
	if graph[5] > math.MaxUint8 || !MemOpKind(graph[5]).Valid() {
		return fieldErr("mem_op", "corrupt event record: unknown memory operation %d", graph[5])
	}
	if graph[6] > math.MaxUint32 {
		return fieldErr("mem_flags", "corrupt event record: mem_flags %d out of range", graph[6])
	}
	if graph[8] > nptrs {
		return fieldErr("weak", "corrupt event record: %d weak addresses of %d", graph[8], nptrs)
	}
	if graph[10] > math.MaxUint8 || !Family(graph[10]).Valid() || (Op(op) == OpFree && !Family(graph[10]).Frees()) {
		return fieldErr("family", "corrupt event record: unknown allocation family %d", graph[10])
	}
	if graph[13] > math.MaxUint8 {
		return fieldErr("attr", "corrupt event record: pool attribute %d out of range", graph[13])
	}
	if graph[15] > math.MaxUint32 {
		return fieldErr("nranks", "corrupt event record: rank count %d out of range", graph[15])
	}
	if graph[16] > graph[8] || (graph[16] != 0 && !raw) {
		return fieldErr("live", "corrupt event record: %d live-only words of %d weak (raw words: %v)", graph[16], graph[8], raw)
	}
	if raw && r.words == nil {
		return fieldErr("flags", "corrupt event record: raw launch words from a recorder that does not write them")
	}
	ev.Ptrs = ptrs
	ev.SrcSize, ev.Ranks = graph[14], uint32(graph[15])
	ev.Dur, ev.Family, ev.Pitch, ev.Height, ev.Attr = graph[9], Family(graph[10]), graph[11], graph[12], PoolAttr(graph[13])
	ev.Graph, ev.Exec = graph[0], graph[1]
	ev.PeerSrc, ev.PeerDst = int32(uint32(graph[2])), int32(uint32(graph[3]))
	ev.Node = graph[4]
	ev.MemOp, ev.MemFlags, ev.Value = MemOpKind(graph[5]), uint32(graph[6]), graph[7]
	ev.Weak = uint32(graph[8])
	ev.Op = Op(op)
	ev.TID = uint32(v[2])
	ev.Device = int32(device)
	ev.Result = int32(result)
	ev.Flags = uint32(v[14])
	ev.Prio = int32(prio)
	ev.Seq = seq
	ev.Time = unzigzag(v[4])
	ev.API = StringID(api)
	ev.Stack = StackID(stack)
	ev.Stream = v[8]
	if ev.Stream == StreamLegacyAlt {
		ev.Stream = StreamLegacy
	}
	ev.Event = v[9]
	ev.Ptr = v[10]
	ev.Size = v[11]
	ev.Src = v[12]
	ev.Kind = MemcpyKind(kind)
	ev.Pool = v[15]
	ev.Kernel = StringID(kernel)
	if r.words != nil {
		if raw {
			r.words.resolve(ev, int(graph[16]))
		}
		r.words.observe(ev)
	}
	r.lastSeq, r.haveSeq = seq, true
	r.nevents++
	return nil
}

// definition reads a record that is not an event: it defines what events
// refer to, or ends the trace.
func (r *BinaryReader) definition(kind RecordKind, p []byte) error {
	switch kind {
	case RecordEnd:
		return r.defineEnd(p)
	case RecordString:
		return r.defineString(p)
	case RecordStack:
		return r.defineStack(p)
	case RecordModule:
		return r.defineModule(p)
	case RecordProcess:
		return r.defineProcess(p)
	case RecordDamage:
		return r.defineDamage(p)
	case RecordName:
		return r.defineName(p)
	}
	return nil
}

func (r *BinaryReader) defineEnd(p []byte) error {
	const kind = RecordEnd
	t := r.tables
	var v [len(endFields)]uint64
	if _, err := decode(kind, p, endFields[:], v[:]); err != nil {
		return err
	}
	t.Events, t.Dropped = v[0], v[1]
	// A lost event record (a damaged kind byte reads as a record kind
	// of a later version, which is skipped) shows here.
	if v[0] != r.nevents {
		return fieldErr("events", "corrupt end record: it counts %d events, %d were read", v[0], r.nevents)
	}
	return nil
}

func (r *BinaryReader) defineString(p []byte) error {
	const kind = RecordString
	t := r.tables
	var v [len(stringFields)]uint64
	rest, err := decodeNext(kind, p, stringFields[:], v[:], len(t.Strings))
	if err != nil {
		return err
	}
	t.AddString(string(rest))
	return nil
}

func (r *BinaryReader) defineStack(p []byte) error {
	const kind = RecordStack
	t := r.tables
	var v [len(stackFields)]uint64
	rest, err := decodeNext(kind, p, stackFields[:], v[:], len(t.Stacks))
	if err != nil {
		return err
	}
	// A frame takes at least 5 bytes, which bounds the allocation.
	if n := v[1]; n > uint64(len(rest)/len(frameFields)) {
		return fieldErr("frames", "corrupt stack record: %d frames do not fit in %d bytes", n, len(rest))
	}
	frames := make([]Frame, v[1])
	for i := range frames {
		if frames[i], rest, err = r.frame(rest); err != nil {
			return err
		}
	}
	t.Stacks = append(t.Stacks, frames)
	return nil
}

// frame reads a stack record's frame from the start of p, and returns the
// rest of p.
func (r *BinaryReader) frame(p []byte) (Frame, []byte, error) {
	const kind = RecordStack
	t := r.tables
	var v [len(frameFields)]uint64
	rest, err := decode(kind, p, frameFields[:], v[:])
	if err != nil {
		return Frame{}, rest, err
	}
	if v[1] >= uint64(len(t.Modules)) {
		return Frame{}, rest, fieldErr("module", "corrupt stack record: undefined module id %d", v[1])
	}
	if err := checkString(kind, "func", v[2], t); err != nil {
		return Frame{}, rest, err
	}
	if err := checkString(kind, "file", v[3], t); err != nil {
		return Frame{}, rest, err
	}
	line, err := toUint32(kind, "line", v[4])
	if err != nil {
		return Frame{}, rest, err
	}
	return Frame{PC: v[0], Module: uint32(v[1]), Func: StringID(v[2]), File: StringID(v[3]), Line: line}, rest, nil
}

func (r *BinaryReader) defineModule(p []byte) error {
	const kind = RecordModule
	t := r.tables
	var v [len(moduleFields)]uint64
	if _, err := decodeNext(kind, p, moduleFields[:], v[:], len(t.Modules)); err != nil {
		return err
	}
	if err := checkString(kind, "path", v[3], t); err != nil {
		return err
	}
	t.Modules = append(t.Modules, Module{ID: uint32(v[0]), Base: v[1], Size: v[2], Path: StringID(v[3])})
	return nil
}

func (r *BinaryReader) defineProcess(p []byte) error {
	const kind = RecordProcess
	t := r.tables
	var v [len(processFields)]uint64
	rest, err := decode(kind, p, processFields[:], v[:])
	if err != nil {
		return err
	}
	pid, err := toUint32(kind, "pid", v[0])
	if err != nil {
		return err
	}
	ppid, err := toUint32(kind, "ppid", v[1])
	if err != nil {
		return err
	}
	if err := checkString(kind, "exe", v[2], t); err != nil {
		return err
	}
	if err := checkString(kind, "version", v[4], t); err != nil {
		return err
	}
	t.Process = Process{PID: pid, PPID: ppid, Exe: StringID(v[2]), Start: unzigzag(v[3]), Version: StringID(v[4])}
	if recordsRawLaunchWords(t.String(t.Process.Version)) && r.words == nil {
		r.words = &launchWords{}
	}
	// The command line came later: traces without it stay valid.
	if len(rest) > 0 {
		if _, n := readUvarints(rest, v[:1]); n != 1 {
			return fieldErr("args", "corrupt process record: malformed or missing value")
		}
		if err := checkString(kind, "args", v[0], t); err != nil {
			return err
		}
		t.Process.Args = StringID(v[0])
	}
	return nil
}

// defineDamage reads the record a copy of a damaged trace ends with,
// saying how its source ended.
func (r *BinaryReader) defineDamage(p []byte) error {
	if len(p) == 0 {
		return fieldErr("kind", "corrupt damage record: malformed or missing value")
	}
	how, note := p[0], p[1:]
	if how == damageTruncatedDropped || how == damageCorruptDropped {
		// The source's dropped count, which an End record would hold.
		n, w := binary.Uvarint(note)
		if w <= 0 {
			return fieldErr("dropped", "corrupt damage record: malformed or missing value")
		}
		r.tables.Dropped, note = n, note[w:]
	}
	return copiedDamage(string(note), how == damageTruncated || how == damageTruncatedDropped)
}

func (r *BinaryReader) defineName(p []byte) error {
	const kind = RecordName
	t := r.tables
	if len(p) == 0 {
		return fieldErr("kind", "corrupt name record: malformed or missing value")
	}
	okind := ObjectKind(p[0])
	if okind < ObjectStream || okind > ObjectPool {
		return fieldErr("kind", "corrupt name record: unknown object kind %d", okind)
	}
	var v [len(nameFields)]uint64
	if _, err := decode(kind, p[1:], nameFields[:], v[:]); err != nil {
		return err
	}
	handle, name := v[0], v[1]
	if err := checkString(kind, "name", name, t); err != nil {
		return err
	}
	if okind == ObjectStream && handle == StreamLegacyAlt {
		handle = StreamLegacy
	}
	key := ObjectKey{okind, handle}
	if name == 0 {
		delete(t.Names, key)
	} else {
		t.Names[key] = StringID(name)
	}
	return nil
}

// decodeNext decodes a definition record as decode does, and checks that
// it defines id next (its first field).
func decodeNext(kind RecordKind, p []byte, names []string, v []uint64, next int) ([]byte, error) {
	rest, err := decode(kind, p, names, v)
	if err != nil {
		return nil, err
	}
	if err := checkNextID(kind, v[0], next); err != nil {
		return nil, err
	}
	return rest, nil
}

// checkNextID enforces dense definitions: the record must define id next.
func checkNextID(kind RecordKind, id uint64, next int) error {
	if id != uint64(next) {
		return fieldErr("id", "corrupt %s record: defines id %d, expected %d (ids are dense, in order, from 1)", recordName(kind), id, next)
	}
	if next > math.MaxUint32 {
		return fieldErr("id", "corrupt %s record: too many definitions", recordName(kind))
	}
	return nil
}

func checkString(kind RecordKind, field string, id uint64, t *Tables) error {
	if id >= uint64(len(t.Strings)) {
		return fieldErr(field, "corrupt %s record: undefined string id %d", recordName(kind), id)
	}
	return nil
}
