package selftest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/cudart"
	"github.com/streamcheck/streamcheck/model"
)

func TestPTXSanity(t *testing.T) {
	for _, want := range []string{
		".version 7.0", ".target sm_70", ".address_size 64",
		".visible .entry " + KernelName + "(",
		".param .u64 touch_param_ptr", ".param .u32 touch_param_n",
		"st.global.u32", "ret;",
	} {
		if !strings.Contains(TouchPTX, want) {
			t.Errorf("PTX lacks %q", want)
		}
	}
	if !strings.Contains(TouchPTX, ".entry touch") {
		t.Errorf("PTX has no .entry touch")
	}
	if o, c := strings.Count(TouchPTX, "{"), strings.Count(TouchPTX, "}"); o != 1 || c != 1 {
		t.Errorf("PTX has %d '{' and %d '}', want one kernel body", o, c)
	}
	if got := ptxTarget(); got != ".version 7.0 .target sm_70" {
		t.Errorf("ptxTarget() = %q", got)
	}
	if strings.ContainsRune(TouchPTX, 0) {
		t.Errorf("PTX contains a NUL byte")
	}
}

func TestCasesAreKnownRules(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases {
		if seen[c.Name] {
			t.Errorf("case %s twice", c.Name)
		}
		seen[c.Name] = true
		if c.steps == nil || c.Doc == "" {
			t.Errorf("case %s is incomplete", c.Name)
		}
		for _, r := range c.Expect {
			if _, err := checker.LookupRule(r); err != nil {
				t.Errorf("case %s expects %v", c.Name, err)
			}
		}
	}
	for _, name := range []string{"use-before-alloc", "ok-event", "free-while-in-flight", "ok-sync"} {
		if _, err := Lookup(name); err != nil {
			t.Error(err)
		}
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "ok-sync") {
		t.Errorf("Lookup(nope) = %v", err)
	}
}

