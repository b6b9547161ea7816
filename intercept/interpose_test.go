package intercept

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The routes by which a program reaches the driver's entry points, as
// FAKE_ROUTE names them (testdata/fakeroute.c).
var interposeRoutes = []string{
	"plt",   // calls linked against libcuda
	"dlsym", // dlsym on a libcuda handle
	"gpa",   // cuGetProcAddress_v2, found with dlsym, as cudart does
	"gpa1",  // cuGetProcAddress (v1), called directly
}

// interposeSkip names the cases TestInterposeCases leaves out, and why.
var interposeSkip = map[string]string{
	"cudaLaunchHostFunc":       "drives the host-function rewrite through the fake CUPTI's entry callback and the fake's own queue",
	"cudaLaunchHostFuncMarker": "drives the host-function rewrite through the fake CUPTI's entry callback and the fake's own queue",
}

// interposeEnv is the environment of a run under the interposition backend:
// the shim preloaded, the app's driver calls made by route.
func interposeEnv(route string, extra ...string) []string {
	return append([]string{"STREAMCHECK_BACKEND=interpose", "FAKE_ROUTE=" + route,
		// Wrappers see driver calls only: events carry the driver's names.
		"STREAMCHECK_RUNTIME_NAMES=0"}, extra...)
}

// TestInterposeCases runs every case of TestShimCases with the
// interposition backend, its driver calls reaching the fake libcuda's real
// entry points by each route, and requires the trace the CUPTI backend
// records of the same calls (runtime names off, as wrappers see driver
// calls only), and the same findings where the case has them. The fake
// driver aborts the app if an entry point does not get the app's arguments
// or its result does not come back unchanged.
func TestInterposeCases(t *testing.T) {
	files, err := filepath.Glob("testdata/cases/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			if why := interposeSkip[name]; why != "" {
				t.Skip(why)
			}
			t.Parallel()
			app, cs := readCase(t, file, caseSetup{})
			base := run(t, app, "case", inject, append(cs.env, "STREAMCHECK_RUNTIME_NAMES=0")...)
			if base.state.ExitCode() != 0 {
				t.Fatalf("fakeapp (CUPTI): %s\nstderr:\n%s", exitDesc(base.state), base.stderr)
			}
			btr := base.onlyTrace(t)
			want := caseJSONL(t, btr)
			var wantRules []byte
			if cs.findings != nil {
				wantRules = caseFindings(t, btr.path)
			}
			for _, route := range interposeRoutes {
				for _, internal := range []string{"0", "1"} {
					if internal == "1" && !strings.HasPrefix(route, "gpa") {
						continue
					}
					r := run(t, app, "case", preload, append(cs.env, interposeEnv(route, "FAKE_GPA_INTERNAL="+internal)...)...)
					label := route
					if internal == "1" {
						label += " (entry points not exported)"
					}
					if r.state.ExitCode() != 0 {
						t.Fatalf("%s: fakeapp: %s\nstderr:\n%s", label, exitDesc(r.state), r.stderr)
					}
					tr := r.onlyTrace(t)
					checkTimed(t, tr)
					if got := caseJSONL(t, tr); !bytes.Equal(got, want) {
						t.Errorf("%s: recorded:\n%s\nthe CUPTI backend recorded:\n%s", label, got, want)
					}
					if cs.findings != nil {
						if got := caseFindings(t, tr.path); !bytes.Equal(got, wantRules) {
							t.Errorf("%s: findings:\n%s\nwith the CUPTI backend:\n%s", label, got, wantRules)
						}
					}
				}
			}
		})
	}
}

