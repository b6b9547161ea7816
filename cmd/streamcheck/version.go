package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/model"
)

const versionUsage = `
usage: streamcheck version

Version prints the module version and the commit streamcheck was built
from, and the trace format versions it reads and writes.
`

// Set by scripts/build.sh and scripts/release.sh (-ldflags -X), for
// builds whose binary carries no VCS stamp: go build -buildvcs=false, or a
// source archive without .git.
var (
	buildVersion  string // the release's version (v1.2.0), release.sh only
	buildCommit   string // git rev-parse HEAD
	buildModified string // "true" when the work tree differed from it
)

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
	writeVersion(&b, withBuildStamp(info))
	return c.printStdout("version", b.String())
}

// withBuildStamp returns info with the version and commit the build script
// set where the Go toolchain recorded none.
func withBuildStamp(info *debug.BuildInfo) *debug.BuildInfo {
	if buildVersion == "" && buildCommit == "" {
		return info
	}
	out := &debug.BuildInfo{}
	if info != nil {
		c := *info
		c.Settings = slices.Clone(info.Settings)
		out = &c
	}
	if buildVersion != "" && (out.Main.Version == "" || out.Main.Version == "(devel)") {
		out.Main.Version = buildVersion
	}
	if buildCommit != "" && !slices.ContainsFunc(out.Settings, func(s debug.BuildSetting) bool { return s.Key == "vcs.revision" }) {
		out.Settings = append(out.Settings,
			debug.BuildSetting{Key: "vcs.revision", Value: buildCommit},
			debug.BuildSetting{Key: "vcs.modified", Value: strconv.FormatBool(buildModified == "true")})
	}
	return out
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
