package checker_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// TestSyncAuditCoversFrees frees memory of each family with its own API
// while a kernel on a non-blocking stream may still use it: a free the
// checker takes to wait for that kernel (no free-while-in-flight) must be
// covered by the sync audit's row for frees (model.OrderFreeWaits), and
// that row must name only frees that do wait.
func TestSyncAuditCoversFrees(t *testing.T) {
	waits := false
	for _, c := range []struct{ alloc, free string }{
		{`{"op":"malloc","ptr":"0x7f0000000000","size":4096}`, `{"op":"free","ptr":"0x7f0000000000"}`},
		{`{"op":"malloc","kind":"pitched","ptr":"0x7f0000000000","size":4096,"pitch":512,"height":8}`, `{"op":"free","ptr":"0x7f0000000000"}`},
		{`{"op":"malloc","kind":"managed","ptr":"0x7f0000000000","size":4096}`, `{"op":"free","ptr":"0x7f0000000000"}`},
		{`{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096}`, `{"op":"free","ptr":"0x7f0000000000"}`},
		{`{"op":"malloc","kind":"host","ptr":"0x7f0000000000","size":4096}`, `{"op":"free","kind":"host","ptr":"0x7f0000000000"}`},
		{`{"op":"malloc","kind":"registered","ptr":"0x7f0000000000","size":4096}`, `{"op":"free","kind":"unregister","ptr":"0x7f0000000000"}`},
	} {
		trace := strings.Join([]string{
			`{"op":"stream_create","stream":"s1","flags":"non_blocking"}`,
			`{"op":"stream_create","stream":"s2","flags":"non_blocking"}`,
			c.alloc,
			`{"op":"stream_sync","stream":"s1"}`,
			`{"op":"launch","stream":"s2","kernel":"k","ptrs":["0x7f0000000000"]}`,
			c.free,
		}, "\n")
		res, err := checker.Check("t.jsonl", model.NewJSONLReader(strings.NewReader(trace), "t.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		reported := false
		for _, f := range res.Findings {
			reported = reported || f.Rule == string(checker.RuleFreeWhileInFlight)
		}
		if reported {
			continue
		}
		waits = true
		covered := false
		for _, p := range model.SyncAudit() {
			covered = covered || p.Order == model.OrderFreeWaits && p.Covers(model.OpFree)
		}
		if !covered {
			t.Errorf("%s of memory from %s is taken to wait for the device, and the sync audit has no row for it", c.free, c.alloc)
		}
	}
	for _, p := range model.SyncAudit() {
		if p.Order == model.OrderFreeWaits && !waits {
			t.Errorf("audit row %q: no free is taken to wait", fmt.Sprint(p.Order))
		}
	}
}
