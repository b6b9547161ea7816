package intercept

// These tests build the shim as CI would, run a fake CUDA program
// (testdata/fakeapp.c) on a fake CUPTI library (testdata/fakecupti.c) that
// delivers callbacks with CUPTI's data layout, and read the traces back with
// the model package's reader. No GPU or CUDA installation is involved.

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/shimbuild"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/symbolize"
)

type built struct {
	dir, shim, fake, app string
	// runtimes are the sanitizer runtimes the shim needs (SHIM_CFLAGS in
	// CI), preloaded into every program the tests load it into.
	runtimes []string
	err      error
	skip     string
}

// ldPreload returns the LD_PRELOAD setting that loads libs, after the
// sanitizer runtimes the shim needs.
func (b built) ldPreload(libs ...string) string {
	return "LD_PRELOAD=" + strings.Join(append(slices.Clone(b.runtimes), libs...), " ")
}

// under reports whether the shim was built with the sanitizer whose
// runtime's name starts with lib (libasan, libtsan).
func (b built) under(lib string) bool {
	return slices.ContainsFunc(b.runtimes, func(p string) bool { return strings.HasPrefix(filepath.Base(p), lib) })
}

// sanitizerEnv returns what a program that loads the shim needs when the
// shim was built with a sanitizer: its runtimes preloaded (loading the
// shim too when it is preloaded) and options that make any report fatal.
func (b built) sanitizerEnv(preloadShim bool) []string {
	var env []string
	if len(b.runtimes) > 0 {
		env = shimbuild.SanitizerOptions()
	}
	switch {
	case preloadShim:
		env = append(env, b.ldPreload(b.shim))
	case len(b.runtimes) > 0:
		env = append(env, b.ldPreload())
	}
	return env
}

// checkSanitizer fails the test when a program's output holds a sanitizer
// report: the shim did something wrong in it.
func checkSanitizer(t testing.TB, what, output string) {
	t.Helper()
	if r := shimbuild.Report(output); r != "" {
		t.Errorf("%s: sanitizer report: %s\n%s", what, r, output)
	}
}

var (
	buildOnce sync.Once
	artifacts built
)

// cCompiler returns $CC, or cc, if it is on PATH.
func cCompiler() (string, error) {
	cc := shimbuild.CC()
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("no C compiler (%s)", cc)
	}
	return cc, nil
}

// build compiles the shim (as scripts/build.sh does), the fake CUPTI
// library and the fake app once per test binary.
func build(t testing.TB) built {
	t.Helper()
	buildOnce.Do(func() {
		if m := shimbuild.Missing(); m != "" {
			artifacts.skip = m
			return
		}
		dir, err := os.MkdirTemp("", "streamcheck-intercept-test-")
		if err != nil {
			artifacts.err = err
			return
		}
		artifacts.dir = dir
		artifacts.shim = filepath.Join(dir, "libstreamcheck.so")
		if err := shimbuild.Build(artifacts.shim); err != nil {
			artifacts.err = err
			return
		}
		if artifacts.runtimes, err = shimbuild.Runtimes(artifacts.shim); err != nil {
			artifacts.err = err
			return
		}
		if err := shimbuild.Consult("testdata/*.[ch]"); err != nil { // what the steps below compile
			artifacts.err = err
			return
		}
		artifacts.fake, artifacts.app, artifacts.err = shimbuild.BuildFake(dir)
	})
	if artifacts.skip != "" {
		t.Skip(artifacts.skip)
	}
	if artifacts.err != nil {
		t.Fatal(artifacts.err)
	}
	return artifacts
}

func TestMain(m *testing.M) {
	code := m.Run()
	if artifacts.dir != "" {
		os.RemoveAll(artifacts.dir)
	}
	os.Exit(code)
}

type how int

const (
	noShim  how = iota
	inject      // what the driver does for CUDA_INJECTION64_PATH
	preload     // LD_PRELOAD with STREAMCHECK_PRELOAD=1
)

type result struct {
	dir            string // STREAMCHECK_DIR
	stdout, stderr string
	state          *os.ProcessState
	log            map[string]uint64 // FAKE_LOG values
}

// cleanEnv returns the test's environment without the settings of the
// shim, the loader and the fakes, which each run sets itself.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "STREAMCHECK_") || k == "LD_PRELOAD" ||
			k == "CUDA_INJECTION64_PATH" || strings.HasPrefix(k, "FAKE") || k == "CUDA_HOME" || k == "CUDA_PATH" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// unsetBackend, among a run's extra settings, leaves STREAMCHECK_BACKEND
// unset (the shim's own default).
const unsetBackend = "STREAMCHECK_BACKEND="

// namesBackend reports whether env sets STREAMCHECK_BACKEND (to anything,
// the empty value included).
func namesBackend(env []string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, "STREAMCHECK_BACKEND=") {
			return true
		}
	}
	return false
}

// run runs the fake app in mode, loading the shim as h says.
func run(t testing.TB, b built, mode string, h how, extraEnv ...string) result {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "fakeapp.log")
	cmd := exec.Command(b.app, mode)
	env := append(cleanEnv(),
		"STREAMCHECK_DIR="+dir,
		"STREAMCHECK_CUPTI="+b.fake,
		"STREAMCHECK_LIBCUDA="+b.fake,
		// Most tests check the runtime names the runtime-domain callbacks
		// give; TestDriverNamesByDefault covers the default without them.
		"STREAMCHECK_RUNTIME_NAMES=1",
		"FAKE_LOG="+logPath,
	)
	switch h {
	case inject:
		env = append(env, "FAKE_INJECT="+b.shim)
	case preload:
		env = append(env, "STREAMCHECK_PRELOAD=1")
		// Preloaded, the shim records by interposition unless told
		// otherwise; these runs exercise CUPTI's callbacks preloaded
		// unless the caller names a backend (or unsetBackend).
		if !namesBackend(extraEnv) {
			env = append(env, "STREAMCHECK_BACKEND=cupti")
		}
	}
	env = append(env, b.sanitizerEnv(h == preload)...)
	cmd.Env = append(env, extraEnv...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run fakeapp %s: %v", mode, err)
	}
	checkSanitizer(t, "fakeapp "+mode, se.String())
	return result{dir: dir, stdout: so.String(), stderr: se.String(), state: cmd.ProcessState, log: readLog(t, logPath)}
}

// readLog reads the values the fake app wrote to FAKE_LOG (none if it
// wrote no log).
func readLog(t testing.TB, path string) map[string]uint64 {
	t.Helper()
	log := map[string]uint64{}
	f, err := os.Open(path)
	if err != nil {
		return log
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("bad log line %q", sc.Text())
		}
		log[k] = n
	}
	return log
}

