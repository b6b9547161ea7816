//go:build linux

package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The watcher takes the maps that descendants of the root create, and no
// other file: not a map named for a process outside the tree, not another
// name.
func TestWatchPerfMaps(t *testing.T) {
	dir := t.TempDir()
	w, err := WatchPerfMaps(dir, os.Getpid())
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	// A grandchild (sh runs sh) writes its own map and lives on a moment,
	// as a Python process does after writing its map at start.
	child := exec.Command("sh", "-c", `sh -c 'echo $$ > "$0/pid"; echo 7f00 10 py::f > "$0/perf-$$.map"; sleep 0.3' "$0"`, dir)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	foreign := []string{
		"perf-1.map", // init: not ours
		"perf-" + strconv.Itoa(os.Getppid()) + ".map", // our parent: above the root
		"perf-abc.map", "perf-12.txt", "notes",
	}
	for _, name := range foreign {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // let the reader see those too
	got := w.Stop()
	pid, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "perf-"+string(pid[:len(pid)-1])+".map")}
	if !slices.Equal(got, want) {
		t.Errorf("maps %q, want %q", got, want)
	}
}

func TestPerfMapPID(t *testing.T) {
	for name, want := range map[string]int{"perf-42.map": 42, "perf-0.map": 0, "perf-.map": 0, "perf-4x.map": 0, "xperf-4.map": 0, "perf-4.map.tmp": 0} {
		pid, ok := perfMapPID(name)
		if ok != (want > 0) || pid != want && ok {
			t.Errorf("perfMapPID(%q) = %d, %v; want %d", name, pid, ok, want)
		}
	}
}

// A command name may hold spaces and parentheses; the parent id follows the
// last ")".
func TestParentOfOddName(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "a) (b c")
	if err := os.Symlink("/bin/sleep", odd); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "5")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot run %q: %v", odd, err)
	}
	defer cmd.Process.Kill()
	ppid, err := parentOf(cmd.Process.Pid)
	if err != nil || ppid != os.Getpid() {
		t.Errorf("parentOf(%d) = %d, %v; want %d", cmd.Process.Pid, ppid, err, os.Getpid())
	}
	if !descendsFrom(cmd.Process.Pid, os.Getpid()) || descendsFrom(os.Getpid(), cmd.Process.Pid) {
		t.Error("descendsFrom: the child must descend from us, and not we from it")
	}
}
