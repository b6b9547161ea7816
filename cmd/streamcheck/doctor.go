package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/cudart"
	"github.com/streamcheck/streamcheck/cudart/selftest"
	"github.com/streamcheck/streamcheck/intercept/launch"
	"github.com/streamcheck/streamcheck/report"
)

const doctorUsage = `
usage: streamcheck doctor [flags]

Doctor reports what streamcheck finds on this machine: Go and the OS, the
CUDA driver and its devices, the CUDA runtime, CUPTI, the recording shim,
and whether python3's programs will be reported with their Python functions.
Then it runs built-in self-tests on the GPU. For each, streamcheck runs
itself under the shim as a small driver-API program (a kernel JIT-compiled
from embedded PTX) with a known stream-ordered allocation mistake, or none,
and checks that the analysis of the recorded trace finds exactly that:

  use-before-alloc      allocation on s1, kernel on s2, no hand-off
  ok-event              the same, handed over with events both ways
  free-while-in-flight  kernel on s2, free on s1 without waiting for it
  ok-sync               allocation, kernel and free ordered by host syncs

The library search can be steered with STREAMCHECK_LIBCUDA (the only place
libcuda is looked for when set), STREAMCHECK_LIBCUDART, STREAMCHECK_CUPTI
and STREAMCHECK_SHIM.

Exit codes:
  0  everything was found and every self-test passed
  1  a self-test failed
  2  bad usage
  5  no usable CUDA driver or GPU, no CUPTI, or no shim: the self-test
     cannot run (what is missing is printed)
`

// Exit codes of doctor (exitUsage, 2, is main's).
const (
	doctorOK      = 0 // Everything found; every self-test passed.
	doctorFailed  = 1 // A self-test failed.
	doctorMissing = 5 // No usable driver, GPU, CUPTI or shim: nothing to test with.
)

// doctorChildArg is the hidden first argument of "streamcheck doctor" that
// makes it the self-test child: "streamcheck doctor __selftest CASE DEVICE".
const doctorChildArg = "__selftest"

// cmdDoctor implements "streamcheck doctor"; see doctorUsage.
func (c *cli) cmdDoctor(args []string) int {
	if len(args) > 0 && args[0] == doctorChildArg {
		return c.doctorChild(args[1:])
	}
	fs := newFlags("doctor")
	device := fs.Int("device", 0, "run the self-test on the device with this `ordinal`")
	keep := fs.String("keep", "", "write the self-test traces under `DIR` (a directory per case) and keep them")
	only := fs.String("run", "", "run only these self-tests (comma-separated `NAMES`)")
	verbose := fs.Bool("v", false, "print each self-test's findings and its program's output")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up on a self-test program after `D`")
	asJSON := fs.Bool("json", false, "print the result as one JSON object instead of text")
	pos, code, done := c.parseFlags(fs, doctorUsage, args, true)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageErrorf("doctor: unexpected argument %q", pos[0])
	}
	if *timeout <= 0 {
		return c.usageErrorf("doctor: -timeout must be more than 0")
	}
	cases := selftest.Cases
	if *only != "" {
		cases = nil
		for _, name := range strings.Split(*only, ",") {
			tc, err := selftest.Lookup(strings.TrimSpace(name))
			if err != nil {
				return c.usageErrorf("doctor: %v", err)
			}
			cases = append(cases, *tc)
		}
	}

	if *keep != "" {
		// Old traces would be analyzed as this run's.
		for _, tc := range cases {
			if ents, err := os.ReadDir(filepath.Join(*keep, tc.Name)); err == nil && len(ents) > 0 {
				return c.usageErrorf("doctor: %s already holds files; -keep needs a new or empty directory", filepath.Join(*keep, tc.Name))
			}
		}
	}

	d := &doctor{cli: c, device: *device, verbose: *verbose, timeout: *timeout, json: *asJSON}
	d.report()
	if !d.json {
		d.res.writeChecks(c.stdout)
	}
	if len(d.res.Missing) > 0 {
		if d.json {
			d.writeJSON()
		} else {
			fmt.Fprintf(c.stdout, "\nself-test: not run\n")
		}
		fmt.Fprintf(c.stderr, "streamcheck doctor: cannot run the GPU self-test: %s\n", strings.Join(d.res.Missing, "; "))
		return doctorMissing
	}

	root := *keep
	if root == "" {
		tmp, err := os.MkdirTemp("", "streamcheck-doctor-")
		if err != nil {
			fmt.Fprintf(c.stderr, "streamcheck doctor: %v\n", err)
			return doctorFailed
		}
		defer os.RemoveAll(tmp)
		root = tmp
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck doctor: %v\n", err)
		return doctorFailed
	}
	code = d.selfTest(cases, abs, *keep != "")
	if d.json {
		d.writeJSON()
	}
	return code
}

