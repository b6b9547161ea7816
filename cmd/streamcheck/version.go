package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/streamcheck/streamcheck/model"
)

const versionUsage = `
usage: streamcheck version

Version prints the module version and the commit streamcheck was built
from, and the trace format versions it reads and writes.
`

// cmdVersion prints what was built: the module version, the commit it was
// built from, and the trace format it reads and writes, so that a CI log
// says which streamcheck checked a program.
func (c *cli) cmdVersion(args []string) int {
	pos, code, done := c.parseFlags(newFlags("version"), versionUsage, args, false)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageErrorf("version takes no arguments")
	}
	info, _ := debug.ReadBuildInfo()
	var b strings.Builder
	writeVersion(&b, info)
	return c.printStdout("version", b.String())
}

// writeVersion writes the version lines for a build's info (nil when the
// binary carries none).
func writeVersion(w io.Writer, info *debug.BuildInfo) {
	version, commit, modified, goVersion := "(unknown)", "", false, ""
	if info != nil {
		goVersion = info.GoVersion
		if v := info.Main.Version; v != "" {
			version = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	fmt.Fprintf(w, "streamcheck %s", version)
	if commit != "" {
		fmt.Fprintf(w, " commit %.12s", commit)
		if modified {
			fmt.Fprint(w, " (modified)")
		}
	}
	if goVersion != "" {
		fmt.Fprintf(w, " %s", goVersion)
	}
	fmt.Fprintf(w, "\ntrace format: binary version %d, JSON Lines\n", model.BinaryVersion)
}

// moduleVersion returns the module version streamcheck was built as
// ("v1.2.0" with go install of a release), "" for a build from a checkout.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return ""
	}
	return info.Main.Version
}
