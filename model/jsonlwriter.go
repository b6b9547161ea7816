package model

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONLWriter writes the JSON Lines form. What it writes, JSONLReader reads
// back into the same events, up to the handle values given to names: it
// names every handle (by its name in the source tables, else by its value in
// hex) and writes a create line with "implicit":true before the first use of
// a stream or event that was never created.
type JSONLWriter struct {
	w       *bufio.Writer
	err     error // Sticky once set.
	closed  bool
	noted   bool    // A line that marks the output as a trace was written.
	src     *Tables // Tables of the last event, for Close.
	streams writerNames
	events  writerNames
	pools   writerNames
	line    []byte
	frame   []byte
}

// NewJSONLWriter returns a writer to w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	jw := &JSONLWriter{
		w:       bufio.NewWriterSize(w, 64<<10),
		streams: newWriterNames(ObjectStream),
		events:  newWriterNames(ObjectEvent),
		pools:   newWriterNames(ObjectPool),
	}
	// The reader gives these names fixed meanings.
	for _, n := range []string{streamNameLegacy, "0", streamNamePerThread} {
		jw.streams.holder[n] = StreamLegacy
	}
	jw.pools.holder[poolNameDefault] = 0
	return jw
}

// WriteEvent writes ev as one line, preceded by any create line it needs.
func (w *JSONLWriter) WriteEvent(ev *Event, t *Tables) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("JSON Lines trace writer: write after Close")
	}
	w.err = w.writeEvent(ev, t)
	w.noted = true
	return w.err
}

// Source implements Writer: the process comment, once.
func (w *JSONLWriter) Source(t *Tables) error {
	if w.err != nil || w.src != nil {
		return w.err
	}
	if p := t.Process; p != (Process{}) {
		fmt.Fprintf(w.w, directiveProcess+"\n", p.PID, p.PPID, t.String(p.Exe), t.String(p.Args), p.Start, t.String(p.Version))
		w.noted = true
	}
	w.src = t
	return nil
}

// Close flushes the output. It notes in a comment how many events the
// recorder dropped, if any, and, when nothing else says the output is a
// trace (no event, no process), that it is one without events: the reader
// takes text without either for something other than a trace.
func (w *JSONLWriter) Close() error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	if w.src != nil && w.src.Dropped > 0 {
		fmt.Fprintf(w.w, directiveDropped+"\n", w.src.Dropped)
		w.noted = true
	}
	if !w.noted {
		fmt.Fprintln(w.w, directiveEmpty)
	}
	w.err = w.w.Flush()
	return w.err
}

// CloseDamaged ends the output with a comment saying where the source was
// damaged, then flushes.
func (w *JSONLWriter) CloseDamaged(note string) error {
	if w.closed || w.err != nil {
		return w.err
	}
	fmt.Fprintf(w.w, "%s%s\n", directiveDamaged, strings.ReplaceAll(note, "\n", " "))
	w.noted = true
	return w.Close()
}

func (w *JSONLWriter) writeEvent(ev *Event, t *Tables) error {
	if !ev.Op.Valid() {
		return fmt.Errorf("JSON Lines trace writer: seq %d: invalid op %d", ev.Seq, ev.Op)
	}
	if ev.Kind > CopyH2H {
		return fmt.Errorf("JSON Lines trace writer: seq %d: invalid copy kind %d", ev.Seq, ev.Kind)
	}
	w.Source(t)
	w.src = t
	form := &opSpecs[ev.Op]
	// Before the line: naming a stream or event may write the create line
	// that introduces it.
	stream, event, pool := w.names(form, ev, t)

	b := append(w.line[:0], `{"op":`...)
	b = appendJSONString(b, ev.Op.String())
	for _, n := range [...]struct{ key, name string }{
		{`,"stream":`, stream},
		{`,"event":`, event},
		{`,"pool":`, pool},
	} {
		if n.name != "" {
			b = appendJSONString(append(b, n.key...), n.name)
		}
	}
	for _, appendFields := range fieldAppenders {
		b = appendFields(b, form, ev, t)
	}
	b = w.appendCommon(b, ev, t, t.String(ev.API))
	w.line = b
	_, err := w.w.Write(b)
	return err
}

