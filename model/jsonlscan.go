package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// The JSON Lines fast path: a scanner that fills a jsonLine from a line
// without encoding/json's reflection, about ten times faster. It decodes
// exactly what encoding/json would (keys matched as encoding/json does,
// case folded); wherever a line is not valid JSON or a value is not of its
// field's type, it gives up and the line is decoded by encoding/json
// instead, so that every error reads as before.

// lineFieldKind is the Go type of a jsonLine field.
type lineFieldKind uint8

const (
	kindString  lineFieldKind = iota // *string
	kindRaw                          // json.RawMessage
	kindRawList                      // []json.RawMessage
	kindBool                         // *bool
	kindInt32                        // *int32
	kindUint32                       // *uint32
	kindInt64                        // *int64
)

// lineField is one field of jsonLine: its key, type and place.
type lineField struct {
	key    string
	kind   lineFieldKind
	offset uintptr
}

// lineFields are jsonLine's fields, found by reflection once so that the
// scanner follows the struct's tags; lineFieldIndex finds one by key.
var lineFields, lineFieldIndex = func() ([]lineField, map[string]int) {
	kinds := map[reflect.Type]lineFieldKind{
		reflect.TypeFor[*string](): kindString, reflect.TypeFor[json.RawMessage](): kindRaw,
		reflect.TypeFor[[]json.RawMessage](): kindRawList, reflect.TypeFor[*bool](): kindBool,
		reflect.TypeFor[*int32](): kindInt32, reflect.TypeFor[*uint32](): kindUint32, reflect.TypeFor[*int64](): kindInt64,
	}
	t := reflect.TypeFor[jsonLine]()
	var fields []lineField
	index := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" || key == "-" {
			continue
		}
		k, ok := kinds[f.Type]
		if !ok {
			panic("model: jsonLine field " + f.Name + " has a type the scanner does not read")
		}
		index[key] = len(fields)
		fields = append(fields, lineField{key: key, kind: k, offset: f.Offset})
	}
	if len(fields) > 64 {
		panic("model: jsonLine has more fields than the scanner's set of keys seen holds")
	}
	return fields, index
}()

// fieldByHash finds most keys without hashing them in a map: the index in
// lineFields of the key with each keyHash, -1 for none or several.
var fieldByHash = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	taken := [256]bool{}
	for f, lf := range lineFields {
		h := keyHash([]byte(lf.key))
		if taken[h] {
			t[h] = -1
			continue
		}
		taken[h], t[h] = true, int8(f)
	}
	return t
}()

// keyHash is a cheap hash of a non-empty key, for fieldByHash.
func keyHash(k []byte) uint8 {
	return uint8(len(k)) ^ k[0]*5 ^ k[len(k)-1]*3 ^ k[len(k)/2]<<2
}

// maxScanDepth is the deepest nesting the scanner follows; deeper lines go
// to encoding/json, which has its own limit.
const maxScanDepth = 256

// lineScanner holds the storage that the values of a scanned jsonLine
// point into: valid until the next line is scanned. (An append that moves
// a slice leaves the earlier pointers at the old array, which keeps their
// values.)
type lineScanner struct {
	strs    []string
	bools   []bool
	int32s  []int32
	uint32s []uint32
	int64s  []int64
	lists   [][]json.RawMessage
	nlists  int
	// cache holds the strings of recent lines (names, kernels, frames),
	// so that each is allocated once rather than once a line.
	cache map[string]string
	stack []byte // Open brackets, while skipping a value.
}

const maxCachedStrings = 1 << 14

