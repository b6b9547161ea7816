package model

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
)

// MaxLineLen is the longest JSON Lines line accepted, in bytes.
const MaxLineLen = 1 << 20

// byteOrderMark may start a UTF-8 text file; the reader skips it.
const byteOrderMark = "\xef\xbb\xbf"

// firstSyntheticHandle is where the handles given to stream, event and pool
// names start, clear of the reserved stream handles.
const firstSyntheticHandle = 0x1000

// jsonLine is one decoded line. Pointer and RawMessage fields tell a missing
// field from a zero value.
type jsonLine struct {
	Op       *string           `json:"op"`
	Stream   *string           `json:"stream"`
	Event    *string           `json:"event"`
	Pool     *string           `json:"pool"`
	Ptr      json.RawMessage   `json:"ptr"`
	Dst      json.RawMessage   `json:"dst"`
	Src      json.RawMessage   `json:"src"`
	Size     json.RawMessage   `json:"size"`
	Kind     *string           `json:"kind"`
	Kernel   *string           `json:"kernel"`
	Ptrs     []json.RawMessage `json:"ptrs"`
	WeakPtrs []json.RawMessage `json:"weak_ptrs"`
	Flags    *string           `json:"flags"`
	Priority *int32            `json:"priority"`
	Implicit *bool             `json:"implicit"`
	External *bool             `json:"external"`
	Lifetime *bool             `json:"lifetime"`
	Cond     *bool             `json:"conditional"`
	Pageable *bool             `json:"pageable"`
	Pinned   *bool             `json:"pinned"`
	Graph    json.RawMessage   `json:"graph"` // true (malloc_async) or a graph's name
	Exec     *string           `json:"exec"`
	Node     *string           `json:"node"`
	From     *string           `json:"from"`
	MemOp    *string           `json:"mem_op"`
	MemFlags *uint32           `json:"mem_flags"`
	Value    json.RawMessage   `json:"value"`
	PeerSrc  *int32            `json:"peer_src"`
	PeerDst  *int32            `json:"peer_dst"`
	TID      *uint32           `json:"tid"`
	Device   *int32            `json:"device"`
	API      *string           `json:"api"`
	Result   json.RawMessage   `json:"result"`
	Site     *string           `json:"site"`
	Stack    []json.RawMessage `json:"stack"`
	Time     *int64            `json:"time"`
	Dur      json.RawMessage   `json:"dur"`
	Pitch    json.RawMessage   `json:"pitch"`
	Height   json.RawMessage   `json:"height"`
	Attr     *string           `json:"attr"`
}

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
	damage   string // From a "# the source trace is damaged: " line.
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
			r.directive(b)
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
	directiveDropped = "# the recorder dropped %d events"
	directiveDamaged = "# the source trace is damaged: "
	directiveProcess = "# process %d (parent %d), exe %q, command %q, started %d ns after the Unix epoch, recorder %q"
	directiveEmpty   = "# a streamcheck trace without events"
)

// directive acts on a comment line that is one of JSONLWriter's notes.
// Any of them marks the input as a trace (a converted trace may hold no
// event).
func (r *JSONLReader) directive(b []byte) {
	if string(b) == directiveEmpty {
		r.started = true
		return
	}
	var n uint64
	if _, err := fmt.Sscanf(string(b), directiveDropped, &n); err == nil {
		r.tables.Dropped = n
		r.started = true
		return
	}
	if note, ok := bytes.CutPrefix(b, []byte(directiveDamaged)); ok {
		r.damage = string(note)
		r.started = true
		return
	}
	var p Process
	var exe, args, version string
	if _, err := fmt.Sscanf(string(b), directiveProcess, &p.PID, &p.PPID, &exe, &args, &p.Start, &version); err == nil {
		p.Exe, p.Args, p.Version = r.tables.Intern(exe), r.tables.Intern(args), r.tables.Intern(version)
		r.tables.Process = p
		r.started = true
	}
}

// notAnEvent reports whether line is not even the start of an event: not
// a JSON object, or one without a string "op".
func notAnEvent(line []byte) bool {
	var l struct {
		Op *string `json:"op"`
	}
	return json.Unmarshal(line, &l) != nil || l.Op == nil
}