// names returns the names of the stream, event and pool ev's line gives,
// or "" for those it leaves out.
func (w *JSONLWriter) names(form *OpSpec, ev *Event, t *Tables) (stream, event, pool string) {
	// A synchronous copy or set names its stream only when it is the
	// per-thread one (the reader takes no other than the default streams).
	if form.required&jStream != 0 || (form.has(jStream) && ev.Stream == StreamPerThread) {
		stream = w.streamName(ev, t)
	}
	if form.has(jEvent) {
		event = w.eventName(ev, t)
	}
	switch {
	case form.required&jPool != 0 && ev.Pool == 0:
		pool = poolNameDefault
	case form.required&jPool != 0 || (form.has(jPool) && ev.Pool != 0):
		pool = w.pools.name(ev.Pool, t) // A pool's first use introduces its name.
	}
	return stream, event, pool
}

// fieldAppender appends those of a group of fields that the op's row of the
// op spec gives it and ev has.
type fieldAppender func(b []byte, form *OpSpec, ev *Event, t *Tables) []byte

// fieldAppenders write the fields of a line after its names, in a fixed
// order.
var fieldAppenders = [...]fieldAppender{
	appendAddressFields,
	appendKinds,
	appendLaunch,
	appendFlags,
	appendGraph,
	appendMemOp,
	appendCopy,
}

// appendAddressFields appends the addresses and the sizes, and a
// collective's rank count.
func appendAddressFields(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.has(jPtr) {
		b = appendHex(append(b, `,"ptr":`...), ev.Ptr)
	}
	if form.required&jDst != 0 || (form.has(jDst) && ev.Ptr != 0) {
		b = appendHex(append(b, `,"dst":`...), ev.Ptr)
	}
	if form.required&jSrc != 0 || (form.has(jSrc) && ev.Src != 0) {
		b = appendHex(append(b, `,"src":`...), ev.Src)
	}
	if form.required&jSize != 0 || (form.has(jSize) && ev.Size != 0) {
		b = strconv.AppendUint(append(b, `,"size":`...), ev.Size, 10)
	}
	if form.has(jColl) && ev.SrcSize != 0 {
		b = strconv.AppendUint(append(b, `,"src_size":`...), ev.SrcSize, 10)
	}
	if form.has(jColl) && ev.Ranks != 0 {
		b = strconv.AppendUint(append(b, `,"nranks":`...), uint64(ev.Ranks), 10)
	}
	return b
}

// appendKinds appends a copy's kind, the allocation family fields and the
// pool attribute a pool_set_attr sets.
func appendKinds(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.has(jKind) {
		b = appendJSONString(append(b, `,"kind":`...), ev.Kind.String())
	}
	if form.has(jFamily) && ev.Family != FamilyDevice {
		name := ev.Family.String()
		if ev.Op == OpFree {
			name = ev.Family.FreeName()
		}
		b = appendJSONString(append(b, `,"kind":`...), name)
	}
	if form.has(jPitch) && ev.Family == FamilyPitched {
		b = strconv.AppendUint(append(b, `,"pitch":`...), ev.Pitch, 10)
		b = strconv.AppendUint(append(b, `,"height":`...), ev.Height, 10)
	}
	if form.has(jAttr) {
		b = appendJSONString(append(b, `,"attr":`...), ev.Attr.String())
	}
	return b
}

// appendLaunch appends a launch's kernel and the addresses in its
// parameters.
func appendLaunch(b []byte, form *OpSpec, ev *Event, t *Tables) []byte {
	if !form.has(jKernel) {
		return b
	}
	if ev.Kernel != 0 {
		b = appendJSONString(append(b, `,"kernel":`...), t.String(ev.Kernel))
	}
	b = appendAddresses(b, `,"ptrs":[`, ev.StrongPtrs())
	return appendAddresses(b, `,"weak_ptrs":[`, ev.WeakPtrs())
}

