package suppress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/checker"
)

// Entry is one line of a suppression file.
type Entry struct {
	File string // The suppression file, as named to Load or Parse.
	Line int    // 1-based.
	Rule string // A rule id, or "*" for every rule.
	// The patterns: every non-empty list must have a match for the entry to
	// match (see the package documentation).
	Frames, Kernels, Files []string
	Reason                 string
	// Matched counts the findings the entry matched.
	Matched int
}

// Pos gives "FILE:LINE", the entry's place for messages.
func (e *Entry) Pos() string { return fmt.Sprintf("%s:%d", e.File, e.Line) }

// List is a parsed suppression file.
type List struct {
	Entries []*Entry
	// Root is the directory that reports make source paths relative to
	// (--source-root): a file= or frame= pattern also sees a relative
	// frame's path joined to it, so an absolute pattern, or one written
	// from another directory, matches wherever streamcheck runs.
	Root string
}

// MaxLine is the longest line a suppression file may hold, in bytes.
const MaxLine = 64 << 10

// Error is a problem with one line of a suppression file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Load reads the suppression file at path. Errors name the file (and the
// line, for a malformed entry).
func Load(path string) (*List, error) {
	f, err := os.Open(path)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			return nil, fmt.Errorf("%s: %v", path, pe.Err)
		}
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a suppression file from r; name names it in errors. Rule ids
// are checked against checker.Rules.
func Parse(r io.Reader, name string) (*List, error) {
	l := &List{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxLine+1) // room for the newline
	n := 1
	for ; sc.Scan(); n++ {
		text := sc.Text()
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a byte order mark some editors write
		}
		e, err := parseLine(text)
		if err != nil {
			return nil, &Error{File: name, Line: n, Msg: err.Error()}
		}
		if e == nil {
			continue
		}
		e.File, e.Line = name, n
		l.Entries = append(l.Entries, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &Error{File: name, Line: n, Msg: fmt.Sprintf("line longer than %d bytes (an entry is one line)", MaxLine)}
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// parseLine parses one line; it returns nil for a blank or comment line.
func parseLine(line string) (*Entry, error) {
	words, err := split(line)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	e := &Entry{Rule: words[0].text}
	if words[0].key != "" || words[0].quoted {
		return nil, fmt.Errorf("entry must start with a rule id or *, not %q", words[0].raw)
	}
	if e.Rule != "*" {
		if _, err := checker.LookupRule(e.Rule); err != nil {
			return nil, err
		}
	}
	hasReason := false
	for _, w := range words[1:] {
		if w.key == "" {
			return nil, fmt.Errorf("want KEY=VALUE (frame=, kernel=, file= or reason=), not %q", w.raw)
		}
		switch w.key {
		case "frame", "kernel", "file":
			if w.text == "" {
				return nil, fmt.Errorf("%s= has an empty pattern", w.key)
			}
		}
		switch w.key {
		case "frame":
			e.Frames = append(e.Frames, w.text)
		case "kernel":
			e.Kernels = append(e.Kernels, w.text)
		case "file":
			e.Files = append(e.Files, w.text)
		case "reason":
			if hasReason {
				return nil, fmt.Errorf("entry has two reasons")
			}
			hasReason = true
			e.Reason = strings.TrimSpace(w.text)
			if e.Reason == "" {
				return nil, fmt.Errorf("entry has an empty reason")
			}
		default:
			return nil, fmt.Errorf("unknown key %q (want frame=, kernel=, file= or reason=)", w.key)
		}
	}
	if len(e.Frames)+len(e.Kernels)+len(e.Files) == 0 {
		return nil, fmt.Errorf("entry has no pattern (frame=, kernel= or file=)")
	}
	if !hasReason {
		return nil, fmt.Errorf("entry has no reason")
	}
	return e, nil
}

// word is one whitespace-separated word of a line: KEY=VALUE, or a bare
// value.
type word struct {
	raw    string // As written.
	key    string // Before the first "=", if any (outside quotes).
	text   string // The value, unquoted.
	quoted bool   // The value had quotes.
}

// split cuts a line into words, honoring double quotes and stopping at a
// "#" that starts a word.
func split(line string) ([]word, error) {
	var words []word
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		if i == len(line) || line[i] == '#' {
			return words, nil
		}
		start := i
		var w word
		var text strings.Builder
		for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' {
			c := line[i]
			switch {
			case c == '=' && w.key == "" && !w.quoted && text.Len() > 0:
				w.key = text.String()
				text.Reset()
				i++
			case c == '"':
				j, s, err := unquote(line, i)
				if err != nil {
					return nil, err
				}
				text.WriteString(s)
				w.quoted = true
				i = j
			default:
				text.WriteByte(c)
				i++
			}
		}
		w.raw, w.text = line[start:i], text.String()
		words = append(words, w)
	}
}

