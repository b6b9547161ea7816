package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"unsafe"
)

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
	// stackRaw is the text of "stack" when the scanner read the line: the
	// same text makes the same stack (see JSONLReader.stack).
	stackRaw []byte
	SrcSize  json.RawMessage `json:"src_size"`
	NRanks   *uint32         `json:"nranks"`
}

// fieldDecoder reads one group of a line's fields into ev, taking from the
// op's row of the op spec which of them the op carries, or names the field
// at fault.
type fieldDecoder func(r *JSONLReader, l *jsonLine, form *OpSpec, ev *Event) (string, error)

// fieldDecoders read a line's fields in a fixed order, so the first fault
// named is predictable.
var fieldDecoders = [...]fieldDecoder{
	(*JSONLReader).decodeNames,
	(*JSONLReader).decodeAddresses,
	(*JSONLReader).decodeFamily,
	(*JSONLReader).decodeKinds,
	(*JSONLReader).decodeLaunch,
	(*JSONLReader).decodeFlags,
	(*JSONLReader).decodeGraph,
	(*JSONLReader).decodeMemOp,
	(*JSONLReader).decodeCopy,
	(*JSONLReader).decodeCommon,
}

// decode fills ev from one line, or names the field at fault.
func (r *JSONLReader) decode(b []byte, ev *Event) (string, error) {
	// The reader's own, not a local: the decoders below would make a local
	// escape, an allocation of its size a line.
	l := &r.decoded
	*l = jsonLine{}
	dup, ok := r.scanner.scan(b, l)
	if !ok {
		*l = jsonLine{}
		if err := json.Unmarshal(b, l); err != nil {
			return jsonError(err)
		}
		dup = duplicateKey(b)
	}
	if dup != "" {
		return dup, corruptf("given twice (a key may appear once in a line)")
	}
	if l.Op == nil {
		return "op", corruptf("missing")
	}
	op, ok := ParseOp(*l.Op)
	if !ok {
		return "op", corruptf("unknown op %q", *l.Op)
	}
	form := &opSpecs[op]
	*ev = Event{Op: op, TID: 1, Ptrs: ev.Ptrs[:0]}
	for _, decodeFields := range fieldDecoders {
		if field, err := decodeFields(r, l, form, ev); err != nil {
			return field, err
		}
	}
	r.seq++
	ev.Seq = r.seq
	return "", nil
}

// decodeNames reads the stream, event and pool a line names.
func (r *JSONLReader) decodeNames(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	var err error
	if form.has(jStream) {
		// Optional only for synchronous copies and sets, which run on the
		// legacy stream unless the line names the per-thread one.
		if l.Stream == nil && form.required&jStream != 0 {
			return "stream", missing(ev.Op)
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
			return "event", missing(ev.Op)
		}
		if ev.Event, err = r.events.resolve(*l.Event, form.introduces&jEvent != 0); err != nil {
			return "event", err
		}
	}
	return resolveName(&r.pools, form, jPool, "pool", l.Pool, &ev.Pool)
}

// resolveName reads the name that field set bit gives under key, which
// introduces it, into the handle *h. Only an op that requires the field
// must have it.
func resolveName(n *nameSpace, form *OpSpec, bit jsonFields, key string, name *string, h *uint64) (string, error) {
	if !form.has(bit) || name == nil {
		if form.required&bit != 0 {
			return key, missing(form.Op)
		}
		return "", nil
	}
	var err error
	if *h, err = n.resolve(*name, true); err != nil {
		return key, err
	}
	return "", nil
}

// decodeAddresses reads the addresses and the sizes, and a collective's
// rank count.
func (r *JSONLReader) decodeAddresses(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
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
		{jColl, "src_size", l.SrcSize, &ev.SrcSize},
	} {
		if !form.has(a.bit) {
			continue
		}
		if isNull(a.raw) {
			if form.required&a.bit != 0 {
				return a.name, missing(ev.Op)
			}
			continue
		}
		var err error
		if *a.field, err = parseAddress(a.raw); err != nil {
			return a.name, err
		}
	}
	if form.has(jColl) && l.NRanks != nil {
		ev.Ranks = *l.NRanks
	}
	return "", nil
}

// decodeFamily reads the allocation family fields: the family a malloc
// makes or a free releases, and a pitched malloc's pitch and height.
func (r *JSONLReader) decodeFamily(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	if form.has(jFamily) && l.Kind != nil {
		var ok bool
		if ev.Family, ok = ParseFamily(*l.Kind, ev.Op == OpFree); !ok {
			if ev.Op == OpFree {
				return "kind", corruptf("unknown free kind %q (want device, host or unregister)", *l.Kind)
			}
			return "kind", corruptf("unknown allocation kind %q (want device, pitched, managed, host or registered)", *l.Kind)
		}
	}
	if !form.has(jPitch) {
		return "", nil
	}
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
			var err error
			if *a.field, err = parseAddress(a.raw); err != nil {
				return a.name, err
			}
		}
	}
	return "", nil
}

