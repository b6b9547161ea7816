package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outputCommands are the command lines that write an -o file (OUT stands
// for it), with the exit code each gives when it can write it.
func outputCommands(t *testing.T, dir string) []struct {
	args []string
	code int
} {
	t.Helper()
	racy := filepath.Join(dir, "racy.jsonl")
	if err := os.WriteFile(racy, []byte(racyJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STREAMCHECK_SHIM", standInShim(t))
	return []struct {
		args []string
		code int
	}{
		{[]string{"convert", "-o", "OUT", racy}, 0},
		{[]string{"convert", "--to", "jsonl", "-o", "OUT", racy}, 0},
		{[]string{"timeline", "-o", "OUT", racy}, 0},
		{[]string{"explain", "-o", "OUT", racy}, 1},
		{[]string{"explain", "--dot", "-o", "OUT", racy}, 1},
		{[]string{"check", "-o", "OUT", racy}, 1},
		{[]string{"check", "--format", "sarif", "-o", "OUT", racy}, 1},
		{[]string{"check", "--write-baseline", "OUT", racy}, 0},
		{[]string{"demo", "-o", "OUT"}, 1},
		{[]string{"run", "--format", "json", "-o", "OUT", "--", "true"}, 0},
	}
}

func withOut(args []string, out string) []string {
	a := append([]string(nil), args...)
	for i := range a {
		if a[i] == "OUT" {
			a[i] = out
		}
	}
	return a
}

// devices returns a null and a full character device to write to: as
// root, new ones made with mknod in dir (a streamcheck that replaced them
// must not take the system's /dev/null with it), else /dev/null and
// /dev/full, which only root could replace.
func devices(t *testing.T, dir string) (null, full string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return "/dev/null", "/dev/full"
	}
	null, full = filepath.Join(dir, "null"), filepath.Join(dir, "full")
	for _, d := range []struct {
		path string
		dev  int
	}{{null, 1<<8 | 3}, {full, 1<<8 | 7}} {
		if err := syscall.Mknod(d.path, syscall.S_IFCHR|0o666, d.dev); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	return null, full
}

// TestOutputSpecialFiles: every -o writes through a character device or a
// FIFO instead of replacing it. A full device fails the write: exit 2 with
// the error, and the device stays; a null device takes the output; a
// FIFO's reader gets the bytes a regular file would hold.
func TestOutputSpecialFiles(t *testing.T) {
	// run's stand-in shim cannot be preloaded; the driver would load it.
	t.Setenv("STREAMCHECK_BACKEND", "cupti")
	dir := t.TempDir()
	null, full := devices(t, dir)
	for _, c := range outputCommands(t, dir) {
		name := strings.Join(c.args, " ")
		code, _, stderr := runCLI(t, withOut(c.args, full)...)
		if code != exitUsage || !strings.Contains(stderr, "no space left on device") {
			t.Errorf("%s with a full device: exit %d, stderr %q; want 2 and the write's error", name, code, stderr)
		}
		if code, _, stderr := runCLI(t, withOut(c.args, null)...); code != c.code {
			t.Errorf("%s with a null device: exit %d, want %d: %s", name, code, c.code, stderr)
		}
		for _, dev := range []string{full, null} {
			if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
				t.Fatalf("%s: %s is no longer a character device (%v, %v)", name, dev, st.Mode(), err)
			}
		}

		regular := filepath.Join(dir, "regular")
		os.Remove(regular)
		if code, _, stderr := runCLI(t, withOut(c.args, regular)...); code != c.code {
			t.Fatalf("%s: exit %d, want %d: %s", name, code, c.code, stderr)
		}
		want, err := os.ReadFile(regular)
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: %d bytes written, %v", name, len(want), err)
		}
		fifo := filepath.Join(dir, "fifo")
		os.Remove(fifo)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo) // Waits for the writer.
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		if code, _, stderr := runCLI(t, withOut(c.args, fifo)...); code != c.code {
			t.Errorf("%s with a FIFO: exit %d, want %d: %s", name, code, c.code, stderr)
		}
		select {
		case b := <-got:
			if c.args[0] == "run" || c.args[0] == "demo" {
				// Names a temporary directory, or a time: the length is enough.
				if len(b) == 0 {
					t.Errorf("%s: the FIFO's reader got nothing", name)
				}
			} else if !bytes.Equal(b, want) {
				t.Errorf("%s: the FIFO's reader got %d bytes, the regular file %d", name, len(b), len(want))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the FIFO's reader got no end of file", name)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s: the FIFO was replaced (%v, %v)", name, st.Mode(), err)
		}
	}
}

// TestOutputNotAnInput: -o and --write-baseline never name a file the same
// command reads (a trace, the suppressions, the baseline), nor each other:
// exit 2, and the file is left as it was.
func TestOutputNotAnInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("STREAMCHECK_SHIM", standInShim(t))
	racy := filepath.Join(dir, "racy.jsonl")
	supp := filepath.Join(dir, "supp.txt")
	base := filepath.Join(dir, "base.json")
	files := map[string]string{
		racy: racyJSONL,
		supp: "leak frame=main reason=\"accepted\"\n",
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := runCLI(t, "check", "--write-baseline", base, racy); code != 0 {
		t.Fatalf("write the baseline: exit %d, %s", code, stderr)
	}
	files[base], _ = func() (string, error) { b, err := os.ReadFile(base); return string(b), err }()
	for _, args := range [][]string{
		{"check", "--suppressions", supp, "-o", supp, racy},
		{"check", "--baseline", base, "-o", base, racy},
		{"check", "--suppressions", supp, "--write-baseline", supp, racy},
		{"check", "--baseline", base, "--write-baseline", base, racy},
		{"check", "-o", racy, racy},
		{"check", "-o", filepath.Join(dir, "same"), "--write-baseline", filepath.Join(dir, "same"), racy},
		{"demo", "--suppressions", supp, "-o", supp},
		{"run", "--baseline", base, "-o", base, "--", "true"},
		{"run", "--suppressions", supp, "--write-baseline", supp, "--", "true"},
		{"convert", "-o", racy, racy},
		{"timeline", "-o", racy, racy},
		{"explain", "-o", racy, racy},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "output ") && !strings.Contains(stderr, "the same file") {
			t.Errorf("%s: exit %d, stderr %q; want 2 refusing the output", strings.Join(args, " "), code, stderr)
		}
		for p, text := range files {
			if b, err := os.ReadFile(p); err != nil || string(b) != text {
				t.Fatalf("%s: %s changed (%v)", strings.Join(args, " "), p, err)
			}
		}
	}
}

// TestStdoutFull: commands that print to stdout fail with exit 2 and the
// error when the write fails (stdout on a full device), instead of exiting
// 0 having printed nothing.
func TestStdoutFull(t *testing.T) {
	_, full := devices(t, t.TempDir())
	f, err := os.OpenFile(full, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, args := range [][]string{{"rules"}, {"rules", "use-after-free"}, {"version"}} {
		var stderr bytes.Buffer
		if code := run(f, &stderr, args); code != exitUsage || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%s > full: exit %d, stderr %q; want 2 and the error", strings.Join(args, " "), code, stderr.String())
		}
	}
}