// TestInterposeProcAddress checks that cuGetProcAddress answers the
// program as the driver does, result and status, with or without the
// interposition backend, and hands out the shim's wrapper for an entry
// point it records (the per-thread variant when the flags ask for it, the
// one of the version asked for), whose call arrives at the driver as made.
func TestInterposeProcAddress(t *testing.T) {
	b := build(t)
	plain := run(t, b, "gpa", noShim)
	if plain.state.ExitCode() != 0 {
		t.Fatalf("fakeapp without the shim: %s\n%s", exitDesc(plain.state), plain.stderr)
	}
	for _, internal := range []string{"0", "1"} {
		r := run(t, b, "gpa", preload, "STREAMCHECK_BACKEND=interpose", "FAKE_GPA_INTERNAL="+internal)
		if r.state.ExitCode() != 0 {
			t.Fatalf("fakeapp: %s\n%s", exitDesc(r.state), r.stderr)
		}
		want := plain.stdout
		if internal == "1" { // the driver's own entry points are other addresses than the exported ones
			want = strings.ReplaceAll(want, "entry own", "entry other")
		}
		// Each recorded entry point the driver handed out comes back as the shim's.
		want = strings.ReplaceAll(want, "entry own", "entry other")
		if r.stdout != want {
			t.Errorf("FAKE_GPA_INTERNAL=%s: with the shim:\n%s\nwithout:\n%s", internal, r.stdout, plain.stdout)
		}
		if !strings.Contains(plain.stdout, "entry own") {
			t.Errorf("without the shim the driver's own entry points should be handed out:\n%s", plain.stdout)
		}
		tr := r.onlyTrace(t)
		var n int
		for _, ev := range tr.events {
			if api := tr.tab.String(ev.API); api == "cuMemAllocAsync" {
				n++
			}
		}
		if n != 3 {
			t.Errorf("FAKE_GPA_INTERNAL=%s: %d cuMemAllocAsync events recorded, want 3 (the calls through the entry points handed out)", internal, n)
		}
	}
	// STREAMCHECK_STATS=1 counts what the program asked of the shim: where
	// a program's calls went when none was recorded (under ncu).
	st := run(t, b, "gpa", preload, "STREAMCHECK_BACKEND=interpose", "STREAMCHECK_STATS=1")
	m := regexp.MustCompile(`interposed: (\d+) cuGetProcAddress calls \((\d+) failed\), (\d+) answers swapped`).FindStringSubmatch(st.stderr)
	if m == nil || m[1] == "0" || m[3] == "0" {
		t.Errorf("STREAMCHECK_STATS=1: no count of cuGetProcAddress calls and swapped answers in %q", st.stderr)
	}
	// The app is linked against the fake libcuda: loaded before the shim starts.
	if !strings.Contains(st.stderr, ", backend interpose, started at load (libcuda already loaded)\n") {
		t.Errorf("STREAMCHECK_STATS=1: the process line does not say the backend started at load:\n%s", st.stderr)
	}
	// The CUPTI backend, preloaded, leaves cuGetProcAddress's answers alone.
	r := run(t, b, "gpa", preload, "STREAMCHECK_BACKEND=cupti")
	if r.stdout != plain.stdout {
		t.Errorf("preloaded with the CUPTI backend:\n%s\nwithout the shim:\n%s", r.stdout, plain.stdout)
	}
}

// TestShimDefaultBackend: with STREAMCHECK_BACKEND unset, a preloaded shim
// records by interposition (it hands out its wrappers, and the Process
// record says so), and a shim the driver loads (CUDA_INJECTION64_PATH),
// too late to stand in for entry points, records with CUPTI, without the
// warning an explicit interpose setting gets there.
func TestShimDefaultBackend(t *testing.T) {
	b := build(t)
	plain := run(t, b, "gpa", noShim)
	for _, c := range []struct {
		h       how
		backend string
		swapped bool
	}{{preload, "interpose", true}, {inject, "cupti", false}} {
		r := run(t, b, "gpa", c.h, unsetBackend)
		if r.state.ExitCode() != 0 {
			t.Fatalf("%s: fakeapp: %s\n%s", c.backend, exitDesc(r.state), r.stderr)
		}
		if swapped := r.stdout != plain.stdout; swapped != c.swapped {
			t.Errorf("backend unset, want %s: entry points swapped %v, want %v:\n%s", c.backend, swapped, c.swapped, r.stdout)
		}
		if strings.Contains(r.stderr, "streamcheck:") {
			t.Errorf("backend unset, want %s: the shim complained: %q", c.backend, r.stderr)
		}
		tr := r.onlyTrace(t)
		if v := tr.tab.String(tr.tab.Process.Version); !strings.Contains(v, "backend "+c.backend+")") {
			t.Errorf("backend unset: the trace says %q, want backend %s", v, c.backend)
		}
	}
}

