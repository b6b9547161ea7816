//go:build linux

package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PerfMaps collects the perf maps (dir/perf-PID.map) that the Python
// processes of one process tree create while it runs. Env asks every Python
// of the tree for them (PYTHONPERFSUPPORT=1), also those that never touch
// CUDA and so leave no trace to symbolize: a DataLoader worker, a pytest
// worker, a tool the program runs. Without this the launcher would leave
// their maps in /tmp after every run.
//
// A map is taken as the tree's when, as its file appears (CPython writes it
// as it starts), its process descends from the tree's root. A process that
// exits before that check keeps its map; nothing of another tree is ever
// taken.
type PerfMaps struct {
	dir  string
	root int
	file *os.File // the inotify instance; closing it ends the reader
	done chan struct{}

	mu   sync.Mutex
	maps []string
}

// WatchPerfMaps starts watching dir for perf maps of descendants of the
// process root (which is included). It fails where inotify is unavailable.
func WatchPerfMaps(dir string, root int) (*PerfMaps, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify %s: %w", dir, err)
	}
	// A non-blocking descriptor goes through Go's poller: Close wakes the
	// reader up.
	w := &PerfMaps{dir: dir, root: root, file: os.NewFile(uintptr(fd), "inotify"), done: make(chan struct{})}
	go w.read()
	return w, nil
}

func (w *PerfMaps) read() {
	defer close(w.done)
	buf := make([]byte, 64*1024)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break
			}
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:end]), "\x00")
			off = end
			if pid, ok := perfMapPID(name); ok && descendsFrom(pid, w.root) {
				w.mu.Lock()
				w.maps = append(w.maps, filepath.Join(w.dir, name))
				w.mu.Unlock()
			}
		}
	}
}

// Stop ends the watch and returns the paths of the maps the tree created.
func (w *PerfMaps) Stop() []string {
	w.file.Close()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maps
}

// perfMapPID parses "perf-1234.map".
func perfMapPID(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "perf-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".map")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(s)
	return pid, err == nil && pid > 0
}

// descendsFrom reports whether process pid is root or one of its
// descendants, following parent ids in /proc.
func descendsFrom(pid, root int) bool {
	for depth := 0; depth < 1024 && pid > 1; depth++ {
		if pid == root {
			return true
		}
		ppid, err := parentOf(pid)
		if err != nil {
			return false
		}
		pid = ppid
	}
	return false
}

// parentOf reads a process's parent id from /proc/PID/stat, whose second
// field (the command name, in parentheses) may itself hold spaces or ")".
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // state, ppid, ...
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: no parent id", pid)
	}
	return strconv.Atoi(f[1])
}