// doctor is one run of "streamcheck doctor".
type doctor struct {
	cli     *cli
	device  int
	verbose bool
	timeout time.Duration
	json    bool // Print res as JSON at the end, instead of text.

	res     doctorResult
	libcuda string // The driver library found.
	devName string // The self-test device's name.
	shim    string // The shim found.
}

// doctorResult is what doctor found: each check of the machine, what the
// self-test lacks, and the self-test's outcome. The text report and --json
// both print it.
type doctorResult struct {
	Checks []doctorCheck `json:"checks"`
	// Missing says what the self-test needs and was not found; the
	// self-test runs only when it is empty.
	Missing  []string        `json:"missing"`
	SelfTest *doctorSelfTest `json:"self_test"` // nil when it did not run
}

// Statuses of a doctorCheck.
const (
	checkOK      = "ok"      // found and usable
	checkMissing = "missing" // the self-test needs it, and it is missing or unusable
	checkNote    = "note"    // worth knowing, not needed
)

// doctorCheck is one thing doctor looked at: a line of the text report.
type doctorCheck struct {
	Name   string `json:"name"`   // "go", "driver", "device 0", ...
	Status string `json:"status"` // checkOK, checkMissing or checkNote
	Detail string `json:"detail"`
	// Notes are further lines about it.
	Notes []string `json:"notes,omitempty"`
}

// doctorSelfTest is the self-test's outcome.
type doctorSelfTest struct {
	Device     int          `json:"device"`
	DeviceName string       `json:"device_name"`
	Cases      []doctorCase `json:"cases"`
	Passed     int          `json:"passed"`
	// UnknownAddressUses counts, over the cases, the uses of device
	// addresses no recorded allocation covered: not zero means this CUDA
	// allocates memory by a path the shim does not record.
	UnknownAddressUses uint64 `json:"unknown_address_uses"`
	// UnknownAddressFrees counts the accepted synchronous frees of
	// addresses no recorded allocation started at.
	UnknownAddressFrees uint64 `json:"unknown_address_frees"`
	KeptIn              string `json:"kept_in,omitempty"` // where -keep kept the traces
}

// doctorCase is one self-test case's outcome.
type doctorCase struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "pass" or "fail"
	// Detail says what was found ("found use-before-alloc, as expected")
	// or why the case failed.
	Detail   string   `json:"detail"`
	Findings []string `json:"findings"` // "error RULE: MESSAGE", each finding
	// UnknownAddressUses counts the case's uses of device addresses no
	// recorded allocation covered (checker.Stats.UnknownAddressUses).
	UnknownAddressUses uint64 `json:"unknown_address_uses"`
	// UnknownAddressFrees counts the accepted synchronous frees of
	// addresses no recorded allocation started at.
	UnknownAddressFrees uint64 `json:"unknown_address_frees"`
	Output              string `json:"output,omitempty"`
}

// row adds a check that passed; a row without a key adds a note to the
// check above it.
func (d *doctor) row(key, format string, args ...any) {
	d.add(key, checkOK, fmt.Sprintf(format, args...))
}

// info adds a check that is worth knowing and not needed.
func (d *doctor) info(key, format string, args ...any) {
	d.add(key, checkNote, fmt.Sprintf(format, args...))
}

func (d *doctor) add(key, status, detail string) {
	if key == "" && len(d.res.Checks) > 0 {
		last := &d.res.Checks[len(d.res.Checks)-1]
		last.Notes = append(last.Notes, detail)
		return
	}
	d.res.Checks = append(d.res.Checks, doctorCheck{Name: key, Status: status, Detail: detail})
}

// need records what the self-test lacks; the check above it is what
// showed it.
func (d *doctor) need(format string, args ...any) {
	d.res.Missing = append(d.res.Missing, fmt.Sprintf(format, args...))
	if n := len(d.res.Checks); n > 0 {
		d.res.Checks[n-1].Status = checkMissing
	}
}

