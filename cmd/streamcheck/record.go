package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/intercept/launch"
	"github.com/streamcheck/streamcheck/internal/safefile"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/report"
	"github.com/streamcheck/streamcheck/symbolize"
)

const recordUsage = `
usage: streamcheck record -o DIR [flags] -- PROGRAM [ARG...]

Record runs PROGRAM with the recording shim, which writes one trace per
process that uses CUDA (PROGRAM and its children) into DIR, named
streamcheck-PID.sctrace. Analyze them with 'streamcheck check DIR'.

Record waits for PROGRAM, then for the processes it left running (a &
job, a daemon: streamcheck becomes their parent when theirs exits), up to
--grace (default 10s); when it stops waiting it names them, and a trace
one of them still writes is left as it is. DIR belongs to one recording at
a time: another record or run given DIR meanwhile is refused (exit 2).
Traces already in DIR are left as they are.

The program keeps stdin, stdout and stderr. Signals sent to streamcheck
(SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH,
SIGCONT) are passed on to it, except those streamcheck was started with
ignored (nohup), which the program inherits ignored, and, while streamcheck
runs in the terminal's foreground, SIGINT, SIGQUIT, SIGHUP and SIGWINCH,
which the terminal sends the program itself.

The shim is libstreamcheck.so from $STREAMCHECK_SHIM, next to the
streamcheck executable, or in ../lib relative to it; it must be an ELF
shared object for this machine. A shim whose path holds characters that
LD_PRELOAD would split or expand (a space, a colon, a $) is loaded from a
copy in a private temporary directory. DIR is created with mode 0700.

Exit codes:
  the program's own exit code (128+N if signal N killed it)
  126, 127  the program could not be started (127: not found)
  2         bad usage, the shim was not found or is not a shared
            object for this machine, or DIR is in use by another record
            or run
`

// signalsToForward are passed on to the recorded program, so that it (not
// streamcheck) decides how to stop, and its trace gets finished.
var signalsToForward = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGWINCH, syscall.SIGCONT}

// forwardedSignals are those of signalsToForward that streamcheck was not
// started with ignored: catching an ignored signal would let the program
// inherit the default action instead (nohup, or a shell's trap).
func forwardedSignals() []os.Signal {
	var sigs []os.Signal
	for _, s := range signalsToForward {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// fromTerminal reports whether a signal may have come from the terminal
// (a key, a hang-up, a resize): streamcheck's process group is the
// terminal's foreground group, which the program shares, so the terminal
// sent it the signal as well and passing it on would deliver it twice.
func fromTerminal(s os.Signal) bool {
	switch s {
	case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGWINCH:
	default:
		return false
	}
	fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && fg == unix.Getpgrp()
}

// Exit codes for a program that could not be started, as POSIX shells and
// env(1) use them.
const (
	exitCannotExecute = 126
	exitNotFound      = 127
)

// cmdRecord implements "streamcheck record". It exits with the recorded
// program's exit code (see recordUsage).
func (c *cli) cmdRecord(args []string) int {
	fs := newFlags("record")
	dir := fs.String("o", "", "write the traces into `DIR` (created if needed)")
	preload := fs.Bool("preload", false, "with --backend cupti, load the shim with LD_PRELOAD instead of CUDA_INJECTION64_PATH (the interpose backend always preloads it)")
	backend := backendFlag(fs)
	grace := fs.Duration("grace", defaultGrace, graceHelp)
	argv, code, done := c.parseFlags(fs, recordUsage, args, false)
	if done {
		return code
	}
	if err := c.useBackend(*backend, preload); err != nil {
		return c.usageErrorf("record: %v", err)
	}
	if *grace < 0 {
		return c.usageErrorf("record: --grace %v: want 0 or more", *grace)
	}
	if *dir == "" || len(argv) == 0 {
		if *dir == "" {
			fmt.Fprintln(c.stderr, "streamcheck record: -o DIR is required")
		} else {
			fmt.Fprintln(c.stderr, "streamcheck record: no program given")
		}
		printUsage(c.stderr, fs, recordUsage)
		return exitUsage
	}
	release, err := claimDir(*dir)
	if err != nil {
		return c.usageErrorf("record: %v", err)
	}
	defer release()
	code, seen, err := c.record(*dir, *preload, *grace, argv)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return code
	}
	rec, err := scanRecording(*dir)
	if err != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
		return code
	}
	rec.noteUnrecorded(*preload, seen, c.backend)
	c.printShimFailures(rec)
	switch {
	case len(rec.traces) > 0:
		fmt.Fprintf(c.stderr, "streamcheck: %s in %s (analyze with: streamcheck check %s)\n",
			report.Plural(len(rec.traces), "trace"), shown(*dir), shown(*dir))
	case len(rec.failures) == 0:
		fmt.Fprintln(c.stderr, "streamcheck: no CUDA activity was recorded")
	}
	return code
}

