package baseline

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
)

func use(rule, site string, ptr uint64) *checker.Finding {
	return &checker.Finding{
		Rule:    rule,
		Message: "at some address", // Never hashed.
		Alloc:   &checker.Alloc{Ptr: ptr, Op: checker.Op{Role: "allocation", API: "cudaMallocAsync", Seq: ptr, Stack: []checker.Frame{{Func: "alloc", File: "a.cu", Line: 1}}}},
		Ops:     []checker.Op{{Role: "use", API: "cudaLaunchKernel", Kernel: "k", Stream: "s2", Ptr: ptr, Seq: ptr + 1, Stack: []checker.Frame{{Func: "step", File: site, Line: 41}}}},
		Trace:   "t.jsonl",
	}
}

func TestFingerprint(t *testing.T) {
	a := use(string(checker.RuleUseBeforeAlloc), "main.cu", 0x1000)
	b := use(string(checker.RuleUseBeforeAlloc), "main.cu", 0x2000)
	b.Trace = "other.sctrace"
	if fa, fb := Fingerprint(a), Fingerprint(b); fa != fb || len(fa) != 32 {
		t.Errorf("fingerprints %s, %s: want equal, 32 hex digits (addresses and traces are not hashed)", fa, fb)
	}
	if Fingerprint(a) == Fingerprint(use(string(checker.RuleUseAfterFree), "main.cu", 0x1000)) {
		t.Error("the rule is not hashed")
	}
	if Fingerprint(a) == Fingerprint(use(string(checker.RuleUseBeforeAlloc), "other.cu", 0x1000)) {
		t.Error("the site is not hashed")
	}
	// Without a stack the stream stands in for the site.
	c, d := use(string(checker.RuleLeak), "x", 1), use(string(checker.RuleLeak), "x", 1)
	c.Alloc, d.Alloc = nil, nil
	c.Ops[0].Stack, d.Ops[0].Stack = nil, nil
	d.Ops[0].Stream = "s3"
	if Fingerprint(c) == Fingerprint(d) {
		t.Error("the stream is not hashed when there is no stack")
	}
}

// TestFingerprintAcrossMachines: what differs between a developer's
// checkout and a CI workspace (directories, thread ids) does not change a
// fingerprint; a second caller of the same line does.
func TestFingerprintAcrossMachines(t *testing.T) {
	a := use(string(checker.RuleUseBeforeAlloc), "/home/alice/proj/src/helper.cu", 0x1000)
	b := use(string(checker.RuleUseBeforeAlloc), "/github/workspace/src/helper.cu", 0x1000)
	if Fingerprint(a) != Fingerprint(b) {
		t.Error("the directory of a file changes the fingerprint")
	}
	// The same line reached from two call sites is two findings.
	c := use(string(checker.RuleUseBeforeAlloc), "helper.cu", 0x1000)
	d := use(string(checker.RuleUseBeforeAlloc), "helper.cu", 0x1000)
	c.Ops[0].Stack = append(c.Ops[0].Stack, checker.Frame{Func: "main", File: "app.cu", Line: 11})
	d.Ops[0].Stack = append(d.Ops[0].Stack, checker.Frame{Func: "main", File: "app.cu", Line: 20})
	if Fingerprint(c) == Fingerprint(d) {
		t.Error("two callers of the same line share a fingerprint")
	}
	// Without a stack, a per-thread default stream's name holds the thread id.
	e, f := use(string(checker.RuleLeak), "x", 1), use(string(checker.RuleLeak), "x", 1)
	for _, x := range []*checker.Finding{e, f} {
		x.Alloc, x.Ops[0].Stack, x.Ops[0].StreamKind = nil, nil, "per-thread default stream"
	}
	e.Ops[0].Stream, f.Ops[0].Stream = "per_thread(tid 4242)", "per_thread(tid 5151)"
	if Fingerprint(e) != Fingerprint(f) {
		t.Error("the thread id of a per-thread stream changes the fingerprint")
	}
	// A baseline entry of a host call does not name its thread either.
	h := use(string(checker.RuleDoubleFree), "x.cu", 1)
	h.Ops[0].Stream, h.Ops[0].TID = "", 7396
	if w := New([]*checker.Finding{h}).Findings[0].Where; strings.Contains(w, "7396") {
		t.Errorf("baseline entry names the thread: %q", w)
	}
}

func TestRoundTrip(t *testing.T) {
	fs := []*checker.Finding{
		use(string(checker.RuleLeak), "z.cu", 1),
		use(string(checker.RuleUseBeforeAlloc), "main.cu", 0x1000),
		use(string(checker.RuleUseBeforeAlloc), "main.cu", 0x2000), // Same fingerprint: once.
		use(string(checker.RuleUseBeforeAlloc), "a.cu", 0x3000),
	}
	b := New(fs)
	if len(b.Findings) != 3 {
		t.Fatalf("%d entries, want 3", len(b.Findings))
	}
	if b.Findings[0].Rule != string(checker.RuleUseBeforeAlloc) || !strings.Contains(b.Findings[0].Where, "a.cu:41") || b.Findings[2].Rule != string(checker.RuleLeak) {
		t.Errorf("not sorted by rule, then where: %+v", b.Findings)
	}
	path := filepath.Join(t.TempDir(), "base.json")
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set := got.Set()
	for _, f := range fs {
		if !set.Contains(f) {
			t.Errorf("round trip lost %s at %s", f.Rule, f.Ops[0].Site())
		}
	}
	if set.Contains(use(string(checker.RuleUseBeforeAlloc), "new.cu", 1)) {
		t.Error("a new finding is in the baseline")
	}
	// No findings: an empty list, not null.
	var buf bytes.Buffer
	New(nil).Write(&buf)
	if !strings.Contains(buf.String(), `"findings": []`) {
		t.Errorf("empty baseline:\n%s", buf.String())
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{``, "b.json: not a streamcheck baseline: empty file"},
		{`{"version":1,`, "b.json: not a streamcheck baseline: unexpected EOF"},
		{`[1,2]`, "b.json: not a streamcheck baseline: json: cannot unmarshal array into Go value of type baseline.File"},
		{`{"version":1,"fingerprint":"streamcheckSites/v3"} {}`, "b.json: not a streamcheck baseline: data after the JSON object"},
		{`{"version":2,"fingerprint":"streamcheckSites/v3"}`, "b.json: baseline version 2, want 1 (write a new one with --write-baseline)"},
		{`{"version":1,"fingerprint":"streamcheckSites/v0"}`, `b.json: baseline fingerprints are "streamcheckSites/v0", want "streamcheckSites/v3" (write a new one with --write-baseline)`},
		{`{"version":1,"fingerprint":"streamcheckSites/v3","findings":[{"rule":"leak"}]}`, "b.json: finding 1 has no fingerprint"},
	} {
		_, err := Read(strings.NewReader(tc.data), "b.json")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %s", tc.data, err, tc.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "none.json")
	if _, err := ReadFile(missing); err == nil || err.Error() != missing+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}