// writeChecks prints the checks as text.
func (r *doctorResult) writeChecks(w io.Writer) {
	fmt.Fprintln(w, "streamcheck doctor")
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name+":", c.Detail)
		for _, n := range c.Notes {
			fmt.Fprintf(w, "  %-10s %s\n", "", n)
		}
	}
}

// writeCase prints a self-test case's outcome as text; details adds its
// findings and its program's output.
func writeCase(w io.Writer, c *doctorCase, width int, details bool) {
	fmt.Fprintf(w, "%s  %-*s  %s\n", strings.ToUpper(c.Status), width, c.Name, c.Detail)
	if !details {
		return
	}
	for _, f := range c.Findings {
		fmt.Fprintf(w, "        %s\n", f)
	}
	if c.Output != "" {
		fmt.Fprintf(w, "        program output:\n")
		for _, line := range strings.Split(c.Output, "\n") {
			fmt.Fprintf(w, "          %s\n", line)
		}
	}
}

// writeJSON prints the result as one JSON object.
func (d *doctor) writeJSON() {
	if d.res.Missing == nil {
		d.res.Missing = []string{}
	}
	enc := json.NewEncoder(d.cli.stdout)
	enc.SetIndent("", "  ")
	enc.Encode(&d.res)
}

// report finds what there is, into d.res: its checks, and what the
// self-test lacks.
func (d *doctor) report() {
	d.row("go", "%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		d.row("os", "%s, kernel %s", runtime.GOOS, strings.TrimSpace(string(b)))
	} else {
		d.row("os", "%s", runtime.GOOS)
	}
	if !cudart.ExitRunsDestructors {
		d.info("build", "without cgo: the self-test programs cannot run the shim's exit hook, so their traces lack the End record; that is not held against them (build with CGO_ENABLED=1 for the full check)")
	}
	d.reportDriver()
	d.reportRuntime()
	backend := d.reportBackend()
	d.reportCUPTI(backend)
	d.reportShim()
	d.reportNCCL()
	d.reportPython()
}

// settingHint tells how to point the search at a library: set env, or,
// when it is set already, that its value did not do.
func settingHint(env string) string {
	if v := os.Getenv(env); v != "" {
		return fmt.Sprintf("%s=%s did not lead to it", env, v)
	}
	return fmt.Sprintf("set %s to its path or directory", env)
}

func (d *doctor) reportDriver() {
	drv, err := cudart.Load()
	if err != nil {
		d.row("driver", "%v", err)
		d.need("no CUDA driver found (libcuda.so.1; %s)", settingHint(cudart.EnvLibCUDA))
		return
	}
	d.libcuda = drv.Path
	if err := drv.Init(); err != nil {
		switch {
		case errors.Is(err, cudart.ErrorStubLibrary):
			d.row("driver", "%s is the CUDA toolkit's stub library, not a driver: %v", drv.Path, err)
			d.need("no CUDA driver found (only the toolkit's stub libcuda)")
		case errors.Is(err, cudart.ErrorNoDevice):
			d.row("driver", "%s: %v", drv.Path, err)
			d.need("no CUDA GPU (%v)", err)
		default:
			d.row("driver", "%s: %v", drv.Path, err)
			d.need("the CUDA driver does not initialize (%v)", err)
		}
		return
	}
	if v, err := drv.Version(); err != nil {
		d.row("driver", "%s (version unknown: %v)", drv.Path, err)
	} else {
		d.row("driver", "%s, CUDA %s", drv.Path, cudart.FormatVersion(v))
	}
	n, err := drv.DeviceCount()
	if err != nil {
		d.row("devices", "%v", err)
		d.need("no CUDA GPU (%v)", err)
		return
	}
	if n == 0 {
		d.row("devices", "none")
		d.need("no CUDA GPU (the driver sees none)")
		return
	}
	for i := range n {
		info, pools := doctorDescribeDevice(drv, i)
		d.row(fmt.Sprintf("device %d", i), "%s", info)
		if i == d.device {
			d.devName = strings.SplitN(info, ",", 2)[0]
			if !pools {
				d.need("device %d does not support stream-ordered allocation (cuMemAllocAsync)", i)
			}
		}
	}
	if d.device < 0 || d.device >= n {
		// No check to blame: the devices there are are fine.
		d.res.Missing = append(d.res.Missing, fmt.Sprintf("no device %d (the driver sees %s)", d.device, report.Plural(n, "device")))
	}
}

