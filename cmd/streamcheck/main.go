package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/streamcheck/streamcheck/model"
)

// Exit codes of check, demo and explain; convert and timeline use 0, 2 and
// 3. run and record exit with the recorded program's own code when it
// failed; see cmdRun and cmdRecord.
const (
	// exitOK: no error findings (warnings allowed) and every trace was
	// complete.
	exitOK = 0
	// exitFindings: at least one error finding. A damaged trace is still
	// reported (a note on where it stopped), but the code stays 1.
	exitFindings = 1
	// exitUsage: bad usage (unknown command or flag, missing argument), or an
	// input that could not be read at all: a missing file, a file that is not
	// a trace, an I/O error. A one-line "streamcheck: FILE: REASON" goes to
	// stderr. Takes precedence over 1 and 3: the report is incomplete.
	exitUsage = 2
	// exitDamaged: a trace was truncated or corrupt and there is no error
	// finding. The trace was analyzed up to the damage; a damaged trace never
	// gives exit 0, since the events after the damage were not checked.
	exitDamaged = 3
	// exitNotRecorded (run only): the recording shim reported that it could
	// not record (it left a streamcheck-*.error file in the trace directory).
	exitNotRecorded = 4
)

// cli is what a command may touch, so that tests can run commands in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	backend        string // record and run: the shim's recording backend (launch.Backend), "" the shim's default
}

// command is one subcommand.
type command struct {
	name     string
	synopsis string // One line for the top-level usage.
	run      func(c *cli, args []string) int
}

// commands lists the subcommands in the order the usage shows them. "help"
// is handled by run itself (it lists this table).
var commands = []command{
	{"check", "analyze recorded traces (files, or directories of them)", (*cli).cmdCheck},
	{"run", "record a program's CUDA calls, then analyze them", (*cli).cmdRun},
	{"record", "record a program's CUDA calls into a directory", (*cli).cmdRecord},
	{"convert", "convert a trace between the binary and JSON Lines forms", (*cli).cmdConvert},
	{"explain", "explain findings as happens-before graphs (text or Graphviz DOT)", (*cli).cmdExplain},
	{"timeline", "write a trace as Chrome/Perfetto trace-event JSON", (*cli).cmdTimeline},
	{"demo", "analyze a built-in example trace", (*cli).cmdDemo},
	{"rules", "list the rules, or print what one finds, why it matters and its fix", (*cli).cmdRules},
	{"doctor", "check this machine's CUDA setup and self-test on the GPU", (*cli).cmdDoctor},
	{"version", "print the version, commit and trace format", (*cli).cmdVersion},
	{"install-shim", "build the recording shim from the embedded sources into the user cache", (*cli).cmdInstallShim},
	{"completion", "print a shell completion script (bash, zsh or fish)", (*cli).cmdCompletion},
}

func main() {
	// A write to a closed pipe (streamcheck run ... 2>&1 | head -1) returns
	// an error instead of killing streamcheck with SIGPIPE, which would hide
	// the recorded program's exit code. Notify, not Ignore: programs started
	// from here get the default action back.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := run(os.Stdout, os.Stderr, os.Args[1:])
	if code == exitBrokenPipe {
		dieOfSIGPIPE()
	}
	os.Exit(code)
}

// run runs the streamcheck command line args (without the program name) and
// returns the process exit code.
func run(stdout, stderr io.Writer, args []string) int {
	c := &cli{stdin: os.Stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		c.usage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			if rest[0] == "help" {
				fmt.Fprint(c.stdout, strings.TrimLeft(helpUsage, "\n"))
				return exitOK
			}
			if cmd := lookup(rest[0]); cmd != nil {
				return cmd.run(c, []string{"-h"})
			}
			return c.usageErrorf("unknown command %q (run 'streamcheck help')", rest[0])
		}
		c.usage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	cmd := lookup(name)
	if cmd == nil {
		if strings.HasPrefix(name, "-") {
			return c.usageErrorf("flag %s must follow a command (run 'streamcheck help')", name)
		}
		return c.usageErrorf("unknown command %q (run 'streamcheck help')", name)
	}
	return cmd.run(c, rest)
}

const helpUsage = `
usage: streamcheck help [COMMAND]

Help lists the commands and the exit codes, or prints COMMAND's usage and
flags (as 'streamcheck COMMAND -h' does).
`

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, `streamcheck finds races and misuse of CUDA stream-ordered memory allocation.

Usage:
  streamcheck COMMAND [flags] [arguments]

Commands:
`)
	width := 0
	for _, cmd := range commands {
		width = max(width, len(cmd.name))
	}
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-*s %s\n", width, cmd.name, cmd.synopsis)
	}
	fmt.Fprint(w, `
Run 'streamcheck help COMMAND' for a command's flags.

Exit codes (check, demo, explain):
  0  no error findings (warnings allowed)
  1  error findings (check, demo, run: --error-exitcode N picks another)
  2  bad usage, or an input that could not be read (missing, not a trace)
  3  a trace was truncated or corrupt, and no error findings
convert and timeline exit 0 when they wrote their output, else 2 or 3.
Writing to a closed pipe (| head), check, convert and timeline die of SIGPIPE.
run exits with the program's own code when it failed, else as check does,
or 4 when the shim could not record. record exits with the program's code.
doctor exits 0 when its GPU self-test passed, 1 when it failed, 5 when
there was nothing to test with. 'streamcheck help COMMAND' has the details.
`)
}

// usageErrorf prints a one-line error and returns exitUsage. The line is
// made printable (model.Printable): it may quote file names and system
// errors naming them, which must not break it or forge another.
func (c *cli) usageErrorf(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "streamcheck: %s\n", model.Printable(fmt.Sprintf(format, args...)))
	return exitUsage
}

// newFlags returns a flag set that reports errors to no one: parseFlags
// prints them itself, in the "streamcheck: ..." form.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args into fs. With interspersed, flags may also follow
// the positional arguments ("check a.jsonl --format json"); "--" ends the
// flags either way. It returns the positional arguments, or done with the
// exit code when the command should stop: 0 after -h (usage on stdout),
// exitUsage after a bad flag (the error, and where the usage is, on
// stderr).
func (c *cli) parseFlags(fs *flag.FlagSet, usage string, args []string, interspersed bool) (pos []string, code int, done bool) {
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printUsage(c.stdout, fs, usage)
			return nil, exitOK, true
		}
		if err != nil {
			return nil, c.usageLine(fs, "%s: %v", fs.Name(), err), true
		}
		rest := fs.Args()
		// fs.Parse stops at the first positional argument, or after "--";
		// only in the first case may flags follow.
		stoppedAtDashes := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
		if !interspersed || len(rest) == 0 || stoppedAtDashes {
			return append(pos, rest...), 0, false
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageLine reports a usage error in one line that says where the
// command's usage is (not the usage itself: sixty lines would hide the
// error), and returns exitUsage.
func (c *cli) usageLine(fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "streamcheck %s; see 'streamcheck help %s'\n", model.Printable(fmt.Sprintf(format, args...)), fs.Name())
	return exitUsage
}

func printUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	fmt.Fprint(w, strings.TrimLeft(usage, "\n"))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}
