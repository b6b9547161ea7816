package launch

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/intercept"
)

// ErrNoCompiler is the error of BuildCached when there is no C compiler
// to build the shim with.
var ErrNoCompiler = errors.New("no C compiler")

// CachedShim returns where BuildCached puts the shim built from the
// sources embedded in streamcheck with the C compiler cc ($CC, or cc):
// a directory of the user's cache named by a hash of those sources, their
// flags, the compiler and its version, so that a new streamcheck or
// another compiler builds anew and never loads a stale shim.
func CachedShim(cc string) (string, error) {
	compiler, err := exec.LookPath(cc)
	if err != nil {
		return "", fmt.Errorf("%w to build the recording shim with (%s: %w): install one (for example: apt-get install gcc) or name it in $CC", ErrNoCompiler, cc, err)
	}
	version, err := exec.Command(compiler, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", compiler, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the recording shim: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", compiler, version, runtime.GOARCH)
	err = fs.WalkDir(intercept.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(intercept.Sources, p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "streamcheck", "shim-"+hex.EncodeToString(h.Sum(nil))[:16], ShimName), nil
}

// CC returns the C compiler to build the shim with: $CC, or cc.
func CC() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

// BuildCached returns the path of the shim built from the sources embedded
// in streamcheck (CachedShim), compiling it there first when it is not
// there yet; then it says so on note. Concurrent builds are safe: each
// compiles in a directory of its own and renames its result into place.
func BuildCached(note io.Writer) (string, error) {
	cc := CC()
	out, err := CachedShim(cc)
	if err != nil {
		return "", err
	}
	if isFile(out) == nil {
		if err := CheckShim(out); err != nil {
			return "", fmt.Errorf("%s: %w", out, err)
		}
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return "", fmt.Errorf("build the recording shim: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "build-")
	if err != nil {
		return "", fmt.Errorf("build the recording shim: %w", err)
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, ShimName)
	if err := compileShim(cc, tmp, built); err != nil {
		return "", err
	}
	if err := CheckShim(built); err != nil {
		return "", fmt.Errorf("built %s: %w", built, err)
	}
	if err := os.Rename(built, out); err != nil {
		return "", fmt.Errorf("build the recording shim: %w", err)
	}
	fmt.Fprintf(note, "streamcheck: built the recording shim %s with %s\n", out, cc)
	return out, nil
}

// compileShim writes the embedded sources into dir and compiles them into
// out with cc, as scripts/build.sh does but without -Werror: a compiler
// newer than the project's may warn where it does not.
func compileShim(cc, dir, out string) error {
	var srcs []string
	entries, err := fs.ReadDir(intercept.Sources, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(intercept.Sources, e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			return fmt.Errorf("build the recording shim: %w", err)
		}
		if path.Ext(e.Name()) == ".c" {
			srcs = append(srcs, e.Name())
		}
	}
	flags, err := buildFlags()
	if err != nil {
		return err
	}
	args := slices.Concat(flags["cflags"], []string{"-o", out}, srcs, flags["libs"])
	cmd := exec.Command(cc, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the recording shim: %s %s: %w\n%s", cc, strings.Join(args, " "), err, b)
	}
	return nil
}

// buildFlags reads the embedded build.flags: lines of a name and its
// flags, comments after #.
func buildFlags() (map[string][]string, error) {
	b, err := fs.ReadFile(intercept.Sources, "build.flags")
	if err != nil {
		return nil, err
	}
	flags := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			flags[f[0]] = f[1:]
		}
	}
	if flags["cflags"] == nil || flags["libs"] == nil {
		return nil, errors.New("intercept/build.flags: no cflags or libs line")
	}
	return flags, nil
}