// decode fills ev from one line, or names the field at fault.
func (r *JSONLReader) decode(b []byte, ev *Event) (string, error) {
	var l jsonLine
	if err := json.Unmarshal(b, &l); err != nil {
		return jsonError(err)
	}
	if l.Op == nil {
		return "op", corruptf("missing")
	}
	op, ok := ParseOp(*l.Op)
	if !ok {
		return "op", corruptf("unknown op %q", *l.Op)
	}
	form := &opSpecs[op]
	var err error
	// Fields in a fixed order, so the first fault named is predictable.
	*ev = Event{Op: op, TID: 1, Ptrs: ev.Ptrs[:0]}
	if form.has(jStream) {
		// Optional only for synchronous copies and sets, which run on the
		// legacy stream unless the line names the per-thread one.
		if l.Stream == nil && form.required&jStream != 0 {
			return "stream", missing(op)
		}
		if l.Stream != nil {
			if ev.Stream, err = r.streams.resolve(*l.Stream, form.introduces&jStream != 0); err != nil {
				return "stream", err
			}
			if form.required&jStream == 0 && ev.Stream != StreamLegacy && ev.Stream != StreamPerThread {
				return "stream", corruptf("a synchronous copy or set runs on %q or %q, not %q", streamNameLegacy, streamNamePerThread, *l.Stream)
			}
		}
	}
	if form.has(jEvent) {
		if l.Event == nil {
			return "event", missing(op)
		}
		if ev.Event, err = r.events.resolve(*l.Event, form.introduces&jEvent != 0); err != nil {
			return "event", err
		}
	}
	if form.has(jPool) && l.Pool != nil {
		if ev.Pool, err = r.pools.resolve(*l.Pool, true); err != nil {
			return "pool", err
		}
	} else if form.required&jPool != 0 {
		return "pool", missing(op)
	}
	for _, a := range [...]struct {
		bit   jsonFields
		name  string
		raw   json.RawMessage
		field *uint64
	}{
		{jPtr, "ptr", l.Ptr, &ev.Ptr},
		{jDst, "dst", l.Dst, &ev.Ptr},
		{jSrc, "src", l.Src, &ev.Src},
		{jSize, "size", l.Size, &ev.Size},
	} {
		if !form.has(a.bit) {
			continue
		}
		if isNull(a.raw) {
			if form.required&a.bit != 0 {
				return a.name, missing(op)
			}
			continue
		}
		if *a.field, err = parseAddress(a.raw); err != nil {
			return a.name, err
		}
	}
	if form.has(jFamily) && l.Kind != nil {
		if ev.Family, ok = ParseFamily(*l.Kind, op == OpFree); !ok {
			if op == OpFree {
				return "kind", corruptf("unknown free kind %q (want device, host or unregister)", *l.Kind)
			}
			return "kind", corruptf("unknown allocation kind %q (want device, pitched, managed, host or registered)", *l.Kind)
		}
	}
	if form.has(jPitch) {
		pitched := ev.Family == FamilyPitched
		for _, a := range [...]struct {
			name  string
			raw   json.RawMessage
			field *uint64
		}{{"pitch", l.Pitch, &ev.Pitch}, {"height", l.Height, &ev.Height}} {
			switch {
			case isNull(a.raw) && pitched:
				return a.name, corruptf("missing (required by a pitched malloc)")
			case isNull(a.raw):
			case !pitched:
				return a.name, corruptf("only a pitched malloc (\"kind\":\"pitched\") has a %s", a.name)
			default:
				if *a.field, err = parseAddress(a.raw); err != nil {
					return a.name, err
				}
			}
		}
	}
	if form.has(jAttr) {
		if l.Attr == nil {
			return "attr", missing(op)
		}
		if ev.Attr, ok = ParsePoolAttr(*l.Attr); !ok {
			return "attr", corruptf("unknown pool attribute %q (want release_threshold, or CUDA's number of the attribute)", *l.Attr)
		}
	}
	if form.has(jKind) {
		if l.Kind == nil {
			return "kind", missing(op)
		}
		if ev.Kind, ok = ParseMemcpyKind(*l.Kind); !ok {
			return "kind", corruptf("unknown copy kind %q (want h2d, d2h, d2d, h2h or default)", *l.Kind)
		}
	}
	if form.has(jKernel) {
		if l.Kernel != nil {
			ev.Kernel = r.tables.Intern(*l.Kernel)
		}
		if len(l.Ptrs) > MaxLaunchPtrs {
			return "ptrs", corruptf("%d addresses exceed the limit of %d", len(l.Ptrs), MaxLaunchPtrs)
		}
		if len(l.Ptrs)+len(l.WeakPtrs) > MaxLaunchPtrs {
			return "weak_ptrs", corruptf("%d addresses exceed the limit of %d", len(l.Ptrs)+len(l.WeakPtrs), MaxLaunchPtrs)
		}
		for i, raw := range l.Ptrs {
			a, err := parseAddress(raw)
			if err != nil {
				return "ptrs", corruptf("element %d: %v", i, err)
			}
			ev.Ptrs = append(ev.Ptrs, a)
		}
		for i, raw := range l.WeakPtrs {
			a, err := parseAddress(raw)
			if err != nil {
				return "weak_ptrs", corruptf("element %d: %v", i, err)
			}
			ev.Ptrs = append(ev.Ptrs, a)
		}
		ev.Weak = uint32(len(l.WeakPtrs))
	}
	if form.hasFlag(FlagNonBlocking) && l.Flags != nil {
		switch *l.Flags {
		case "blocking":
		case "non_blocking":
			ev.Flags |= FlagNonBlocking
		default:
			return "flags", corruptf("unknown stream flags %q (want blocking or non_blocking)", *l.Flags)
		}
	}
	if form.has(jPriority) && l.Priority != nil {
		ev.Prio = *l.Priority
	}
	for _, f := range [...]struct {
		flag uint32
		set  *bool
	}{
		{FlagExternal, l.External},
		{FlagLifetime, l.Lifetime},
		{FlagConditional, l.Cond},
		{FlagImplicit, l.Implicit},
	} {
		if form.hasFlag(f.flag) && f.set != nil && *f.set {
			ev.Flags |= f.flag
		}
	}
	if form.hasFlag(FlagGraphAlloc) && l.Graph != nil {
		var alloc bool
		if err := json.Unmarshal(l.Graph, &alloc); err != nil {
			return "graph", corruptf("got %s, want true or false", short(l.Graph))
		}
		if alloc {
			ev.Flags |= FlagGraphAlloc
		}
	}
	if form.hasFlag(FlagGraphNode) && l.Graph != nil && string(l.Graph) != "null" {
		var name string
		if err := json.Unmarshal(l.Graph, &name); err != nil {
			return "graph", corruptf("got %s, want the name of the graph the node is in", short(l.Graph))
		}
		if ev.Graph, err = r.graphs.resolve(name, true); err != nil {
			return "graph", err
		}
		ev.Flags |= FlagGraphNode
	}
	if form.has(jGraphName) && l.Graph != nil {
		var name string
		if err := json.Unmarshal(l.Graph, &name); err != nil {
			return "graph", corruptf("got %s, want the graph's name", short(l.Graph))
		}
		if ev.Graph, err = r.graphs.resolve(name, true); err != nil {
			return "graph", err
		}
	} else if form.required&jGraphName != 0 {
		return "graph", missing(op)
	}
	if !form.has(jGraphName) && !form.hasFlag(FlagGraphAlloc|FlagGraphNode) && l.Graph != nil {
		// Ignored here, but of one of its two types, as every field is.
		var b bool
		var name string
		if json.Unmarshal(l.Graph, &b) != nil && json.Unmarshal(l.Graph, &name) != nil {
			return "graph", corruptf("got %s, want true, false or a graph's name", short(l.Graph))
		}
	}
	if form.has(jExec) && l.Exec != nil {
		if ev.Exec, err = r.execs.resolve(*l.Exec, true); err != nil {
			return "exec", err
		}
	} else if form.required&jExec != 0 {
		return "exec", missing(op)
	}
	if form.has(jFrom) && l.From != nil {
		if ev.Src, err = r.graphs.resolve(*l.From, true); err != nil {
			return "from", err
		}
	} else if form.required&jFrom != 0 {
		return "from", missing(op)
	}
	if form.has(jNode) && l.Node != nil {
		if ev.Node, err = r.nodes.resolve(*l.Node, true); err != nil {
			return "node", err
		}
	}
	if form.has(jMemOp) {
		if l.MemOp != nil {
			if ev.MemOp, ok = ParseMemOpKind(*l.MemOp); !ok {
				return "mem_op", corruptf("unknown memory operation %q (want wait32, wait64, write32, write64, atomic, flush or barrier)", *l.MemOp)
			}
		}
		if l.MemFlags != nil {
			ev.MemFlags = *l.MemFlags
		}
	}
	if form.has(jMemOp|jValue) && !isNull(l.Value) {
		if ev.Value, err = parseAddress(l.Value); err != nil {
			return "value", err
		}
	} else if form.required&jValue != 0 {
		return "value", missing(op)
	}
	if form.hasFlag(FlagPeer) && (l.PeerSrc != nil || l.PeerDst != nil) {
		if l.PeerSrc == nil {
			return "peer_src", corruptf("missing: a peer copy (peer_dst given) needs both peer_src and peer_dst")
		}
		if l.PeerDst == nil {
			return "peer_dst", corruptf("missing: a peer copy (peer_src given) needs both peer_src and peer_dst")
		}
		ev.Flags |= FlagPeer
		ev.PeerSrc, ev.PeerDst = *l.PeerSrc, *l.PeerDst
	}
	if form.hasFlag(FlagPageable | FlagPinned) {
		pinned := l.Pinned != nil && *l.Pinned
		pageable := defaultPageable(op, ev.Kind, pinned)
		if l.Pageable != nil {
			pageable = *l.Pageable
		}
		if pinned {
			ev.Flags |= FlagPinned
		}
		if pageable {
			ev.Flags |= FlagPageable
		}
	}
	if !isNull(l.Result) {
		if ev.Result, err = parseResult(l.Result); err != nil {
			return "result", err
		}
	} else if form.required&jResult != 0 {
		return "result", missing(op)
	}
	if l.TID != nil {
		ev.TID = *l.TID
	}
	if l.Device != nil {
		ev.Device = *l.Device
	}
	if l.Time != nil {
		ev.Time = *l.Time
	}
	if !isNull(l.Dur) {
		if ev.Dur, err = parseAddress(l.Dur); err != nil {
			return "dur", err
		}
	}
	api := defaultAPI(ev)
	if l.API != nil {
		api = *l.API
	}
	ev.API = r.tables.Intern(api)
	if field, err := r.stack(&l, ev); err != nil {
		return field, err
	}
	r.seq++
	ev.Seq = r.seq
	return "", nil
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

func missing(op Op) error { return corruptf("missing (required by %s)", op) }

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// jsonError turns an encoding/json error into a field name and a one-line
// message.
func jsonError(err error) (string, error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "", corruptf("line is a JSON %s, not an object", te.Value)
		}
		return te.Field, corruptf("got a JSON %s, want %s", te.Value, jsonKind(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "", corruptf("invalid JSON (byte %d): %v", se.Offset, err)
	}
	return "", corruptf("invalid JSON: %v", err)
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "list"
	case reflect.Uint32:
		return "number from 0 to 4294967295"
	case reflect.Int32:
		return "number from -2147483648 to 2147483647"
	case reflect.Int64:
		return "integer"
	}
	return t.String()
}

// parseAddress reads an address or size: a JSON number, or a string in hex
// ("0x...") or decimal.
func parseAddress(raw json.RawMessage) (uint64, error) {
	s := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, corruptf("want a number or a string")
		}
		if v, ok := parseHex(s); ok {
			return v, nil
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, corruptf("got %s, want a number, or a string in hex \"0x...\" or decimal", short(raw))
	}
	return v, nil
}

func parseResult(raw json.RawMessage) (int32, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, corruptf("want a number or a string")
		}
		return parseResultName(s)
	}
	v, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		return 0, corruptf("got %s, want a name such as \"success\", or an error code", short(raw))
	}
	return int32(v), nil
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

// short keeps error messages to one readable line.
func short(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}