// appendFlags appends a stream's flags and priority, and the flags a line
// sets with true.
func appendFlags(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.hasFlag(FlagNonBlocking) && ev.Flags&FlagNonBlocking != 0 {
		b = append(b, `,"flags":"non_blocking"`...)
	}
	if form.has(jPriority) && ev.Prio != 0 {
		b = strconv.AppendInt(append(b, `,"priority":`...), int64(ev.Prio), 10)
	}
	for _, f := range [...]struct {
		flag uint32
		key  string
	}{
		{FlagExternal, `,"external":true`},
		{FlagLifetime, `,"lifetime":true`},
		{FlagConditional, `,"conditional":true`},
		{FlagImplicit, `,"implicit":true`},
		{FlagGraphAlloc, `,"graph":true`},
	} {
		if form.hasFlag(f.flag) && ev.Flags&f.flag != 0 {
			b = append(b, f.key...)
		}
	}
	return b
}

// appendGraph appends the graph of a node, or the graph, executable graph,
// graph and node a line names, each by the canonical name of its handle.
func appendGraph(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.hasFlag(FlagGraphNode) && ev.Flags&FlagGraphNode != 0 {
		b = appendHex(append(b, `,"graph":`...), ev.Graph)
	}
	// A required graph is written even when its handle is 0 (graph_clone
	// of a graph the shim could not name), or the line would not read back.
	if form.has(jGraphName) && (ev.Graph != 0 || form.required&jGraphName != 0) {
		b = appendHex(append(b, `,"graph":`...), ev.Graph)
	}
	if form.has(jExec) && ev.Exec != 0 {
		b = appendHex(append(b, `,"exec":`...), ev.Exec)
	}
	if form.has(jFrom) && (ev.Src != 0 || form.required&jFrom != 0) {
		b = appendHex(append(b, `,"from":`...), ev.Src)
	}
	if form.has(jNode) && ev.Node != 0 {
		b = appendHex(append(b, `,"node":`...), ev.Node)
	}
	return b
}

// appendMemOp appends a stream memory operation and the value of an op that
// has one.
func appendMemOp(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.has(jMemOp) && ev.MemOp != MemOpUnknown {
		b = appendJSONString(append(b, `,"mem_op":`...), ev.MemOp.String())
	}
	if form.has(jMemOp) && ev.MemFlags != 0 {
		b = strconv.AppendUint(append(b, `,"mem_flags":`...), uint64(ev.MemFlags), 10)
	}
	if form.has(jMemOp|jValue) && (ev.Value != 0 || form.required&jValue != 0) {
		b = appendHex(append(b, `,"value":`...), ev.Value) // a string: JSON numbers past 2^53 lose precision in many readers
	}
	return b
}

// appendCopy appends the devices of a peer copy and the kind of a copy's
// host memory, where it is not the default.
func appendCopy(b []byte, form *OpSpec, ev *Event, _ *Tables) []byte {
	if form.hasFlag(FlagPeer) && ev.Flags&FlagPeer != 0 {
		b = strconv.AppendInt(append(b, `,"peer_src":`...), int64(ev.PeerSrc), 10)
		b = strconv.AppendInt(append(b, `,"peer_dst":`...), int64(ev.PeerDst), 10)
	}
	if form.hasFlag(FlagPageable | FlagPinned) {
		pinned := ev.Flags&FlagPinned != 0
		if pageable := ev.Flags&FlagPageable != 0; pageable != defaultPageable(ev.Op, ev.Kind, pinned) {
			b = strconv.AppendBool(append(b, `,"pageable":`...), pageable)
		}
		if pinned {
			b = append(b, `,"pinned":true`...)
		}
	}
	return b
}

