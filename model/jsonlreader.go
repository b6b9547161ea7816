package model

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// MaxLineLen is the longest JSON Lines line accepted, in bytes.
const MaxLineLen = 1 << 20

// byteOrderMark may start a UTF-8 text file; the reader skips it.
const byteOrderMark = "\xef\xbb\xbf"

// firstSyntheticHandle is where the handles given to stream, event and pool
// names start, clear of the reserved stream handles.
const firstSyntheticHandle = 0x1000

// JSONLReader reads the JSON Lines form of a trace.
type JSONLReader struct {
	sc       *bufio.Scanner
	file     string
	line     int
	seq      uint64
	tables   *Tables
	streams  nameSpace
	events   nameSpace
	pools    nameSpace
	graphs   nameSpace // Graphs and executable graphs: never reported by
	execs    nameSpace // name, so their names make no Name records.
	nodes    nameSpace // Graph nodes, likewise.
	stackIDs map[string]StackID
	key      []byte // Scratch for stack keys.
	frames   []Frame
	scanner  lineScanner
	decoded  jsonLine           // The line being decoded.
	spelled  map[string]StackID // Stacks by their text in a line (see stack).
	spelling []byte             // Scratch for keys of spelled.
	damage   string             // From a "# the source trace is damaged: " line.
	// started is set once a line showed the input is a trace: an event,
	// or one of JSONLWriter's comments. Before that, a line that is not a
	// JSON object with an "op" means the input is not a trace at all
	// (ErrFormat, not damage), and so does an input without events.
	started bool
	err     error // Sticky once set.
}

// NewJSONLReader returns a reader of JSON Lines from r; file names the trace
// in errors.
func NewJSONLReader(r io.Reader, file string) *JSONLReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineLen+1) // +1: room for the newline.
	t := NewTables()
	return &JSONLReader{
		sc:       sc,
		file:     file,
		tables:   t,
		streams:  newNameSpace(t, ObjectStream),
		events:   newNameSpace(t, ObjectEvent),
		pools:    newNameSpace(t, ObjectPool),
		graphs:   newNameSpace(t, objectUnnamed),
		execs:    newNameSpace(t, objectUnnamed),
		nodes:    newNameSpace(t, objectUnnamed),
		stackIDs: map[string]StackID{},
		spelled:  map[string]StackID{},
	}
}

// Tables returns the definitions read so far.
func (r *JSONLReader) Tables() *Tables { return r.tables }

// Next implements Reader.
func (r *JSONLReader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimSpace(r.sc.Bytes())
		if r.line == 1 {
			b = bytes.TrimPrefix(b, []byte(byteOrderMark))
		}
		if len(b) == 0 {
			continue
		}
		if b[0] == '#' {
			if err := r.directive(b); err != nil {
				r.err = &PositionError{File: r.file, Line: r.line, Err: err}
				return r.err
			}
			continue
		}
		if field, err := r.decode(b, ev); err != nil {
			if !r.started && notAnEvent(b) {
				err, field = formatf("%v: line %d is not a JSON Lines event (a JSON object with an \"op\")", ErrFormat, r.line), ""
			}
			r.err = &PositionError{File: r.file, Line: r.line, Field: field, Err: err}
			return r.err
		}
		r.started = true
		return nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = corruptf("line longer than %d bytes", MaxLineLen)
		}
		r.err = &PositionError{File: r.file, Line: r.line + 1, Err: err}
		return r.err
	}
	r.tables.Events = r.seq
	if !r.started {
		r.err = &PositionError{File: r.file, Err: formatf("%v: no events (only blank lines and comments)", ErrFormat)}
		return r.err
	}
	if r.damage != "" {
		// What the converted source said of itself, as the last line.
		r.err = &PositionError{File: r.file, Line: r.line, Err: copiedDamage(r.damage, noteTruncated(r.damage))}
		return r.err
	}
	r.err = io.EOF
	return io.EOF
}

