package intercept

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/streamcheck/streamcheck/internal/shimbuild"
)

var (
	drvOnce sync.Once
	drvApp  string // testdata/drvbench.c, linked against testdata/thindrv.c as libcuda.so.1
	drvErr  error
)

// drvBench builds the thin driver and the program that calls it, beside
// the shim, once per test binary.
func drvBench(t testing.TB) (built, string) {
	t.Helper()
	b := build(t)
	drvOnce.Do(func() {
		if drvErr = shimbuild.Consult("testdata/thindrv.c", "testdata/drvbench.c"); drvErr != nil {
			return
		}
		dir := filepath.Join(b.dir, "thin")
		lib, app := filepath.Join(dir, "libcuda.so.1"), filepath.Join(dir, "drvbench")
		for _, args := range [][]string{
			{"mkdir", "-p", dir},
			{shimbuild.CC(), "-O2", "-Wall", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", lib, "testdata/thindrv.c"},
			{shimbuild.CC(), "-O2", "-Wall", "-o", app, "testdata/drvbench.c", "-L" + dir, "-l:libcuda.so.1",
				"-Wl,-rpath," + dir, "-lpthread"},
		} {
			if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
				drvErr = fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
		drvApp = app
	})
	if drvErr != nil {
		t.Fatal(drvErr)
	}
	return b, drvApp
}

// drvRun runs drvbench's mode with n, with the shim preloaded under the
// interposition backend (or without it, when shim is false). It returns
// the "TAG KEY VALUE" lines as TAG/KEY -> VALUE, and the stderr.
func drvRun(t testing.TB, shim bool, mode string, n int, env ...string) (map[string]float64, string) {
	t.Helper()
	b, app := drvBench(t)
	cmd := exec.Command(app, mode, strconv.Itoa(n))
	cmd.Env = append(cleanEnv(), "STREAMCHECK_DIR="+t.TempDir())
	if shim {
		cmd.Env = append(cmd.Env, "STREAMCHECK_PRELOAD=1", "STREAMCHECK_BACKEND=interpose",
			"STREAMCHECK_LIBCUDA="+filepath.Join(filepath.Dir(app), "libcuda.so.1"))
		cmd.Env = append(cmd.Env, b.sanitizerEnv(true)...)
	}
	cmd.Env = append(cmd.Env, env...)
	var se strings.Builder
	cmd.Stderr = &se
	out, err := cmd.Output()
	checkSanitizer(t, "drvbench "+mode, se.String())
	if err != nil {
		t.Fatalf("drvbench %s %d: %v\n%s", mode, n, err, se.String())
	}
	vals := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("drvbench output %q: %v", sc.Text(), err)
		}
		vals[strings.Join(f[:len(f)-1], "/")] = v
	}
	return vals, se.String()
}

// A program that creates and destroys streams, events and allocations for
// ever keeps the shim's memory where it was: its heap holds what is live
// (the known streams' table is rebuilt into its spare, not into a new
// table each time), and the trace's pages behind the writer leave the
// process (the prefault helper drops them), so the trace is not resident
// at its whole length.
func TestShimMemoryBounded(t *testing.T) {
	if b := build(t); len(b.runtimes) > 0 {
		t.Skip("a sanitizer's heap keeps what is freed: resident memory says nothing of the shim's")
	}
	small, _ := drvRun(t, true, "churn", 20000)
	large, stderr := drvRun(t, true, "churn", 200000, "STREAMCHECK_STATS=1")
	if grew := large["churned/RssAnon"] - small["churned/RssAnon"]; grew > 512 {
		t.Errorf("the shim's heap grew by %.0f KiB from 20000 to 200000 streams, events and allocations made and destroyed; want it bounded by what is live", grew)
	}
	// 1.2 million events, 40 MiB of trace: resident, the pages the helper
	// populates ahead (4 MiB) and those it has not dropped yet (under 8 MiB).
	if strings.Contains(stderr, "prefault helper on") && !strings.Contains(stderr, " 0 KiB faulted in ahead") {
		plain, _ := drvRun(t, false, "churn", 200000)
		if res := large["churned/RssFile"] - plain["churned/RssFile"]; res > 16<<10 {
			t.Errorf("%.0f KiB of file pages resident with the shim after 1.2 million events; want the trace's under 16 MiB", res)
		}
	} else {
		t.Logf("no prefault helper here (MADV_POPULATE_WRITE needs Linux 5.14): the trace's pages are not dropped")
	}
}

// BenchmarkInterposeCall times, on the calling thread's CPU clock, a
// driver call made through the PLT to a driver that does nothing
// (drvbench calls: bench/gpu/loop.cu's five calls), with the shim
// preloaded under the interposition backend: the wrapper alone
// (STREAMCHECK_CALLBACK_ONLY=1), recording with stacks and without, and
// recording with every allocation at a fresh address (THINDRV_FRESH=1).
// Each op is one run of each; the metrics are ns per call over the run
// without the shim. bench/shim-calls.sh makes the same runs interleaved,
// with the phases of each.
func BenchmarkInterposeCall(b *testing.B) {
	const calls = 200000
	perCall := func(shim bool, env ...string) float64 {
		v, _ := drvRun(b, shim, "calls", calls, env...)
		return v["ns/call"]
	}
	var wrapper, stacks, nostacks, fresh float64
	for i := 0; i < b.N; i++ {
		base := perCall(false)
		wrapper += perCall(true, "STREAMCHECK_CALLBACK_ONLY=1") - base
		stacks += perCall(true) - base
		nostacks += perCall(true, "STREAMCHECK_STACK_DEPTH=0") - base
		fresh += perCall(true, "THINDRV_FRESH=1") - perCall(false, "THINDRV_FRESH=1")
	}
	b.ReportMetric(wrapper/float64(b.N), "wrapper-ns/call")
	b.ReportMetric(stacks/float64(b.N), "recording-ns/call")
	b.ReportMetric(nostacks/float64(b.N), "recording-nostacks-ns/call")
	b.ReportMetric(fresh/float64(b.N), "recording-fresh-ns/call")
}
