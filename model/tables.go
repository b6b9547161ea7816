package model

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrTruncated: the trace stops before its end record (the program was
	// killed, or the file was cut). Everything before the damage was read.
	ErrTruncated = errors.New("trace truncated")
	// ErrCorrupt: the trace holds bytes or a line that cannot be decoded.
	// Everything before the damage was read.
	ErrCorrupt = errors.New("trace corrupt")
	// ErrFormat: the input is not a trace in any format streamcheck knows.
	ErrFormat = errors.New("not a streamcheck trace")
)

// IsDamage reports whether err says the trace was truncated or corrupt:
// everything before the damage was read and can still be analyzed.
func IsDamage(err error) bool {
	return errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt)
}

// PositionError says where in which file reading stopped, and why. It wraps
// one of the sentinels above.
type PositionError struct {
	File   string // Trace file name as given by the caller.
	Line   int    // JSON Lines: 1-based line number; 0 for binary traces.
	Offset int64  // Binary traces: byte offset of the record; 0 for JSON Lines.
	Field  string // The field at fault, if one is.
	Err    error  // ErrTruncated, ErrCorrupt or ErrFormat, possibly wrapped with detail.
}

func (e *PositionError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	} else if e.Offset > 0 {
		where = fmt.Sprintf("%s: offset %d", e.File, e.Offset)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %q: %v", where, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *PositionError) Unwrap() error { return e.Err }

// Reader streams the events of one trace (one process).
//
// Next fills ev with the next event. It returns io.EOF after the last event
// of a complete trace, and a *PositionError wrapping ErrTruncated or
// ErrCorrupt where the trace is damaged; every event before the damage has
// been returned. The Tables grow as definitions are read and are complete
// once Next has returned an error.
type Reader interface {
	Next(ev *Event) error
	Tables() *Tables
}

// ObjectKey names a stream, event or pool handle.
type ObjectKey struct {
	Kind   ObjectKind
	Handle uint64
}

// Tables holds a trace's definitions: strings, stacks, modules, object names
// and the process record.
type Tables struct {
	Strings []string  // StringID -> text; Strings[0] == "".
	Stacks  [][]Frame // StackID -> frames, innermost first; Stacks[0] == nil.
	Modules []Module  // Module ID -> module; Modules[0] is unused.
	Names   map[ObjectKey]StringID
	Process Process
	// Events and Dropped come from the end record: how many events the
	// writer recorded, and how many it could not record.
	Events, Dropped uint64

	index map[string]StringID // Built lazily by Intern.
	// moduleIndex finds modules by what they hold, for module.
	moduleIndex map[Module]uint32
}

// NewTables returns tables holding only the reserved zero entries.
func NewTables() *Tables {
	return &Tables{
		Strings: []string{""},
		Stacks:  [][]Frame{nil},
		Modules: []Module{{}},
		Names:   map[ObjectKey]StringID{},
	}
}

// String returns the text of id, or "" if it is not defined.
func (t *Tables) String(id StringID) string {
	if int(id) < len(t.Strings) {
		return t.Strings[id]
	}
	return ""
}

// Stack returns the frames of id, innermost first, or nil.
func (t *Tables) Stack(id StackID) []Frame {
	if int(id) < len(t.Stacks) {
		return t.Stacks[id]
	}
	return nil
}

// Module returns the module with the given id, or the zero Module.
func (t *Tables) Module(id uint32) Module {
	if int(id) < len(t.Modules) {
		return t.Modules[id]
	}
	return Module{}
}

// Intern returns the id of s, adding it if needed. Intern is linear in the
// number of strings only on first sight of s (it keeps an index). Control
// characters in s are stored escaped (see Printable).
func (t *Tables) Intern(s string) StringID {
	if s == "" {
		return 0
	}
	s = Printable(s)
	if t.index == nil {
		t.index = make(map[string]StringID, len(t.Strings))
		for i, v := range t.Strings {
			t.index[v] = StringID(i)
		}
	}
	if id, ok := t.index[s]; ok {
		return id
	}
	id := StringID(len(t.Strings))
	t.Strings = append(t.Strings, s)
	t.index[s] = id
	return id
}

// AddString appends s as the next string id (used by readers of definition
// records, which must arrive densely in order).
func (t *Tables) AddString(s string) StringID {
	s = Printable(s)
	id := StringID(len(t.Strings))
	t.Strings = append(t.Strings, s)
	if t.index != nil {
		if _, ok := t.index[s]; !ok {
			t.index[s] = id
		}
	}
	return id
}

// Printable returns s with its control characters (a newline, an escape
// sequence) and the characters that reorder or break text (bidirectional
// overrides, line separators) written as Go escapes, "\n", "\x1b",
// "\u202e": strings from a trace reach terminals and line-oriented reports,
// where they could otherwise break a line or forge one. Other bytes, valid
// UTF-8 or not, are kept.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		b := s[i]
		// 0xc2 starts the C1 controls, 0xe2 the separators and overrides,
		// 0xd8 the Arabic letter mark.
		clean = b >= 0x20 && b != 0x7f && b != 0xc2 && b != 0xe2 && b != 0xd8
	}
	if clean {
		return s
	}
	// One allocation of the exact size, and none an escape: a string of
	// NUL bytes quoted rune by rune cost 20 times the time and, in the
	// builder's doublings, twice the memory of its result.
	size := 0
	var esc [16]byte
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf { // ASCII: no decoding
			size++
			if c < 0x20 || c == 0x7f {
				size += len(appendEscape(esc[:0], rune(c))) - 1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) && !(r == utf8.RuneError && n == 1) {
			size += len(appendEscape(esc[:0], r))
		} else {
			size += n
		}
		i += n
	}
	var b strings.Builder
	b.Grow(size)
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				b.Write(appendEscape(esc[:0], rune(c)))
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) && !(r == utf8.RuneError && n == 1) {
			b.Write(appendEscape(esc[:0], r))
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// appendEscape appends the Go escape of r, as strconv.QuoteRune writes it
// between the quotes, for the runes unsafeRune names: C0 and C1 controls,
// separators, overrides and marks, all below U+10000.
func appendEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	switch r {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	switch {
	case r < utf8.RuneSelf:
		return append(b, '\\', 'x', hex[r>>4], hex[r&0xf])
	case r < 0x10000:
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	q := strconv.QuoteRune(r)
	return append(b, q[1:len(q)-1]...)
}

// unsafeRune reports whether r may not be shown as it is (see Printable).
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r == '\u2028', r == '\u2029', // line and paragraph separators
		r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', // bidirectional embeddings and isolates
		r == '\u200e', r == '\u200f', r == '\u061c': // direction marks
		return true
	}
	return false
}

// module returns the id of the module m describes (its ID aside), adding
// it if needed: JSON Lines frames name their modules inline.
func (t *Tables) module(m Module) uint32 {
	m.ID = 0
	if t.moduleIndex == nil {
		t.moduleIndex = map[Module]uint32{}
		for _, k := range t.Modules[1:] {
			id := k.ID
			k.ID = 0
			t.moduleIndex[k] = id
		}
	}
	if id, ok := t.moduleIndex[m]; ok {
		return id
	}
	id := uint32(len(t.Modules))
	t.moduleIndex[m] = id
	m.ID = id
	t.Modules = append(t.Modules, m)
	return id
}

// Name returns the name given to a handle, or "" if none was.
func (t *Tables) Name(kind ObjectKind, handle uint64) string {
	return t.String(t.Names[ObjectKey{kind, handle}])
}

// Collect reads r to the end and returns its events (copied), and the error
// that ended reading (nil for a complete trace). For tests and small traces:
// it keeps every event in memory.
func Collect(r Reader) ([]Event, error) {
	var out []Event
	var ev Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev.Clone())
	}
}
