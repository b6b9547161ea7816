package intercept

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/shimbuild"
)

// TestGoInstall installs streamcheck as a user would with go install, into
// an empty GOPATH and GOBIN, where no shim lies beside the binary, and
// records the fake program with it: the CLI builds the shim from the
// sources it embeds into an empty cache directory on first use.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("installs streamcheck")
	}
	b := build(t)
	if len(b.runtimes) > 0 {
		t.Skip("tests the install, not the shim: nothing to sanitize")
	}
	gocmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Skip(err)
	}
	root, err := shimbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	modcache, err := exec.Command(gocmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	gobin := filepath.Join(tmp, "bin")
	install := exec.Command(gocmd, "install", "./cmd/streamcheck")
	install.Dir = root
	// An empty GOPATH; the module cache stays, so that no download is needed.
	install.Env = append(os.Environ(), "GOPATH="+filepath.Join(tmp, "gopath"), "GOBIN="+gobin,
		"GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOFLAGS=-mod=readonly")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(gobin); len(entries) != 1 {
		t.Fatalf("GOBIN holds %v, want streamcheck alone", entries)
	}

	traces := filepath.Join(tmp, "traces")
	logPath := filepath.Join(tmp, "fakeapp.log")
	cmd := exec.Command(filepath.Join(gobin, "streamcheck"), "record", "--preload", "--backend", "cupti", "-o", traces, "--", b.app, "basic")
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "STREAMCHECK_") && k != "LD_PRELOAD" && k != "CC" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "HOME="+tmp,
		"STREAMCHECK_CUPTI="+b.fake, "STREAMCHECK_LIBCUDA="+b.fake, "STREAMCHECK_RUNTIME_NAMES=1", "FAKE_LOG="+logPath)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 7 { // basic's own exit code, which record passes on
		t.Fatalf("streamcheck record: exit %d (%v), want 7\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "streamcheck: built the recording shim "+filepath.Join(tmp, "cache", "streamcheck")) {
		t.Errorf("no note of the shim's build in the cache:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(traces, "streamcheck-*.sctrace"))
	if len(files) != 1 {
		t.Fatalf("traces %v, want one\n%s", files, out)
	}
	tr := readTrace(t, files[0])
	if tr.err != nil {
		t.Fatalf("trace incomplete: %v", tr.err)
	}
	checkEvents(t, tr, basicWant(readLog(t, logPath)))
}
