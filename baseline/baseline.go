package baseline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/checker"
)

// FingerprintKey names the fingerprint scheme: SARIF's partialFingerprints
// key and a baseline's "fingerprint". Bump its version if what Fingerprint
// hashes changes, so that old results are not matched with new ones.
// v3: Python frames carry lines, and a Python call's site is the program's own
// innermost Python function.
const FingerprintKey = "streamcheckSites/v3"

// Version is the baseline file format's version.
const Version = 1

// Fingerprint identifies a finding across runs by its rule and, for each
// operation, its role, API, kernel and call stack from its site outward
// (each frame's function, file name and line): the whole stack, since the
// same line reached from two callers is two findings. Never by addresses,
// sequence numbers, thread ids or the trace name, which change from run to
// run, nor by directories, which change from checkout to checkout (a CI
// workspace, a virtualenv). It is 32 hex digits.
func Fingerprint(f *checker.Finding) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", f.Rule)
	site := func(o *checker.Op) {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", o.Role, o.API, o.Kernel)
		i := o.SiteFrame()
		if i < 0 { // Without a stack, the stream stands in for the site.
			s := o.Stream
			if strings.HasPrefix(s, "per_thread(") {
				s = o.StreamKind // its name holds the thread id
			}
			fmt.Fprintf(h, "%s\x00", s)
			return
		}
		for _, fr := range o.Stack[i:] {
			file := fr.File
			if file == "" {
				file = fr.Module // an unresolved frame: its module, not its offset
			}
			fmt.Fprintf(h, "%s\x00%s\x00%d\x00", fr.Func, path.Base(filepath.ToSlash(file)), fr.Line)
		}
		h.Write([]byte{0})
	}
	if f.Alloc != nil {
		site(&f.Alloc.Op)
	}
	for i := range f.Ops {
		site(&f.Ops[i])
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// File is a baseline file.
type File struct {
	Version     int     `json:"version"`
	Fingerprint string  `json:"fingerprint"`
	Findings    []Entry `json:"findings"`
}

// Entry is one accepted finding.
type Entry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Where       string `json:"where,omitempty"`
}

// New returns the baseline that accepts findings.
func New(findings []*checker.Finding) *File {
	b := &File{Version: Version, Fingerprint: FingerprintKey, Findings: []Entry{}}
	seen := map[string]bool{}
	for _, f := range findings {
		fp := Fingerprint(f)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		e := Entry{Fingerprint: fp, Rule: f.Rule}
		if len(f.Ops) > 0 {
			e.Where = f.Ops[0].Place() // No thread id: re-recording keeps the file as it was.
		}
		b.Findings = append(b.Findings, e)
	}
	order := map[string]int{}
	for i, r := range checker.Rules {
		order[r.ID] = i
	}
	sort.SliceStable(b.Findings, func(i, j int) bool {
		x, y := b.Findings[i], b.Findings[j]
		if x.Rule != y.Rule {
			return order[x.Rule] < order[y.Rule]
		}
		if x.Where != y.Where {
			return x.Where < y.Where
		}
		return x.Fingerprint < y.Fingerprint
	})
	return b
}

// Write writes the baseline as indented JSON.
func (b *File) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

// WriteFile writes the baseline to path.
func (b *File) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o666)
}

// Set is the fingerprints of a baseline.
type Set map[string]bool

// Contains reports whether the baseline accepts the finding.
func (s Set) Contains(f *checker.Finding) bool { return s[Fingerprint(f)] }

// Set returns the baseline's fingerprints.
func (b *File) Set() Set {
	s := Set{}
	for _, e := range b.Findings {
		s[e.Fingerprint] = true
	}
	return s
}

// Read parses a baseline; name names it in errors.
func Read(r io.Reader, name string) (*File, error) {
	dec := json.NewDecoder(r)
	var b File
	if err := dec.Decode(&b); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: not a streamcheck baseline: empty file", name)
		}
		return nil, fmt.Errorf("%s: not a streamcheck baseline: %v", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: not a streamcheck baseline: data after the JSON object", name)
	}
	switch {
	case b.Version != Version:
		return nil, fmt.Errorf("%s: baseline version %d, want %d (write a new one with --write-baseline)", name, b.Version, Version)
	case b.Fingerprint != FingerprintKey:
		return nil, fmt.Errorf("%s: baseline fingerprints are %q, want %q (write a new one with --write-baseline)", name, b.Fingerprint, FingerprintKey)
	}
	for i, e := range b.Findings {
		if e.Fingerprint == "" {
			return nil, fmt.Errorf("%s: finding %d has no fingerprint", name, i+1)
		}
	}
	return &b, nil
}

// ReadFile reads the baseline at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %v", path, pe.Err)
		}
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}
