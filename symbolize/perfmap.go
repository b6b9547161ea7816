package symbolize

import (
	"bufio"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/model"

	"github.com/streamcheck/streamcheck/internal/safefile"
)

// Python 3.12 and later, run with PYTHONPERFSUPPORT=1 (or -X perf), call
// every Python function through a small trampoline of generated code and
// list the trampolines in /tmp/perf-PID.map ("START SIZE py::NAME:FILE" per
// line, hexadecimal). Such code has no unwind tables, so a recorded stack
// ends at the innermost trampoline: its pc names the Python function that
// made the CUDA call, in none of the process's loaded files. A perf map is
// only meaningful on the machine and for the process that wrote it, so the
// Symbolizer reads one only when PerfMapDir is set (`record` and `run` set
// it, right after the program exits).

// perfSymbol is one line of a perf map.
type perfSymbol struct {
	start, end uint64
	name       string
}

// perfMap is a process's perf map, sorted by start.
type perfMap []perfSymbol

// PerfMapPath returns the perf map a process with pid writes in dir.
func PerfMapPath(dir string, pid uint32) string {
	return filepath.Join(dir, fmt.Sprintf("perf-%d.map", pid))
}

// readPerfMap reads the perf map at path. A map older than notBefore belongs
// to an earlier process with the same pid and is ignored, as is a missing
// one; lines it cannot parse are skipped. /tmp is everyone's: only a
// regular file the current user owns is read, and a link is not followed.
func readPerfMap(path string, notBefore time.Time) perfMap {
	f, err := safefile.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.ModTime().Before(notBefore) {
		return nil
	}
	var m perfMap
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 3)
		if len(fields) != 3 {
			continue
		}
		start, err1 := strconv.ParseUint(fields[0], 16, 64)
		size, err2 := strconv.ParseUint(fields[1], 16, 64)
		if err1 != nil || err2 != nil || size == 0 || start+size < start {
			continue
		}
		m = append(m, perfSymbol{start: start, end: start + size, name: fields[2]})
	}
	sort.Slice(m, func(i, j int) bool { return m[i].start < m[j].start })
	return m
}

// lookup returns the name of the code holding pc, or "".
func (m perfMap) lookup(pc uint64) string {
	i := sort.Search(len(m), func(i int) bool { return m[i].start > pc }) - 1
	if i < 0 || pc >= m[i].end {
		return ""
	}
	return m[i].name
}

// pythonFrame resolves a pc outside every loaded file through the process's
// perf map: "py::train_step:/work/train.py" becomes the function
// "py::train_step" in the file "/work/train.py" (made relative like other
// source paths). It returns false when the map does not name pc as Python.
func (s *Symbolizer) pythonFrame(t *model.Tables, m perfMap, f model.Frame) (model.Frame, bool) {
	// Recorded pcs are return addresses: the call is the byte before.
	rest, ok := strings.CutPrefix(m.lookup(f.PC-1), "py::")
	fn, file, found := strings.Cut(rest, ":")
	if !ok || !found || fn == "" {
		return f, false
	}
	f.Func = t.Intern("py::" + fn)
	f.File = t.Intern(s.relative(file))
	return f, true
}