// compileC writes src to out.c and compiles it into out with cc and flags
// (after the source, so that libraries come after it).
func compileC(t *testing.T, cc, out, src string, flags ...string) {
	t.Helper()
	if err := os.WriteFile(out+".c", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-o", out, out + ".c"}, flags...)
	if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", cc, args, err, msg)
	}
}

// TestForeignProcAddressStat: with STREAMCHECK_STATS=1, a lookup of
// cuGetProcAddress in a library other than the libcuda the shim loaded (a
// tool's stand-in libcuda, which may hand the program entry points past
// the shim) is counted and the library named, and the lookup still gets
// that library's function.
func TestForeignProcAddressStat(t *testing.T) {
	b := build(t)
	cc, err := cCompiler()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	lib, app := filepath.Join(dir, "libother.so"), filepath.Join(dir, "lookup")
	compileC(t, cc, lib, "int cuGetProcAddress_v2(void) { return 42; }\n", "-shared", "-fPIC")
	compileC(t, cc, app, "#include <dlfcn.h>\nint main(int argc, char **argv) {\n"+
		"    void *h = dlopen(argv[1], RTLD_NOW);\n    int (*f)(void) = h ? (int (*)(void))dlsym(h, \"cuGetProcAddress_v2\") : 0;\n"+
		"    return f && f() == 42 ? 0 : 1;\n}\n", "-ldl")
	cmd := exec.Command(app, lib)
	cmd.Env = append(append(cleanEnv(), b.sanitizerEnv(true)...), "STREAMCHECK_PRELOAD=1", "STREAMCHECK_BACKEND=interpose",
		"STREAMCHECK_DIR="+dir, "STREAMCHECK_LIBCUDA="+b.fake, "STREAMCHECK_STATS=1")
	out, err := cmd.CombinedOutput()
	checkSanitizer(t, "lookup", string(out))
	if err != nil {
		t.Fatalf("lookup: %v (the lookup did not get the other library's function)\n%s", err, out)
	}
	if want := "cuGetProcAddress looked up 1 times in another library than libcuda (first: " + lib + ")"; !strings.Contains(string(out), want) {
		t.Errorf("stats lack %q:\n%s", want, out)
	}
}

