package main

import (
	"bytes"
	"embed"
	"io"
	"path"
)

// demoTrace is the embedded example "streamcheck demo" analyzes. To switch
// to another trace (a GPU-recorded .sctrace, say), put it in testdata/demo/
// and change this constant.
const demoTrace = "testdata/demo/reuse_while_in_flight.sctrace"

//go:embed testdata/demo
var demoFS embed.FS

const demoUsage = `
usage: streamcheck demo [flags]

Demo analyzes a built-in example trace: a buffer is freed on stream
"compute" while a kernel still uses it, the pool hands the same addresses to
a new allocation at once, and the new buffer is used on stream "copy"
without waiting for "compute". It shows what a report looks like without a
GPU or a recorded trace.

Demo exits 1, since the example has an error finding.
` + acceptHelp

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
	if len(pos) > 0 {
		return c.usageErrorf("demo takes no arguments (use 'streamcheck check %s')", pos[0])
	}
	data, err := demoFS.ReadFile(demoTrace)
	if err != nil {
		panic(err) // The file is embedded at build time.
	}
	in := input{name: path.Base(demoTrace), open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
	a := analyzeAll([]input{in}, o.root)
	if err := c.writeReport(a, &o, c.stdout); err != nil {
		return c.usageErrorf("%v", err)
	}
	return a.exitCode()
}