// Traces in the JSON Lines form, as the checker's golden tests write them,
// standing for what the shim records for each case.
const (
	traceUseBeforeAlloc = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":262144}
{"op":"launch","stream":"s2","kernel":"touch","ptrs":["0x7f0000000000"]}
{"op":"stream_sync","stream":"s2"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
{"op":"stream_sync","stream":"s1"}
`
	traceOKSync = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":262144}
{"op":"stream_sync","stream":"s1"}
{"op":"launch","stream":"s2","kernel":"touch","ptrs":["0x7f0000000000"]}
{"op":"stream_sync","stream":"s2"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
{"op":"stream_sync","stream":"s1"}
`
	traceFreeWhileInFlight = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":262144}
{"op":"event_record","event":"e1","stream":"s1"}
{"op":"stream_wait_event","stream":"s2","event":"e1"}
{"op":"launch","stream":"s2","kernel":"touch","ptrs":["0x7f0000000000"]}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
{"op":"stream_sync","stream":"s1"}
{"op":"stream_sync","stream":"s2"}
`
	traceOKEvent = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":262144}
{"op":"event_record","event":"e1","stream":"s1"}
{"op":"stream_wait_event","stream":"s2","event":"e1"}
{"op":"launch","stream":"s2","kernel":"touch","ptrs":["0x7f0000000000"]}
{"op":"event_record","event":"e2","stream":"s2"}
{"op":"stream_wait_event","stream":"s1","event":"e2"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
{"op":"stream_sync","stream":"s1"}
`
	// The launch without its pointer: what a shim that cannot read kernel
	// parameters records.
	traceNoUse = `{"op":"stream_create","stream":"s1"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":262144}
{"op":"launch","stream":"s1","kernel":"touch"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000"}
`
)

func writeTrace(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustCase(t *testing.T, name string) *Case {
	t.Helper()
	c, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAnalyzeExpectedTraces(t *testing.T) {
	for name, trace := range map[string]string{
		"use-before-alloc":     traceUseBeforeAlloc,
		"ok-sync":              traceOKSync,
		"ok-event":             traceOKEvent,
		"free-while-in-flight": traceFreeWhileInFlight,
	} {
		dir := t.TempDir()
		writeTrace(t, dir, "streamcheck-123.sctrace", trace)
		v := Analyze(mustCase(t, name), dir)
		if !v.Pass {
			t.Errorf("%s: failed: %s", name, v.Reason)
		}
		if len(v.Results) != 1 {
			t.Errorf("%s: %d results", name, len(v.Results))
		}
	}
}

func TestAnalyzeWrongFindings(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "streamcheck-1.sctrace", traceUseBeforeAlloc)
	v := Analyze(mustCase(t, "ok-sync"), dir)
	if v.Pass || v.Reason != "expected no finding, found use-before-alloc" {
		t.Errorf("ok-sync on a racy trace: pass=%v reason %q", v.Pass, v.Reason)
	}
	v = Analyze(mustCase(t, "free-while-in-flight"), dir)
	if v.Pass || v.Reason != "expected free-while-in-flight, found use-before-alloc" {
		t.Errorf("free-while-in-flight on another race: pass=%v reason %q", v.Pass, v.Reason)
	}
	dir = t.TempDir()
	writeTrace(t, dir, "streamcheck-1.sctrace", traceOKSync)
	v = Analyze(mustCase(t, "use-before-alloc"), dir)
	if v.Pass || v.Reason != "expected use-before-alloc, found no finding" {
		t.Errorf("use-before-alloc on a clean trace: pass=%v reason %q", v.Pass, v.Reason)
	}
}

func TestAnalyzeNoTrace(t *testing.T) {
	dir := t.TempDir()
	v := Analyze(mustCase(t, "ok-sync"), dir)
	if v.Pass || !strings.Contains(v.Reason, "did not load the shim") {
		t.Errorf("empty dir: pass=%v reason %q", v.Pass, v.Reason)
	}
	writeTrace(t, dir, "streamcheck-77.error", "cannot load libcupti\n")
	v = Analyze(mustCase(t, "ok-sync"), dir)
	if v.Pass || !strings.HasSuffix(v.Reason, "the shim said: cannot load libcupti") {
		t.Errorf("dir with an error note: reason %q", v.Reason)
	}
}

func TestAnalyzeMissingUse(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "streamcheck-5.sctrace", traceNoUse)
	v := Analyze(mustCase(t, "ok-sync"), dir)
	if v.Pass || !strings.Contains(v.Reason, "pointer among the kernel's arguments") {
		t.Errorf("pass=%v reason %q", v.Pass, v.Reason)
	}
}

// binaryTrace converts a JSON Lines trace to the binary form the shim
// writes, optionally without its End record (as a process that exits
// without running the shim's destructor leaves it).
func binaryTrace(t *testing.T, jsonl string, withEnd bool) string {
	t.Helper()
	r := model.NewJSONLReader(strings.NewReader(jsonl), "in.jsonl")
	var buf bytes.Buffer
	w := model.NewBinaryWriter(&buf)
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteEvent(&ev, r.Tables()); err != nil {
			t.Fatal(err)
		}
	}
	closeTrace := w.Close
	if !withEnd { // as a killed program leaves it
		closeTrace = func() error { return w.CloseDamaged(model.ErrTruncated.Error()) }
	}
	if err := closeTrace(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestAnalyzeTruncatedTrace(t *testing.T) {
	c := mustCase(t, "use-before-alloc")
	dir := t.TempDir()
	writeTrace(t, dir, "streamcheck-3.sctrace", binaryTrace(t, traceUseBeforeAlloc, true))
	if v := Analyze(c, dir); !v.Pass || v.Truncated {
		t.Errorf("whole binary trace: %+v", v)
	}
	dir = t.TempDir()
	writeTrace(t, dir, "streamcheck-3.sctrace", binaryTrace(t, traceUseBeforeAlloc, false))
	if v := Analyze(c, dir); v.Pass || !strings.Contains(v.Reason, "damaged") {
		t.Errorf("trace without End passed by default: %+v", v)
	}
	v := AnalyzeWith(c, dir, Options{AllowTruncated: true})
	if !v.Pass || !v.Truncated || !slices.Equal(v.Found, []string{"use-before-alloc"}) {
		t.Errorf("trace without End with AllowTruncated: %+v", v)
	}
	// Corruption is never allowed.
	dir = t.TempDir()
	whole := binaryTrace(t, traceUseBeforeAlloc, true)
	// An event record whose payload is one unfinished varint, after the header.
	writeTrace(t, dir, "streamcheck-3.sctrace", whole[:16]+"\x10\x01\xff"+whole[16:])
	if v := AnalyzeWith(c, dir, Options{AllowTruncated: true}); v.Pass {
		t.Errorf("corrupt trace passed: %+v", v)
	}
}

func TestAnalyzeDamagedTrace(t *testing.T) {
	dir := t.TempDir()
	// A binary trace cut inside its header.
	writeTrace(t, dir, "streamcheck-9.sctrace", "strmchk\x00\x01")
	v := Analyze(mustCase(t, "ok-sync"), dir)
	if v.Pass || v.Reason == "" {
		t.Errorf("damaged trace passed: %+v", v)
	}
}

// TestGPURunCases runs every case on the GPU in this process (not
// recorded): it checks the bindings, the PTX and the call sequences.
func TestGPURunCases(t *testing.T) {
	d, err := cudart.Load()
	if errors.Is(err, cudart.ErrNoDriver) {
		t.Skipf("no CUDA driver: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Init(); errors.Is(err, cudart.ErrorNoDevice) || errors.Is(err, cudart.ErrorStubLibrary) {
		t.Skipf("no usable CUDA device: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases {
		if err := Run(c.Name, 0, io.Discard); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// TestOptionalCleanup: a clean-up function an older driver does not export
// does not fail a case that ran; any other clean-up error does.
func TestOptionalCleanup(t *testing.T) {
	if err := optional(fmt.Errorf("cuModuleUnload: %w", cudart.ErrNotExported)); err != nil {
		t.Errorf("optional(not exported) = %v, want nil", err)
	}
	if err := optional(errors.New("cuModuleUnload: CUDA_ERROR_ILLEGAL_ADDRESS (700)")); err == nil {
		t.Error("optional dropped a real error")
	}
}