func (r result) traces(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(r.dir, "streamcheck-*.sctrace"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// runClean runs the fake app in mode with the shim injected and requires it
// to exit 0.
func runClean(t *testing.T, b built, mode string) result {
	t.Helper()
	r := run(t, b, mode, inject)
	if exitDesc(r.state) != "exit 0" {
		t.Fatalf("fakeapp %s: %s %q", mode, exitDesc(r.state), r.stderr)
	}
	return r
}

// onlyTrace returns the one trace a run wrote, which must be complete.
func (r result) onlyTrace(t *testing.T) trace {
	t.Helper()
	files := r.traces(t)
	if len(files) != 1 {
		t.Fatalf("traces %v, want one", files)
	}
	tr := readTrace(t, files[0])
	if tr.err != nil {
		t.Fatalf("trace incomplete: %v", tr.err)
	}
	return tr
}

// launchPtrs returns the device addresses of each launch in the trace.
func (tr trace) launchPtrs() [][]uint64 {
	var launches [][]uint64
	for _, ev := range tr.events {
		if ev.Op == model.OpLaunch {
			launches = append(launches, ev.Ptrs)
		}
	}
	return launches
}

// launchWeak returns each launch's count of weak addresses (model.Event.Weak).
func (tr trace) launchWeak() []uint32 {
	var weak []uint32
	for _, ev := range tr.events {
		if ev.Op == model.OpLaunch {
			weak = append(weak, ev.Weak)
		}
	}
	return weak
}

type trace struct {
	path   string
	events []model.Event
	err    error // what ended reading: nil for a complete trace
	tab    *model.Tables
}

func readTrace(t *testing.T, path string) trace {
	t.Helper()
	r, c, err := model.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer c.Close()
	evs, err := model.Collect(r)
	return trace{path: path, events: evs, err: err, tab: r.Tables()}
}

// exitDesc says how a process ended, to compare runs with and without the shim.
func exitDesc(s *os.ProcessState) string {
	ws := s.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

// ---- expected events ----

type want struct {
	op                 model.Op
	api                string
	res                int32
	stream, event, ptr uint64
	size, src          uint64
	kind               model.MemcpyKind
	flags              uint32
	pool               uint64
	kernel             string
	prio               int32
	ptrs               []uint64
	weak               uint32 // how many of the last ptrs are weak matches
	dev                int32
	graph, exec        uint64
	peerSrc, peerDst   int32
	node               uint64
	memOp              model.MemOpKind
	memFlags           uint32
	value              uint64
}

// basicWant is the trace of the basic scenario: a few calls, for the
// tests of what holds of every call (each API's recording is
// TestShimCases').
func basicWant(l map[string]uint64) []want {
	s1, p, p2 := l["s1"], l["p"], l["p2"]
	return []want{
		{op: model.OpStreamCreate, api: "cudaStreamCreate", stream: s1},
		{op: model.OpMallocAsync, api: "cudaMallocAsync", stream: s1, ptr: p, size: 1024},
		{op: model.OpMalloc, api: "cudaMalloc", ptr: p2, size: 4096},
		{op: model.OpLaunch, api: "cudaLaunchKernel", stream: s1, kernel: "_Z6kernelPfS_4pairiPcd", ptrs: []uint64{p, p + 256, p2 + 8}, weak: 1},
		{op: model.OpFreeAsync, api: "cudaFreeAsync", stream: s1, ptr: p},
		{op: model.OpStreamDestroy, api: "cudaStreamDestroy", stream: s1},
		{op: model.OpFree, api: "cudaFree", ptr: p2},
	}
}

func got(tab *model.Tables, ev *model.Event) want {
	ptrs := ev.Ptrs
	if len(ptrs) == 0 {
		ptrs = nil
	}
	return want{op: ev.Op, api: tab.String(ev.API), res: ev.Result, stream: ev.Stream, event: ev.Event,
		ptr: ev.Ptr, size: ev.Size, src: ev.Src, kind: ev.Kind, flags: ev.Flags, pool: ev.Pool,
		kernel: tab.String(ev.Kernel), prio: ev.Prio, ptrs: ptrs, weak: ev.Weak, dev: ev.Device, graph: ev.Graph, exec: ev.Exec,
		peerSrc: ev.PeerSrc, peerDst: ev.PeerDst, node: ev.Node, memOp: ev.MemOp, memFlags: ev.MemFlags, value: ev.Value}
}

func (w want) String() string {
	return fmt.Sprintf("{%v api=%q res=%d stream=%#x event=%#x ptr=%#x size=%d src=%#x kind=%v flags=%#x pool=%#x kernel=%q prio=%d ptrs=%#x weak=%d dev=%d graph=%#x exec=%#x peer=%d->%d node=%#x mem_op=%v mem_flags=%#x value=%#x}",
		w.op, w.api, w.res, w.stream, w.event, w.ptr, w.size, w.src, w.kind, w.flags, w.pool, w.kernel, w.prio, w.ptrs, w.weak, w.dev, w.graph, w.exec, w.peerSrc, w.peerDst, w.node, w.memOp, w.memFlags, w.value)
}

func checkEvents(t *testing.T, tr trace, ws []want) {
	t.Helper()
	n := min(len(ws), len(tr.events))
	for i := 0; i < n; i++ {
		if g := got(tr.tab, &tr.events[i]); !reflect.DeepEqual(g, ws[i]) {
			t.Errorf("event %d:\n got %v\nwant %v", i+1, g, ws[i])
		}
	}
	if len(tr.events) != len(ws) {
		t.Errorf("%d events, want %d", len(tr.events), len(ws))
		for i := n; i < len(tr.events); i++ {
			t.Errorf("extra event %d: %v", i+1, got(tr.tab, &tr.events[i]))
		}
	}
}

// checkCommon checks what every event of one process's trace must satisfy.
func checkCommon(t *testing.T, tr trace, pid uint64) {
	t.Helper()
	if tr.tab.Process.PID != uint32(pid) {
		t.Errorf("process pid %d, want %d", tr.tab.Process.PID, pid)
	}
	if v := tr.tab.String(tr.tab.Process.Version); !strings.HasPrefix(v, "streamcheck-intercept ") {
		t.Errorf("process version %q", v)
	}
	if exe := tr.tab.String(tr.tab.Process.Exe); filepath.Base(exe) != "fakeapp" {
		t.Errorf("process exe %q", exe)
	}
	// The command line: the program, then its scenario argument.
	if prog, scenario, ok := strings.Cut(tr.tab.String(tr.tab.Process.Args), " "); !ok || filepath.Base(prog) != "fakeapp" || scenario == "" {
		t.Errorf("process args %q, want fakeapp and its scenario", tr.tab.String(tr.tab.Process.Args))
	}
	var last model.Event
	for i, ev := range tr.events {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i+1, ev.Seq)
		}
		if i > 0 && ev.Time < last.Time {
			t.Errorf("event %d: time %d before %d", i+1, ev.Time, last.Time)
		}
		if ev.TID == 0 {
			t.Errorf("event %d: no tid", i+1)
		}
		implicit := ev.Op == model.OpStreamCreate && ev.Flags&model.FlagImplicit != 0
		if !implicit && len(tr.tab.Stack(ev.Stack)) == 0 {
			t.Errorf("event %d (%v): no stack", i+1, ev.Op)
		}
		last = ev
	}
	fi, err := os.Stat(tr.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", tr.path, fi.Mode().Perm())
	}
}

// TestBasicInjection and TestBasicPreload load the shim both ways and check
// what holds of every call whatever its API: the program's output, exit
// status and errno are unchanged, the callbacks enabled are the ones the
// shim asks for, the trace is complete and its events are the main thread's,
// with stacks that start in the program.
func TestBasicInjection(t *testing.T) { testBasic(t, inject) }
func TestBasicPreload(t *testing.T)   { testBasic(t, preload) }

func testBasic(t *testing.T, h how) {
	b := build(t)
	base := run(t, b, "basic", noShim)
	r := run(t, b, "basic", h)
	if r.stdout != base.stdout || exitDesc(r.state) != exitDesc(base.state) {
		t.Errorf("program changed by the shim: stdout %q, %s; without: %q, %s", r.stdout, exitDesc(r.state), base.stdout, exitDesc(base.state))
	}
	if exitDesc(r.state) != "exit 7" || r.stdout != "fakeapp: basic done, errno kept\n" {
		t.Errorf("fakeapp: %s, stdout %q", exitDesc(r.state), r.stdout)
	}
	if !strings.Contains(r.stderr, "enabled: cuMemAlloc=0 cudaGetDevice=0 cuLaunchKernel=1 cudaMallocAsync=1 cuMemAllocHost=0 cuMemAllocHost_v2=1") {
		t.Errorf("callbacks enabled wrongly: stderr %q", r.stderr)
	}
	if strings.Contains(r.stderr, "streamcheck:") {
		t.Errorf("shim complained: %q", r.stderr)
	}
	tr := r.onlyTrace(t)
	if tr.tab.Events != uint64(len(tr.events)) || tr.tab.Dropped != 0 {
		t.Errorf("end record: %d events, %d dropped; read %d", tr.tab.Events, tr.tab.Dropped, len(tr.events))
	}
	checkEvents(t, tr, basicWant(r.log))
	checkCommon(t, tr, r.log["pid"])
	for i, ev := range tr.events {
		if ev.TID != uint32(r.log["pid"]) {
			t.Errorf("event %d: tid %d, want the main thread %d", i+1, ev.TID, r.log["pid"])
		}
	}
	checkStacks(t, b, tr)
}

// TestIdleStretchCostsNoCPU: a program that computes for minutes between
// CUDA calls (Jitify's warm-up in CuPy's test_raw.py) must not be slowed by
// the shim's own threads: they sleep until the program calls again. The
// process's CPU time with a 1.5 s stretch without calls stays within a
// tenth of that of the same run without the stretch, and the call after the
// stretch is recorded.
func TestIdleStretchCostsNoCPU(t *testing.T) {
	b := build(t)
	for h, name := range map[how]string{inject: "injected", preload: "preloaded"} {
		cpu := func(idleMS int) time.Duration {
			r := run(t, b, "basic", h, fmt.Sprintf("FAKE_IDLE_MS=%d", idleMS))
			if exitDesc(r.state) != "exit 7" {
				t.Fatalf("fakeapp with FAKE_IDLE_MS=%d: %s, stderr %q", idleMS, exitDesc(r.state), r.stderr)
			}
			checkEvents(t, r.onlyTrace(t), basicWant(r.log))
			return r.state.UserTime() + r.state.SystemTime()
		}
		without, with := cpu(0), cpu(1500)
		if extra := with - without; extra > 150*time.Millisecond {
			t.Errorf("shim %s: a 1.5 s stretch without CUDA calls cost %v of CPU (%v against %v without it)", name, extra, with, without)
		}
	}
}

// checkStacks checks that stacks start in the program (the shim, CUPTI and
// driver frames are trimmed) and that the module records map a pc to the
// right ELF symbol the way docs/trace-format.md says.
func checkStacks(t *testing.T, b built, tr trace) {
	t.Helper()
	f, err := elf.Open(b.app)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	symbolize := func(vaddr uint64) string {
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && vaddr >= s.Value && vaddr < s.Value+s.Size {
				return s.Name
			}
		}
		return ""
	}
	appPath, _ := filepath.EvalSymlinks(b.app)
	for i, ev := range tr.events {
		st := tr.tab.Stack(ev.Stack)
		if len(st) == 0 {
			continue
		}
		// The first frame is the CUDA library function the program called
		// (here the fake's), kept to name the call; the program's own call
		// comes next.
		if lib := tr.tab.String(tr.tab.Module(st[0].Module).Path); filepath.Base(lib) != filepath.Base(b.fake) {
			t.Errorf("event %d (%v): first frame in %q, want the CUDA library entry point (%s)", i+1, ev.Op, lib, b.fake)
		}
		st = st[1:]
		if len(st) == 0 {
			t.Errorf("event %d (%v): no program frame after the library entry point", i+1, ev.Op)
			continue
		}
		m := tr.tab.Module(st[0].Module)
		path := tr.tab.String(m.Path)
		if p, _ := filepath.EvalSymlinks(path); p != appPath {
			t.Errorf("event %d (%v): innermost frame %#x in %q, want the program", i+1, ev.Op, st[0].PC, path)
			continue
		}
		if st[0].PC < m.Base || st[0].PC >= m.Base+m.Size {
			t.Errorf("event %d: pc %#x outside module [%#x, +%#x)", i+1, st[0].PC, m.Base, m.Size)
		}
		// The pc is a return address: look up pc-1.
		fn := symbolize(st[0].PC - 1 - m.Base)
		if ev.Op == model.OpLaunch && fn != "d_launch" && fn != "basic" {
			t.Errorf("event %d (launch): innermost frame symbolizes to %q", i+1, fn)
		}
		if fn == "" {
			t.Errorf("event %d: pc %#x (vaddr %#x) is in no function of the program", i+1, st[0].PC, st[0].PC-1-m.Base)
		}
	}
}

