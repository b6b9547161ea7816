package checker_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/golden"
	"github.com/streamcheck/streamcheck/model"
)

// Each kind of stream-memory-op warning says why its ordering is not
// followed: the goldens check which operations are reported, this checks
// what the report says of each.
func TestStreamMemOpMessages(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		seq     uint64
		message string
		why     string
	}{
		{"stream_mem_op_wrong_value_racy", 7, "waits for a value that no write recorded before it gives", "None can meet this one"},
		{"stream_mem_op_wait_first_racy", 5, "waits for a value that no write recorded before it gives", "a write issued after the wait"},
		{"stream_mem_op_no_barrier_racy", 7, "waits for a value written without a memory barrier", "CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER"},
		{"stream_mem_op_unread_ok", 6, "writes a value that no recorded wait reads", "If the host or a kernel waits for the value"},
		{"stream_mem_op_captured_racy", 6, "waits for a value in a graph", "graph's memory operations"},
		{"stream_mem_op_unmodelled_racy", 6, "orders work through memory, which streamcheck does not follow", "recorded by an older streamcheck"},
		{"stream_mem_op_late_write_racy", 10, "writes a value that an earlier wait may have read first", "races after it may be missed"},
		{"stream_mem_op_graph_write_racy", 6, "writes a value in a graph", "races after it may be missed"},
		{"stream_mem_op_graph_write_racy", 13, "waits for a value that a graph may write", "at the graph's launches"},
		{"stream_mem_op_atomic_racy", 11, "of a type streamcheck does not know", "cannot tell what memory it changes"},
		{"stream_mem_op_atomic_racy", 13, "after a stream memory operation streamcheck cannot read", "no wait after it is followed"},
		{"stream_mem_op_reused_flag_ok", 9, "writes a value that no recorded wait reads", "No cuStreamWaitValue*"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			ar, err := txtar.ParseFile(golden.CheckerFile(t, "testdata", tc.golden))
			if err != nil {
				t.Fatal(err)
			}
			var trace []byte
			for _, f := range ar.Files {
				if f.Name == "trace.jsonl" {
					trace = f.Data
				}
			}
			res, err := checker.Check("t", model.NewJSONLReader(strings.NewReader(string(trace)), "t"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Rule != string(checker.RuleStreamMemOp) || f.Ops[0].Seq != tc.seq {
					continue
				}
				if !strings.Contains(f.Message, tc.message) || !strings.Contains(f.Why, tc.why) || f.Fix == "" {
					t.Errorf("message %q\nwhy %q\nfix %q\nwant %q and %q", f.Message, f.Why, f.Fix, tc.message, tc.why)
				}
				return
			}
			t.Fatalf("no stream-memory-op finding at #%d", tc.seq)
		})
	}
}

// A wait whose condition streamcheck does not know is reported as such.
func TestStreamMemOpUnknownCondition(t *testing.T) {
	const trace = `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"stream_create","stream":"s2","flags":"non_blocking"}
{"op":"stream_mem_op","stream":"s1","ptr":"0x7e0000000000","mem_op":"write32","value":1}
{"op":"stream_mem_op","stream":"s2","ptr":"0x7e0000000000","mem_op":"wait32","value":1,"mem_flags":9}
`
	res, err := checker.Check("t", model.NewJSONLReader(strings.NewReader(trace), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Message, "in a way streamcheck cannot follow") {
		for _, f := range res.Findings {
			t.Logf("%s #%d: %s", f.Rule, f.Ops[0].Seq, f.Message)
		}
		t.Fatalf("want one finding about the unknown condition")
	}
}