// doctorDescribeDevice returns a one-line description of device ordinal i and
// whether it supports memory pools (true when that cannot be asked).
func doctorDescribeDevice(drv *cudart.Driver, i int) (string, bool) {
	dev, err := drv.Device(i)
	if err != nil {
		return err.Error(), false
	}
	parts := []string{}
	if name, err := drv.DeviceName(dev); err == nil {
		parts = append(parts, name)
	} else {
		parts = append(parts, err.Error())
	}
	major, err1 := drv.DeviceAttribute(cudart.AttrComputeCapabilityMajor, dev)
	minor, err2 := drv.DeviceAttribute(cudart.AttrComputeCapabilityMinor, dev)
	if err1 == nil && err2 == nil {
		parts = append(parts, fmt.Sprintf("sm_%d%d", major, minor))
	}
	if mem, err := drv.DeviceTotalMem(dev); err == nil {
		parts = append(parts, fmt.Sprintf("%d MiB", mem>>20))
	}
	pools := true
	if v, err := drv.DeviceAttribute(cudart.AttrMemoryPoolsSupported, dev); err == nil {
		pools = v != 0
		parts = append(parts, "memory pools: "+map[bool]string{true: "yes", false: "no"}[pools])
	}
	return strings.Join(parts, ", "), pools
}

func (d *doctor) reportRuntime() {
	rt, err := cudart.LoadRuntime()
	if err != nil {
		d.info("runtime", "%v (optional: the self-test uses the driver API only)", err)
		return
	}
	if v, err := rt.Version(); err != nil {
		d.row("runtime", "%s (version unknown: %v)", rt.Path, err)
	} else {
		d.row("runtime", "%s, CUDA %s", rt.Path, cudart.FormatVersion(v))
	}
}

// reportNCCL says whether NCCL is found, and its version: its
// collectives are recorded when the shim is preloaded (the default
// backend, or --backend cupti --preload).
func (d *doctor) reportNCCL() {
	n, err := cudart.LoadNCCL()
	if err != nil {
		d.info("nccl", "%v (optional: only programs that use NCCL need it; %s)", err, settingHint(cudart.EnvLibNCCL))
		return
	}
	if v, err := n.Version(); err != nil {
		d.row("nccl", "%s (version unknown: %v); its calls are recorded where the shim is preloaded (the default backend, or --backend cupti --preload)", n.Path, err)
	} else {
		d.row("nccl", "%s, NCCL %s; its calls are recorded where the shim is preloaded (the default backend, or --backend cupti --preload)", n.Path, cudart.FormatNCCLVersion(v))
	}
}

// reportBackend says which backend streamcheck run and record use, and
// why; it returns it.
func (d *doctor) reportBackend() string {
	b, why, err := launch.Backend("", os.Environ())
	if err != nil {
		d.row("backend", "%v", err)
		d.need("%v", err)
		return ""
	}
	if b == launch.BackendInterpose {
		d.row("backend", "interpose (%s): the shim stands in for the driver's entry points it records (run and record preload it); CUPTI stays free for profilers and compute-sanitizer; --backend cupti (or %s=cupti) also reaches static and set-user-ID executables", why, launch.BackendVar)
	} else {
		d.row("backend", "cupti (%s): the shim records through CUPTI's callbacks, which no profiler can share while it runs; --backend interpose (or %s=interpose) records by interposition instead", why, launch.BackendVar)
	}
	return b
}

func (d *doctor) reportCUPTI(backend string) {
	cu, err := cudart.FindCUPTI()
	if err != nil {
		d.row("CUPTI", "%v", err)
		if backend == launch.BackendInterpose {
			d.row("", "the interpose backend does not need CUPTI")
			return
		}
		d.need("no CUPTI found (libcupti; %s)", settingHint(cudart.EnvCUPTI))
		return
	}
	if v, err := cu.Version(); err != nil {
		d.row("CUPTI", "%s (version unknown: %v)", cu.Path, err)
	} else {
		d.row("CUPTI", "%s, API version %d", cu.Path, v)
	}
	// The search goes on past a setting that did not lead to a library, as
	// the shim's does; say so, as the shim warns.
	if v := os.Getenv(cudart.EnvCUPTI); settingUnused(v, cu.Path) {
		d.row("", "%s=%s was not used: no libcupti could be loaded from it", cudart.EnvCUPTI, v)
	}
}

