package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/streamcheck/streamcheck/analysis"
)

// openPTY returns both ends of a new pseudo-terminal, or skips the test.
func openPTY(t *testing.T) (ctrl, term *os.File) {
	t.Helper()
	ctrl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ctrl.Close() })
	fd := int(ctrl.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open terminal: %v", err)
	}
	t.Cleanup(func() { term.Close() })
	return ctrl, term
}

// reportTo renders the demo report in text to the console w, as run does
// for "streamcheck run" (whose console is stderr), with the given flags.
func reportTo(t *testing.T, w io.Writer, args ...string) {
	t.Helper()
	fs := newFlags("test")
	var o reportOptions
	o.register(fs, "the console")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	data, err := demoFS.ReadFile(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	a := analysis.Run([]analysis.Input{{Name: "demo.jsonl", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}, analysis.Options{SourceRoot: o.root})
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	if err := c.writeReport(a, &o, w); err != nil {
		t.Fatal(err)
	}
}

// TestColorTerminal: a report to a terminal is colored, unless NO_COLOR is
// set or --no-color is given; a report to anything else never is.
func TestColorTerminal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor string
		args    []string
		want    bool
	}{
		{"terminal", "", nil, true},
		{"NO_COLOR", "1", nil, false},
		{"--no-color", "", []string{"--no-color"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("TERM", "xterm")
			ctrl, term := openPTY(t)
			got := make(chan string)
			go func() {
				b, _ := io.ReadAll(ctrl) // Ends with EIO once the terminal side is closed.
				got <- string(b)
			}()
			reportTo(t, term, tc.args...)
			term.Close()
			out := <-got
			if !strings.Contains(out, "reuse-while-in-flight") {
				t.Fatalf("no report on the terminal:\n%q", out)
			}
			if has := strings.Contains(out, "\x1b["); has != tc.want {
				t.Errorf("escape codes: %v, want %v\n%q", has, tc.want, out)
			}
			// A person watching is told how long it took.
			if !regexp.MustCompile(`(?m)^analyzed in [0-9.]+m?s, [0-9.]+[kM]? events/s\r?$`).MatchString(out) {
				t.Errorf("no timing line on the terminal:\n%q", out)
			}
		})
	}

	var buf bytes.Buffer
	t.Setenv("NO_COLOR", "")
	reportTo(t, &buf)
	if strings.Contains(buf.String(), "events/s") {
		t.Errorf("report to a buffer has a timing line, which would differ from run to run:\n%q", buf.String())
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("report to a buffer has escape codes:\n%q", buf.String())
	}
}
