package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// runCLI runs a streamcheck command line in-process.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(&o, &e, args)
	return code, o.String(), e.String()
}

// binaryTrace returns a complete binary trace of the JSON Lines text.
func binaryTrace(t *testing.T, jsonl string) []byte {
	t.Helper()
	r := model.NewJSONLReader(strings.NewReader(jsonl), "in.jsonl")
	var b bytes.Buffer
	w := model.NewBinaryWriter(&b)
	var ev model.Event
	for {
		err := r.Next(&ev)
		if err != nil {
			break
		}
		if err := w.WriteEvent(&ev, r.Tables()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const cleanJSONL = `{"op":"stream_create","stream":"s1"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"app.cu:10"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000","site":"app.cu:12"}
`

const racyJSONL = `{"op":"stream_create","stream":"s1"}
{"op":"stream_create","stream":"s2"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"app.cu:10"}
{"op":"launch","stream":"s1","kernel":"slow","ptrs":["0x7f0000000000"],"site":"app.cu:11"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000","site":"app.cu:12"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"app.cu:13"}
{"op":"launch","stream":"s2","kernel":"fast","ptrs":["0x7f0000000000"],"site":"app.cu:14"}
{"op":"stream_sync","stream":"s1"}
{"op":"free_async","stream":"s2","ptr":"0x7f0000000000","site":"app.cu:15"}
`

// withUmask runs f under umask m.
func withUmask(m int, f func()) {
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	f()
}

// TestRecordDirPlanted: files another user planted in a recording
// directory are neither followed nor read whole: a marker linked to
// /dev/zero is reported unreadable (not read until memory runs out), and a
// trace linked to a file elsewhere is not copied into the directory by the
// symbolizing rewrite. A directory record creates is 0700 whatever the
// umask.
func TestRecordDirPlanted(t *testing.T) {
	t.Setenv("STREAMCHECK_SHIM", standInShim(t))
	dir := filepath.Join(t.TempDir(), "rec")
	withUmask(0, func() {
		if code, _, stderr := runCLI(t, "record", "-o", dir, "--", "true"); code != 0 {
			t.Fatalf("record: exit %d, %s", code, stderr)
		}
	})
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("record made %s with mode %v (%v), want 0700", dir, st.Mode().Perm(), err)
	}

	secret := filepath.Join(t.TempDir(), "secret.sctrace")
	if err := os.WriteFile(secret, binaryTrace(t, cleanJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(dir, "streamcheck-7.sctrace")
	if err := os.Symlink(secret, planted); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "streamcheck-8.error")); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "streamcheck-9.error"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "record", "-o", dir, "--", "true")
	if code != 0 {
		t.Errorf("record: exit %d", code)
	}
	if !strings.Contains(stderr, "process 8: cannot record CUDA calls: its marker file cannot be read: not a regular file owned by the current user") {
		t.Errorf("the marker linked to /dev/zero: stderr %q", stderr)
	}
	if len(stderr) > 2*maxMarkerLen+1000 {
		t.Errorf("a 1 MiB marker printed whole: %d bytes of stderr", len(stderr))
	}
	if st, err := os.Lstat(planted); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was replaced by a copy of its target: %v, %v", st.Mode(), err)
	}
	if strings.Contains(stderr, "1 trace in") {
		t.Errorf("the planted link counts as a recorded trace: %q", stderr)
	}
}

// TestOutputModes: convert and timeline write their output 0600, or
// stricter as the umask says; run --keep makes its directory 0700.
func TestOutputModes(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(cleanJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		umask int
		want  os.FileMode
	}{{0, 0o600}, {0o022, 0o600}, {0o077, 0o600}, {0o277, 0o400}} {
		withUmask(c.umask, func() {
			for _, args := range [][]string{
				{"convert", "-o", filepath.Join(dir, "out.sctrace"), in},
				{"timeline", "-o", filepath.Join(dir, "out.json"), in},
			} {
				os.Remove(args[2])
				if code, _, stderr := runCLI(t, args...); code != 0 {
					t.Fatalf("%s: exit %d, %s", args[0], code, stderr)
				}
				if st, err := os.Stat(args[2]); err != nil || st.Mode().Perm() != c.want {
					t.Errorf("%s under umask %#o: mode %v (%v), want %v", args[0], c.umask, st.Mode().Perm(), err, c.want)
				}
			}
		})
	}
}