// Comments that JSONLWriter writes for what a line cannot hold, read back
// so that a converted trace keeps them: the recorder's dropped count, and
// the damage of the trace it was converted from.
const (
	directiveDropped       = "# the recorder dropped %d events"
	directiveDroppedPrefix = "# the recorder dropped "
	directiveDamaged       = "# the source trace is damaged: "
	directiveProcess       = "# process %d (parent %d), exe %q, command %q, started %d ns after the Unix epoch, recorder %q"
	directiveEmpty         = "# a streamcheck trace without events"
)

// directive acts on a comment line that is one of JSONLWriter's notes.
// Any of them marks the input as a trace (a converted trace may hold no
// event). A dropped count that is not a count is an error: read as a
// plain comment, it would lose the warning that findings may be
// incomplete.
func (r *JSONLReader) directive(b []byte) error {
	if string(b) == directiveEmpty {
		r.started = true
		return nil
	}
	if count, ok := bytes.CutPrefix(b, []byte(directiveDroppedPrefix)); ok {
		count, _ = bytes.CutSuffix(count, []byte(" events"))
		n, err := strconv.ParseUint(string(count), 10, 64)
		if err != nil {
			return corruptf("the recorder's dropped-events count %q is not a number from 0 to %d", short(count), uint64(math.MaxUint64))
		}
		r.tables.Dropped = n
		r.started = true
		return nil
	}
	if note, ok := bytes.CutPrefix(b, []byte(directiveDamaged)); ok {
		r.damage = string(note)
		r.started = true
		return nil
	}
	var p Process
	var exe, args, version string
	if _, err := fmt.Sscanf(string(b), directiveProcess, &p.PID, &p.PPID, &exe, &args, &p.Start, &version); err == nil {
		p.Exe, p.Args, p.Version = r.tables.Intern(exe), r.tables.Intern(args), r.tables.Intern(version)
		r.tables.Process = p
		r.started = true
	}
	return nil
}

// notAnEvent reports whether line is not even the start of an event: not
// a JSON object, or one without a string "op".
func notAnEvent(line []byte) bool {
	var l struct {
		Op *string `json:"op"`
	}
	return json.Unmarshal(line, &l) != nil || l.Op == nil
}

// jsonFrame is a frame of "stack" written as an object: the form for a
// frame whose module is known (see appendFrame).
type jsonFrame struct {
	PC     *json.RawMessage `json:"pc"`
	Func   string           `json:"func"`
	File   string           `json:"file"`
	Line   uint32           `json:"line"`
	Module string           `json:"module"`
	Base   *json.RawMessage `json:"base"`
	Size   *json.RawMessage `json:"size"`
}

// stackFrame reads one element of "stack": a string (parseFrame) or an
// object (jsonFrame).
func (r *JSONLReader) stackFrame(raw json.RawMessage) (Frame, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return parseFrame(r.tables, s), nil
	}
	var j jsonFrame
	if err := json.Unmarshal(raw, &j); err != nil {
		return Frame{}, corruptf("a frame is a string or an object with pc, func, file, line, module, base, size")
	}
	f := Frame{Func: r.tables.Intern(j.Func), File: r.tables.Intern(j.File), Line: j.Line}
	var err error
	if f.PC, err = optionalUint(j.PC); err != nil {
		return Frame{}, err
	}
	if j.Module != "" {
		var m Module
		if m.Base, err = optionalUint(j.Base); err != nil {
			return Frame{}, err
		}
		if m.Size, err = optionalUint(j.Size); err != nil {
			return Frame{}, err
		}
		m.Path = r.tables.Intern(j.Module)
		f.Module = r.tables.module(m)
	}
	return f, nil
}

// optionalUint reads an absent value as 0, else as parseAddress does.
func optionalUint(raw *json.RawMessage) (uint64, error) {
	if raw == nil {
		return 0, nil
	}
	return parseAddress(*raw)
}

func (r *JSONLReader) stack(l *jsonLine, ev *Event) (string, error) {
	// A stack is parsed once per spelling: most lines repeat one of a few.
	var text []byte
	switch {
	case l.Site != nil && l.Stack == nil:
		text = append(append(r.spelling[:0], 's'), *l.Site...)
	case l.Site == nil && l.stackRaw != nil:
		text = append(append(r.spelling[:0], '['), l.stackRaw...)
	}
	if text != nil {
		r.spelling = text
		if id, ok := r.spelled[string(text)]; ok {
			ev.Stack = id
			return "", nil
		}
	}
	field, err := r.parseStack(l, ev)
	if err == nil && text != nil && len(r.spelled) < maxSpelledStacks {
		r.spelled[string(text)] = ev.Stack
	}
	return field, err
}

