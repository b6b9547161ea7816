package checker_test

import (
	"bytes"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// A symbolizer adds strings to the tables. Findings must be resolved only
// after the whole trace is read: interning while a binary reader still
// defines strings would break its dense string ids (a real GPU trace read as
// "corrupt string record" this way).
func TestSymbolizeDoesNotDisturbStreamingReader(t *testing.T) {
	src := model.NewTables()
	src.Stacks = append(src.Stacks, []model.Frame{{PC: 0x1234}})
	api := func(s string) model.StringID { return src.Intern(s) }
	events := []model.Event{
		{Op: model.OpStreamCreate, Stream: 0x10, API: api("cuStreamCreate")},
		{Op: model.OpStreamCreate, Stream: 0x20, API: api("cuStreamCreate")},
		{Op: model.OpMallocAsync, Stream: 0x10, Ptr: 0x7f00, Size: 64, API: api("cudaMallocAsync"), Stack: 1},
		{Op: model.OpLaunch, Stream: 0x20, Ptrs: []uint64{0x7f00}, API: api("cudaLaunchKernel"), Kernel: api("k"), Stack: 1},
		// Strings first defined after the finding above.
		{Op: model.OpStreamSync, Stream: 0x20, API: api("cudaStreamSynchronize")},
		{Op: model.OpDeviceSync, API: api("cudaDeviceSynchronize")},
		{Op: model.OpFreeAsync, Stream: 0x10, Ptr: 0x7f00, API: api("cudaFreeAsync")},
	}
	data, err := model.EncodeBinary(src, events)
	if err != nil {
		t.Fatal(err)
	}
	r, err := model.NewBinaryReader(bytes.NewReader(data), "t.sctrace")
	if err != nil {
		t.Fatal(err)
	}
	symbolized := 0
	res, err := checker.CheckWith("t.sctrace", r, checker.Options{Symbolize: func(tb *model.Tables, id model.StackID) {
		for i := range tb.Stacks[id] {
			tb.Stacks[id][i].Func = tb.Intern("resolved_function")
			symbolized++
		}
	}})
	if err != nil || res.Damage != nil {
		t.Fatalf("err %v, damage %v", err, res.Damage)
	}
	if len(res.Findings) != 1 || res.Findings[0].Rule != string(checker.RuleUseBeforeAlloc) {
		t.Fatalf("findings = %v, want one use-before-alloc", res.Findings)
	}
	if symbolized == 0 || res.Findings[0].Ops[0].Stack[0].Func != "resolved_function" {
		t.Errorf("stack not symbolized: %+v", res.Findings[0].Ops[0].Stack)
	}
}
