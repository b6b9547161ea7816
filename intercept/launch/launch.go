package launch

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/streamcheck/streamcheck/internal/safefile"
)

// ShimName is the file name of the recording shim.
const ShimName = "libstreamcheck.so"

// BuildHint says how to build the shim; errors from FindShim include it.
const BuildHint = "build it with ./scripts/build.sh in the streamcheck repository, which puts it in bin/ next to " +
	"bin/streamcheck (or: ./scripts/build.sh shim DIR/libstreamcheck.so, with DIR the streamcheck " +
	"binary's directory or ../lib/ relative to it, or name it in $STREAMCHECK_SHIM)"

// FindShim returns the path of the shim: $STREAMCHECK_SHIM if set (it must
// exist), else libstreamcheck.so next to the running executable, else
// ../lib/libstreamcheck.so relative to it, else the shim built from the
// sources embedded in streamcheck in the user's cache (BuildCached: a
// streamcheck installed by go install builds it there on first use, and
// says so on stderr).
func FindShim() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	} else if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	p, err := findShim(os.Getenv("STREAMCHECK_SHIM"), exe)
	var nf *notFoundError
	if !errors.As(err, &nf) {
		return p, err
	}
	p, berr := BuildCached(os.Stderr)
	if berr != nil {
		nf.build = berr
		return "", nf
	}
	return p, nil
}

// notFoundError says where the shim was looked for, and why building it
// from the embedded sources failed.
type notFoundError struct {
	tried []string
	build error
}

func (e *notFoundError) Error() string {
	msg := fmt.Sprintf("recording shim %s not found (looked at %s)", ShimName, strings.Join(append([]string{"$STREAMCHECK_SHIM"}, e.tried...), ", "))
	if e.build != nil {
		msg += " and not built from the sources streamcheck embeds: " + e.build.Error()
	}
	return msg + "; " + BuildHint
}

func (e *notFoundError) Unwrap() error { return e.build }

func findShim(env, exe string) (string, error) {
	if env != "" {
		if err := isFile(env); err != nil {
			return "", fmt.Errorf("STREAMCHECK_SHIM=%s: %w", env, err)
		}
		if err := CheckShim(env); err != nil {
			return "", fmt.Errorf("STREAMCHECK_SHIM=%s: %w", env, err)
		}
		return filepath.Abs(env)
	}
	var tried []string
	if exe != "" {
		dir := filepath.Dir(exe)
		for _, p := range []string{
			filepath.Join(dir, ShimName),
			filepath.Join(dir, "..", "lib", ShimName),
		} {
			if isFile(p) == nil {
				if err := CheckShim(p); err != nil {
					return "", fmt.Errorf("%s: %w", p, err)
				}
				return filepath.Abs(p)
			}
			tried = append(tried, p)
		}
	}
	return "", &notFoundError{tried: tried}
}

// CheckShim makes sure the file at path is an ELF shared object for this
// machine: the dynamic loader (LD_PRELOAD) and the CUDA driver
// (CUDA_INJECTION64_PATH) skip anything else with at most a line on
// stderr, and the program would run unrecorded.
func CheckShim(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("not an ELF shared object: %w", err)
	}
	defer f.Close()
	switch {
	case f.Type != elf.ET_DYN:
		return fmt.Errorf("not an ELF shared object (ELF type %v); %s", f.Type, BuildHint)
	case f.Machine != Machine() || f.Class != elf.ELFCLASS64:
		return fmt.Errorf("built for %v (%v), not for this machine (%v, %s); %s", f.Machine, f.Class, Machine(), runtime.GOARCH, BuildHint)
	}
	return nil
}

// PlainPath reports whether path can be passed in LD_PRELOAD as it is:
// ld.so splits the variable at spaces and colons and expands $ORIGIN, $LIB
// and $PLATFORM, so only letters, digits and "/._+-" are safe.
func PlainPath(path string) bool {
	for _, r := range path {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', strings.ContainsRune("/._+-", r):
		default:
			return false
		}
	}
	return path != ""
}

// PrivateCopy copies the shim at path into a new directory under tmpDir
// ("" for os.TempDir) that only the current user can reach (0700), under
// its plain name, and returns the copy's path and a function that removes
// the directory. The copy is what gets loaded, so a path with characters
// that LD_PRELOAD would split or expand (see PlainPath) never reaches it.
// It fails when the copy's path is not plain either.
func PrivateCopy(path, tmpDir string) (string, func(), error) {
	dir, err := os.MkdirTemp(tmpDir, "streamcheck-shim-")
	if err != nil {
		return "", nil, fmt.Errorf("copy the shim: %w", err)
	}
	remove := func() { os.RemoveAll(dir) }
	dst := filepath.Join(dir, ShimName)
	if !PlainPath(dst) {
		remove()
		return "", nil, fmt.Errorf("the shim's path %q holds characters that LD_PRELOAD splits or expands (only letters, digits and /._+- are safe), and so does the temporary directory %q: set TMPDIR to a plain directory", path, dir)
	}
	if err := copyFile(dst, path); err != nil {
		remove()
		return "", nil, fmt.Errorf("copy the shim: %w", err)
	}
	return dst, remove, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o500)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// LoadedMarks matches the files the shim creates in the trace directory,
