package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionBuildStamp: a binary without a VCS stamp (-buildvcs=false)
// prints the commit and version that scripts/build.sh and release.sh set
// with -ldflags -X; one with a stamp keeps the toolchain's.
func TestVersionBuildStamp(t *testing.T) {
	defer func(v, c, m string) { buildVersion, buildCommit, buildModified = v, c, m }(buildVersion, buildCommit, buildModified)
	buildVersion, buildCommit, buildModified = "v9.8.7", "0123456789abcdef0123456789abcdef01234567", "true"
	var b strings.Builder
	writeVersion(&b, withBuildStamp(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}))
	if want := "streamcheck v9.8.7 commit 0123456789ab (modified) go1.26.8\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("unstamped build: %q, want %q", b.String(), want)
	}
	b.Reset()
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.0.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba9876543210"}}}
	writeVersion(&b, withBuildStamp(stamped))
	if want := "streamcheck v1.0.0 commit fedcba987654 go1.26.8\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("stamped build: %q, want %q", b.String(), want)
	}
	b.Reset()
	writeVersion(&b, withBuildStamp(nil))
	if want := "streamcheck v9.8.7 commit 0123456789ab (modified)\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("no build info: %q, want %q", b.String(), want)
	}
}
