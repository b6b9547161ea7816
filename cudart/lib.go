package cudart

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ebitengine/purego"
)

// Environment variables that steer the library search.
const (
	EnvLibCUDA   = "STREAMCHECK_LIBCUDA"   // libcuda: a file or a directory; the only place searched when set.
	EnvLibCUDART = "STREAMCHECK_LIBCUDART" // libcudart: a file or a directory, searched first.
	EnvCUPTI     = "STREAMCHECK_CUPTI"     // libcupti: a file or a directory, searched first.
)

// Sentinels for a library that was not found (or could not be opened).
var (
	ErrNoDriver  = errors.New("no CUDA driver found")
	ErrNoRuntime = errors.New("no CUDA runtime found")
	ErrNoCUPTI   = errors.New("no CUPTI found")
)

// Attempt is one place a library was looked for.
type Attempt struct {
	Path string // As given to dlopen: a bare name goes through the dynamic linker's search.
	Err  error
}

// LoadError says that a library was not found and where it was looked for.
// It matches its sentinel (ErrNoDriver, ErrNoRuntime or ErrNoCUPTI) with
// errors.Is.
type LoadError struct {
	Lib   string // "libcuda", "libcudart" or "libcupti".
	Tried []Attempt
	err   error // The sentinel.
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.err.Error())
	if len(e.Tried) == 0 {
		fmt.Fprintf(&b, " (%s: nowhere to look)", e.Lib)
		return b.String()
	}
	// The first few places are enough to tell how the search went; Tried
	// has them all.
	const shown = 4
	fmt.Fprintf(&b, " (%s; tried ", e.Lib)
	for i, a := range e.Tried {
		if i == shown {
			fmt.Fprintf(&b, " and %d more", len(e.Tried)-shown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Path)
	}
	b.WriteString(")")
	// A library that was there but refused says more than the places
	// where there was none: the first such reason.
	for _, a := range e.Tried {
		if a.Err == nil || errors.Is(a.Err, fs.ErrNotExist) || strings.Contains(strings.ToLower(a.Err.Error()), "no such file") {
			continue
		}
		if msg := a.Err.Error(); strings.HasPrefix(msg, a.Path) {
			fmt.Fprintf(&b, "; %s", msg)
		} else {
			fmt.Fprintf(&b, "; %s: %s", a.Path, msg)
		}
		break
	}
	return b.String()
}

func (e *LoadError) Unwrap() error { return e.err }

// library is an opened shared library.
type library struct {
	path   string // The candidate that opened.
	handle uintptr
}

// search describes where one library is looked for.
type search struct {
	lib      string   // For messages: "libcuda".
	env      string   // Variable naming a file or directory.
	envOnly  bool     // When env is set, search nothing else.
	names    []string // File names, tried through the dynamic linker and in each directory.
	dirs     []string // Directories, tried in order after the bare names.
	sentinel error
}

// candidates lists the paths to try, in order, without duplicates. A value
// of the environment variable that is a directory stands for each name in
// it; anything else is taken as a file.
func (s search) candidates(getenv func(string) string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	addDir := func(dir string) {
		if dir == "" {
			return
		}
		for _, n := range s.names {
			add(filepath.Join(dir, n))
		}
	}
	if v := getenv(s.env); v != "" {
		if fi, err := os.Stat(v); err == nil && fi.IsDir() {
			addDir(v)
		} else {
			add(v)
		}
		if s.envOnly {
			return out
		}
	}
	for _, n := range s.names {
		add(n)
	}
	for _, d := range s.dirs {
		addDir(expandDir(d, getenv))
	}
	return out
}

// expandDir replaces a leading $VAR; a directory whose variable is unset is
// dropped.
func expandDir(d string, getenv func(string) string) string {
	if !strings.HasPrefix(d, "$") {
		return d
	}
	name, rest, _ := strings.Cut(d[1:], "/")
	v := getenv(name)
	if v == "" {
		return ""
	}
	return filepath.Join(v, rest)
}

// open tries each candidate in turn and returns the first that dlopen
// accepts and that passes accept (when not nil: for instance, it has the
// symbols needed).
func (s search) open(getenv func(string) string, accept func(h uintptr) error) (*library, error) {
	lerr := &LoadError{Lib: s.lib, err: s.sentinel}
	for _, p := range s.candidates(getenv) {
		if strings.ContainsRune(p, '/') {
			if _, err := os.Stat(p); err != nil {
				lerr.Tried = append(lerr.Tried, Attempt{Path: p, Err: err})
				continue
			}
		}
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			lerr.Tried = append(lerr.Tried, Attempt{Path: p, Err: err})
			continue
		}
		if accept != nil {
			if err := accept(h); err != nil {
				purego.Dlclose(h)
				lerr.Tried = append(lerr.Tried, Attempt{Path: p, Err: err})
				continue
			}
		}
		return &library{path: resolvedPath(p), handle: h}, nil
	}
	return nil, lerr
}

// resolvedPath returns the file a bare name was found as, when the loader
// says; otherwise p.
func resolvedPath(p string) string {
	if strings.ContainsRune(p, '/') {
		return p
	}
	if f := loadedFile(p); f != "" {
		return f
	}
	return p
}

// loadedFile finds the file mapped for a library opened by bare name, from
// /proc/self/maps (Linux).
func loadedFile(name string) string {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	base := strings.SplitN(name, ".so", 2)[0] + ".so"
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		f := line[i:]
		if fb := filepath.Base(f); fb == name || strings.HasPrefix(fb, base+".") || fb == base {
			return f
		}
	}
	return ""
}

// symbols resolves every name in syms; the first missing one, in name
// order (the same each time), is the error.
func symbols(h uintptr, syms map[string]*uintptr) error {
	for _, name := range slices.Sorted(maps.Keys(syms)) {
		a, err := purego.Dlsym(h, name)
		if err != nil || a == 0 {
			return fmt.Errorf("missing symbol %s", name)
		}
		*syms[name] = a
	}
	return nil
}

// optionalSymbol returns the address of name, or 0.
func optionalSymbol(h uintptr, name string) uintptr {
	a, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return a
}
