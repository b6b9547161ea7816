package intercept

import (
	"bytes"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// TestHostFnTrampoline: the trampoline the shim puts in place of a host
// function records the run on the thread that runs it, with the token of
// its host_func, before it calls the program's function, which runs once
// with its argument (the program returns non-zero otherwise). A program
// that frees, on its own thread, only once a host function told it so is
// clean; the same trace with the runs left out is not.
func TestHostFnTrampoline(t *testing.T) {
	const program = `
CUstream s1, s2;
RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s1, 0, (CUstream)0x510000));
RT("cudaStreamCreate_v3020", d_stream_create("cuStreamCreate", &s2, 0, (CUstream)0x520000));
fk_set_stream_flags(s1, 1, 0);
fk_set_stream_flags(s2, 1, 0);
CUdeviceptr d = 0;
cuMemAllocAsync_params ap = {&d, 4096, s1};
fk_driver_enter("cuMemAllocAsync", &ap, NULL);
d = fk_device_alloc(4096);
fk_driver_exit("cuMemAllocAsync", &ap, 0, NULL);
CUevent e;
cuEventCreate_params ec = {&e, 0};
fk_driver_enter("cuEventCreate", &ec, NULL);
e = (CUevent)0x4400;
fk_driver_exit("cuEventCreate", &ec, 0, NULL);
cuEventRecord_params er = {e, s1};
d_call("cuEventRecord", &er, 0);
cuStreamWaitEvent_params w = {s2, e, 0};
d_call("cuStreamWaitEvent", &w, 0);
static char host[4096];
cuMemcpyDtoHAsync_v2_params cp = {host, d, 4096, s2};
d_call("cuMemcpyDtoHAsync_v2", &cp, 0);
app_hostfn_arg a = {0, s1, 0}; /* its query asks of s1: it orders nothing of s2 */
cuLaunchHostFunc_params hf = {s2, app_host_fn, &a};
fk_driver_enter("cuLaunchHostFunc", &hf, NULL);
cuLaunchHostFunc(s2, hf.fn, hf.userData);
fk_driver_exit("cuLaunchHostFunc", &hf, 0, NULL);
fk_run_host_funcs();
if (a.runs != 1) return 4;
d_free_async("cuMemFreeAsync", d, s1);
`
	tr := runCaseProgram(t, []byte(program), caseSetup{})
	var enq, ran *model.Event
	for i := range tr.events {
		ev := &tr.events[i]
		switch ev.Op {
		case model.OpHostFunc:
			enq = ev
		case model.OpHostFnRun:
			ran = ev
			if i+1 >= len(tr.events) || tr.events[i+1].Op != model.OpStreamQuery || tr.events[i+1].TID != ev.TID {
				t.Errorf("the run's record is not followed by the host function's own call on its thread")
			}
		}
	}
	if enq == nil || ran == nil {
		t.Fatalf("host_func %v, host_fn_run %v: want both", enq, ran)
	}
	if enq.Value == 0 || ran.Value != enq.Value {
		t.Errorf("tokens: host_func %d, host_fn_run %d: want the same, not 0", enq.Value, ran.Value)
	}
	if ran.TID == enq.TID {
		t.Errorf("host_fn_run on thread %d, the enqueuing thread: want the thread that ran it", ran.TID)
	}
	if rules := caseFindings(t, tr.path); len(rules) != 0 {
		t.Errorf("findings %q on a free the host function ordered: want none", rules)
	}
	// Without the run records, the free is not ordered after the copy.
	var buf bytes.Buffer
	w := model.NewJSONLWriter(&buf)
	for i := range tr.events {
		if tr.events[i].Op != model.OpHostFnRun {
			if err := w.WriteEvent(&tr.events[i], tr.tab); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := checker.Check("without-runs.jsonl", model.NewJSONLReader(&buf, "without-runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Rule != string(checker.RuleFreeWhileInFlight) {
		t.Errorf("without the runs: %d findings, want one free-while-in-flight", len(res.Findings))
	}
}
