package checker_test

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// TestStreamSites: streams made through one inlined helper are told apart
// by their callers' lines (inlined frames share the caller's address, so
// frames compare by source line); streams made in one loop, whose
// creations are identical, are placed where the program first used them.
func TestStreamSites(t *testing.T) {
	const trace = `{"op":"stream_create","stream":"0x1000","flags":"non_blocking","stack":[{"pc":"0x401010","func":"make_stream","file":"common.cuh","line":199},{"pc":"0x401010","func":"main","file":"app.cu","line":12}]}
{"op":"stream_create","stream":"0x2000","flags":"non_blocking","stack":[{"pc":"0x401020","func":"make_stream","file":"common.cuh","line":199},{"pc":"0x401020","func":"main","file":"app.cu","line":13}]}
{"op":"stream_create","stream":"0x3000","flags":"non_blocking","stack":["make_streams app.cu:30","main app.cu:40"]}
{"op":"stream_create","stream":"0x4000","flags":"non_blocking","stack":["make_streams app.cu:30","main app.cu:40"]}
{"op":"malloc_async","stream":"0x1000","ptr":"0x7f0000000000","size":64,"stack":["main app.cu:15"]}
{"op":"launch","stream":"0x2000","kernel":"k","ptrs":["0x7f0000000000"],"stack":["main app.cu:16"]}
{"op":"event_record","stream":"0x4000","event":"e","stack":["main app.cu:41"]}
{"op":"malloc_async","stream":"0x3000","ptr":"0x7f0000001000","size":64,"stack":["main app.cu:42"]}
{"op":"launch","stream":"0x4000","kernel":"k","ptrs":["0x7f0000001000"],"stack":["main app.cu:43"]}
`
	res, err := checker.Check("t.jsonl", model.NewJSONLReader(strings.NewReader(trace), "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Rule != string(checker.RuleUseBeforeAlloc) {
			continue
		}
		for _, o := range f.Ops { // the use, then the allocation
			got = append(got, o.Stream+": created "+o.StreamCreatedAt+"; first used "+o.StreamFirstUsedAt)
		}
	}
	want := []string{
		"s2: created main app.cu:13 (via make_stream); first used ",
		"s1: created main app.cu:12 (via make_stream); first used ",
		"s4: created make_streams app.cu:30; first used main app.cu:41",
		"s3: created make_streams app.cu:30; first used main app.cu:42",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("streams placed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
