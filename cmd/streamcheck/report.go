package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"
)

// reportOptions are the flags that shape a report, shared by check, run and
// demo.
type reportOptions struct {
	format     string
	output     string
	noColor    bool
	sourceRoot string
	root       string // Absolute source root, set by check.
}

func (o *reportOptions) register(fs *flag.FlagSet, defaultDest string) {
	fs.StringVar(&o.format, "format", "text", "report `format`: text, json or sarif")
	fs.StringVar(&o.output, "o", "", "write the report to `FILE` instead of "+defaultDest)
	fs.BoolVar(&o.noColor, "no-color", false, "never color the text report (color is also off when NO_COLOR is set or the output is not a terminal)")
	fs.StringVar(&o.sourceRoot, "source-root", "", "show source paths under `DIR` relative to it (default: the current directory)")
}

// check validates the flags and resolves the source root.
func (o *reportOptions) check() error {
	switch o.format {
	case "text", "json", "sarif":
	default:
		return fmt.Errorf("unknown report format %q (want text, json or sarif)", o.format)
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

// writeReport renders the analysis in the chosen format to -o FILE, or else
// to console (stdout for check, stderr for run). Notes about damaged traces
// go to stderr too when the report itself is not text on the console, so a
// person always sees them.
func (c *cli) writeReport(a *analysis, o *reportOptions, console io.Writer) error {
	for _, err := range a.unreadable {
		fmt.Fprintf(c.stderr, "streamcheck: %v\n", err)
	}
	if o.format != "text" || o.output != "" {
		for _, res := range a.results {
			if res.Damage != nil {
				fmt.Fprintf(c.stderr, "streamcheck: %s\n", damageNote(res))
			}
			if n := droppedNote(res); n != "" {
				fmt.Fprintf(c.stderr, "streamcheck: %s\n", n)
			}
		}
	}

	var buf bytes.Buffer
	var err error
	switch o.format {
	case "json":
		err = writeJSON(&buf, a)
	case "sarif":
		err = writeSARIF(&buf, a, o.root)
	default:
		colored := !o.noColor && o.output == "" && colorTerminal(console)
		writeText(&buf, a, newPalette(colored))
	}
	if err != nil {
		return err
	}
	if o.output != "" {
		return os.WriteFile(o.output, buf.Bytes(), 0o666)
	}
	_, err = console.Write(buf.Bytes())
	return err
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
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// palette holds the colors of the text report; each is disabled, whatever
// the global color.NoColor says, when the report must be plain.
type palette struct {
	error, warning, rule, label, dim, note *color.Color
}

func newPalette(enabled bool) *palette {
	p := &palette{
		error:   color.New(color.FgRed, color.Bold),
		warning: color.New(color.FgYellow, color.Bold),
		rule:    color.New(color.Bold),
		label:   color.New(color.FgCyan),
		dim:     color.New(color.Faint),
		note:    color.New(color.FgMagenta),
	}
	for _, c := range []*color.Color{p.error, p.warning, p.rule, p.label, p.dim, p.note} {
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}
