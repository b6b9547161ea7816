package checker_test

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// A collective is named by its call and size in a report, and a fix for
// one issued from Python says what to do in torch.distributed's terms.
func TestCollectiveReports(t *testing.T) {
	for _, tc := range []struct {
		file            string
		message, fixHas string
	}{
		{"collective_side_stream_racy", "ncclAllReduce of 16 MiB on stream nccl uses 16777216 bytes at 0x7f0000000000 before its allocation is ordered before it",
			"wait_stream"},
		{"collective_bucket_free_racy", "cudaFreeAsync on the legacy default stream frees 4194304 bytes at 0x7f0000000000 while ncclAllReduce of 4 MiB on stream nccl may still be using it",
			"record_stream"},
		{"collective_bucket_free_racy", "", "work.wait()"},
		{"collective_group_racy", "cudaFreeAsync on stream s1 frees 1024 bytes at 0x7f0000100000 while ncclRecv of 1 KiB on stream s2 may still be using it",
			"Record an event on stream s2 after the ncclRecv at app.cu:15 and make stream s1 wait on it"},
		{"collective_use_after_free_racy", "ncclAllGather of 8 KiB on stream s1", ""},
	} {
		ar, err := txtar.ParseFile("testdata/" + tc.file + ".txtar")
		if err != nil {
			t.Fatal(err)
		}
		res := analyzeGolden(t, ar.Comment, ar.Files[0].Data)
		if len(res.Findings) != 1 {
			t.Fatalf("%s: %d findings, want 1", tc.file, len(res.Findings))
		}
		f := res.Findings[0]
		if !strings.HasPrefix(f.Message, tc.message) {
			t.Errorf("%s: message %q, want it to start %q", tc.file, f.Message, tc.message)
		}
		if !strings.Contains(f.Fix, tc.fixHas) {
			t.Errorf("%s: fix %q does not say %q", tc.file, f.Fix, tc.fixHas)
		}
	}
}

// The fix for a collective from C or C++ is the event hand-off.
func TestCollectiveFixNotPython(t *testing.T) {
	data, err := os.ReadFile("testdata/collective_group_racy.txtar")
	if err != nil {
		t.Fatal(err)
	}
	ar := txtar.Parse(data)
	f := analyzeGolden(t, ar.Comment, ar.Files[0].Data).Findings[0]
	for _, py := range []string{"work.wait()", "record_stream", "wait_stream"} {
		if strings.Contains(f.Fix, py) {
			t.Errorf("fix of a C++ program names %s: %q", py, f.Fix)
		}
	}
}