func TestPreloadInertWithoutFlag(t *testing.T) {
	b := build(t)
	r := run(t, b, "basic", noShim, b.ldPreload(b.shim))
	if exitDesc(r.state) != "exit 7" || len(r.traces(t)) != 0 || strings.Contains(r.stderr, "streamcheck:") {
		t.Errorf("preloaded without STREAMCHECK_PRELOAD=1: %s, traces %v, stderr %q", exitDesc(r.state), r.traces(t), r.stderr)
	}
}

// TestStdoutClosed runs a program whose stdout is closed when the shim
// loads: neither the trace file (which the program's output would then
// overwrite) nor the shim's Go runtime may take descriptor 1.
func TestStdoutClosed(t *testing.T) {
	b := build(t)
	r := run(t, b, "basic", inject, "FAKE_CLOSE_STDOUT=1")
	if exitDesc(r.state) != "exit 7" || strings.Contains(r.stderr, "fd 1 was open") {
		t.Fatalf("fakeapp: %s, %q", exitDesc(r.state), r.stderr)
	}
	tr := r.onlyTrace(t)
	checkEvents(t, tr, basicWant(r.log))
}

// TestReleaseBeforeReuse has one thread free an allocation, destroy a stream
// and destroy an event, each of whose exit callbacks comes 50 ms after the
// driver took the thing back, while the main thread gets the same address
// and handles from the driver in that time. The trace must still have each
// release before the reuse; the other order frees the new allocation and
// destroys the new stream and event, which the checker reports as bugs.
func TestReleaseBeforeReuse(t *testing.T) {
	r := runClean(t, build(t), "reuse")
	tr := r.onlyTrace(t)
	p := r.log["p"]
	var got []string
	for _, ev := range tr.events {
		switch {
		case ev.Op == model.OpMalloc && ev.Ptr == p:
			got = append(got, "malloc")
		case ev.Op == model.OpFree && ev.Ptr == p:
			got = append(got, "free")
		case ev.Op == model.OpStreamCreate && ev.Stream == 0x710000:
			got = append(got, "stream create")
		case ev.Op == model.OpStreamDestroy && ev.Stream == 0x710000:
			got = append(got, "stream destroy")
		case ev.Op == model.OpEventCreate && ev.Event == 0xe70000:
			got = append(got, "event create")
		case ev.Op == model.OpEventDestroy && ev.Event == 0xe70000:
			got = append(got, "event destroy")
		}
	}
	want := []string{"malloc", "stream create", "event create", "free", "malloc", "stream destroy", "stream create", "event destroy", "event create"}
	if !slices.Equal(got, want) {
		t.Errorf("trace order:\n got %v\nwant %v", got, want)
	}
}

func TestThreads(t *testing.T) {
	b := build(t)
	r := run(t, b, "threads", inject)
	if exitDesc(r.state) != "exit 0" || r.stdout != "fakeapp: threads done\n" {
		t.Fatalf("fakeapp: %s, %q, %q", exitDesc(r.state), r.stdout, r.stderr)
	}
	tr := r.onlyTrace(t)
	checkCommon(t, tr, r.log["pid"])
	const threads, iters = 8, 200
	if want := threads * (1 + iters*5); len(tr.events) != want {
		t.Fatalf("%d events, want %d", len(tr.events), want)
	}
	type tstate struct {
		stream, ptr, ptPtr uint64
		n                  int
	}
	per := map[uint32]*tstate{}
	for i, ev := range tr.events {
		ts := per[ev.TID]
		if ts == nil {
			ts = &tstate{}
			per[ev.TID] = ts
		}
		ts.n++
		where := fmt.Sprintf("event %d (tid %d, %v)", i+1, ev.TID, ev.Op)
		switch ev.Op {
		case model.OpStreamCreate:
			ts.stream = ev.Stream
		case model.OpMallocAsync:
			if ev.Stream == model.StreamPerThread {
				ts.ptPtr = ev.Ptr
			} else if ev.Stream != ts.stream {
				t.Errorf("%s: stream %#x, want the thread's %#x", where, ev.Stream, ts.stream)
			} else {
				ts.ptr = ev.Ptr
			}
		case model.OpLaunch:
			// This thread's two live buffers, whatever the others do.
			if ev.Stream != ts.stream || !contains(ev.Ptrs, ts.ptr) || !contains(ev.Ptrs, ts.ptPtr+8) {
				t.Errorf("%s: stream %#x ptrs %#x, want stream %#x with %#x and %#x", where, ev.Stream, ev.Ptrs, ts.stream, ts.ptr, ts.ptPtr+8)
			}
		case model.OpFreeAsync:
			if ev.Ptr != ts.ptr && ev.Ptr != ts.ptPtr {
				t.Errorf("%s: frees %#x, not this thread's", where, ev.Ptr)
			}
		}
		if tr.tab.String(ev.API) == "" {
			t.Errorf("%s: no api name", where)
		}
	}
	if len(per) != threads {
		t.Errorf("%d threads recorded, want %d", len(per), threads)
	}
	for tid, ts := range per {
		if ts.n != 1+iters*5 {
			t.Errorf("tid %d: %d events", tid, ts.n)
		}
	}
}

func contains(v []uint64, x uint64) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// TestForkKeepsErrno forks 2,000 times while four threads record: the fork
// handlers take the shim's locks, and waiting for one must not leave the
// program an errno (a futex wait's EAGAIN did, about once in 170 forks).
func TestForkKeepsErrno(t *testing.T) {
	b := build(t)
	if b.under("libtsan") {
		// TSan's fork stops and restarts its own threads each time; 2000
		// forks beside running threads take it minutes, or deadlock it.
		t.Skip("fork while threads run, 2000 times: too slow for ThreadSanitizer")
	}
	r := run(t, b, "forkerrno", inject)
	if exitDesc(r.state) != "exit 0" || !strings.HasPrefix(r.stdout, "fakeapp: 0 of 2000 forks changed errno") {
		t.Fatalf("fakeapp: %s, %q, %q", exitDesc(r.state), r.stdout, r.stderr)
	}
}

