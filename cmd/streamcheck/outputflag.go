package main

import (
	"bufio"
	"flag"
	"io"
	"os"

	"github.com/streamcheck/streamcheck/internal/safefile"
)

// outputFile is the value of an -o FILE flag: "-" names standard output, as
// the empty default does, so that `-o -` does not write a file named "-".
type outputFile string

func (o *outputFile) String() string { return string(*o) }

func (o *outputFile) Set(s string) error {
	if s == "-" {
		s = ""
	}
	*o = outputFile(s)
	return nil
}

// outputFlag defines -o on fs as an outputFile and returns where its value is
// kept (the empty string for standard output).
func outputFlag(fs *flag.FlagSet, usage string) *string {
	var o outputFile
	fs.Var(&o, "o", usage)
	return (*string)(&o)
}

// output is an -o file being written (see safefile.Output): a FIFO or
// device is written in place, anything else under a temporary name renamed
// into place when complete, which a signal ending streamcheck removes.
type output struct {
	*safefile.Output
	forget func()
}

// createOutput opens path for a command's output; a new file gets perm,
// less the umask.
func createOutput(path string, perm os.FileMode) (*output, error) {
	f, err := safefile.CreateOutput(path, perm)
	if err != nil {
		return nil, err
	}
	forget := func() {}
	if tmp := f.Temp(); tmp != "" {
		forget = removeOnSignal(tmp)
	}
	return &output{f, forget}, nil
}

// finish commits the output when ok, else removes what Commit would have
// put in place.
func (o *output) finish(ok bool) error {
	defer o.forget()
	if !ok {
		o.Abort()
		return nil
	}
	return o.Commit()
}

// writeOutput writes the file path by write, through createOutput: the
// file is replaced when write succeeded, else left as it was.
func writeOutput(path string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := createOutput(path, perm)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if ferr := f.finish(err == nil); err == nil {
		err = ferr
	}
	return err
}

// checkOutput makes sure an -o file can be written, leaving it as it is;
// "" (the console) is fine. See safefile.CheckOutput.
func checkOutput(path string) error {
	if path == "" {
		return nil
	}
	return safefile.CheckOutput(path)
}

// printStdout writes text to stdout and returns the exit code: 0, or 2
// with an error when the write failed (a full disk, /dev/full), or
// exitBrokenPipe for a pipe whose reader went away.
func (c *cli) printStdout(cmd, text string) int {
	if _, err := io.WriteString(c.stdout, text); err != nil {
		if isBrokenPipe(err) {
			return exitBrokenPipe
		}
		return c.usageErrorf("%s: %v", cmd, &outputError{err})
	}
	return exitOK
}