// backendFlag registers --backend on fs.
func backendFlag(fs *flag.FlagSet) *string {
	return fs.String("backend", "", "record with `BACKEND`: interpose (the shim stands in for the driver's entry points; "+
		"profilers can run beside it) or cupti (CUPTI callbacks); default $"+launch.BackendVar+", else "+launch.DefaultBackend)
}

// useBackend sets the backend the shim records with, from the --backend
// flag or the environment; the interpose backend needs the shim preloaded.
func (c *cli) useBackend(flag string, preload *bool) error {
	b, _, err := launch.Backend(flag, os.Environ())
	if err != nil {
		return err
	}
	c.backend = b
	if launch.NeedsPreload(b) {
		*preload = true
	}
	return nil
}

// record runs argv with the shim loaded, writing traces into dir (which
// the caller claimed, see claimDir), waits for the program and then up to
// grace for the processes it left running, and returns the program's exit
// code. A non-nil error means the program did not
// run (the shim is missing or not a shared object for this machine, or the
// program could not be started); code is then the exit code to use. seen
// is what the preloaded shim's marks say of the program's processes.
func (c *cli) record(dir string, preload bool, grace time.Duration, argv []string) (code int, seen presence, err error) {
	shim, err := launch.FindShim()
	if err != nil {
		return exitUsage, seen, err
	}
	if !launch.PlainPath(shim) {
		// LD_PRELOAD would split the path at a space or colon and load
		// nothing; a private copy under a plain name cannot be split.
		copied, remove, err := launch.PrivateCopy(shim, "")
		if err != nil {
			return exitUsage, seen, err
		}
		defer remove()
		shim = copied
	}
	abs, err := filepath.Abs(dir) // The program may change directory.
	if err != nil {
		return exitUsage, seen, err
	}
	if preload {
		if _, err := takeMarks(abs); err != nil {
			return exitUsage, seen, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if errors.Is(cmd.Err, exec.ErrDot) { // a program found through "." in PATH runs, as in a shell
		cmd.Err = nil
	}
	if v := launch.DroppedInjection(os.Environ(), preload); v != "" {
		fmt.Fprintf(c.stderr, "streamcheck: the shim takes CUDA_INJECTION64_PATH's place for this run; %s is not loaded (--preload keeps it)\n", v)
	}
	cmd.Env = launch.Env(os.Environ(), shim, abs, preload)
	if c.backend != "" {
		cmd.Env = launch.WithBackend(cmd.Env, c.backend)
	}
	_, userPerf := os.LookupEnv(launch.PythonPerfVar)
	if !userPerf {
		// Python processes of the tree that record nothing leave perf maps
		// no trace refers to: watch for them from before the start, and
		// remove them after the traces are symbolized (below). The maps
		// the traces used are removed there too, which is what remains
		// where inotify is unavailable.
		if maps, err := launch.WatchPerfMaps(pythonPerfMapDir, os.Getpid()); err == nil {
			defer func() {
				for _, p := range maps.Stop() {
					launch.RemovePythonPerfMap(p)
				}
			}()
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.stdin, c.stdout, c.stderr
	// Traces already there are another run's: the rewrite leaves them.
	before, err := recordedFiles(abs)
	if err != nil {
		return exitUsage, seen, err
	}
	becomeSubreaper()

	// Catch the signals before the start, so that one arriving in between
	// is forwarded rather than killing streamcheck.
	forward := forwardedSignals()
	sigs := make(chan os.Signal, len(forward))
	signal.Notify(sigs, forward...)
	defer signal.Stop(sigs)

	if err := cmd.Start(); err != nil {
		code := exitCannotExecute
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		return code, seen, fmt.Errorf("cannot run %s: %w", shown(argv[0]), unwrapExec(err))
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if !fromTerminal(s) {
					cmd.Process.Signal(s) // Fails only if the program already exited.
				}
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	// The processes the program left running are streamcheck's children
	// now: wait for them, and the traces they write.
	if left := waitDescendants(grace, sigs); len(left) > 0 {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", leftRunning(left, grace))
	}
	signal.Stop(sigs) // From here on a signal is for streamcheck itself.
	c.symbolizeTraces(abs, !userPerf, before)
	seen = presence{loaded: true}
	if preload {
		if seen, err = takeMarks(abs); err != nil {
			return exitUsage, seen, err
		}
	}
	return exitStatus(cmd.ProcessState), seen, nil
}

// presence is what the marks of a preloaded shim say of a run's processes.
// Injected, the driver loads the shim only at cuInit, so there is nothing
// to tell: loaded, and no process unaccounted for.
type presence struct {
	loaded      bool // some process loaded the shim (launch.LoadedMarks)
	unaccounted int  // processes that loaded it and did not say they made no CUDA call (launch.NoCUDAMarks)
}

// takeMarks reads and removes the shim's marks in dir: regular files the
// current user owns, as with traces (see recordedFiles), so that another
// user who can write a shared directory cannot make a run pass.
func takeMarks(dir string) (presence, error) {
	var p presence
	loaded, err := ownedFiles(dir, launch.LoadedMarks)
	if err != nil {
		return p, err
	}
	nocuda, err := ownedFiles(dir, launch.NoCUDAMarks)
	if err != nil {
		return p, err
	}
	quiet := map[string]bool{}
	for _, m := range nocuda {
		quiet[strings.TrimSuffix(filepath.Base(m), ".nocuda")] = true
	}
	p.loaded = len(loaded) > 0
	for _, m := range loaded {
		if !quiet[strings.TrimSuffix(filepath.Base(m), ".loaded")] {
			p.unaccounted++
		}
	}
	for _, m := range append(loaded, nocuda...) {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, err
		}
	}
	return p, nil
}

// ownedFiles returns the regular files in dir matching pattern that the
// current user owns.
func ownedFiles(dir, pattern string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, err
	}
	var owned []string
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && ownedRegular(fi) {
			owned = append(owned, m)
		}
	}
	return owned, nil
}

// ownedRegular reports whether fi is a regular file the current user owns.
func ownedRegular(fi fs.FileInfo) bool {
	if !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}

// symbolizeTraces rewrites the binary traces in dir with source locations
// while the program's files are still on this machine, so the traces stay
// readable elsewhere (a CI job, a bug report). Paths under the working
// directory become relative to it. A trace that cannot be symbolized is
// kept as recorded, and so is one a process still writes (see
// symbolize.Rewrite) and those named in before, which were there before
// the program started.
//
// Python functions are named from the perf maps Python processes wrote in
// /tmp (see launch.Env); removePerfMaps removes the ones read, when the
// launcher, not the user, asked Python to write them.
func (c *cli) symbolizeTraces(dir string, removePerfMaps bool, before []string) {
	names, err := recordedFiles(dir)
	if err != nil {
		return
	}
	sym := symbolize.New()
	sym.RelativeTo, _ = os.Getwd()
	sym.PerfMapDir = pythonPerfMapDir
	if removePerfMaps {
		defer func() {
			for _, p := range sym.PerfMapsRead {
				launch.RemovePythonPerfMap(p)
			}
		}()
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".sctrace") || slices.Contains(before, name) {
			continue
		}
		if err := sym.Rewrite(filepath.Join(dir, name)); errors.Is(err, symbolize.ErrBusy) {
			fmt.Fprintf(c.stderr, "streamcheck: %s: left unsymbolized: %v\n", shown(name), err)
		} else if err != nil {
			fmt.Fprintf(c.stderr, "streamcheck: %s: stacks left unsymbolized: %v\n", shown(name), err)
		}
	}
}

// pythonPerfMapDir is where CPython writes perf maps, whatever TMPDIR says.
var pythonPerfMapDir = "/tmp"

// exitStatus is the program's exit code, or 128+N when signal N killed it,
// as shells report it.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// unwrapExec drops the "exec: "prog": " prefix os/exec puts on its errors;
// the message names the program already.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// recording is what the shim left in a trace directory.
type recording struct {
	traces   []string // Trace file names, sorted.
	failures []string // One line per streamcheck-PID.error file, sorted by name.
}

// failureMarker matches the files the shim writes, holding the reason, when
// it cannot record a process.
const failureMarker = "streamcheck-*.error"

// maxMarkerLen is as much of a failure marker as is read: the shim's
// reasons are one line.
const maxMarkerLen = 4096

// scanRecording lists what the shim left in dir. Only regular files the
// current user owns count (see recordedFiles); a marker is read up to
// maxMarkerLen bytes.
func scanRecording(dir string) (recording, error) {
	var rec recording
	var err error
	if rec.traces, err = recordedFiles(dir); err != nil {
		return rec, err
	}
	markers, err := filepath.Glob(filepath.Join(dir, failureMarker)) // Sorted.
	if err != nil {
		return rec, err
	}
	for _, m := range markers {
		who := model.Printable(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "streamcheck-"), ".error"))
		b, cut, err := safefile.ReadFile(m, maxMarkerLen)
		reason := model.Printable(strings.Join(strings.Fields(string(b)), " ")) // One line.
		if cut {
			reason += " ..."
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			reason = "its marker file cannot be read: " + err.Error()
		}
		if reason == "" {
			reason = "no reason given"
		}
		rec.failures = append(rec.failures, fmt.Sprintf("process %s: cannot record CUDA calls: %s", who, reason))
	}
	return rec, nil
}

