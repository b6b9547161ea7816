package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/baseline"
	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/report"
	"github.com/streamcheck/streamcheck/suppress"
)

// reportOptions are the flags that shape a report, shared by check, run and
// demo.
type reportOptions struct {
	format     string
	output     string
	noColor    bool
	color      string // --color: auto, always or never.
	sourceRoot string
	root       string // Absolute source root, set by check.
	// printLimit bounds the findings the text report prints in full; 0 is
	// no bound.
	printLimit int
	// suppressions, baseline and writeBaseline name the files of
	// --suppressions, --baseline and --write-baseline; load reads the first
	// two into supp and base.
	suppressions, baseline, writeBaseline string
	supp                                  *suppress.List
	base                                  baseline.Set
	// leakCheck is --leak-check: full, summary or none (see leakCheckFlag).
	leakCheck string
	// allocLoopThreshold is --alloc-loop-threshold (checker.Options.AllocLoopThreshold).
	allocLoopThreshold int
	// errorExitCode is --error-exitcode: the exit code for error findings.
	errorExitCode int
}

// leakCheckFlag documents --leak-check. As in compute-sanitizer, memory
// live at exit is no finding unless asked for: programs keep what they use
// until exit (a Python program's model, a library's workspace).
const leakCheckFlag = "report stream-ordered memory still live at exit by `mode`: full (a leak warning for each allocation), summary (one line with how many allocations and bytes) or none"

// defaultPrintLimit is --print-limit's default: enough for any real bug
// list, few enough that a CI log stays readable when a trace is full of
// findings.
const defaultPrintLimit = 100

func (o *reportOptions) register(fs *flag.FlagSet, defaultDest string) {
	fs.StringVar(&o.format, "format", "text", "report `format`: "+report.NameList())
	fs.Var((*outputFile)(&o.output), "o", "write the report to `FILE` (default and -: "+defaultDest+")")
	fs.StringVar(&o.color, "color", "auto", "color the text report: `when` auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR or CLICOLOR_FORCE force it, for CI logs), always or never")
	fs.BoolVar(&o.noColor, "no-color", false, "never color the text report (--color never)")
	fs.StringVar(&o.sourceRoot, "source-root", "", "make stack paths check resolves, and SARIF uris, relative to `DIR` (default: the current directory)")
	fs.IntVar(&o.printLimit, "print-limit", defaultPrintLimit, "print at most `N` findings in full in the text report, errors first (0: all); the summary counts every finding")
	fs.StringVar(&o.suppressions, "suppressions", "", "do not report findings that an entry of `FILE` matches (see Accepted findings above)")
	fs.StringVar(&o.baseline, "baseline", "", "do not report findings recorded in the baseline `FILE`: only new findings fail")
	fs.StringVar(&o.writeBaseline, "write-baseline", "", "record every finding (less suppressed ones) in the baseline `FILE` and accept them for this run")
	fs.StringVar(&o.leakCheck, "leak-check", "summary", leakCheckFlag)
	fs.IntVar(&o.errorExitCode, "error-exitcode", exitFindings,
		"exit with `N` when there are error findings (as compute-sanitizer's flag; pick one the program itself never exits with)")
	fs.IntVar(&o.allocLoopThreshold, "alloc-loop-threshold", checker.DefaultAllocLoopThreshold,
		"report a site that allocates synchronously around GPU work (sync-alloc-in-loop), or a pool that grows again after synchronizations (pool-release-churn), from `N` times on")
}

// check validates the flags and resolves the source root.
func (o *reportOptions) check() error {
	if _, err := report.Lookup(o.format); err != nil {
		return err
	}
	switch o.color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("unknown --color %q (want auto, always or never)", o.color)
	}
	switch o.leakCheck {
	case "full", "summary", "none":
	default:
		return fmt.Errorf("unknown --leak-check %q (want full, summary or none)", o.leakCheck)
	}
	if o.allocLoopThreshold < 1 {
		return fmt.Errorf("--alloc-loop-threshold %d: want 1 or more", o.allocLoopThreshold)
	}
	if o.errorExitCode < 0 || o.errorExitCode > 255 {
		return fmt.Errorf("--error-exitcode %d: want 0 to 255", o.errorExitCode)
	}
	if o.printLimit < 0 {
		return fmt.Errorf("--print-limit %d: want 0 (all) or more", o.printLimit)
	}
	// Source paths are shown relative to --source-root, or the current
	// directory.
	var err error
	if o.sourceRoot == "" {
		o.root, err = os.Getwd()
	} else {
		o.root, err = filepath.Abs(o.sourceRoot)
	}
	return err
}

