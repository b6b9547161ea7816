package suppress

import (
	"errors"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

func TestParse(t *testing.T) {
	// The file starts with a byte order mark, as some editors write it.
	src := "\ufeff" + `# Accepted findings.

use-before-alloc  frame=*Trainer::prefetch*  reason="prefetch is ordered by a host barrier"
free-while-in-flight	kernel=at::native::*	reason="the caching allocator records events"   # trailing comment
*  file=third_party/* frame=main reason=vendored
leak frame="a b \"c\" \\" file=x.cu kernel=k reason="has # inside"
`
	l, err := Parse(strings.NewReader(src), "supp.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Entry{
		{File: "supp.txt", Line: 3, Rule: "use-before-alloc", Frames: []string{"*Trainer::prefetch*"}, Reason: "prefetch is ordered by a host barrier"},
		{File: "supp.txt", Line: 4, Rule: "free-while-in-flight", Kernels: []string{"at::native::*"}, Reason: "the caching allocator records events"},
		{File: "supp.txt", Line: 5, Rule: "*", Files: []string{"third_party/*"}, Frames: []string{"main"}, Reason: "vendored"},
		{File: "supp.txt", Line: 6, Rule: "leak", Frames: []string{`a b "c" \`}, Files: []string{"x.cu"}, Kernels: []string{"k"}, Reason: "has # inside"},
	}
	if !reflect.DeepEqual(l.Entries, want) {
		for i, e := range l.Entries {
			t.Logf("entry %d: %+v", i, *e)
		}
		t.Fatalf("entries differ from want")
	}
	if got := l.Entries[2].Pos(); got != "supp.txt:5" {
		t.Errorf("Pos = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`use-before-alloc frame=f`, "f.txt:2: entry has no reason"},
		{`use-before-alloc reason="x"`, "f.txt:2: entry has no pattern (frame=, kernel= or file=)"},
		{`use-before-alloc frame=f reason=""`, "f.txt:2: entry has an empty reason"},
		{`use-before-alloc frame=f reason=a reason=b`, "f.txt:2: entry has two reasons"},
		{`use-after-alloc frame=f reason=x`, `f.txt:2: unknown rule "use-after-alloc"`},
		{`frame=f reason=x`, `f.txt:2: entry must start with a rule id or *, not "frame=f"`},
		{`leak fram=f reason=x`, `f.txt:2: unknown key "fram" (want frame=, kernel=, file= or reason=)`},
		{`leak f reason=x`, `f.txt:2: want KEY=VALUE (frame=, kernel=, file= or reason=), not "f"`},
		{`leak frame= reason=x`, `f.txt:2: frame= has an empty pattern`},
		{`leak frame=f reason="no end`, `f.txt:2: unterminated quote: "\"no end"`},
	} {
		_, err := Parse(strings.NewReader("# first\n"+tc.line+"\n"), "f.txt")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %s", tc.line, err, tc.want)
		}
		var se *Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s: error is %T, want *Error", tc.line, err)
		}
	}
}

// A line over MaxLine bytes is an error naming the file and the line; one
// of exactly MaxLine bytes is read.
func TestParseLongLine(t *testing.T) {
	entry := "leak frame=main reason="
	fits := entry + strings.Repeat("x", MaxLine-len(entry))
	if l, err := Parse(strings.NewReader("# first\n"+fits+"\n"), "f.txt"); err != nil || len(l.Entries) != 1 {
		t.Errorf("a line of %d bytes: %v", len(fits), err)
	}
	_, err := Parse(strings.NewReader("# first\n"+fits+"x\nleak frame=f reason=y\n"), "f.txt")
	var se *Error
	if !errors.As(err, &se) || err.Error() != "f.txt:2: line longer than 65536 bytes (an entry is one line)" {
		t.Errorf("a line of %d bytes: %v", len(fits)+1, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.txt")
	os.WriteFile(p, []byte("leak frame=main reason=ok\n"), 0o644)
	l, err := Load(p)
	if err != nil || len(l.Entries) != 1 || l.Entries[0].File != p {
		t.Fatalf("Load = %+v, %v", l, err)
	}
	missing := filepath.Join(dir, "nope.txt")
	if _, err := Load(missing); err == nil || err.Error() != missing+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/at::all", true},
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*Trainer::prefetch*", "Trainer::prefetch(int)", true},
		{"*Trainer::prefetch*", "ns::Trainer::prefetch", true},
		{"*Trainer::prefetch*", "Trainer::step", false},
		{"at::native::*", "at::native::vectorized_elementwise_kernel<4>", true},
		{"at::native::*", "void at::native::foo", false},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "aXb", false},
		{`a\?`, "a?", true},
		{`a\`, `a\`, true},
		{"ü*", "über", true},
		{"?ber", "über", true},
	} {
		if got := Glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestGlobPath(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"third_party/*", "third_party/cub/scan.cuh", true},
		{"third_party/*", "/src/third_party/cub/scan.cuh", true},
		{"third_party/*", "my_third_party/x.cu", false},
		{"/src/*", "/src/a.cu", true},
		{"/src/*", "/home/src/a.cu", false},
		{"main.cu:41", "/src/app/main.cu:41", true},
		{"main.cu:4", "/src/app/main.cu:41", false},
		{"app/*.cu:4?", "/src/app/main.cu:41", true},
	} {
		if got := globPath(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globPath(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

// finding is a use-before-alloc: an allocation in Scratch::get called from
// Trainer::prefetch, and a kernel launch in Trainer::step.
func finding() *checker.Finding {
	return &checker.Finding{
		Rule: string(checker.RuleUseBeforeAlloc),
		Alloc: &checker.Alloc{Op: checker.Op{Role: "allocation", API: "cudaMallocAsync", Stack: []checker.Frame{
			{Func: "Scratch::get", File: "/src/scratch.cu", Line: 22},
			{Func: "Trainer::prefetch", File: "/src/trainer.cu", Line: 73},
		}}},
		Ops: []checker.Op{{Role: "use", API: "cudaLaunchKernel", Kernel: "unpack_batch", Stack: []checker.Frame{
			{Func: "Trainer::step", File: "/src/trainer.cu", Line: 90},
		}}, {Role: "use", API: "cudaLaunchKernel", Kernel: "at::native::fill", Stack: []checker.Frame{
			{File: "third_party/torch/fill.cu", Line: 5},
		}}},
	}
}

func TestMatches(t *testing.T) {
	f := finding()
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`use-before-alloc frame=*Trainer::prefetch* reason=x`, true}, // A caller of the allocation.
		{`use-after-free frame=*Trainer::prefetch* reason=x`, false},  // Another rule.
		{`* frame=Trainer::step reason=x`, true},
		{`* frame=Trainer::* frame=Scratch::get reason=x`, true}, // Every pattern, any op.
		{`* frame=Trainer::* frame=Other reason=x`, false},
		{`* frame=scratch.cu:22 reason=x`, true}, // file:line, tail of the path.
		{`* frame=scratch.cu:2 reason=x`, false},
		{`* frame=/src/trainer.cu:9? reason=x`, true},
		{`* frame=fill.cu:5 reason=x`, true}, // A frame with no function.
		{`* kernel=unpack_* reason=x`, true},
		{`* kernel=at::native::* reason=x`, true},
		{`* kernel=gemm reason=x`, false},
		{`* file=third_party/* reason=x`, true},
		{`* file=torch/* reason=x`, true},
		{`* file=*.cuh reason=x`, false},
		{`* file=/src/* kernel=unpack_batch reason=x`, true},
		{`* file=/src/* kernel=gemm reason=x`, false},
	} {
		l, err := Parse(strings.NewReader(tc.line), "s")
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := l.Entries[0].Matches(f); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestMatchCountsUnused(t *testing.T) {
	l, err := Parse(strings.NewReader(`
* frame=Trainer::step reason=a
use-before-alloc kernel=unpack_batch reason=b
leak frame=* reason=c
`), "s")
	if err != nil {
		t.Fatal(err)
	}
	f := finding()
	if first, second := l.Match(f), l.Match(f); !first || !second { // each match counts
		t.Fatal("no match")
	}
	if l.Entries[0].Matched != 2 || l.Entries[1].Matched != 2 || l.Entries[2].Matched != 0 {
		t.Errorf("matched %d %d %d, want 2 2 0", l.Entries[0].Matched, l.Entries[1].Matched, l.Entries[2].Matched)
	}
	if u := l.Unused(); len(u) != 1 || u[0].Line != 4 {
		t.Errorf("Unused = %+v, want the leak entry on line 4", u)
	}
	other := &checker.Finding{Rule: string(checker.RuleDoubleFree), Ops: []checker.Op{{Kernel: "unpack_batch"}}}
	if l.Match(other) {
		t.Error("double-free matched")
	}
	var none *List
	if none.Match(f) || none.Unused() != nil {
		t.Error("a nil list matches nothing and has no unused entries")
	}
}

// TestGlobAgainstPathMatch: on text without "/", "[" or "\", Glob agrees
// with path.Match.
func TestGlobAgainstPathMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(alphabet string, n int) string {
		b := make([]byte, rng.IntN(n+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		p, s := gen("ab*?", 6), gen("ab", 8)
		want, err := path.Match(p, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := Glob(p, s); got != want {
			t.Fatalf("Glob(%q, %q) = %v, path.Match says %v", p, s, got, want)
		}
	}
}

// TestMatchRoot: a frame shown relative to the source root is also matched
// by its absolute path, so an absolute file= pattern, or one written from
// the root while streamcheck runs in a subdirectory, still matches.
func TestMatchRoot(t *testing.T) {
	f := finding() // one frame shown relative: third_party/torch/fill.cu
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`* file=/work/proj/third_party/torch/fill.cu reason=x`, true},
		{`* frame=/work/proj/third_party/*:5 reason=x`, true},
		{`* file=proj/third_party/* reason=x`, true},
		{`* file=/elsewhere/third_party/* reason=x`, false},
	} {
		l, err := Parse(strings.NewReader(tc.line), "s")
		if err != nil {
			t.Fatal(err)
		}
		l.Root = "/work/proj"
		if got := l.Match(f); got != tc.want {
			t.Errorf("%s with root %s: Match = %v, want %v", tc.line, l.Root, got, tc.want)
		}
		if tc.want && l.Entries[0].Matches(f) {
			t.Errorf("%s: matches without the root too; the case tests nothing", tc.line)
		}
	}
}
