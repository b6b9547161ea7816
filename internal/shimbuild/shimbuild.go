// Package shimbuild builds the recording shim (libstreamcheck.so) for the
// tests that load it. It runs the shim step of scripts/build.sh, so the
// shim's compile command is written in one place, and the tests load the
// library that scripts/build.sh ships.
package shimbuild

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CC returns the C compiler the build uses: $CC, or cc.
func CC() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

// Missing says which tool the build needs and cannot find (bash, the C
// compiler), or returns "" when both are there: tests skip on it.
func Missing() string {
	for _, tool := range []string{"bash", CC()} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("no %s on PATH", tool)
		}
	}
	return ""
}

// Build compiles the shim into out (an absolute path, or one relative to
// the working directory) with `scripts/build.sh shim out`, found in the
// module that holds the working directory.
func Build(out string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := Consult(filepath.Join(root, "scripts", "build.sh"), filepath.Join(root, "intercept", "*.[ch]"),
		filepath.Join(root, "intercept", "build.flags")); err != nil {
		return err
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "build.sh"), "shim", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/build.sh shim %s: %v\n%s", out, err, b)
	}
	return nil
}

// BuildFake compiles, into dir, the fake CUPTI and driver library
// (intercept/testdata/fakecupti.c, and fakeroute.c's driver entry points)
// and the fake CUDA program that runs on
// it (fakeapp.c; see its usage), for the tests that record a program
// without a GPU. It returns their paths.
func BuildFake(dir string) (lib, app string, err error) {
	root, err := Root()
	if err != nil {
		return "", "", err
	}
	src := filepath.Join(root, "intercept", "testdata")
	if err := Consult(filepath.Join(src, "*.[ch]")); err != nil {
		return "", "", err
	}
	lib, app = filepath.Join(dir, "libfakecupti.so"), filepath.Join(dir, "fakeapp")
	cc := CC()
	for _, s := range [][]string{
		{cc, "-O1", "-g", "-Wall", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "fakecupti.c"),
			filepath.Join(src, "fakeroute.c"), "-lpthread", "-ldl"},
		{cc, "-O1", "-g", "-Wall", "-o", app, filepath.Join(src, "fakeapp.c"), "-L" + dir, "-lfakecupti",
			"-Wl,-rpath," + dir, "-ldl", "-lpthread"},
	} {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return lib, app, nil
}

// Consult reads the files that the patterns match, so that `go test`
// reruns a test whose C sources changed: its cache notes the files a test
// opens, and the compiler that reads them runs in another process.
func Consult(patterns ...string) error {
	for _, pat := range patterns {
		files, err := filepath.Glob(pat)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no file matches %s", pat)
		}
		for _, f := range files {
			if _, err := os.ReadFile(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// Root returns the repository's root: the nearest directory at or above
// the working directory that holds go.mod (tests run in their package's
// directory).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