func TestFork(t *testing.T) {
	b := build(t)
	r := run(t, b, "fork", inject)
	if exitDesc(r.state) != "exit 0" || r.stdout != "fakeapp: fork done, child ok\n" {
		t.Fatalf("fakeapp: %s, %q, %q", exitDesc(r.state), r.stdout, r.stderr)
	}
	files := r.traces(t)
	if len(files) != 2 {
		t.Fatalf("traces %v, want the parent's and the child's", files)
	}
	byPID := map[uint32]trace{}
	for _, f := range files {
		tr := readTrace(t, f)
		if tr.err != nil {
			t.Fatalf("%s: %v", f, tr.err)
		}
		byPID[tr.tab.Process.PID] = tr
	}
	parent, ok1 := byPID[uint32(r.log["parent"])]
	child, ok2 := byPID[uint32(r.log["child"])]
	if !ok1 || !ok2 {
		t.Fatalf("traces for pids %v, want parent %d and child %d", keys(byPID), r.log["parent"], r.log["child"])
	}
	s1, p, c := uint64(0x710000), r.log["p"], r.log["c"]
	const k1 = "_Z6kernelPfS_4pairiPcd"
	checkEvents(t, parent, []want{
		{op: model.OpStreamCreate, api: "cudaStreamCreate", stream: s1},
		{op: model.OpMallocAsync, api: "cudaMallocAsync", stream: s1, ptr: p, size: 1024},
		{op: model.OpFreeAsync, api: "cudaFreeAsync", stream: s1, ptr: p},
	})
	checkCommon(t, parent, r.log["parent"])
	// The child's trace stands alone: the stream its parent created is
	// implicit there, and the names defined before the fork still resolve.
	// The launch's words are matched against the child's trace, which
	// holds no allocation of the parent's: p+8 (in its struct parameter)
	// names nothing there.
	checkEvents(t, child, []want{
		{op: model.OpStreamCreate, stream: s1, flags: model.FlagImplicit},
		{op: model.OpMallocAsync, api: "cudaMallocAsync", stream: s1, ptr: c, size: 64},
		{op: model.OpLaunch, api: "cudaLaunchKernel", stream: s1, kernel: k1, ptrs: []uint64{c}},
		{op: model.OpFreeAsync, api: "cudaFreeAsync", stream: s1, ptr: c},
	})
	checkCommon(t, child, r.log["child"])
	if child.tab.Process.PPID != uint32(r.log["parent"]) {
		t.Errorf("child's ppid %d, want %d", child.tab.Process.PPID, r.log["parent"])
	}
	checkStacks(t, b, child)
}

func keys(m map[uint32]trace) []uint32 {
	var k []uint32
	for x := range m {
		k = append(k, x)
	}
	return k
}

func TestCrashKeepsEvents(t *testing.T) {
	for _, mode := range []string{"abort", "kill"} {
		t.Run(mode, func(t *testing.T) {
			b := build(t)
			base := run(t, b, mode, noShim)
			r := run(t, b, mode, inject)
			if exitDesc(r.state) != exitDesc(base.state) || r.stdout != base.stdout {
				t.Errorf("program changed: %s %q, without the shim %s %q", exitDesc(r.state), r.stdout, exitDesc(base.state), base.stdout)
			}
			files := r.traces(t)
			if len(files) != 1 {
				t.Fatalf("traces %v", files)
			}
			tr := readTrace(t, files[0])
			if !errors.Is(tr.err, model.ErrTruncated) {
				t.Errorf("reading ended with %v, want a truncated trace", tr.err)
			}
			const k1 = "_Z6kernelPfS_4pairiPcd"
			p := r.log["p"]
			checkEvents(t, tr, []want{
				{op: model.OpStreamCreate, api: "cudaStreamCreate", stream: 0x810000},
				{op: model.OpMallocAsync, api: "cudaMallocAsync", stream: 0x810000, ptr: p, size: 1024},
				{op: model.OpLaunch, api: "cudaLaunchKernel", stream: 0x810000, kernel: k1, ptrs: []uint64{p, p + 256, p + 8}, weak: 1},
			})
			checkCommon(t, tr, r.log["pid"])
		})
	}
}

// ipcKey is the shim's key of 64 bytes of interprocess data: FNV-1a.
func ipcKey(data [64]byte) uint64 {
	h := fnv.New64a()
	h.Write(data[:])
	return h.Sum64()
}

// TestInterprocess records the calls that share a pool, an allocation, an
// event and cudaMalloc memory between processes: the exporter's and the
// importer's records of one export carry the same key, and an imported
// pointer is in the allocation map (a launch's interior pointer into it is
// found) with the size the driver gives.
func TestInterprocess(t *testing.T) {
	r := runClean(t, build(t), "ipc")
	tr := r.onlyTrace(t)
	s, pool, imported := uint64(0xc20000), uint64(0xb0020000), uint64(0xb0030000)
	p, q, m, mq := r.log["p"], r.log["q"], r.log["m"], r.log["mq"]
	var data, event, mem [64]byte
	for i := range data {
		data[i] = byte(i*7 + 1)
		event[i], mem[i] = 0x5a, 0x33
	}
	checkEvents(t, tr, []want{
		{op: model.OpStreamCreate, api: "cudaStreamCreate", stream: s},
		{op: model.OpPoolExport, api: "cudaMemPoolExportToShareableHandle", pool: pool},
		{op: model.OpMallocAsync, api: "cuMemAllocFromPoolAsync", stream: s, ptr: p, size: 4096, pool: pool},
		{op: model.OpPtrExport, api: "cudaMemPoolExportPointer", ptr: p, value: ipcKey(data)},
		{op: model.OpPoolImport, api: "cudaMemPoolImportFromShareableHandle", pool: imported},
		{op: model.OpPtrImport, api: "cudaMemPoolImportPointer", ptr: q, size: 8192, pool: imported, value: ipcKey(data)},
		{op: model.OpPtrImport, api: "cudaMemPoolImportPointer", res: 1, pool: imported, value: ipcKey(data)}, // failed
		{op: model.OpLaunch, api: "cuLaunchKernel", stream: s, kernel: "k2", ptrs: []uint64{p, q + 4096}},
		{op: model.OpIpcEventExport, api: "cudaIpcGetEventHandle", event: 0xe20000, value: ipcKey(event)},
		{op: model.OpIpcEventOpen, api: "cudaIpcOpenEventHandle", event: 0xe30000, value: ipcKey(event)},
		{op: model.OpMalloc, api: "cudaMalloc", ptr: m, size: 4096},
		{op: model.OpIpcMemExport, api: "cudaIpcGetMemHandle", ptr: m, value: ipcKey(mem)},
		{op: model.OpIpcMemOpen, api: "cudaIpcOpenMemHandle", ptr: mq, size: 2048, value: ipcKey(mem)},
		{op: model.OpIpcMemClose, api: "cudaIpcCloseMemHandle", ptr: mq},
	})
	checkCommon(t, tr, r.log["pid"])
}

// A large by-value parameter yields only pointers to live allocations, as
// weak matches: its unused slots hold stale addresses (see params.c). A
// small one still yields a pointer to freed memory, weak too (word 1 of a
// 16-byte struct).
func TestLargeAggregates(t *testing.T) {
	b := build(t)
	r := runClean(t, b, "aggregate")
	tr := r.onlyTrace(t)
	launches, weak := tr.launchPtrs(), tr.launchWeak()
	want := []uint64{0x7c0000000000, 0x7c0000200000, 0x7c0000300000, 0x7c0000400000}
	if len(launches) != 2 || !reflect.DeepEqual(launches[0], want) || weak[0] != 3 {
		t.Fatalf("launch ptrs %#x weak %d, want %#x weak 3 (the live pointer; the live table entries and the freed one from the small struct, weak) and a second launch", launches[:min(1, len(launches))], weak[:min(1, len(weak))], want)
	}
	// The second launch's table, as fakeapp.c fills it: every word within
	// the map's bounds, over two chunks of lookups, in descending order here
	// and there.
	const live, live2, live3 = 0x7c0000000000, 0x7c0000200000, 0x7c0000400000
	set := map[uint64]bool{live: true}
	for i := uint64(0); i < 1024; i++ {
		switch i % 4 {
		case 0:
			set[live3+1023-i] = true
		case 2:
			set[live2+8*(i%16)] = true
		}
	}
	want = nil
	for a := range set {
		want = append(want, a)
	}
	slices.Sort(want)
	if got := launches[1]; !slices.Equal(got, want) || weak[1] != uint32(len(want)-1) {
		t.Errorf("second launch: %d ptrs %#x... (%d weak), want %d: the live ones sorted, all but the first parameter's weak, not the stale table entries nor the words in gaps", len(got), got[:min(4, len(got))], weak[1], len(want))
	}
}