// unquote reads the quoted string that starts at line[i] == '"'; it returns
// the index after the closing quote and the string.
func unquote(line string, i int) (int, string, error) {
	var b strings.Builder
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '"':
			return j + 1, b.String(), nil
		case '\\':
			if j+1 < len(line) && (line[j+1] == '"' || line[j+1] == '\\') {
				j++
			}
		}
		b.WriteByte(line[j])
	}
	return 0, "", fmt.Errorf("unterminated quote: %s", strconv.Quote(line[i:]))
}

// Match reports whether any entry matches the finding, and counts the
// match on every entry that does (overlapping entries are all used).
func (l *List) Match(f *checker.Finding) bool {
	if l == nil {
		return false
	}
	matched := false
	for _, e := range l.Entries {
		if e.matches(f, l.Root) {
			e.Matched++
			matched = true
		}
	}
	return matched
}

// Unused returns the entries that have matched no finding, in file order.
func (l *List) Unused() []*Entry {
	if l == nil {
		return nil
	}
	var out []*Entry
	for _, e := range l.Entries {
		if e.Matched == 0 {
			out = append(out, e)
		}
	}
	return out
}

// Matches reports whether the entry matches the finding, its frames' paths
// as the finding shows them; it counts nothing.
func (e *Entry) Matches(f *checker.Finding) bool { return e.matches(f, "") }

// matches is Matches, relative paths also tried joined to root.
func (e *Entry) matches(f *checker.Finding, root string) bool {
	pathMatch := func(g, path string) bool {
		if globPath(g, path) {
			return true
		}
		return root != "" && !filepath.IsAbs(path) && globPath(g, filepath.Join(root, path))
	}
	if e.Rule != "*" && e.Rule != f.Rule {
		return false
	}
	ops := make([]*checker.Op, 0, len(f.Ops)+1)
	if f.Alloc != nil {
		ops = append(ops, &f.Alloc.Op)
	}
	for i := range f.Ops {
		ops = append(ops, &f.Ops[i])
	}
	for _, g := range e.Frames {
		if !anyFrame(ops, func(fr *checker.Frame) bool {
			if fr.Func != "" && Glob(g, fr.Func) {
				return true
			}
			return fr.File != "" && pathMatch(g, fileLine(fr))
		}) {
			return false
		}
	}
	for _, g := range e.Files {
		if !anyFrame(ops, func(fr *checker.Frame) bool { return fr.File != "" && pathMatch(g, fr.File) }) {
			return false
		}
	}
	for _, g := range e.Kernels {
		found := false
		for _, op := range ops {
			if op.Kernel != "" && Glob(g, op.Kernel) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func anyFrame(ops []*checker.Op, pred func(*checker.Frame) bool) bool {
	for _, op := range ops {
		for i := range op.Stack {
			if pred(&op.Stack[i]) {
				return true
			}
		}
	}
	return false
}

func fileLine(fr *checker.Frame) string {
	if fr.Line > 0 {
		return fmt.Sprintf("%s:%d", fr.File, fr.Line)
	}
	return fr.File
}

// globPath matches a pattern against a path: the whole path, or (for a
// pattern that does not start with "/") any tail of it that starts after a
// "/".
func globPath(pattern, path string) bool {
	if Glob(pattern, path) {
		return true
	}
	if strings.HasPrefix(pattern, "/") {
		return false
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && Glob(pattern, path[i+1:]) {
			return true
		}
	}
	return false
}

// Glob reports whether s matches pattern as a whole: "*" matches any run of
// characters, "?" any one character, "\" makes the next character literal.
func Glob(pattern, s string) bool {
	// Iterative matching with backtracking to the last star: linear in
	// practice, never exponential.
	p, i := []rune(pattern), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(i) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				star, mark = pi, si
				pi++
				continue
			case c == '?':
				pi++
				si++
				continue
			case c == '\\' && pi+1 < len(p):
				if p[pi+1] == i[si] {
					pi += 2
					si++
					continue
				}
			case c == i[si]:
				pi++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		mark++
		pi, si = star+1, mark
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
