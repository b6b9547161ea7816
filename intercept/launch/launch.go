package launch

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ShimName is the file name of the recording shim.
const ShimName = "libstreamcheck.so"

// BuildHint says how to build the shim; errors from FindShim include it.
const BuildHint = "build it with ./scripts/build.sh in the streamcheck repository, which puts it in bin/ next to " +
	"bin/streamcheck (or: go build -buildmode=c-shared -o DIR/libstreamcheck.so ./intercept, with DIR the streamcheck " +
	"binary's directory or ../lib/ relative to it, or name it in $STREAMCHECK_SHIM)"

// FindShim returns the path of the shim: $STREAMCHECK_SHIM if set (it must
// exist), else libstreamcheck.so next to the running executable, else
// ../lib/libstreamcheck.so relative to it.
func FindShim() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	} else if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return findShim(os.Getenv("STREAMCHECK_SHIM"), exe)
}

func findShim(env, exe string) (string, error) {
	if env != "" {
		if err := isFile(env); err != nil {
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
				return filepath.Abs(p)
			}
			tried = append(tried, p)
		}
	}
	return "", fmt.Errorf("recording shim %s not found (looked at $STREAMCHECK_SHIM, %s); %s",
		ShimName, strings.Join(tried, ", "), BuildHint)
}

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
// --perf-basic-prof, a JVM agent) is the program's, and stays.
func RemovePythonPerfMap(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
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