// Matches are graded by where the word sits (params.c): an 8-byte
// parameter and the first word of a descriptor are pointer slots (strong);
// a descriptor's later words are weak, recorded after the strong ones and
// left out where a slot names the same address; without a layout every
// word is a slot.
func TestPointerSlots(t *testing.T) {
	b := build(t)
	r := runClean(t, b, "slots")
	tr := r.onlyTrace(t)
	const out, in, freed = 0x7b0000000000, 0x7b0000100000, 0x7b0000200000
	launches, weak := tr.launchPtrs(), tr.launchWeak()
	want := [][]uint64{{out, in, freed}, {in, freed, freed + 8}, {in, freed + 16}}
	wantWeak := []uint32{1, 1, 0}
	if !reflect.DeepEqual(launches, want) || !slices.Equal(weak, wantWeak) {
		t.Errorf("launch ptrs %#x weak %d, want %#x weak %d", launches, weak, want, wantWeak)
	}
}

// A launch passing hundreds of device addresses (an optimizer's table)
// records each once, sorted, whatever their order in the table: the large
// sets go through the shim's radix sort.
func TestManyLaunchPtrs(t *testing.T) {
	b := build(t)
	r := run(t, b, "bench", inject, "FAKE_TABLE=400", "FAKE_ITERS=1")
	if exitDesc(r.state) != "exit 0" {
		t.Fatalf("%s %q", exitDesc(r.state), r.stderr)
	}
	tr := r.onlyTrace(t)
	var allocs []uint64 // q[0..999], then p, as fakeapp.c's bench allocates them
	for _, ev := range tr.events {
		if ev.Op == model.OpMallocAsync {
			allocs = append(allocs, ev.Ptr)
		}
	}
	if len(allocs) != 1001 {
		t.Fatalf("%d allocations, want 1001", len(allocs))
	}
	set := map[uint64]bool{allocs[1000]: true} // the first parameter, p
	for i := 0; i < 400; i++ {                 // the table, as fakeapp.c fills it
		set[allocs[(i*37)%1000]+8*uint64(i%4)] = true
	}
	delete(set, allocs[1000])
	var want []uint64
	for a := range set {
		want = append(want, a)
	}
	slices.Sort(want)
	want = append([]uint64{allocs[1000]}, want...) // the slot, then the table's weak words
	launches, weak := tr.launchPtrs(), tr.launchWeak()
	if len(launches) != 1001 {
		t.Fatalf("%d launches, want 1001", len(launches))
	}
	for i, got := range launches {
		if !slices.Equal(got, want) || int(weak[i]) != len(want)-1 {
			t.Fatalf("launch %d: %d ptrs (%d weak), want p and the %d table addresses sorted, weak (first %#x, want %#x)", i+1, len(got), weak[i], len(want)-1, got[:min(3, len(got))], want[:3])
		}
	}
}

// TestRecentFrees checks the bounded memory of freed ranges: pointers into
// memory freed a moment ago are still recognized, old ones are forgotten,
// and a range freed, reused and freed again is remembered from its last free.
func TestRecentFrees(t *testing.T) {
	b := build(t)
	r := runClean(t, b, "churn")
	launches := r.onlyTrace(t).launchPtrs()
	const base, x = 0x7e0000000000, 0x7d0000000000
	want := [][]uint64{{base + 5999*0x1000}, {x + 8}, nil}
	if len(launches) != len(want) {
		t.Fatalf("%d launches", len(launches))
	}
	for i := range want {
		if len(launches[i]) != len(want[i]) || (len(want[i]) > 0 && !reflect.DeepEqual(launches[i], want[i])) {
			t.Errorf("launch %d: ptrs %#x, want %#x", i+1, launches[i], want[i])
		}
	}
}

// cuptiFindable reports whether a real libcupti could be found by the
// shim's search, which would make the "cannot load" test meaningless here.
func cuptiFindable() bool {
	for _, d := range []string{"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"} {
		if m, _ := filepath.Glob(filepath.Join(d, "libcupti.so*")); len(m) > 0 {
			return true
		}
	}
	out, _ := exec.Command("/sbin/ldconfig", "-p").Output()
	return bytes.Contains(out, []byte("libcupti.so"))
}

// TestPreloadWithoutDriver preloads the shim where there is neither a CUDA
// driver nor CUPTI: the process can make no CUDA call, so the shim stays
// silent and leaves no error marker (a CI machine without a GPU running
// `streamcheck run --preload -- make test`).
func TestPreloadWithoutDriver(t *testing.T) {
	b := build(t)
	if cuptiFindable() {
		t.Skip("a real libcupti is installed here")
	}
	r := run(t, b, "basic", preload, "STREAMCHECK_CUPTI=/nonexistent/libcupti.so", "STREAMCHECK_LIBCUDA=/nonexistent/libcuda.so.1")
	if strings.Contains(r.stderr, "streamcheck:") {
		t.Errorf("shim complained: %q", r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(r.dir, "streamcheck-*.error")); len(m) != 0 {
		t.Errorf("error markers written: %v", m)
	}
}

func TestCannotRecord(t *testing.T) {
	b := build(t)
	base := run(t, b, "basic", noShim)
	cases := []struct {
		name, env, reason string
	}{
		{"cupti missing", "STREAMCHECK_CUPTI=/nonexistent/libcupti.so", "STREAMCHECK_CUPTI cannot be loaded: /nonexistent/libcupti.so: "},
		{"subscriber taken", "FAKECUPTI_BUSY=1", "cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "cupti missing" && cuptiFindable() {
				t.Skip("a real libcupti is installed here")
			}
			for _, h := range []how{inject, preload} {
				r := run(t, b, "basic", h, c.env)
				if r.stdout != base.stdout || exitDesc(r.state) != exitDesc(base.state) {
					t.Errorf("program changed: %q %s", r.stdout, exitDesc(r.state))
				}
				var lines []string
				for _, l := range strings.Split(r.stderr, "\n") {
					if strings.HasPrefix(l, "streamcheck:") {
						lines = append(lines, l)
					}
				}
				if len(lines) != 1 || !strings.HasPrefix(lines[0], "streamcheck: cannot record CUDA calls: "+c.reason) {
					t.Errorf("stderr lines %q, want one saying %q", lines, c.reason)
				}
				marker := filepath.Join(r.dir, fmt.Sprintf("streamcheck-%d.error", r.log["pid"]))
				data, err := os.ReadFile(marker)
				if err != nil || !strings.HasPrefix(string(data), c.reason) {
					t.Errorf("marker %s: %q, %v", marker, data, err)
				}
				if f := r.traces(t); len(f) != 0 {
					t.Errorf("traces written: %v", f)
				}
				// Under `streamcheck run` the launcher reports the marker,
				// so the shim stays quiet.
				r = run(t, b, "basic", h, c.env, "STREAMCHECK_LAUNCHER=1")
				if strings.Contains(r.stderr, "streamcheck:") {
					t.Errorf("launcher mode: shim printed %q", r.stderr)
				}
				marker = filepath.Join(r.dir, fmt.Sprintf("streamcheck-%d.error", r.log["pid"]))
				if data, err := os.ReadFile(marker); err != nil || !strings.HasPrefix(string(data), c.reason) {
					t.Errorf("launcher mode: marker %s: %q, %v", marker, data, err)
				}
			}
		})
	}
}

// TestCUPTISetting: STREAMCHECK_CUPTI may name libcupti's directory; one
// that cannot be loaded is named in a warning when the search finds
// another libcupti (here through $CUDA_HOME/lib64).
func TestCUPTISetting(t *testing.T) {
	if cuptiFindable() {
		t.Skip("a real libcupti is installed here")
	}
	b := build(t)
	dir := t.TempDir()
	if err := os.Symlink(b.fake, filepath.Join(dir, "libcupti.so")); err != nil {
		t.Fatal(err)
	}
	r := run(t, b, "basic", preload, "STREAMCHECK_CUPTI="+dir)
	if len(r.traces(t)) != 1 || strings.Contains(r.stderr, "streamcheck:") {
		t.Errorf("STREAMCHECK_CUPTI naming a directory: traces %v, stderr %q", r.traces(t), r.stderr)
	}
	empty := t.TempDir()
	r = run(t, b, "basic", preload, "STREAMCHECK_CUPTI="+empty)
	if want := "STREAMCHECK_CUPTI=" + empty + " holds no loadable libcupti.so"; !strings.Contains(r.stderr, want) {
		t.Errorf("STREAMCHECK_CUPTI naming a directory without libcupti: stderr %q, want %q", r.stderr, want)
	}
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b.fake, filepath.Join(home, "lib64", "libcupti.so")); err != nil {
		t.Fatal(err)
	}
	r = run(t, b, "basic", preload, "STREAMCHECK_CUPTI=/nonexistent/libcupti.so", "CUDA_HOME="+home)
	want := "streamcheck: warning: STREAMCHECK_CUPTI cannot be loaded: /nonexistent/libcupti.so: "
	if len(r.traces(t)) != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "; using "+filepath.Join(home, "lib64", "libcupti.so")) {
		t.Errorf("a bad STREAMCHECK_CUPTI with another libcupti found: traces %v, stderr %q", r.traces(t), r.stderr)
	}
}

