package shimbuild_test

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// release runs scripts/release.sh v0.0.0-test into a new directory with
// env added, and returns the directory, the output and the error.
func release(t *testing.T, env ...string) (string, string, error) {
	t.Helper()
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "release.sh"), "v0.0.0-test", dist)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return dist, string(out), err
}

// TestReleaseArm64: scripts/release.sh builds the linux/arm64 archive with
// the aarch64 cross compiler: the CLI and the shim in it are AArch64 ELF
// files (the shim a shared object exporting CUPTI's injection entry
// point), and SHA256SUMS holds the archive's digest.
func TestReleaseArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release archive")
	}
	cc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	if err != nil {
		t.Skip("no aarch64 cross compiler (Debian's gcc-aarch64-linux-gnu)")
	}
	dist, out, err := release(t, "ARCHS=arm64", "CC_arm64="+cc)
	if err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	const name = "streamcheck_0.0.0-test_linux_arm64"
	archive := filepath.Join(dist, name+".tar.gz")
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if want := hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n"; err != nil || string(sums) != want {
		t.Errorf("SHA256SUMS %q (%v), want %q", sums, err, want)
	}

	dir := t.TempDir()
	files := untar(t, archive, dir)
	for _, f := range []string{"bin/streamcheck", "lib/libstreamcheck.so", "LICENSE", "README.md", "CHANGELOG.md"} {
		if !slices.Contains(files, name+"/"+f) {
			t.Errorf("archive lacks %s; holds %v", f, files)
		}
	}
	checkAArch64(t, filepath.Join(dir, name, "bin", "streamcheck"), false)
	checkAArch64(t, filepath.Join(dir, name, "lib", "libstreamcheck.so"), true)
}

// untar unpacks a .tar.gz into dir and returns the names of its files.
func untar(t *testing.T, archive, dir string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		names = append(names, h.Name)
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAArch64 checks that path is an AArch64 ELF file, with debug/elf and
// with file(1) and readelf(1) where they are installed; shim says it must
// be a shared object that exports InitializeInjection.
func checkAArch64(t *testing.T, path string, shim bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 {
		t.Errorf("%s: %v %v, want EM_AARCH64 ELFCLASS64", path, f.Machine, f.Class)
	}
	if shim {
		syms, err := f.DynamicSymbols()
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != elf.ET_DYN || !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == "InitializeInjection" }) {
			t.Errorf("%s: type %v, want a shared object exporting InitializeInjection", path, f.Type)
		}
	}
	if out, err := exec.Command("file", "-b", path).Output(); err == nil && !strings.Contains(string(out), "ARM aarch64") {
		t.Errorf("file %s: %s", path, out)
	}
	if out, err := exec.Command("readelf", "-h", path).Output(); err == nil && !strings.Contains(string(out), "AArch64") {
		t.Errorf("readelf -h %s:\n%s", path, out)
	}
}

// TestReleaseMissingCompiler: a release lacking an architecture's compiler
// fails before building anything, with one line naming the compiler.
func TestReleaseMissingCompiler(t *testing.T) {
	dist, out, err := release(t, "ARCHS=amd64 arm64", "CC_arm64=no-such-aarch64-gcc")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("release.sh: %v, want exit 1\n%s", err, out)
	}
	want := "release.sh: no C compiler for linux/arm64: no-such-aarch64-gcc not found (install Debian's gcc-aarch64-linux-gnu, set CC_arm64, or leave arm64 out of ARCHS)\n"
	if out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if left, _ := os.ReadDir(dist); len(left) != 0 {
		t.Errorf("%s holds %d files, want none", dist, len(left))
	}
}