// settingUnused reports whether the library found is not the one a
// setting (a file or a directory) names; an empty setting is not one.
func settingUnused(setting, found string) bool {
	return setting != "" && found != setting && filepath.Dir(found) != filepath.Clean(setting)
}

func (d *doctor) reportShim() {
	shim, err := launch.FindShim()
	if err != nil {
		d.row("shim", "%v", err)
		d.need("no recording shim found (%v)", err)
		return
	}
	if err := doctorCheckShim(shim); err != nil {
		d.row("shim", "%s: %v", shim, err)
		d.need("the shim %s cannot be loaded: %v", shim, err)
		return
	}
	d.shim = shim
	d.row("shim", "%s (a shared library exporting InitializeInjection; the self-test loads it)", shim)
}

// reportPython says whether reports of Python programs will name their
// Python functions: that needs CPython 3.12 or later with perf trampolines
// (see launch.Env). It is information only; the self-test does not need it.
func (d *doctor) reportPython() {
	python, err := exec.LookPath("python3")
	if err != nil {
		d.info("python", "no python3 on PATH")
		return
	}
	d.row("python", "%s", describePython(python))
}

// describePython runs python with perf trampolines asked for and says what
// reports of its programs will show.
func describePython(python string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	probe := "import sys; f = getattr(sys, 'is_stack_trampoline_active', None); " +
		"print(sys.version.split()[0], 1 if f and f() else 0)"
	cmd := exec.CommandContext(ctx, python, "-X", "perf", "-c", probe)
	out, err := cmd.Output()
	if cmd.Process != nil { // the probe's perf map, which CPython leaves behind
		os.Remove(filepath.Join(pythonPerfMapDir, fmt.Sprintf("perf-%d.map", cmd.Process.Pid)))
	}
	version, active, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	switch {
	case err != nil || !ok:
		return fmt.Sprintf("%s: did not answer (%v)", python, err)
	case active == "1":
		return fmt.Sprintf("%s %s: reports name Python functions and their callers (perf trampolines)", python, version)
	default:
		return fmt.Sprintf("%s %s: no perf trampolines (CPython 3.12+ on Linux has them): reports name the script, not its functions", python, version)
	}
}

// doctorCheckShim checks, without loading it, that path is a shared library
// for this machine that the CUDA driver can inject: loading it here would
// run its constructor in this process, which starts recording the doctor
// itself when STREAMCHECK_PRELOAD=1 is set; the self-test loads it instead.
func doctorCheckShim(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not a loadable library: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return fmt.Errorf("not a shared library (ELF type %v)", f.Type)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if want != elf.EM_NONE && f.Machine != want {
		return fmt.Errorf("built for %v, this machine is %s", f.Machine, runtime.GOARCH)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return fmt.Errorf("no dynamic symbols: %w", err)
	}
	for _, s := range syms {
		if s.Name == "InitializeInjection" && s.Section != elf.SHN_UNDEF {
			return nil
		}
	}
	return errors.New("does not export InitializeInjection, which the CUDA driver calls")
}