// load reads the --suppressions and --baseline files. Commands call it
// before doing anything else (run: before starting the program), so that a
// bad file stops them at once; its errors name the file.
func (o *reportOptions) load() error {
	if o.suppressions != "" {
		l, err := suppress.Load(o.suppressions)
		if err != nil {
			return err
		}
		l.Root = o.root
		o.supp = l
	}
	if o.baseline != "" {
		b, err := baseline.ReadFile(o.baseline)
		if err != nil {
			return err
		}
		o.base = b.Set()
	}
	return nil
}

// refuseInputs makes sure that neither -o nor --write-baseline names a
// file the command reads (a trace of traces, the --suppressions or
// --baseline file), nor the two the same file: writing it would destroy
// an input, or one output the other.
func (o *reportOptions) refuseInputs(traces []analysis.Input) error {
	type file struct{ what, path, name string }
	ins := []file{{"the --suppressions file", o.suppressions, o.suppressions}, {"the --baseline file", o.baseline, o.baseline}}
	for _, in := range traces {
		if in.Path != "" {
			ins = append(ins, file{"the input trace", in.Path, in.Name})
		}
	}
	for _, out := range []string{o.output, o.writeBaseline} {
		for _, in := range ins {
			if in.path != "" && sameFile(in.path, out) {
				return fmt.Errorf("output %s is %s %s", out, in.what, in.name)
			}
		}
	}
	if o.output != "" && (o.output == o.writeBaseline || sameFile(o.output, o.writeBaseline)) {
		return fmt.Errorf("-o and --write-baseline name the same file %s", o.output)
	}
	return nil
}

// writeReport renders the analysis in the chosen format to -o FILE, or else
// to console (stdout for check, stderr for run), as it goes. Notes about
// damaged traces go to stderr too when the report itself is not text on the
// console, so a person always sees them.
//
// It first takes the suppressed findings and those in the baseline out of a
// (see filterFindings), so that exitCode(a) counts only reported ones.
func (c *cli) writeReport(a *report.Analysis, o *reportOptions, console io.Writer) (err error) {
	if err := c.filterFindings(a, o); err != nil {
		return err
	}
	for _, err := range a.Unreadable {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
	}
	if o.format != "text" || o.output != "" {
		for _, res := range a.Results {
			if res.Damage != nil {
				fmt.Fprintf(c.stderr, "streamcheck: %s\n", report.DamageNote(res))
			}
			if n := report.DroppedNote(res); n != "" {
				fmt.Fprintf(c.stderr, "streamcheck: %s\n", n)
			}
		}
	}

	f, err := report.Lookup(o.format)
	if err != nil {
		return err
	}
	opts := &report.Options{
		Color:       o.colored(console),
		PrintLimit:  o.printLimit,
		Root:        o.root,
		ToolVersion: moduleVersion(),
	}
	if o.output == "" && isTerminal(console) {
		// For a person watching: files and pipes get the same bytes
		// for the same traces.
		opts.Elapsed = a.Elapsed
	}
	if o.output == "" {
		bw := bufio.NewWriterSize(console, 64<<10)
		if err := f.Format(bw, a, opts); err != nil {
			return err
		}
		return bw.Flush()
	}
	return writeOutput(o.output, 0o666, func(w io.Writer) error { return f.Format(w, a, opts) })
}

// colored decides whether the text report is colored: --color always or
// never (--no-color) decide; in auto mode, a report to a file never is,
// FORCE_COLOR or CLICOLOR_FORCE (set, and not "0") force color where
// there is no terminal (CI logs), and otherwise console must be a color
// terminal.
func (o *reportOptions) colored(console io.Writer) bool {
	switch {
	case o.noColor || o.color == "never":
		return false
	case o.color == "always":
		return true
	case o.output != "":
		return false
	case forcedColor():
		return true
	}
	return colorTerminal(console)
}

// forcedColor reports whether the environment asks for color whatever the
// output is (the FORCE_COLOR and CLICOLOR_FORCE conventions).
func forcedColor() bool {
	for _, v := range []string{"FORCE_COLOR", "CLICOLOR_FORCE"} {
		if s := os.Getenv(v); s != "" && s != "0" && s != "false" {
			return true
		}
	}
	return false
}

// colorTerminal reports whether text written to w may be colored: w is a
// terminal, NO_COLOR is not set and TERM is not "dumb". For stdout that is
// what fatih/color decided at start-up.
func colorTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	if f == os.Stdout {
		return !color.NoColor
	}
	return os.Getenv("NO_COLOR") == "" && isTerminal(w)
}

// isTerminal reports whether w is a terminal a person watches (TERM is not
// "dumb").
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