// recordedFiles returns the names of the trace files in a recording
// directory, sorted: regular files only, not symbolic links, and only
// those the current user owns. Another user who can write the directory
// could otherwise plant a link that the symbolizing rewrite would copy,
// with streamcheck's rights, into a file of the directory.
func recordedFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir) // Sorted by name.
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !analysis.IsTraceName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err != nil || !ownedRegular(fi) {
			continue
		}
		names = append(names, e.Name())
	}
	return names, nil
}

// notLoaded is what run and record say when no process loaded the
// preloaded shim; hint is injectHint's.
func notLoaded(hint string) string {
	return "the shim was not loaded into any process of the program, so nothing was recorded " +
		"(LD_PRELOAD does not reach a static executable, a set-user-ID one, or one started with a cleared environment; " +
		hint + ")"
}

// noPreloadedTrace is what run and record say when the preloaded shim
// was loaded but a process that loaded it neither wrote a trace nor said
// at its exit that it made no CUDA call (it was killed, or ended without
// running exit handlers), and no process wrote one. The launcher cannot
// see a process that was started without LD_PRELOAD (a launcher of the
// program's that removes it, a cleared environment) and made the CUDA
// calls: it must not report a run as one without CUDA activity, which
// passes, when that may be why there is none. hint is injectHint's.
func noPreloadedTrace(hint string) string {
	return "the shim was loaded, but no process of the program wrote a trace: " +
		"if the program makes CUDA calls, a process the shim did not reach made them " +
		"(one started with LD_PRELOAD removed or with a cleared environment; a process that ends without its exit handlers, as shells do, cannot say it made none), " +
		"and nothing was checked; " + hint
}

// injectHint says what to try when the preloaded shim did not reach the
// program: the driver loads an injected one wherever CUDA starts.
func injectHint(backend string) string {
	if backend == launch.BackendInterpose {
		return "try --backend cupti, which the CUDA driver loads itself"
	}
	return "try without --preload"
}

// noteUnrecorded adds to the failures why a preloaded shim recorded
// nothing, when it left no trace and no reason of its own: run must not
// report such a run as one without CUDA activity, which passes, unless
// every process that loaded the shim said it made no CUDA call. Injected,
// the shim is loaded by the driver at the first CUDA call, so no trace
// means no CUDA call.
func (rec *recording) noteUnrecorded(preload bool, seen presence, backend string) {
	if !preload || len(rec.traces) > 0 || len(rec.failures) > 0 {
		return
	}
	switch {
	case !seen.loaded:
		rec.failures = append(rec.failures, notLoaded(injectHint(backend)))
	case seen.unaccounted > 0:
		rec.failures = append(rec.failures, noPreloadedTrace(injectHint(backend)))
	}
}

// printShimFailures prints what the shim said when it could not record.
func (c *cli) printShimFailures(rec recording) {
	for _, msg := range rec.failures {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", msg)
	}
}