// maxSpelledStacks bounds JSONLReader.spelled.
const maxSpelledStacks = 1 << 16

// parseStack reads "site" or "stack" into ev.Stack, a stack of r.tables.
func (r *JSONLReader) parseStack(l *jsonLine, ev *Event) (string, error) {
	r.frames = r.frames[:0]
	switch {
	case l.Site != nil && l.Stack != nil:
		return "site", corruptf("give site or stack, not both")
	case l.Site != nil:
		r.frames = append(r.frames, parseFrame(r.tables, *l.Site))
	default:
		for _, raw := range l.Stack {
			f, err := r.stackFrame(raw)
			if err != nil {
				return "stack", err
			}
			r.frames = append(r.frames, f)
		}
	}
	if len(r.frames) == 0 {
		return "", nil
	}
	// Identical stacks share one id: key the frames' encoding.
	k := r.key[:0]
	for _, f := range r.frames {
		k = binary.AppendUvarint(k, f.PC)
		k = binary.AppendUvarint(k, uint64(f.Func))
		k = binary.AppendUvarint(k, uint64(f.File))
		k = binary.AppendUvarint(k, uint64(f.Line))
	}
	r.key = k
	if id, ok := r.stackIDs[string(k)]; ok {
		ev.Stack = id
		return "", nil
	}
	id := StackID(len(r.tables.Stacks))
	r.tables.Stacks = append(r.tables.Stacks, append([]Frame(nil), r.frames...))
	r.stackIDs[string(k)] = id
	ev.Stack = id
	return "", nil
}

// objectUnnamed is the kind of a nameSpace whose names make no Name
// records (graphs and executable graphs).
const objectUnnamed ObjectKind = 0

// nameSpace maps the names of one kind of object to handles.
type nameSpace struct {
	tables  *Tables
	kind    ObjectKind
	handles map[string]uint64
	used    map[uint64]bool
	next    uint64
}

func newNameSpace(t *Tables, kind ObjectKind) nameSpace {
	return nameSpace{tables: t, kind: kind, handles: map[string]uint64{}, used: map[uint64]bool{}, next: firstSyntheticHandle}
}

// resolve returns the handle of name. A name seen before keeps its handle
// (also when it is created again). A new name is an error unless introduce
// is set; it then gets the handle it spells if it is lower-case hex without
// leading zeros ("0x7f3a00") and that handle is free, else the next free
// synthetic handle, which Tables.Names records.
func (n *nameSpace) resolve(name string, introduce bool) (uint64, error) {
	if n.kind == ObjectStream {
		if h, ok := reservedStream(name); ok {
			return h, nil
		}
	}
	if n.kind == ObjectPool && name == poolNameDefault {
		return 0, nil
	}
	if h, ok := n.handles[name]; ok {
		return h, nil
	}
	if name == "" {
		return 0, corruptf("empty name")
	}
	if !introduce {
		return 0, corruptf("unknown %s name %q (not created before)", n.kindName(), name)
	}
	// Only the canonical spelling, the one the writer uses, names a handle
	// by value: then a handle has one hex name.
	h, ok := parseHex(name)
	if !ok || name != "0x"+strconv.FormatUint(h, 16) || n.used[h] || n.reserved(h) {
		for n.used[n.next] {
			n.next++
		}
		h = n.next
		if n.kind != objectUnnamed {
			n.tables.Names[ObjectKey{n.kind, h}] = n.tables.Intern(name)
		}
	}
	n.handles[name] = h
	n.used[h] = true
	return h, nil
}

func (n *nameSpace) reserved(h uint64) bool {
	switch n.kind {
	case ObjectStream:
		return h <= StreamPerThread
	case ObjectPool, objectUnnamed:
		return h == 0 // The device's default pool; no graph.
	}
	return false
}

func (n *nameSpace) kindName() string {
	switch n.kind {
	case ObjectStream:
		return "stream"
	case ObjectEvent:
		return "event"
	}
	return "pool"
}