// one a process (streamcheck-PID.loaded), as it is preloaded under a
// launcher (STREAMCHECK_LAUNCHER=1), whether or not the process then makes
// a CUDA call.
const LoadedMarks = "streamcheck-*.loaded"

// NoCUDAMarks matches the files a process that loaded the shim leaves at
// its exit (streamcheck-PID.nocuda) when its CUDA driver was never
// initialized: it made no CUDA call.
const NoCUDAMarks = "streamcheck-*.nocuda"

func isFile(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	return nil
}

// maxPerfMap is the largest perf map RemovePythonPerfMap reads.
const maxPerfMap = 256 << 20

// PythonPerfVar makes CPython 3.12+ keep a perf map of its Python functions.
const PythonPerfVar = "PYTHONPERFSUPPORT"

// Env returns base with the variables that make a CUDA program load the
// shim at shimPath and write its traces into traceDir:
//
//   - by default CUDA_INJECTION64_PATH=shimPath (the CUDA driver loads it
//     at cuInit);
//   - with preload, shimPath is appended to LD_PRELOAD and
//     STREAMCHECK_PRELOAD=1 is set (the shim starts when the program loads).
//
// STREAMCHECK_DIR=traceDir and STREAMCHECK_LAUNCHER=1 are set in both cases
// (the latter tells the shim that the caller reports its error markers, so
// the shim does not print them too), and PYTHONPERFSUPPORT=1 unless base
// sets it already: Python 3.12 and later then call each Python function
// through a trampoline the recorded stacks end at, which the perf map it
// writes names (see package symbolize). Earlier settings of these
// variables in base are replaced (LD_PRELOAD is extended, not replaced).
// base is not modified.
func Env(base []string, shimPath, traceDir string, preload bool) []string {
	out := make([]string, 0, len(base)+5)
	ldPreload := ""
	pythonPerf := false
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case PythonPerfVar:
			pythonPerf = true
		case "STREAMCHECK_DIR", "STREAMCHECK_PRELOAD", "STREAMCHECK_LAUNCHER":
			continue
		case "CUDA_INJECTION64_PATH":
			// The user's injection library stays where the shim does not
			// need the variable (preloaded), unless it is a shim itself.
			if !preload || !userInjection(v) {
				continue
			}
		case "LD_PRELOAD":
			if preload {
				ldPreload = v
				continue
			}
		}
		out = append(out, kv)
	}
	out = append(out, "STREAMCHECK_DIR="+traceDir, "STREAMCHECK_LAUNCHER=1")
	if !pythonPerf {
		out = append(out, PythonPerfVar+"=1")
	}
	if preload {
		// ld.so takes LD_PRELOAD entries separated by spaces or colons.
		if ldPreload = strings.TrimSpace(ldPreload); ldPreload != "" {
			ldPreload += ":"
		}
		out = append(out, "LD_PRELOAD="+ldPreload+shimPath, "STREAMCHECK_PRELOAD=1")
	} else {
		out = append(out, "CUDA_INJECTION64_PATH="+shimPath)
	}
	return out
}

// userInjection reports whether v, a CUDA_INJECTION64_PATH value, names
// an injection library of the user's rather than a shim.
func userInjection(v string) bool { return v != "" && filepath.Base(v) != ShimName }

// DroppedInjection returns the user's own CUDA_INJECTION64_PATH library in
// base that Env leaves out, the shim taking its place, or "".
func DroppedInjection(base []string, preload bool) string {
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "CUDA_INJECTION64_PATH="); ok && !preload && userInjection(v) {
			return v
		}
	}
	return ""
}

// RemovePythonPerfMap removes the perf map at path if every entry in it
// names a CPython trampoline ("py::..."): the maps Python wrote because Env
// asked it to. A map with other entries (a JIT of the program's own: node's
// --perf-basic-prof, a JVM agent) is the program's, and stays. So does one
// that is not a regular file of the current user's (/tmp is everyone's: a
// link planted there is not followed), or one over maxPerfMap bytes.
func RemovePythonPerfMap(path string) error {
	data, cut, err := safefile.ReadFile(path, maxPerfMap)
	if err != nil {
		return err
	}
	if cut {
		return fmt.Errorf("%s: larger than %d bytes: kept", path, maxPerfMap)
	}
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		// "START SIZE NAME": the name is the rest of the line.
		if f := strings.SplitN(line, " ", 3); len(f) < 3 || !strings.HasPrefix(f[2], "py::") {
			return fmt.Errorf("%s: not only Python entries: kept", path)
		}
	}
	return os.Remove(path)
}

// Machine is the ELF machine of this build: the shim must be built for it.
func Machine() elf.Machine {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	case "ppc64le", "ppc64":
		return elf.EM_PPC64
	case "riscv64":
		return elf.EM_RISCV
	case "s390x":
		return elf.EM_S390
	case "loong64":
		return elf.EM_LOONGARCH
	}
	return elf.EM_NONE
}