// TestConcatenated: "cat ok.sctrace racy.sctrace" is two processes, each
// analyzed; other data after an End record is damage, never ignored.
// Commands that take one trace refuse a file of several.
func TestConcatenated(t *testing.T) {
	dir := t.TempDir()
	clean, racy := binaryTrace(t, cleanJSONL), binaryTrace(t, racyJSONL)
	write := func(name string, parts ...[]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(parts, nil), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := write("both.sctrace", clean, racy)
	code, stdout, stderr := runCLI(t, "check", both)
	if code != exitFindings || !strings.Contains(stdout, "error[reuse-while-in-flight]") || !strings.Contains(stdout, "in 2 traces") {
		t.Errorf("check clean+racy: exit %d\n%s%s", code, stdout, stderr)
	}
	if want := fmt.Sprintf("trace: %s (trace 2, at offset %d)", both, len(clean)); !strings.Contains(stdout, want) {
		t.Errorf("the second trace is not named %q:\n%s", want, stdout)
	}
	tail := write("tail.sctrace", clean, []byte("{\"op\":\"launch\"}\n"))
	code, stdout, stderr = runCLI(t, "check", tail)
	if code != exitDamaged || !strings.Contains(stdout+stderr, "data after the end record") {
		t.Errorf("check clean+garbage: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, cmd := range []string{"convert", "timeline", "explain"} {
		code, _, stderr = runCLI(t, cmd, both)
		if code != exitUsage || !strings.Contains(stderr, "another trace follows the first") {
			t.Errorf("%s clean+racy: exit %d, %s", cmd, code, stderr)
		}
	}
}

// TestNotATrace: an empty file (/dev/null, as empty stdin is), a JSON Lines file without
// events and a file in neither form are "not a trace" (exit 2, the file
// named), never a clean run of 0 events, nor damage (exit 3).
func TestNotATrace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, p := range []string{
		"/dev/null",
		write("empty.jsonl", ""),
		write("comments.jsonl", "# nothing recorded\n\n"),
		write("README.md", "# streamcheck\n\nstreamcheck finds races and misuse.\n"),
		write("log.jsonl", "{\"level\":\"info\",\"msg\":\"started\"}\n"),
	} {
		code, stdout, stderr := runCLI(t, "check", p)
		if code != exitUsage || !strings.Contains(stderr, "streamcheck: "+p+":") || !strings.Contains(stderr, "not a streamcheck trace") {
			t.Errorf("check %s: exit %d\n%s%s", p, code, stdout, stderr)
		}
	}
	// Starts as a trace and breaks later: damage.
	p := write("broken.jsonl", cleanJSONL+"{\"op\":\"launch\",\n")
	if code, _, stderr := runCLI(t, "check", p); code != exitDamaged {
		t.Errorf("check broken.jsonl: exit %d, %s", code, stderr)
	}
}

// TestHostileNames: a trace file name with a newline or an escape sequence
// cannot break or forge a line of the report or of stderr.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "x\nerror[use-after-free] forged\x1b[2K\u202e.jsonl")
	if err := os.WriteFile(name, []byte(racyJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	clean := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\u202e") {
			t.Errorf("%s holds a raw escape or override:\n%q", what, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "error[use-after-free] forged") {
				t.Errorf("%s has a forged line:\n%s", what, out)
			}
		}
	}
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, []byte(cleanJSONL), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "check", name, other) // two traces: findings name theirs
	if code != exitFindings || !strings.Contains(stdout, `x\nerror[use-after-free] forged\x1b[2K\u202e.jsonl`) {
		t.Errorf("check: exit %d, want the name escaped:\n%s", code, stdout)
	}
	clean("check's report", stdout)
	clean("check's stderr", stderr)
	for _, args := range [][]string{
		{"check", name + "-missing"},
		{"convert", name + "-missing"},
		{"timeline", name + "-missing"},
		{"explain", name + "-missing"},
		{"check", dir},
		{"convert", "--to", "jsonl", name},
	} {
		_, stdout, stderr := runCLI(t, args...)
		clean(args[0]+"'s stderr", stderr)
		if args[0] != "convert" {
			clean(args[0]+"'s stdout", stdout)
		}
	}
	if err := os.WriteFile(name, []byte(cleanJSONL+"{\"op\":\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr = runCLI(t, "check", name)
	clean("a damaged trace's report", stdout+stderr)
}
