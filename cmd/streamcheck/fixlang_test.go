package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFixLanguageGolden: the fix of each finding of the committed PyTorch
// and CuPy recordings is worded in the program's language (wait_stream,
// record_stream and torch.cuda.Event; Stream.wait_event, Event.record and
// Stream.use), naming the streams as the program does, read from its
// source; the CUDA C++ programs' fixes stay in the runtime API's words.
// Run from the repository root, where the recordings' source paths lead.
// testdata/golden/fixes.txt holds the fix lines; go test -update rewrites it.
func TestFixLanguageGolden(t *testing.T) {
	golden, err := filepath.Abs("testdata/golden/fixes.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	var all strings.Builder
	for _, c := range []string{
		"torch_missing_record_stream_racy-py", "torch_cross_stream_racy-py", "torch_prefetch_racy-py",
		"torch_graph_output_racy-py", "torch_cuda_graph_racy-py", "cupy_async_pool_racy-py",
		"reuse_while_in_flight_racy-shared", "torch_nccl_side_stream_racy-py", "torch_nccl_async_work_racy-py",
		"torch_nccl_bucket_racy-py", "cupy_nccl_racy-py",
	} {
		out, _, _ := checkInProcess(t, "--source-root", ".", filepath.Join("testdata", "real", c))
		all.WriteString("== " + c + "\n")
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  fix: ") {
				all.WriteString(l + "\n")
			}
		}
	}
	got := all.String()
	matchGolden(t, golden, got)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile("(?m)^== torch_missing_record_stream_racy-py\n  fix: Call `x.record_stream\\(s2\\)`.*`s1.wait_stream\\(s2\\)`.*torch.cuda.Event"),
		regexp.MustCompile("(?m)^== torch_cross_stream_racy-py\n  fix: Make `s2` wait for `s1`: call `s2.wait_stream\\(s1\\)`"),
		regexp.MustCompile("(?m)^== cupy_async_pool_racy-py\n  fix: .*`e = s1.record\\(\\)`.*`s2.wait_event\\(e\\)`.*`s1.use\\(\\)`"),
		regexp.MustCompile("(?m)^== reuse_while_in_flight_racy-shared\n  fix: .*\\(cudaStreamWaitEvent\\)"),
		regexp.MustCompile("(?m)^== torch_nccl_side_stream_racy-py\n  fix: .*wait_stream.*torch.distributed orders its NCCL stream"),
		regexp.MustCompile("(?m)^== torch_nccl_async_work_racy-py\n  fix: Call `work.wait\\(\\)`.*record_stream"),
		regexp.MustCompile("(?m)^== torch_nccl_bucket_racy-py\n  fix: Call `work.wait\\(\\)`.*record_stream"),
		regexp.MustCompile("(?m)^== cupy_nccl_racy-py\n  fix: .*`e = s1.record\\(\\)`.*`s2.wait_event\\(e\\)`"),
	} {
		if !want.MatchString(got) {
			t.Errorf("fixes do not match %s:\n%s", want, got)
		}
	}
}