// TestDriverOpenedOnFirstUse: a preloaded shim under the interpose backend
// does not load libcuda into a process that has not loaded it: a process
// that never reaches CUDA leaves it out (its mark says no CUDA), and one
// that loads libcuda at run time gets the shim's entry points from it when
// it looks them up in the library's handle or calls them by name, so its
// calls are recorded from the first.
func TestDriverOpenedOnFirstUse(t *testing.T) {
	b := build(t)
	cc, err := cCompiler()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "late")
	src := `#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
static int mapped(const char *lib) {
    char line[4096];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) found |= strstr(line, lib) != NULL;
    if (f) fclose(f);
    return found;
}
static const char *lib;
static void *found[8];
static void *lookup(void *arg) { /* each thread: the first lookup of the process, at once */
    found[(long)arg] = dlsym(dlopen(lib, RTLD_NOW), "cuGetProcAddress_v2");
    return NULL;
}
static const char *from(void *f) {
    Dl_info di;
    return f && dladdr(f, &di) && di.dli_fname ? di.dli_fname : "nowhere";
}
int main(int argc, char **argv) { /* late LIBCUDA none|handle|global|threads|bypass */
    lib = argv[1];
    printf("loaded at start: %d\n", mapped(lib));
    if (strcmp(argv[2], "none") == 0) return 0;
    if (strcmp(argv[2], "threads") == 0) {
        pthread_t t[8];
        for (long i = 0; i < 8; i++) pthread_create(&t[i], NULL, lookup, (void *)i);
        for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
        for (int i = 1; i < 8; i++)
            if (found[i] != found[0]) printf("threads got different entry points\n");
        printf("cuGetProcAddress_v2 from %s\n", from(found[0]));
        int (*init)(unsigned) = (int (*)(unsigned))dlsym(dlopen(lib, RTLD_NOW), "cuInit");
        printf("cuInit from %s\n", from((void *)init));
        return init ? init(0) : 1;
    }
    if (strcmp(argv[2], "bypass") == 0) { /* initializes the driver past the shim, as under a tool */
        void (*enter)(const char *) = (void (*)(const char *))dlsym(dlopen(lib, RTLD_NOW), "fk_runtime_enter");
        if (enter) enter("cudaMalloc_v3020");
        return enter ? 0 : 1;
    }
    int global = strcmp(argv[2], "global") == 0;
    void *h = dlopen(lib, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    void *gpa = dlsym(global ? RTLD_DEFAULT : h, "cuGetProcAddress_v2"); /* as cudart finds it, first */
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(global ? RTLD_DEFAULT : h, "cuInit");
    printf("cuInit from %s\n", from((void *)init));
    printf("cuGetProcAddress_v2 from %s\n", from(gpa));
    return init ? init(0) : 1;
}
`
	compileC(t, cc, app, src, "-ldl", "-lpthread")
	for _, c := range []struct {
		mode, from, marks, started string
	}{
		{"none", "", ".loaded .nocuda", "never"},
		{"bypass", "", ".loaded .error", "never"},                                             // the driver initialized, the shim never reached
		{"handle", b.shim, ".loaded .sctrace", "on first use: dlsym of cuGetProcAddress_v2"},  // in the library's handle
		{"global", b.shim, ".loaded .sctrace", "on first use: cuInit"},                        // the name, found in the process
		{"threads", b.shim, ".loaded .sctrace", "on first use: dlsym of cuGetProcAddress_v2"}, // eight threads' first lookups at once
	} {
		d := t.TempDir()
		cmd := exec.Command(app, b.fake, c.mode)
		cmd.Env = append(append(cleanEnv(), b.sanitizerEnv(true)...), "STREAMCHECK_PRELOAD=1",
			"STREAMCHECK_LAUNCHER=1", "STREAMCHECK_BACKEND=interpose", "STREAMCHECK_DIR="+d, "STREAMCHECK_LIBCUDA="+b.fake, "STREAMCHECK_STATS=1")
		out, err := cmd.CombinedOutput()
		checkSanitizer(t, "late", string(out))
		if err != nil {
			t.Errorf("%s: %v\n%s", c.mode, err, out)
			continue
		}
		if !strings.Contains(string(out), "loaded at start: 0") {
			t.Errorf("%s: the shim loaded libcuda before the program reached it:\n%s", c.mode, out)
		}
		// STREAMCHECK_STATS=1 says when the backend started, and by what.
		if want := "backend interpose, started " + c.started + "\n"; !strings.Contains(string(out), want) {
			t.Errorf("%s: stats lack %q:\n%s", c.mode, want, out)
		}
		if strings.Contains(string(out), "different entry points") {
			t.Errorf("%s: %s", c.mode, out)
		}
		for _, fn := range []string{"cuInit", "cuGetProcAddress_v2"} {
			if c.from != "" && !strings.Contains(string(out), fn+" from "+c.from+"\n") {
				t.Errorf("%s: the program did not get the shim's %s (%s):\n%s", c.mode, fn, c.from, out)
			}
		}
		var got []string
		for _, ext := range []string{".loaded", ".nocuda", ".error", ".sctrace"} {
			if m, _ := filepath.Glob(filepath.Join(d, "streamcheck-*"+ext)); len(m) > 0 {
				got = append(got, ext)
			}
		}
		if strings.Join(got, " ") != c.marks {
			t.Errorf("%s: marks %v, want %s\n%s", c.mode, got, c.marks, out)
		}
	}
}
