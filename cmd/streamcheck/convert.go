package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"

	"github.com/streamcheck/streamcheck/analysis"
	"github.com/streamcheck/streamcheck/model"
	"github.com/streamcheck/streamcheck/report"
)

const convertUsage = `
usage: streamcheck convert [flags] TRACE

Convert reads a trace in either form and writes it in the other: a binary
trace becomes JSON Lines, and JSON Lines becomes binary, unless --to says
which, or the -o file name ends in .sctrace (binary) or .jsonl. The output
goes to stdout unless -o names a file.

A truncated or corrupt trace is converted up to the damage; the damage is
reported on stderr and kept in the output (a binary output ends with a
Damage record instead of its End record, a JSON Lines output with a final
comment; reading either back reports the source's damage, truncated or
corrupt).

The output is written 0600 (or less, as the umask says). With -o it is
written under a temporary name, removed if the conversion fails or a signal
ends it; a FIFO or device named by -o (/dev/null, a FIFO a reader waits on)
is written through, never replaced.

Exit codes:
  0  converted
  2  bad usage, an input that could not be read (missing, not a trace, or
     several concatenated traces), or the output could not be written
  3  the input was truncated or corrupt; converted up to the damage
  killed by SIGPIPE (141 in a shell), without a message, when stdout is a
  pipe whose reader went away
`

// cmdConvert implements "streamcheck convert". See convertUsage.
func (c *cli) cmdConvert(args []string) int {
	fs := newFlags("convert")
	output := outputFlag(fs, "write to `FILE` (default and -: stdout)")
	to := fs.String("to", "", "output `form`: jsonl or binary (default: as the -o name ends, .jsonl or .sctrace, else the form the input is not)")
	pos, code, done := c.parseFlags(fs, convertUsage, args, true)
	if done {
		return code
	}
	switch {
	case len(pos) != 1:
		return c.usageLine(fs, "convert: want exactly one TRACE")
	case *to != "" && *to != "jsonl" && *to != "binary":
		return c.usageErrorf("convert: unknown form %q for --to (want jsonl or binary)", *to)
	}
	path := pos[0]
	name := shown(path)

	in, err := os.Open(path)
	if err != nil {
		return c.usageErrorf("%v", &analysis.InputError{Name: name, Err: err})
	}
	defer in.Close()
	r, err := model.NewReader(in, name)
	var damage error
	if err != nil {
		if !model.IsDamage(err) {
			return c.usageErrorf("%v", &analysis.InputError{Name: name, Err: err})
		}
		damage = err // A binary trace cut inside its header: no events.
		r = nil      // NewReader may return a typed nil.
	}
	if *to == "" {
		*to = defaultForm(*output, r)
	}

	out, finish, err := c.convertOutput(*output, path, *to == "binary")
	if err != nil {
		return c.usageErrorf("convert: %v", err)
	}
	var n uint64
	var w model.Writer
	if *to == "binary" {
		w = model.NewBinaryWriter(out)
	} else {
		w = model.NewJSONLWriter(out)
	}
	if r != nil {
		n, damage, err = copyEvents(w, r)
		if err != nil {
			finish(false)
			return c.outputOrInputError(name, err)
		}
		if off := analysis.Following(r); damage == nil && off >= 0 {
			finish(false)
			return c.usageErrorf("%v", &analysis.InputError{Name: name, Err: analysis.ErrConcatenated(off)})
		}
	}
	var note string
	if damage != nil {
		note = report.FormatDamage(name, damage, "converted", n)
		// The output keeps the damage itself; whoever reads it counts
		// the events before it again.
		err = w.CloseDamaged(damage.Error())
	} else {
		err = w.Close()
	}
	if err != nil {
		finish(false)
		return c.outputOrInputError(name, &outputError{err})
	}
	if err := finish(true); err != nil {
		return c.usageErrorf("convert: %v", err)
	}
	if damage != nil {
		fmt.Fprintf(c.stderr, "streamcheck: %s\n", note)
		return exitDamaged
	}
	return exitOK
}

// outputOrInputError reports err, from converting the input named name: a
// failure to write the output is said to be one (and a closed pipe on
// stdout ends streamcheck quietly, see exitBrokenPipe), not blamed on the
// input.
func (c *cli) outputOrInputError(name string, err error) int {
	var oe *outputError
	switch {
	case isBrokenPipe(err):
		return exitBrokenPipe
	case errors.As(err, &oe):
		return c.usageErrorf("convert: %v", err)
	}
	return c.usageErrorf("%v", &analysis.InputError{Name: name, Err: err})
}

// defaultForm is the output form when --to is not given: the one the -o
// file name says (.sctrace or .jsonl), else the form the input is not.
func defaultForm(output string, r model.Reader) string {
	switch filepath.Ext(output) {
	case ".sctrace":
		return "binary"
	case ".jsonl":
		return "jsonl"
	}
	if _, isJSONL := r.(*model.JSONLReader); isJSONL {
		return "binary"
	}
	return "jsonl"
}

// copyEvents writes every event of r to w. It returns the number of events
// copied and the damage that ended reading, if any; err is for any other
// failure.
func copyEvents(w model.Writer, r model.Reader) (n uint64, damage, err error) {
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF || model.IsDamage(err) {
			// The source's tables are complete only now: a trace without
			// events keeps its process and dropped count.
			if serr := w.Source(r.Tables()); serr != nil {
				return n, nil, &outputError{serr}
			}
			if err == io.EOF {
				return n, nil, nil
			}
			return n, err, nil
		}
		if err != nil {
			return n, nil, err
		}
		if err := w.WriteEvent(&ev, r.Tables()); err != nil {
			return n, nil, &outputError{err}
		}
		n++
	}
}

// convertOutput opens where a conversion goes. A file is written under a
// temporary name and renamed into place by finish(true), so a failed
// conversion never leaves half a trace (or clobbers the input); a FIFO or
// device is written in place (see createOutput).
func (c *cli) convertOutput(output, input string, binaryOut bool) (io.Writer, func(ok bool) error, error) {
	if output == "" {
		if f, ok := c.stdout.(*os.File); ok && binaryOut && isatty.IsTerminal(f.Fd()) {
			return nil, nil, errors.New("refusing to write a binary trace to a terminal; use -o FILE or --to jsonl")
		}
		return c.stdout, func(bool) error { return nil }, nil
	}
	if sameFile(input, output) {
		return nil, nil, fmt.Errorf("output %s is the input", output)
	}
	// A trace names the program's files and kernels: 0600, as the shim's
	// traces are.
	f, err := createOutput(output, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, f.finish, nil
}