func TestUnwritableDir(t *testing.T) {
	b := build(t)
	r := run(t, b, "basic", inject, "STREAMCHECK_DIR=/nonexistent/streamcheck")
	if exitDesc(r.state) != "exit 7" || r.stdout != "fakeapp: basic done, errno kept\n" {
		t.Errorf("fakeapp: %s, %q", exitDesc(r.state), r.stdout)
	}
	n := strings.Count(r.stderr, "streamcheck: cannot create trace file /nonexistent/streamcheck/streamcheck-")
	if n != 1 || strings.Count(r.stderr, "streamcheck:") != 1 {
		t.Errorf("stderr %q: want one line about the trace file", r.stderr)
	}
	// Once the file could not be created, calls are not handled at all (no
	// unwinds for events that go nowhere).
	r = run(t, b, "basic", inject, "STREAMCHECK_DIR=/nonexistent/streamcheck", "STREAMCHECK_STATS=1")
	if !strings.Contains(r.stderr, "streamcheck: stats: 0 driver calls handled") {
		t.Errorf("stderr %q: want stats saying no driver call was handled", r.stderr)
	}
}

// A program with many distinct call stacks (PyTorch has hundreds) must not
// pay an unwind per call: after the first call from each stack, the stack
// cache finds it. And the cache must never merge two stacks: each call site
// keeps its own stack id.
func TestStackCacheManySites(t *testing.T) {
	b := build(t)
	const sites = 96
	calls, hits, unwinds := checkManySites(t, b, sites)
	// Every call from a stack seen before is a hit; a few set-up calls and
	// the first call from each site unwind.
	if unwinds > sites+10 || hits+unwinds != calls {
		t.Errorf("%d calls: %d cache hits, %d unwinds; want at most %d unwinds", calls, hits, unwinds, sites+10)
	}
}

// A cache too small for the program's stacks starts over whenever it is
// full (here after every few sites): the lookups must then miss, never
// answer with another site's stack, and the compressed form must follow
// each start-over.
func TestStackCacheStartsOver(t *testing.T) {
	b := build(t)
	const sites = 96
	calls, hits, unwinds := checkManySites(t, b, sites, "STREAMCHECK_STACK_CACHE_NODES=200")
	if hits+unwinds != calls {
		t.Errorf("%d calls: %d cache hits and %d unwinds do not add up", calls, hits, unwinds)
	}
	// Cycling through 96 sites with room for a handful, nearly every call
	// misses; with the full-size cache only the first call of each does.
	if unwinds < calls/2 {
		t.Errorf("%d calls: only %d unwinds with a 200-node cache; it did not start over", calls, unwinds)
	}
}

// checkManySites runs the fake app's launches from sites distinct call
// stacks in turn and checks that every site's launches, and only those,
// share one stack id. It returns the stats line's calls, cache hits and
// unwinds.
func checkManySites(t *testing.T, b built, sites int, env ...string) (calls, hits, unwinds int) {
	t.Helper()
	const iters = 9600
	r := run(t, b, "bench", inject, append([]string{fmt.Sprintf("FAKE_SITES=%d", sites), fmt.Sprintf("FAKE_ITERS=%d", iters), "STREAMCHECK_STATS=1"}, env...)...)
	if exitDesc(r.state) != "exit 0" {
		t.Fatalf("%s %q", exitDesc(r.state), r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if _, err := fmt.Sscanf(line, "streamcheck: stats: %d driver calls handled", &calls); err != nil {
			continue
		}
		i := strings.Index(line, "stacks: ")
		if i < 0 {
			t.Fatalf("stats line without stacks: %q", line)
		}
		if _, err := fmt.Sscanf(line[i:], "stacks: %d cache hits, %d unwinds", &hits, &unwinds); err != nil {
			t.Fatalf("stats line %q: %v", line, err)
		}
	}
	if calls == 0 {
		t.Fatalf("no stats line in %q", r.stderr)
	}
	ids := map[model.StackID]int{}
	for _, ev := range r.onlyTrace(t).events {
		if ev.Op == model.OpLaunch {
			ids[ev.Stack]++
		}
	}
	if len(ids) != sites {
		t.Errorf("launches have %d distinct stacks, want %d (one per call site)", len(ids), sites)
	}
	for id, n := range ids {
		if n != (10*sites+iters)/sites { // warm-up and timed rounds
			t.Errorf("stack %d: %d launches, want %d", id, n, (10*sites+iters)/sites)
		}
	}
	return calls, hits, unwinds
}

// TestOverhead runs the launch-bound loop with and without the shim and
// logs the cost per recorded launch. It checks only that it works: timing
// on a shared CI machine is not a pass/fail matter.
func TestOverhead(t *testing.T) {
	b := build(t)
	for _, c := range []struct {
		name string
		h    how
		env  []string
	}{
		{"native", noShim, nil},
		{"no stacks", inject, []string{"STREAMCHECK_STACK_DEPTH=0"}},
		{"stacks", inject, nil},
	} {
		r := run(t, b, "bench", c.h, append(c.env, "FAKE_ITERS=20000")...)
		if exitDesc(r.state) != "exit 0" {
			t.Fatalf("%s: %s %q", c.name, exitDesc(r.state), r.stderr)
		}
		t.Logf("%s: %s", c.name, strings.TrimSpace(r.stderr))
	}
}

// Event times come from the TSC between calibrations against the monotonic
// clock: they must never go backwards, and must stay within the run.
func TestTimestamps(t *testing.T) {
	b := build(t)
	start := time.Now()
	r := run(t, b, "bench", inject, "FAKE_ITERS=50000")
	wall := time.Since(start)
	tr := r.onlyTrace(t)
	if len(tr.events) < 50000 {
		t.Fatalf("trace: %d events, want 50000 launches and more", len(tr.events))
	}
	for i := 1; i < len(tr.events); i++ {
		if tr.events[i].Time < tr.events[i-1].Time {
			t.Fatalf("event %d at %d ns, before event %d at %d ns", i, tr.events[i].Time, i-1, tr.events[i-1].Time)
		}
	}
	last := time.Duration(tr.events[len(tr.events)-1].Time)
	if last <= 0 || last > wall {
		t.Errorf("last event at %v into a run of %v", last, wall)
	}
}

// The helper thread that faults trace pages in ahead of the writer starts
// with the trace, unless STREAMCHECK_PREFAULT=0. (How much it faulted in
// depends on when it gets a CPU, so that is only printed.)
func TestPrefault(t *testing.T) {
	b := build(t)
	for _, c := range []struct {
		env, want string
	}{
		{"STREAMCHECK_PREFAULT=1", "streamcheck: stats: prefault helper on, "},
		{"STREAMCHECK_PREFAULT=0", "streamcheck: stats: prefault helper off"},
	} {
		r := run(t, b, "basic", inject, c.env, "STREAMCHECK_STATS=1")
		if exitDesc(r.state) != "exit 7" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: %s, stderr %q; want %q", c.env, exitDesc(r.state), r.stderr, c.want)
		}
	}
}

// pythonsWithTrampolines returns the CPythons that have perf trampolines
// (3.12 and later on x86-64 Linux), one of each version.
func pythonsWithTrampolines() []string {
	candidates := []string{"python3.13", "python3.12", "python3"}
	// pyenv's shims only run the selected version; its installs run directly.
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		root = filepath.Join(os.Getenv("HOME"), ".pyenv")
	}
	installed, _ := filepath.Glob(filepath.Join(root, "versions", "3.1[2-9]*", "bin", "python3"))
	sort.Sort(sort.Reverse(sort.StringSlice(installed)))
	var found []string
	versions := map[string]bool{}
	for _, name := range append(candidates, installed...) {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		check := exec.Command(path, "-X", "perf", "-c",
			"import sys; print(sys.version_info[:2]); sys.exit(0 if sys.is_stack_trampoline_active() else 1)")
		out, err := check.Output()
		if check.Process != nil { // the perf map CPython leaves behind
			os.Remove(fmt.Sprintf("/tmp/perf-%d.map", check.Process.Pid))
		}
		if v := strings.TrimSpace(string(out)); err == nil && !versions[v] {
			versions[v] = true
			found = append(found, path)
		}
	}
	return found
}

