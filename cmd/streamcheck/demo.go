package main

import (
	"bytes"
	"embed"
	"io"
	"path"

	"github.com/streamcheck/streamcheck/analysis"
)

// demoTrace is the embedded example "streamcheck demo" analyzes. To switch
// to another trace (a GPU-recorded .sctrace, say), put it in testdata/demo/
// and change this constant.
const demoTrace = "testdata/demo/reuse_while_in_flight.sctrace"

//go:embed testdata/demo
var demoFS embed.FS

const demoUsage = `
usage: streamcheck demo [flags]

Demo analyzes a built-in example trace, recorded on an H200 from
testdata/cuda/reuse_while_in_flight_racy.cu: a kernel on stream s1 uses a
buffer, which is then freed on s1 (legal: after the kernel in stream order);
the pool hands the same addresses to a new allocation on s1 at once, and the
new buffer is used on stream s2 without waiting for s1, while the old kernel
may still run. It shows what a report looks like without a GPU or a
recorded trace.

Demo exits 1, since the example has an error finding (0 when --suppressions
or a baseline takes it out).
` + acceptHelp + leakHelp

// cmdDemo implements "streamcheck demo". See demoUsage.
func (c *cli) cmdDemo(args []string) int {
	fs := newFlags("demo")
	var o reportOptions
	o.register(fs, "stdout")
	pos, code, done := c.parseFlags(fs, demoUsage, args, true)
	if done {
		return code
	}
	if err := o.check(); err != nil {
		return c.usageErrorf("demo: %v", err)
	}
	if err := o.load(); err != nil {
		return c.usageErrorf("%v", err)
	}
	if err := o.refuseInputs(nil); err != nil {
		return c.usageErrorf("demo: %v", err)
	}
	if len(pos) > 0 {
		return c.usageErrorf("demo takes no arguments (use 'streamcheck check %s')", pos[0])
	}
	data, err := demoFS.ReadFile(demoTrace)
	if err != nil {
		panic(err) // The file is embedded at build time.
	}
	in := analysis.Input{Name: path.Base(demoTrace), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
	a := analyzeWith([]analysis.Input{in}, &o, nil)
	if err := c.writeReport(a, &o, c.stdout); err != nil {
		return c.usageErrorf("%v", err)
	}
	return exitCode(a, &o)
}