// decodeKinds reads the pool attribute a pool_set_attr sets and a copy's
// kind.
func (r *JSONLReader) decodeKinds(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	var ok bool
	if form.has(jAttr) {
		if l.Attr == nil {
			return "attr", missing(ev.Op)
		}
		if ev.Attr, ok = ParsePoolAttr(*l.Attr); !ok {
			return "attr", corruptf("unknown pool attribute %q (want release_threshold, or CUDA's number of the attribute)", *l.Attr)
		}
	}
	if form.has(jKind) {
		if l.Kind == nil {
			return "kind", missing(ev.Op)
		}
		if ev.Kind, ok = ParseMemcpyKind(*l.Kind); !ok {
			return "kind", corruptf("unknown copy kind %q (want h2d, d2h, d2d, h2h or default)", *l.Kind)
		}
	}
	return "", nil
}

// decodeLaunch reads a launch's kernel and the addresses in its
// parameters.
func (r *JSONLReader) decodeLaunch(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	if !form.has(jKernel) {
		return "", nil
	}
	if l.Kernel != nil {
		ev.Kernel = r.tables.Intern(*l.Kernel)
	}
	if len(l.Ptrs) > MaxLaunchPtrs {
		return "ptrs", corruptf("%d addresses exceed the limit of %d", len(l.Ptrs), MaxLaunchPtrs)
	}
	if len(l.Ptrs)+len(l.WeakPtrs) > MaxLaunchPtrs {
		return "weak_ptrs", corruptf("%d addresses exceed the limit of %d", len(l.Ptrs)+len(l.WeakPtrs), MaxLaunchPtrs)
	}
	for _, list := range [...]struct {
		name string
		raws []json.RawMessage
	}{{"ptrs", l.Ptrs}, {"weak_ptrs", l.WeakPtrs}} {
		for i, raw := range list.raws {
			a, err := parseAddress(raw)
			if err != nil {
				return list.name, corruptf("element %d: %v", i, err)
			}
			ev.Ptrs = append(ev.Ptrs, a)
		}
	}
	ev.Weak = uint32(len(l.WeakPtrs))
	return "", nil
}

// decodeFlags reads a stream's flags and priority, and the flags a line
// sets with true.
func (r *JSONLReader) decodeFlags(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
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
	return "", nil
}

// decodeGraph reads "graph" (a malloc_async's flag, the graph of a node, or
// a graph's name), and the executable graph, the graph and the node a line
// names.
func (r *JSONLReader) decodeGraph(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	if field, err := r.decodeGraphField(l, form, ev); err != nil {
		return field, err
	}
	if field, err := resolveName(&r.execs, form, jExec, "exec", l.Exec, &ev.Exec); err != nil {
		return field, err
	}
	if field, err := resolveName(&r.graphs, form, jFrom, "from", l.From, &ev.Src); err != nil {
		return field, err
	}
	return resolveName(&r.nodes, form, jNode, "node", l.Node, &ev.Node)
}

// decodeGraphField reads "graph", whose type depends on the op.
func (r *JSONLReader) decodeGraphField(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	var err error
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
		return "graph", missing(ev.Op)
	}
	if !form.has(jGraphName) && !form.hasFlag(FlagGraphAlloc|FlagGraphNode) && l.Graph != nil {
		// Ignored here, but of one of its two types, as every field is.
		var b bool
		var name string
		if json.Unmarshal(l.Graph, &b) != nil && json.Unmarshal(l.Graph, &name) != nil {
			return "graph", corruptf("got %s, want true, false or a graph's name", short(l.Graph))
		}
	}
	return "", nil
}

// decodeMemOp reads a stream memory operation and the value of an op that
// has one.
func (r *JSONLReader) decodeMemOp(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	if form.has(jMemOp) {
		if l.MemOp != nil {
			var ok bool
			if ev.MemOp, ok = ParseMemOpKind(*l.MemOp); !ok {
				return "mem_op", corruptf("unknown memory operation %q (want wait32, wait64, write32, write64, atomic, flush or barrier)", *l.MemOp)
			}
		}
		if l.MemFlags != nil {
			ev.MemFlags = *l.MemFlags
		}
	}
	if form.has(jMemOp|jValue) && !isNull(l.Value) {
		var err error
		if ev.Value, err = parseAddress(l.Value); err != nil {
			return "value", err
		}
	} else if form.required&jValue != 0 {
		return "value", missing(ev.Op)
	}
	return "", nil
}

// decodeCopy reads the devices of a peer copy and the kind of a copy's
// host memory.
func (r *JSONLReader) decodeCopy(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
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
		pageable := defaultPageable(ev.Op, ev.Kind, pinned)
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
	return "", nil
}

// decodeCommon reads the fields every op may carry.
func (r *JSONLReader) decodeCommon(l *jsonLine, form *OpSpec, ev *Event) (string, error) {
	var err error
	if !isNull(l.Result) {
		if ev.Result, err = parseResult(l.Result); err != nil {
			return "result", err
		}
	} else if form.required&jResult != 0 {
		return "result", missing(ev.Op)
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
	return r.stack(l, ev)
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
	s := unsafe.String(unsafe.SliceData(raw), len(raw)) // parsed here, never kept
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 {
		// No escapes: the string is its bytes (the common case, kept off
		// encoding/json).
		s = s[1 : n-1]
		if v, ok := parseHex(s); ok {
			return v, nil
		}
	} else if raw[0] == '"' {
		var u string // not s: taking its address would move s to the heap
		if err := json.Unmarshal(raw, &u); err != nil {
			return 0, corruptf("want a number or a string")
		}
		if v, ok := parseHex(u); ok {
			return v, nil
		}
		s = u
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

// short keeps error messages to one readable line.
func short(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}