// A CUDA call made from Python is recorded with the Python functions that
// led to it, not just the innermost: the shim registers unwind information
// for CPython's trampolines (pytramp.c), and the perf map names them. Each
// Python frame carries the line it is at (pylines.c), whether the caller
// holds the GIL or not, on every CPython 3.12+ found: also where 3.13 runs
// __init__ inline in its caller's evaluation, and where a frame being torn
// down (a free from its locals' deallocation) has left the frame chain. With
// STREAMCHECK_PYTHON_CALLERS=0 the stack ends at the innermost function,
// and with STREAMCHECK_PYTHON_LINES=0 it has no lines.
func TestPythonCallers(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("trampoline unwinding is x86-64 only")
	}
	pythons := pythonsWithTrampolines()
	if len(pythons) == 0 {
		t.Skip("no CPython with perf trampolines (3.12+)")
	}
	src, err := os.ReadFile("testdata/pycalls.py")
	if err != nil {
		t.Fatal(err)
	}
	line := map[string]int{}
	for i, l := range strings.Split(string(src), "\n") {
		if _, mark, ok := strings.Cut(l, "# line: "); ok {
			line[mark] = i + 1
		}
	}
	at := func(fn, mark string) string {
		if mark == "" {
			return "py::" + fn + " testdata/pycalls.py"
		}
		return fmt.Sprintf("py::%s testdata/pycalls.py:%d", fn, line[mark])
	}
	nested := []string{at("inner_function", "inner"), at("outer_function", "outer"), at("<module>", "module")}
	deep := []string{at("inner_function", "inner"), at("level", "deep-inner")}
	for range 8 {
		deep = append(deep, at("level", "deep-outer"))
	}
	deep = append(deep, at("<module>", "module-deep"))
	t.Logf("CPythons: %v", pythons)
	b := build(t)
	for _, python := range pythons {
		// The native stacks of the loop's calls can differ (CPython
		// specializes the call site after its first run); lines must not
		// add stacks to those.
		_, native := pythonFrames(t, b, python, "nested", "STREAMCHECK_PYTHON_LINES=0")
		for _, c := range []struct {
			scenario, env string
			want          []string // The last call's Python frames, innermost first.
		}{
			{"nested", "STREAMCHECK_PYTHON_CALLERS=1", nested},
			{"nested", "PYCALLS_GIL=held", nested},
			{"nested", "STREAMCHECK_PYTHON_LINES=0", []string{at("inner_function", ""), at("outer_function", ""), at("<module>", "")}},
			{"nested", "STREAMCHECK_PYTHON_CALLERS=0", []string{at("inner_function", "")}},
			// Once specialized, 3.13 runs __init__ in make_tensors's
			// evaluation: the trampoline there is make_tensors's, at its line.
			{"init", "", []string{at("inner_function", "inner"), at("make_tensors", "make"), at("<module>", "module-init")}},
			{"teardown", "", []string{at("inner_function", "inner"), at("Freed.__del__", "del"), at("dying", ""),
				at("caller", "caller"), at("<module>", "module-teardown")}},
			// Python processes keep 64 frames by default: deep enough to
			// reach the script's top through eight Python calls, which 32
			// are not.
			{"deep", "", deep},
		} {
			frames, stacks := pythonFrames(t, b, python, c.scenario, c.env)
			if c.scenario == "init" && strings.Contains(python, "3.12") {
				// 3.12 does not inline __init__: it has a trampoline and its line.
				c.want = []string{at("inner_function", "inner"), at("Tensor.__init__", "init"), at("make_tensors", "make"), at("<module>", "module-init")}
			}
			if got := frames[len(frames)-1]; !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s %s %s: Python frames %q, want %q", python, c.scenario, c.env, got, c.want)
			}
			if c.scenario == "nested" && strings.Contains(c.env, "CALLERS=1") && stacks != native {
				t.Errorf("%s %s: %d stacks, %d without lines; the same lines made new stacks", python, c.env, stacks, native)
			}
		}
	}
}

// pythonFrames runs testdata/pycalls.py's scenario with the shim and
// returns the Python frames of each cuCtxSynchronize event's stack, as
// reports print them (paths relative to this directory), and how many
// stacks those events have.
func pythonFrames(t *testing.T, b built, python, scenario, env string) ([][]string, int) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(python, "testdata/pycalls.py", scenario)
	cmd.Env = append(append(os.Environ(), b.sanitizerEnv(true)...), "STREAMCHECK_PRELOAD=1", "STREAMCHECK_DIR="+dir,
		"STREAMCHECK_BACKEND=cupti", "STREAMCHECK_CUPTI="+b.fake, "STREAMCHECK_LIBCUDA="+b.fake, "PYTHONPERFSUPPORT=1", env)
	out, err := cmd.CombinedOutput()
	checkSanitizer(t, python, string(out))
	if err != nil || !strings.Contains(string(out), "pycalls: trampolines True") {
		t.Fatalf("%s: %v\n%s", python, err, out)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "*.sctrace"))
	if len(traces) != 1 {
		t.Fatalf("traces %v", traces)
	}
	sym := symbolize.New()
	sym.PerfMapDir = "/tmp"
	wd, _ := os.Getwd()
	sym.RelativeTo = wd
	if err := sym.Rewrite(traces[0]); err != nil {
		t.Fatal(err)
	}
	for _, m := range sym.PerfMapsRead {
		os.Remove(m)
	}
	tr := readTrace(t, traces[0])
	stacks := map[model.StackID]bool{}
	var all [][]string
	for _, ev := range tr.events {
		if ev.Op != model.OpDeviceSync {
			continue
		}
		var frames []string
		for _, f := range tr.tab.Stack(ev.Stack) {
			if name := tr.tab.String(f.Func); strings.HasPrefix(name, "py::") {
				s := name + " " + tr.tab.String(f.File)
				if f.Line > 0 {
					s += fmt.Sprintf(":%d", f.Line)
				}
				frames = append(frames, s)
			}
		}
		all = append(all, frames)
		stacks[ev.Stack] = true
	}
	if len(all) == 0 {
		t.Fatalf("%s %s: no cuCtxSynchronize recorded", python, scenario)
	}
	return all, len(stacks)
}

// By default the shim enables no runtime-API callbacks (they cost more than
// all the rest on a GPU), so events carry driver names and the analyzer
// recovers runtime names from stacks.
func TestDriverNamesByDefault(t *testing.T) {
	b := build(t)
	r := run(t, b, "basic", inject, "STREAMCHECK_RUNTIME_NAMES=")
	traces := r.traces(t)
	if len(traces) != 1 {
		t.Fatalf("traces %v, stderr %q", traces, r.stderr)
	}
	tr := readTrace(t, traces[0])
	apis := map[string]bool{}
	for _, ev := range tr.events {
		apis[tr.tab.String(ev.API)] = true
	}
	if !apis["cuMemAllocAsync"] || apis["cudaMallocAsync"] {
		t.Errorf("API names %v: want driver names (cuMemAllocAsync), no runtime names", apis)
	}
}

// The launch lookup (searches interleaved across words) agrees with the
// plain one on every word of testdata/mapbench.c's map of live, freed and
// removed ranges, both sides of every range's edges included.
func TestAllocMapLookupAgrees(t *testing.T) { runMapBench(t, "check") }

// runMapBench runs testdata/mapbench.c in one of its checking modes.
func runMapBench(t *testing.T, mode string) { runUnitProgram(t, buildMapBench(t), mode) }

// runUnitProgram runs a program built by buildUnitProgram, which exits
// nonzero (or is killed, once it has run for two minutes) when what it
// checks fails, and logs what it printed.
func runUnitProgram(t *testing.T, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), shimbuild.SanitizerOptions()...) // used only when built with one
	out, err := cmd.CombinedOutput()
	what := strings.Join(append([]string{filepath.Base(bin)}, args...), " ")
	checkSanitizer(t, what, string(out))
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// TestAllocMapConcurrentReaders looks up words whose answer never changes
// while another thread adds and frees ranges, shifting and outgrowing the
// map's arrays: launches read the map without a lock, and a reader that
// used a half-written map would answer wrong (or crash on freed arrays).
func TestAllocMapConcurrentReaders(t *testing.T) { runMapBench(t, "race") }

// buildMapBench compiles testdata/mapbench.c with allocmap.c.
func buildMapBench(t testing.TB) string {
	return buildUnitProgram(t, "mapbench", "testdata/mapbench.c", "allocmap.c")
}

// buildUnitProgram compiles a program of testdata with the shim's files it
// tests, under the sanitizer the shim is built with (CI), into a temporary
// directory: the program's path.
func buildUnitProgram(t testing.TB, name string, srcs ...string) string {
	t.Helper()
	cc, err := cCompiler()
	if err != nil {
		t.Skip(err)
	}
	if err := shimbuild.Consult(append([]string{"*.h"}, srcs...)...); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	args := append([]string{"-O2", "-Wall"}, shimbuild.CFlags()...)
	args = append(append(append(args, "-o", bin), srcs...), "-lpthread")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	return bin
}