// selfTest runs the cases, each in a child process under the shim writing
// into root/CASE, into d.res.SelfTest, printing (as text) a PASS or FAIL
// line for each as it ends, and returns the exit code.
func (d *doctor) selfTest(cases []selftest.Case, root string, kept bool) int {
	w := d.cli.stdout
	if d.json {
		w = io.Discard
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(d.cli.stderr, "streamcheck doctor: cannot re-run myself: %v\n", err)
		return doctorFailed
	}
	st := &doctorSelfTest{Device: d.device, DeviceName: d.devName, Cases: []doctorCase{}}
	d.res.SelfTest = st
	// The cases run in this Go binary, into which the driver loads the shim
	// (CUPTI backend) whatever backend run and record use.
	fmt.Fprintf(w, "\nself-test on device %d (%s), each case a program recorded by the shim (CUPTI backend):\n", d.device, d.devName)
	width := 0
	for _, tc := range cases {
		width = max(width, len(tc.Name))
	}
	for i := range cases {
		tc := &cases[i]
		dir := filepath.Join(root, tc.Name)
		v, out := d.runCase(exe, tc, dir)
		c := doctorCase{Name: tc.Name, Status: "fail", Detail: v.Reason, Findings: []string{}, Output: strings.TrimSpace(out)}
		if v.Pass {
			st.Passed++
			note := ""
			if v.Truncated {
				note = " (trace without End record)"
			}
			c.Status, c.Detail = "pass", doctorFoundList(v.Found)+", as expected"+note
		}
		for _, res := range v.Results {
			for _, f := range res.Findings {
				c.Findings = append(c.Findings, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
			}
			c.UnknownAddressUses += res.Stats.UnknownAddressUses
			c.UnknownAddressFrees += res.Stats.UnknownAddressFrees
		}
		st.UnknownAddressUses += c.UnknownAddressUses
		st.UnknownAddressFrees += c.UnknownAddressFrees
		st.Cases = append(st.Cases, c)
		writeCase(w, &c, width, d.verbose || !v.Pass)
	}
	if kept {
		st.KeptIn = root
		fmt.Fprintf(w, "traces kept in %s\n", root)
	}
	fmt.Fprintf(w, "self-test: %d of %d cases passed\n", st.Passed, len(cases))
	if what := report.UnknownCounts(st.UnknownAddressUses, st.UnknownAddressFrees); what != "" {
		fmt.Fprintf(w, "unknown addresses: %s of device addresses no recorded allocation covers: this CUDA allocates memory by a path the shim does not record, and races on it are not looked for\n", what)
	}
	if st.Passed != len(cases) {
		return doctorFailed
	}
	return doctorOK
}

func doctorFoundList(rules []string) string {
	if len(rules) == 0 {
		return "no finding"
	}
	return "found " + strings.Join(rules, ", ")
}

// runCase runs one case's program under the shim and analyzes its trace.
// out is the program's combined output.
func (d *doctor) runCase(exe string, tc *selftest.Case, dir string) (selftest.Verdict, string) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return selftest.Verdict{Case: tc.Name, Reason: err.Error()}, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "doctor", doctorChildArg, tc.Name, strconv.Itoa(d.device))
	env := launch.Env(os.Environ(), d.shim, dir, false)
	if os.Getenv(cudart.EnvLibCUDA) != "" {
		// The child and the shim take it as a file.
		env = doctorSetEnv(env, cudart.EnvLibCUDA, d.libcuda)
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	v := selftest.AnalyzeWith(tc, dir, selftest.Options{AllowTruncated: !cudart.ExitRunsDestructors})
	switch {
	case ctx.Err() != nil:
		v.Pass, v.Reason = false, fmt.Sprintf("the program did not finish within %v", d.timeout)
	case runErr != nil:
		v.Pass = false
		v.Reason = fmt.Sprintf("the program failed (%v): %s", runErr, doctorFailure(out.String()))
	}
	return v, out.String()
}

// doctorFailure picks, from a failed self-test program's output, the line
// that says why: the first line of its error (the cause; cleanup errors
// joined after it come later), else the last line it printed.
func doctorFailure(out string) string {
	prefix := "streamcheck doctor " + doctorChildArg + ": "
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if cause, ok := strings.CutPrefix(l, prefix); ok {
			return cause
		}
	}
	return lines[len(lines)-1]
}

// doctorSetEnv returns env with key set to val, replacing any earlier setting.
func doctorSetEnv(env []string, key, val string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	return append(env, key+"="+val)
}

// doctorChild is the self-test program: "streamcheck doctor __selftest CASE
// DEVICE", run by selfTest under the shim.
func (c *cli) doctorChild(args []string) int {
	if len(args) != 2 {
		return c.usageErrorf("doctor %s: want CASE DEVICE", doctorChildArg)
	}
	dev, err := strconv.Atoi(args[1])
	if err != nil {
		return c.usageErrorf("doctor %s: bad device %q", doctorChildArg, args[1])
	}
	code := doctorOK
	if err := selftest.Run(args[0], dev, c.stdout); err != nil {
		fmt.Fprintf(c.stderr, "streamcheck doctor %s: %v\n", doctorChildArg, err)
		code = doctorFailed
	}
	if doctorChildExit != nil {
		doctorChildExit(code)
	}
	return code
}

// doctorChildExit ends the self-test program. It leaves through the C
// library's exit: the shim writes the trace's End record in a library
// destructor, which Go's os.Exit would skip, leaving the trace truncated.
// Tests that run doctorChild in-process set it to nil.
var doctorChildExit = cudart.Exit
