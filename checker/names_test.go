package checker_test

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// TestDefaultStreamNamesNameTheDevice: each device has its own default
// streams, so a report about two of them names the device of any but
// device 0's; otherwise it would read "different streams (legacy, legacy)".
func TestDefaultStreamNamesNameTheDevice(t *testing.T) {
	const trace = `{"op":"malloc_async","stream":"legacy","device":0,"ptr":"0x7f0000000000","size":64}
{"op":"launch","stream":"legacy","device":1,"kernel":"k","ptrs":["0x7f0000000000"]}
{"op":"malloc_async","stream":"per_thread","tid":3,"device":0,"ptr":"0x7f1000000000","size":64}
{"op":"launch","stream":"per_thread","tid":3,"device":2,"kernel":"k","ptrs":["0x7f1000000000"]}
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
		got = append(got, f.Ops[0].Stream+" after "+f.Ops[1].Stream)
	}
	want := []string{"legacy(device 1) after legacy", "per_thread(tid 3, device 2) after per_thread(tid 3)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("streams named %q, want %q", got, want)
	}
}