// BenchmarkAllocMapLookup times the allocation map's lookups of a launch's
// parameter words with cold caches (testdata/mapbench.c): one word per call
// against a launch's 110 words in one interleaved call. Each op is one
// run of the program; the metrics are its ns per word.
func BenchmarkAllocMapLookup(b *testing.B) {
	bin := buildMapBench(b)
	var one, batched float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := exec.Command(bin).Output()
		if err != nil {
			b.Fatalf("mapbench: %v", err)
		}
		var o, bt float64
		if _, err := fmt.Sscanf(string(out), "one-by-one %f ns/word\nbatched %f ns/word", &o, &bt); err != nil {
			b.Fatalf("mapbench output %q: %v", out, err)
		}
		one += o
		batched += bt
	}
	b.ReportMetric(one/float64(b.N), "ns/word-one-by-one")
	b.ReportMetric(batched/float64(b.N), "ns/word-batched")
}

// benchFigure reads the number the fake app printed on its "bench: " line.
func benchFigure(b *testing.B, r result, format string) float64 {
	b.Helper()
	k := strings.Index(r.stderr, "bench: ")
	if k < 0 {
		b.Fatalf("no timing in %q", r.stderr)
	}
	var v float64
	if _, err := fmt.Sscanf(r.stderr[k:], format, &v); err != nil {
		b.Fatalf("timing %q: %v", r.stderr[k:], err)
	}
	return v
}

// BenchmarkRecordLoop times the shim on the fake app's copy of the GPU
// benchmark's loop (bench/gpu/loop.cu: an allocation, three launches, an
// event record, a stream wait and a free per iteration), with the memory
// the driver's work would read between the calls simulated (FAKE_THRASH),
// or the code it would run (FAKE_THRASH_CODE), or neither. Each op is one
// run of the app with CUPTI's callbacks only and one with the shim
// recording; the metric is the difference, the shim's own ns per call,
// measured around the calls only. The code=2MiB case is the one like the
// GPU machine: there the shim's code is out of the caches at each call.
func BenchmarkRecordLoop(b *testing.B) {
	art := build(b)
	perCall := func(b *testing.B, env ...string) float64 {
		return benchFigure(b, run(b, art, "loop", inject, env...), "bench: %f ns per call")
	}
	for _, c := range []struct{ name, iters, thrash, code, stacks string }{
		{"warm", "100000", "0", "0", "32"},
		{"warm/stacks=off", "100000", "0", "0", "0"},
		{"thrash=1MiB", "20000", "1024", "0", "32"},
		{"code=2MiB", "20000", "0", "2048", "32"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total float64
			for i := 0; i < b.N; i++ {
				env := []string{"FAKE_ITERS=" + c.iters, "FAKE_THRASH=" + c.thrash, "FAKE_THRASH_CODE=" + c.code}
				base := perCall(b, append(env, "STREAMCHECK_CALLBACK_ONLY=1")...)
				total += perCall(b, append(env, "STREAMCHECK_STACK_DEPTH="+c.stacks)...) - base
			}
			b.ReportMetric(total/float64(b.N), "shim-ns/call")
		})
	}
}

// BenchmarkLaunchTable times, in the fake app, a recorded launch whose 8 KiB
// by-value table holds 0, 50 or 400 device addresses (PyTorch's optimizer
// passes such tables): the shim's scan of the 1,027 parameter words, the
// sort of what it found and the event write. Each op is one run of 5,000
// launches; the metric is the app's CPU ns per launch.
func BenchmarkLaunchTable(b *testing.B) {
	art := build(b)
	for _, n := range []string{"0", "50", "400"} {
		b.Run("addresses="+n, func(b *testing.B) {
			var total float64
			for i := 0; i < b.N; i++ {
				r := run(b, art, "bench", inject, "FAKE_TABLE="+n, "FAKE_ITERS=5000")
				total += benchFigure(b, r, "bench: %f ns")
			}
			b.ReportMetric(total/float64(b.N), "ns/launch")
		})
	}
}

// TestBadLibCUDA: a STREAMCHECK_LIBCUDA that cannot be loaded is an error
// the launcher reports (a marker, no trace), not a recording that quietly
// lacks the shim's own driver queries and so loses findings.
func TestBadLibCUDA(t *testing.T) {
	b := build(t)
	for _, h := range []how{inject, preload} {
		r := run(t, b, "basic", h, "STREAMCHECK_LIBCUDA=/nonexistent/libcuda.so.1", "STREAMCHECK_LAUNCHER=1")
		marker := filepath.Join(r.dir, fmt.Sprintf("streamcheck-%d.error", r.log["pid"]))
		data, err := os.ReadFile(marker)
		if want := "STREAMCHECK_LIBCUDA cannot be loaded: /nonexistent/libcuda.so.1"; err != nil || !strings.HasPrefix(string(data), want) {
			t.Errorf("how %d: marker %q, %v; want %q", h, data, err, want)
		}
		if f := r.traces(t); len(f) != 0 {
			t.Errorf("how %d: traces written: %v", h, f)
		}
	}
}

// TestLoadedMark: preloaded under the launcher, the shim marks that it was
// loaded (streamcheck-PID.loaded), also in a process that makes no CUDA
// call, which at its exit says so (streamcheck-PID.nocuda: its driver was
// never initialized); injected (the driver loads it at cuInit) or outside
// the launcher it marks nothing. A process that initialized CUDA but never
// asked the interposing shim for an entry point (another tool handed out
// the driver's own) says that it recorded nothing, rather than passing.
func TestLoadedMark(t *testing.T) {
	b := build(t)
	marks := func(dir string) (names []string) {
		for _, pat := range []string{"streamcheck-*.loaded", "streamcheck-*.nocuda", "streamcheck-*.error", "streamcheck-*.sctrace"} {
			m, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, f := range m {
				names = append(names, filepath.Ext(f))
			}
		}
		return names
	}
	dir := t.TempDir()
	cmd := exec.Command("true") // makes no CUDA call
	cmd.Env = append(append(os.Environ(), b.sanitizerEnv(true)...), "STREAMCHECK_PRELOAD=1", "STREAMCHECK_LAUNCHER=1",
		"STREAMCHECK_DIR="+dir, "STREAMCHECK_CUPTI="+b.fake, "STREAMCHECK_LIBCUDA="+b.fake)
	out, err := cmd.CombinedOutput()
	checkSanitizer(t, "true", string(out))
	if got := marks(dir); err != nil || strings.Join(got, " ") != ".loaded .nocuda" {
		t.Errorf("preloaded, no CUDA call: %v, marks %v, output %q", err, got, out)
	}
	if r := run(t, b, "basic", preload, "STREAMCHECK_LAUNCHER=1"); strings.Join(marks(r.dir), " ") != ".loaded .sctrace" {
		t.Errorf("preloaded, CUDA calls recorded: marks %v, stderr %q", marks(r.dir), r.stderr)
	}
	// The fake app's calls reach the fake CUPTI directly, past any wrapper:
	// what a program under a tool that hands out the driver's entry points
	// does.
	r := run(t, b, "basic", preload, "STREAMCHECK_LAUNCHER=1", "STREAMCHECK_BACKEND=interpose")
	if got := marks(r.dir); strings.Join(got, " ") != ".loaded .error" {
		t.Errorf("interposing, calls past the wrappers: marks %v, stderr %q", got, r.stderr)
	} else if m, _ := filepath.Glob(filepath.Join(r.dir, "streamcheck-*.error")); len(m) == 1 {
		if b, _ := os.ReadFile(m[0]); !strings.Contains(string(b), "never asked the shim for a driver entry point") {
			t.Errorf("interposing, calls past the wrappers: the marker says %q", b)
		}
	}
	// A device query: the driver initialized through the shim's cuInit,
	// no call it records. Its trace is empty, as an injected shim's.
	for _, backend := range []string{"interpose", "cupti"} {
		r := run(t, b, "query", preload, "STREAMCHECK_LAUNCHER=1", "STREAMCHECK_BACKEND="+backend)
		if got := marks(r.dir); r.state.ExitCode() != 0 || strings.Join(got, " ") != ".loaded .sctrace" {
			t.Errorf("%s, a device query: %s, marks %v, stderr %q", backend, exitDesc(r.state), got, r.stderr)
		} else if tr := r.onlyTrace(t); len(tr.events) != 0 || tr.err != nil {
			t.Errorf("%s, a device query: %d events (%v), want an empty, complete trace", backend, len(tr.events), tr.err)
		}
	}
	if r := run(t, b, "basic", preload); len(marks(r.dir)) != 1 {
		t.Errorf("preloaded without the launcher: marks %v, want the trace alone", marks(r.dir))
	}
	if r := run(t, b, "basic", inject, "STREAMCHECK_LAUNCHER=1"); len(marks(r.dir)) != 1 {
		t.Errorf("injected: marks %v, want the trace alone", marks(r.dir))
	}
}
