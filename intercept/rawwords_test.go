package intercept

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/model"
)

// A launch's parameter words are written unmatched (FLAG_RAW_WORDS) and
// matched by the reader (model/launchwords.go); STREAMCHECK_RAW_WORDS=0
// matches them in the shim, as before. The two must give every launch the
// same addresses and weak counts: the fake app's modes that pass pointer
// slots, descriptors, tables, freed and reused memory, and hundreds of
// addresses a launch.
func TestRawWordsMatchTheShimsMatching(t *testing.T) {
	b := build(t)
	for _, tc := range []struct {
		mode string
		env  []string
	}{
		{"basic", nil},
		{"aggregate", nil},
		{"slots", nil},
		{"churn", nil},
		{"bench", []string{"FAKE_TABLE=400", "FAKE_ITERS=3"}},
		{"loop", []string{"FAKE_ITERS=200"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			matched := run(t, b, tc.mode, inject, append([]string{"STREAMCHECK_RAW_WORDS=0"}, tc.env...)...)
			raw := run(t, b, tc.mode, inject, tc.env...)
			if a, b := exitDesc(matched.state), exitDesc(raw.state); a != b || a == "exit 1" {
				t.Fatalf("fakeapp %s: %s %q, then %s %q", tc.mode, a, matched.stderr, b, raw.stderr)
			}
			mt, rt := matched.onlyTrace(t), raw.onlyTrace(t)
			if n := rawLaunches(t, mt.path); n != 0 {
				t.Errorf("STREAMCHECK_RAW_WORDS=0 wrote %d raw launches", n)
			}
			launches := len(mt.launchPtrs())
			if n := rawLaunches(t, rt.path); n != launches || n == 0 {
				t.Errorf("%d raw launches written, want every launch's (%d)", n, launches)
			}
			sameLaunches(t, mt, rt)
		})
	}
}

// sameLaunches requires every launch of raw, whose words the reader matched,
// to have the addresses and weak count the shim gave the same launch of
// matched; it returns the weak counts.
func sameLaunches(t *testing.T, matched, raw trace) []uint32 {
	t.Helper()
	mp, rp := matched.launchPtrs(), raw.launchPtrs()
	mw, rw := matched.launchWeak(), raw.launchWeak()
	if len(mp) != len(rp) {
		t.Fatalf("%d launches matched in the shim, %d raw", len(mp), len(rp))
	}
	for i := range mp {
		if !slices.Equal(mp[i], rp[i]) || mw[i] != rw[i] {
			t.Fatalf("launch %d: shim matched %#x (%d weak), reader matched %#x (%d weak)", i+1, mp[i], mw[i], rp[i], rw[i])
		}
	}
	return mw
}

// rawLaunches counts the event records of the trace at path that carry
// FLAG_RAW_WORDS, reading the records as written.
func rawLaunches(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := model.NewRawReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != model.RecordEvent {
			continue
		}
		// Fields 1..15 of the payload: the flags are the 15th.
		p, flags := rec.Payload, uint64(0)
		for i := 0; i < 15 && len(p) > 0; i++ {
			v, k := binary.Uvarint(p)
			if k <= 0 {
				t.Fatalf("%s: event at offset %d: malformed field %d", path, rec.Offset, i+1)
			}
			flags, p = v, p[k:]
		}
		if flags&uint64(model.FlagRawWords) != 0 {
			n++
		}
	}
}

// The same through the interposed wrappers, reached through the PLT:
// drvbench's PyTorch-like launches (512-byte descriptors, 4 KiB tables of
// live tensors and stale words of freed ones, among 2,000 allocations).
func TestRawWordsThroughPLT(t *testing.T) {
	var traces [2]trace
	for i, env := range []string{"STREAMCHECK_RAW_WORDS=0", "STREAMCHECK_RAW_WORDS=1"} {
		dir := t.TempDir()
		_, stderr := drvRun(t, true, "launches", 400, env, "STREAMCHECK_STATS=1", "STREAMCHECK_DIR="+dir) // the last STREAMCHECK_DIR wins
		files, err := filepath.Glob(filepath.Join(dir, "streamcheck-*.sctrace"))
		if err != nil || len(files) != 1 {
			t.Fatalf("%s: traces %v, %v", env, files, err)
		}
		if traces[i] = readTrace(t, files[0]); traces[i].err != nil {
			t.Fatalf("%s: %v", env, traces[i].err)
		}
		// The stats say how many words went out raw, and the trace's size.
		var perLaunch float64
		var bytes int64
		for _, l := range strings.Split(stderr, "\n") {
			if _, rest, ok := strings.Cut(l, "parameter words looked up, "); ok {
				fmt.Sscanf(rest, "%g written raw", &perLaunch)
			}
			if _, rest, ok := strings.Cut(l, "stats: trace: "); ok {
				fmt.Sscanf(rest, "%d bytes", &bytes)
			}
		}
		fi, err := os.Stat(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != bytes {
			t.Errorf("%s: stats say %d trace bytes, the file has %d", env, bytes, fi.Size())
		}
		if raw := i == 1; (perLaunch > 0) != raw {
			t.Errorf("%s: %.1f words written raw a launch", env, perLaunch)
		}
	}
	weak := sameLaunches(t, traces[0], traces[1])
	if len(weak) < 400 {
		t.Fatalf("%d launches, want at least 400", len(weak))
	}
	tables := 0
	for _, w := range weak {
		if w >= 90 {
			tables++
		}
	}
	if n := rawLaunches(t, traces[1].path); n != len(weak) {
		t.Errorf("%d raw launches of %d", n, len(weak))
	}
	if tables == 0 {
		t.Error("no launch matched a table's tensors")
	}
}