// scan fills l from line b. It returns ok false when encoding/json must
// decode b instead (see above); dup is the key of a field given twice,
// which is an error (encoding/json would keep the last silently).
func (s *lineScanner) scan(b []byte, l *jsonLine) (dup string, ok bool) {
	s.strs, s.bools, s.nlists = s.strs[:0], s.bools[:0], 0
	s.int32s, s.uint32s, s.int64s = s.int32s[:0], s.uint32s[:0], s.int64s[:0]
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return "", false
	}
	i = skipSpace(b, i+1)
	var seen uint64
	if i < len(b) && b[i] == '}' {
		return "", skipSpace(b, i+1) == len(b)
	}
	for {
		if i == len(b) || b[i] != '"' {
			return "", false
		}
		kend, simple := scanString(b, i)
		if kend < 0 {
			return "", false
		}
		f := s.field(b[i:kend], simple)
		i = skipSpace(b, kend)
		if i == len(b) || b[i] != ':' {
			return "", false
		}
		i = skipSpace(b, i+1)
		if f >= 0 {
			if seen&(1<<f) != 0 && dup == "" {
				dup = lineFields[f].key
			}
			seen |= 1 << f
			if i, ok = s.value(b, i, l, &lineFields[f]); !ok {
				return "", false
			}
		} else if i = s.skip(b, i); i < 0 {
			return "", false
		}
		i = skipSpace(b, i)
		if i == len(b) {
			return "", false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return dup, skipSpace(b, i+1) == len(b)
		default:
			return "", false
		}
	}
}

// field returns the index in lineFields of the quoted key q, matched as
// encoding/json matches it (exactly, else with case folded), or -1.
func (s *lineScanner) field(q []byte, simple bool) int {
	key := q[1 : len(q)-1]
	if !simple {
		var k string
		if json.Unmarshal(q, &k) != nil {
			return -1 // cannot happen: scanString checked it
		}
		key = []byte(k)
	}
	if len(key) > 0 {
		if f := fieldByHash[keyHash(key)]; f >= 0 && lineFields[f].key == string(key) {
			return int(f)
		}
	}
	if f, ok := lineFieldIndex[string(key)]; ok {
		return f
	}
	for f := range lineFields {
		if bytes.EqualFold(key, []byte(lineFields[f].key)) {
			return f
		}
	}
	return -1
}

// value reads the value at b[i:] into field f of l, and returns the index
// after it.
func (s *lineScanner) value(b []byte, i int, l *jsonLine, f *lineField) (int, bool) {
	if i == len(b) {
		return 0, false
	}
	p := unsafe.Add(unsafe.Pointer(l), f.offset)
	null := hasLiteral(b, i, "null")
	switch f.kind {
	case kindRaw:
		end := s.skip(b, i)
		if end < 0 {
			return 0, false
		}
		*(*json.RawMessage)(p) = b[i:end:end]
		return end, true
	case kindRawList:
		if null {
			*(*[]json.RawMessage)(p) = nil
			return i + 4, true
		}
		end, ok := s.list(b, i, (*[]json.RawMessage)(p))
		if ok && f.key == "stack" {
			l.stackRaw = b[i:end]
		}
		return end, ok
	}
	if null { // a pointer field: encoding/json leaves it nil
		*(**byte)(p) = nil
		return i + 4, true
	}
	switch f.kind {
	case kindString:
		if b[i] != '"' {
			return 0, false
		}
		end, simple := scanString(b, i)
		if end < 0 {
			return 0, false
		}
		s.strs = append(s.strs, s.intern(b[i:end], simple))
		*(**string)(p) = &s.strs[len(s.strs)-1]
		return end, true
	case kindBool:
		v := hasLiteral(b, i, "true")
		if !v && !hasLiteral(b, i, "false") {
			return 0, false
		}
		s.bools = append(s.bools, v)
		*(**bool)(p) = &s.bools[len(s.bools)-1]
		if v {
			return i + 4, true
		}
		return i + 5, true
	}
	end := scanNumber(b, i)
	if end < 0 {
		return 0, false
	}
	num := unsafe.String(unsafe.SliceData(b[i:]), end-i) // parsed, not kept
	switch f.kind {
	case kindInt32:
		v, err := strconv.ParseInt(num, 10, 32)
		if err != nil {
			return 0, false
		}
		s.int32s = append(s.int32s, int32(v))
		*(**int32)(p) = &s.int32s[len(s.int32s)-1]
	case kindUint32:
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return 0, false
		}
		s.uint32s = append(s.uint32s, uint32(v))
		*(**uint32)(p) = &s.uint32s[len(s.uint32s)-1]
	default:
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, false
		}
		s.int64s = append(s.int64s, v)
		*(**int64)(p) = &s.int64s[len(s.int64s)-1]
	}
	return end, true
}