// appendCommon appends the fields every op may carry, and ends the line.
func (w *JSONLWriter) appendCommon(b []byte, ev *Event, t *Tables, api string) []byte {
	if opSpecs[ev.Op].required&jResult != 0 || ev.Result != ResultSuccess {
		b = append(b, `,"result":`...)
		if name, ok := resultName(ev.Result); ok {
			b = appendJSONString(b, name)
		} else {
			b = strconv.AppendInt(b, int64(ev.Result), 10)
		}
	}
	if ev.TID != 1 {
		b = strconv.AppendUint(append(b, `,"tid":`...), uint64(ev.TID), 10)
	}
	if ev.Device != 0 {
		b = strconv.AppendInt(append(b, `,"device":`...), int64(ev.Device), 10)
	}
	if api != defaultAPI(ev) {
		b = appendJSONString(append(b, `,"api":`...), api)
	}
	switch frames := t.Stack(ev.Stack); {
	case len(frames) == 0:
	case len(frames) == 1 && !needsObject(t, frames[0]):
		w.frame = appendFrame(w.frame[:0], t, frames[0])
		b = appendJSONString(append(b, `,"site":`...), string(w.frame))
	default:
		b = append(b, `,"stack":[`...)
		for i, f := range frames {
			if i > 0 {
				b = append(b, ',')
			}
			if needsObject(t, f) {
				b = appendFrameObject(b, t, f)
				continue
			}
			w.frame = appendFrame(w.frame[:0], t, f)
			b = appendJSONString(b, string(w.frame))
		}
		b = append(b, ']')
	}
	if ev.Time != 0 {
		b = strconv.AppendInt(append(b, `,"time":`...), ev.Time, 10)
	}
	if ev.Dur != 0 {
		b = strconv.AppendUint(append(b, `,"dur":`...), ev.Dur, 10)
	}
	return append(b, "}\n"...)
}

func (w *JSONLWriter) streamName(ev *Event, t *Tables) string {
	switch ev.Stream {
	case StreamLegacy, StreamLegacyAlt:
		return streamNameLegacy
	case StreamPerThread:
		return streamNamePerThread
	}
	if name, ok := w.streams.nameOf[ev.Stream]; ok {
		return name
	}
	name := w.streams.name(ev.Stream, t)
	if opSpecs[ev.Op].introduces&jStream == 0 {
		w.writeImplicitCreate(OpStreamCreate, `,"stream":`, name, ev, t)
	}
	return name
}

func (w *JSONLWriter) eventName(ev *Event, t *Tables) string {
	if name, ok := w.events.nameOf[ev.Event]; ok {
		return name
	}
	name := w.events.name(ev.Event, t)
	if opSpecs[ev.Op].introduces&jEvent == 0 {
		w.writeImplicitCreate(OpEventCreate, `,"event":`, name, ev, t)
	}
	return name
}

// writeImplicitCreate introduces a stream or event that ev uses but the
// trace never created (it was created before recording began).
func (w *JSONLWriter) writeImplicitCreate(op Op, key, name string, ev *Event, t *Tables) {
	b := append(w.line[:0], `{"op":`...)
	b = appendJSONString(b, op.String())
	b = appendJSONString(append(b, key...), name)
	b = append(b, `,"implicit":true`...)
	// No API was called: "api" is empty, as in an implicit create the shim writes.
	create := Event{Op: op, TID: ev.TID, Device: ev.Device, Time: ev.Time}
	b = w.appendCommon(b, &create, t, "")
	w.line = b
	w.w.Write(b) // An error stays in the bufio.Writer and is returned by the event's own write.
}

// writerNames gives each handle of one kind a name that no other handle of
// the trace has had: the reader binds a name to one handle for good.
type writerNames struct {
	kind   ObjectKind
	nameOf map[uint64]string
	holder map[string]uint64
}

func newWriterNames(kind ObjectKind) writerNames {
	return writerNames{kind: kind, nameOf: map[uint64]string{}, holder: map[string]uint64{}}
}

// name returns the name of handle h, choosing it on first use: the source
// name, else the handle in hex, with "#2", "#3", ... added if taken.
func (n *writerNames) name(h uint64, t *Tables) string {
	if name, ok := n.nameOf[h]; ok {
		return name
	}
	base := t.Name(n.kind, h)
	if base == "" {
		base = "0x" + strconv.FormatUint(h, 16)
	}
	name := base
	for i := 2; ; i++ {
		if _, taken := n.holder[name]; !taken {
			break
		}
		name = base + "#" + strconv.Itoa(i)
	}
	n.nameOf[h] = name
	n.holder[name] = h
	return name
}

func appendHex(b []byte, v uint64) []byte {
	b = append(b, `"0x`...)
	b = strconv.AppendUint(b, v, 16)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json would read it.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendAddresses appends key (a field's name and its list's opening
// bracket) and the addresses in hex, unless there are none.
func appendAddresses(b []byte, key string, ptrs []uint64) []byte {
	if len(ptrs) == 0 {
		return b
	}
	b = append(b, key...)
	for i, a := range ptrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendHex(b, a)
	}
	return append(b, ']')
}
