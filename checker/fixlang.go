package checker

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/streamcheck/streamcheck/hb"
)

// A fix is worded in the program's language: what a PyTorch or CuPy
// program calls to order two streams is not cudaStreamWaitEvent. The
// language is told from the frames of the operations: PyTorch's and
// CuPy's own code sits below the program's Python line.

// framework is the library a Python program makes its CUDA calls through.
type framework int

const (
	frameworkCUDA framework = iota // CUDA C++, or Python through another library
	frameworkTorch
	frameworkCuPy
)

// frameworkOf tells the framework from the frames of ops.
func frameworkOf(ops ...*Op) framework {
	for _, o := range ops {
		if o == nil {
			continue
		}
		for _, fr := range o.Stack {
			switch {
			case strings.Contains(fr.File, "/torch/") || strings.Contains(fr.Module, "site-packages/torch/lib/") ||
				strings.HasPrefix(fr.Func, "at::") || strings.HasPrefix(fr.Func, "c10::") || strings.HasPrefix(fr.Func, "c10d::") ||
				strings.HasPrefix(fr.Func, "torch::") || strings.HasPrefix(fr.Func, "THPVariable"):
				return frameworkTorch
			case strings.Contains(fr.File, "/cupy/") || strings.Contains(fr.Func, "4cupy"):
				return frameworkCuPy
			}
		}
	}
	return frameworkCUDA
}

// pythonStreamName is the name a Python program gives a stream, read
// from its source where the stream was first used (set when its creation
// does not tell it apart: PyTorch makes its pool's streams together) or
// created (see streamSite): the variable assigned there ("s2 = torch.cuda.Stream()"), the
// stream a method is called on ("s2.wait_stream(s1)"), or the stream of
// the with block around the line ("with torch.cuda.stream(s2):", "with
// s2:"). "" when the source cannot be read or does not tell.
func pythonStreamName(created, firstUsed string) string {
	site := firstUsed
	if site == "" {
		site = created
	}
	file, line, ok := siteFileLine(withoutHelper(site))
	if !ok || !strings.HasSuffix(file, ".py") {
		return ""
	}
	lines := sourceLines(file)
	if line > len(lines) {
		return ""
	}
	if m := streamAssign.FindStringSubmatch(lines[line-1]); m != nil {
		return m[1]
	}
	if m := streamMethod.FindStringSubmatch(lines[line-1]); m != nil {
		return m[1]
	}
	// The with block the line is in: the nearest line above it that is
	// indented less.
	indent := indentOf(lines[line-1])
	for i := line - 2; i >= 0 && indent > 0; i-- {
		if strings.TrimSpace(lines[i]) == "" || indentOf(lines[i]) >= indent {
			continue
		}
		if m := withStream.FindStringSubmatch(lines[i]); m != nil {
			return m[1] + m[2]
		}
		break
	}
	return ""
}

var (
	streamAssign = regexp.MustCompile(`^\s*([A-Za-z_]\w*)\s*=\s*[\w.]*Stream\(`)
	streamMethod = regexp.MustCompile(`^\s*([A-Za-z_]\w*)\.(?:wait_stream|wait_event|record_event|synchronize|use)\(`)
	withStream   = regexp.MustCompile(`^\s*with\s+(?:[\w.]*\.stream\(([A-Za-z_]\w*)\)|([A-Za-z_]\w*)\s*:)`)
	deleted      = regexp.MustCompile(`^\s*del\s+([A-Za-z_]\w*)\s*(?:#.*)?$`)
	siteSuffix   = regexp.MustCompile(`(\S+):([0-9]+)$`)
)

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// siteFileLine takes the file and line out of a call site as reports give
// it ("py::main train.py:12", "app.cu:5").
func siteFileLine(site string) (string, int, bool) {
	m := siteSuffix.FindStringSubmatch(site)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	return m[1], n, err == nil && n > 0
}

var sources sync.Map // absolute path -> []string, read once per process

// maxSource is the largest source file read for stream names.
const maxSource = 4 << 20

// sourceLines returns a source file's lines, nil if it cannot be read.
func sourceLines(file string) []string {
	// Keyed by the absolute path: a relative one read before a change of
	// directory names another file.
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if v, ok := sources.Load(file); ok {
		return v.([]string)
	}
	var lines []string
	// Only a regular file of a source's size: a trace names the file, and
	// must not make the analysis read a pipe or a device.
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() > maxSource {
		sources.Store(file, lines)
		return nil
	}
	if f, err := os.Open(file); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
	}
	sources.Store(file, lines)
	return lines
}

// pyStream names o's stream in a Python fix: its variable in backquotes,
// or as the report's sentences do.
func pyStream(fw framework, o *Op) string {
	if n := pyVar(fw, o, ""); n != "" {
		return "`" + n + "`"
	}
	return o.StreamRef
}

// pyVar is how a Python program names o's stream in code: the default
// stream by the framework's call for it, another by its variable;
// fallback when the source does not tell.
func pyVar(fw framework, o *Op, fallback string) string {
	if o.StreamKind == hb.KindLegacy.String() || o.StreamKind == hb.KindPerThread.String() {
		if fw == frameworkCuPy {
			return "cupy.cuda.Stream.null"
		}
		return "torch.cuda.default_stream()"
	}
	if o.StreamName != "" {
		return o.StreamName
	}
	return fallback
}

// frameworkHandOff words the hand-off that orders before before after for
// a PyTorch or CuPy program; "" for CUDA C++.
func frameworkHandOff(before, after *Op) string {
	fw := frameworkOf(before, after)
	pyVar := func(o *Op, fallback string) string { return pyVar(fw, o, fallback) }
	pyStream := func(o *Op) string { return pyStream(fw, o) }
	switch fw {
	case frameworkTorch:
		wait := fmt.Sprintf("call `%s.wait_stream(%s)` before the line at %s (or record a `torch.cuda.Event` on %s after the line at %s and `%s.wait_event(e)`)",
			pyVar(after, "after_stream"), pyVar(before, "before_stream"), after.Site(), pyStream(before), before.Site(), pyVar(after, "after_stream"))
		if after.Op == "free_async" || after.Op == "free" {
			tensor := "tensor"
			if file, line, ok := siteFileLine(after.Site()); ok {
				if lines := sourceLines(file); line <= len(lines) {
					if m := deleted.FindStringSubmatch(lines[line-1]); m != nil {
						tensor = m[1]
					}
				}
			}
			return fmt.Sprintf("Call `%s.record_stream(%s)` after its use at %s, so that the caching allocator keeps the memory until %s's work is done; or %s.",
				tensor, pyVar(before, "stream"), before.Site(), pyStream(before), wait)
		}
		return fmt.Sprintf("Make %s wait for %s: %s.", pyStream(after), pyStream(before), wait)
	case frameworkCuPy:
		return fmt.Sprintf("Record an event on %s after the line at %s (`e = %s.record()`) and make %s wait on it (`%s.wait_event(e)`) before the line at %s; or run both on one stream (`with %s:` or `%s.use()`).",
			pyStream(before), before.Site(), pyVar(before, "before_stream"), pyStream(after), pyVar(after, "after_stream"), after.Site(),
			pyVar(before, "before_stream"), pyVar(before, "before_stream"))
	}
	return ""
}