// list reads the JSON array at b[i:] into *dst, its elements raw.
func (s *lineScanner) list(b []byte, i int, dst *[]json.RawMessage) (int, bool) {
	if b[i] != '[' {
		return 0, false
	}
	if s.nlists == len(s.lists) {
		s.lists = append(s.lists, make([]json.RawMessage, 0, 8))
	}
	out := s.lists[s.nlists][:0]
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			end := s.skip(b, i)
			if end < 0 {
				return 0, false
			}
			out = append(out, b[i:end:end])
			i = skipSpace(b, end)
			if i == len(b) {
				return 0, false
			}
			if b[i] == ']' {
				i++
				break
			}
			if b[i] != ',' {
				return 0, false
			}
			i = skipSpace(b, i+1)
		}
	}
	s.lists[s.nlists] = out
	s.nlists++
	*dst = out
	return i, true
}

// intern returns the string the quoted JSON string q holds (simple: with
// no escapes and only ASCII, so its bytes are the string).
func (s *lineScanner) intern(q []byte, simple bool) string {
	if !simple {
		var v string
		_ = json.Unmarshal(q, &v) // scanString checked it; encoding/json replaces bad UTF-8 as it always did
		return v
	}
	body := q[1 : len(q)-1]
	if v, ok := s.cache[string(body)]; ok {
		return v
	}
	v := string(body)
	if s.cache == nil {
		s.cache = map[string]string{}
	}
	if len(s.cache) < maxCachedStrings {
		s.cache[v] = v
	}
	return v
}

// skip returns the index after the JSON value at b[i:], or -1 if it is not
// one.
func (s *lineScanner) skip(b []byte, i int) int {
	st := s.stack[:0]
	defer func() { s.stack = st[:0] }()
	for {
		if i >= len(b) {
			return -1
		}
		// A value.
		switch c := b[i]; {
		case c == '"':
			if i, _ = scanString(b, i); i < 0 {
				return -1
			}
		case c == '{' || c == '[':
			if len(st) == maxScanDepth {
				return -1
			}
			st = append(st, c)
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				st = st[:len(st)-1]
				i++
				break
			}
			if c == '{' {
				if i = s.key(b, i); i < 0 {
					return -1
				}
			}
			continue
		case c == 't':
			if !hasLiteral(b, i, "true") {
				return -1
			}
			i += 4
		case c == 'f':
			if !hasLiteral(b, i, "false") {
				return -1
			}
			i += 5
		case c == 'n':
			if !hasLiteral(b, i, "null") {
				return -1
			}
			i += 4
		default:
			if i = scanNumber(b, i); i < 0 {
				return -1
			}
		}
		// After a value: the end, or the next element of the open bracket.
		for {
			if len(st) == 0 {
				return i
			}
			i = skipSpace(b, i)
			if i == len(b) {
				return -1
			}
			open := st[len(st)-1]
			if b[i] == open+2 {
				st = st[:len(st)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
			if open == '{' {
				if i = s.key(b, i); i < 0 {
					return -1
				}
			}
			break
		}
	}
}

// key reads `"key" :` of an object member at b[i:] and returns the index
// of its value.
func (s *lineScanner) key(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i, _ = scanString(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i == len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// scanString returns the index after the JSON string starting at b[i] (a
// quote), or -1 if it is not a valid one, and whether it is simple: no
// escapes and only ASCII.
func scanString(b []byte, i int) (int, bool) {
	simple := true
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, simple
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			simple = false
		case c == '\\':
			simple = false
			i++
			if i == len(b) {
				return -1, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHexDigit(h) {
						return -1, false
					}
				}
				i += 4
			default:
				return -1, false
			}
		}
	}
	return -1, false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber returns the index after the JSON number at b[i:], or -1.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// skipSpace returns the index of the first byte from i on that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// duplicateKey returns a key that the JSON object in b gives twice, as
// encoding/json matches keys to jsonLine's fields, or "": the check of
// lines the scanner left to encoding/json.
func duplicateKey(b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var seen uint64
	var s lineScanner
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return ""
		}
		k, _ := t.(string)
		q, _ := json.Marshal(k)
		if f := s.field(q, false); f >= 0 {
			if seen&(1<<f) != 0 {
				return lineFields[f].key
			}
			seen |= 1 << f
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}
