package checker_test

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/model"
)

// A report of a graph launch names the operation in the graph that made
// the use, free or allocation: the captured kernel, the node added by
// hand, the captured allocation of an output.
func TestGraphLaunchNamesItsNode(t *testing.T) {
	const trace = `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"stream_create","stream":"s2","flags":"non_blocking"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000002000","size":4096,"site":"g.cu:9"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"g.cu:10"}
{"op":"capture_begin","stream":"s1","site":"g.cu:11"}
{"op":"launch","stream":"s1","kernel":"first","ptrs":["0x7f0000002000"],"site":"g.cu:12"}
{"op":"launch","stream":"s1","kernel":"scale","ptrs":["0x7f0000000000"],"site":"g.cu:13"}
{"op":"malloc_async","stream":"s1","ptr":"0x7e0000000000","size":64,"site":"g.cu:14"}
{"op":"capture_end","stream":"s1","graph":"g1","site":"g.cu:15"}
{"op":"launch","stream":"legacy","graph":"g1","kernel":"added","ptrs":["0x7f0000000100"],"api":"cudaGraphAddKernelNode","site":"g.cu:16"}
{"op":"graph_instantiate","graph":"g1","exec":"x1","lifetime":true,"site":"g.cu:17"}
{"op":"graph_launch","stream":"s1","exec":"x1","site":"g.cu:18"}
{"op":"free_async","stream":"s2","ptr":"0x7f0000000000","site":"g.cu:19"}
{"op":"free_async","stream":"s2","ptr":"0x7f0000002000","site":"g.cu:22"}
{"op":"launch","stream":"s2","kernel":"late","ptrs":["0x7e0000000000"],"site":"g.cu:20"}
{"op":"device_sync"}
{"op":"free_async","stream":"s1","ptr":"0x7e0000000000","site":"g.cu:21"}
`
	res, err := checker.Check("g.jsonl", model.NewJSONLReader(strings.NewReader(trace), "g.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	nodeOf := func(rule, role string, alloc uint64) *checker.Op {
		for _, f := range res.Findings {
			if f.Rule != rule || f.Alloc == nil || f.Alloc.Ptr != alloc {
				continue
			}
			if role == "allocation" {
				return f.Alloc.Op.GraphNode
			}
			for i := range f.Ops {
				if f.Ops[i].Role == role {
					return f.Ops[i].GraphNode
				}
			}
		}
		t.Fatalf("no %s finding on 0x%x with a %s: %+v", rule, alloc, role, res.Findings)
		return nil
	}
	// (The two frees are at two sites: frees of both at one site would be
	// one finding, about the first.)
	// The free of x races the launch's last use of x, at x+0x100: the
	// node added by hand (the captured scale kernel's use came first).
	if n := nodeOf(string(checker.RuleFreeWhileInFlight), "earlier use", 0x7f0000000000); n == nil || n.Seq != 10 || n.API != "cudaGraphAddKernelNode" || n.Kernel != "added" {
		t.Errorf("x's earlier use's graph node is %+v, want the kernel node added by hand (#10)", n)
	}
	// The free of y races the captured kernel that uses it.
	if n := nodeOf(string(checker.RuleFreeWhileInFlight), "earlier use", 0x7f0000002000); n == nil || n.Seq != 6 || n.Kernel != "first" {
		t.Errorf("y's earlier use's graph node is %+v, want the captured launch of first (#6)", n)
	}
	// The output is allocated by the launch: the captured allocation.
	if n := nodeOf(string(checker.RuleUseBeforeAlloc), "allocation", 0x7e0000000000); n == nil || n.Seq != 8 || n.API != "cudaMallocAsync" {
		t.Errorf("the allocation's graph node is %+v, want the captured cudaMallocAsync (#8)", n)
	}
	// A call that is no graph launch names none.
	for _, f := range res.Findings {
		for _, o := range f.Ops {
			if o.Op != model.OpGraphLaunch.String() && o.GraphNode != nil {
				t.Errorf("%s %s: graph node %+v on a %s", f.Rule, o.Role, o.GraphNode, o.Op)
			}
		}
	}
}

// A graph that frees memory from outside it names its captured free, not a
// captured use of the same address, when it is reported as the free.
func TestGraphLaunchNamesItsFree(t *testing.T) {
	const trace = `{"op":"stream_create","stream":"s1","flags":"non_blocking"}
{"op":"stream_create","stream":"s2","flags":"non_blocking"}
{"op":"malloc_async","stream":"s1","ptr":"0x7f0000000000","size":4096,"site":"f.cu:9"}
{"op":"device_sync"}
{"op":"capture_begin","stream":"s1","site":"f.cu:11"}
{"op":"launch","stream":"s1","kernel":"reader","ptrs":["0x7f0000000000"],"site":"f.cu:12"}
{"op":"free_async","stream":"s1","ptr":"0x7f0000000000","site":"f.cu:13"}
{"op":"capture_end","stream":"s1","graph":"g1","site":"f.cu:14"}
{"op":"graph_instantiate","graph":"g1","exec":"x1","lifetime":true,"site":"f.cu:15"}
{"op":"graph_launch","stream":"s1","exec":"x1","site":"f.cu:16"}
{"op":"launch","stream":"s2","kernel":"late","ptrs":["0x7f0000000000"],"site":"f.cu:17"}
{"op":"free_async","stream":"s2","ptr":"0x7f0000000000","site":"f.cu:18"}
`
	res, err := checker.Check("f.jsonl", model.NewJSONLReader(strings.NewReader(trace), "f.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range res.Findings {
		for _, o := range f.Ops {
			if o.Role == "free" && o.Op == model.OpGraphLaunch.String() {
				n++
				if g := o.GraphNode; g == nil || g.Seq != 7 || g.API != "cudaFreeAsync" || g.Role != "in the graph" {
					t.Errorf("%s: the launch's graph node is %+v, want the captured cudaFreeAsync (#7)", f.Rule, g)
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("%d findings name the launch as the free, want 2 (use after free, double free)", n)
	}
}
