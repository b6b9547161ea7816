package checker

import (
	"fmt"

	"github.com/ianlancetaylor/demangle"
	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Presentation: at Finish, a finding's operations are resolved into names,
// streams and stacks, and its rule explains it.

// resolveFinding fills a finding's operations and explanation.
func (c *Checker) resolveFinding(p *pendingFinding) {
	f := p.f
	proc := c.tables.Process
	f.PID, f.Exe, f.Command = proc.PID, c.tables.String(proc.Exe), c.tables.String(proc.Args)
	if p.capture != hb.HostAgent {
		f.Capture = c.StreamName(c.engine.Agent(p.capture))
		f.captureRef = c.streamRefOf(p.capture)
	}
	if p.hasAlloc {
		f.Alloc = &Alloc{Ptr: p.base, Size: p.size, Op: c.resolve("allocation", &p.alloc)}
		f.Alloc.Import = c.importOf(&p.alloc)
	}
	f.Ops = append(f.Ops, c.resolve(p.rule.roleOf(p.memNote), &p.op))
	if p.hasOther {
		f.Ops = append(f.Ops, c.resolve(p.rule.otherRole(), &p.other))
	}
	ops := make([]*Op, 0, 3)
	if f.Alloc != nil {
		ops = append(ops, &f.Alloc.Op)
	}
	for i := range f.Ops {
		ops = append(ops, &f.Ops[i])
	}
	tellApart(ops)
	c.explain(f, p.rule, p)
	f.Allocations = len(p.allocs)
	c.explainAlso(f, p.rule, p.also)
	firstMentionOnly(f, ops)
}

// resolve turns an access into a reportable Op with names from the tables.
func (c *Checker) resolve(role string, a *access) Op {
	o := Op{
		Role: role, Seq: a.seq, API: c.tables.String(a.api), Op: a.op.String(), TID: a.tid,
		Ptr: a.ptr, StackID: a.stack, Agent: a.agent, Rejected: a.rejected,
	}
	if a.op == model.OpCollective {
		o.Bytes = unpackCollectiveBytes(a.kernel)
	} else {
		o.Kernel = kernelName(c.tables.String(a.kernel))
	}
	if o.API == "" {
		o.API = a.op.String()
	}
	if a.agent != hb.HostAgent {
		ag := c.engine.Agent(a.agent)
		o.Stream = c.StreamName(ag)
		o.StreamKind = ag.Kind.String()
		if c.engine.Devices() > 1 {
			d := ag.Device
			o.Device = &d // Said only when it tells streams apart.
		}
		o.StreamHandle = ag.Handle
		var site streamSite
		if role != "" {
			site = c.streamSite(a.agent)
			o.StreamCreatedAt, o.StreamFirstUsedAt = site.created, site.firstUsed
		}
		o.StreamName, o.StreamRef = c.streamNaming(ag, site)
	}
	o.Stack, o.FoldedFrames, o.API = c.frames(a.stack, o.API)
	o.Stack, o.FoldedFrames = dropLaunchStub(o.Stack, o.Kernel, o.FoldedFrames)
	if a.op == model.OpGraphLaunch && role != "" {
		if n, ok := c.graphNodeOf(a, role); ok {
			node := c.resolve("", &n) // no role: its own graph node is not looked for
			node.Role = "in the graph"
			if n.agent != hb.HostAgent {
				node.StreamName, node.StreamRef = c.streamNaming(c.engine.Agent(n.agent), c.streamSite(n.agent))
			}
			o.GraphNode = &node
		}
	}
	return o
}

// kernelName demangles a C++ kernel name for reports, dropping parameter
// and template argument lists, which make CUDA kernel names unreadable
// ("at::native::vectorized_elementwise_kernel").
func kernelName(mangled string) string {
	return demangle.Filter(mangled, demangle.NoParams, demangle.NoTemplateParams)
}

// StreamName returns a stream's display name: the name the trace gives it,
// or a description of a default stream, or its handle.
func (c *Checker) StreamName(a *hb.Agent) string {
	switch a.Kind {
	case hb.KindHost:
		return "host"
	// Each device has its own default streams: name the device, but for
	// device 0 (most programs, and their reports stay as they were).
	case hb.KindLegacy:
		if a.Device != 0 {
			return fmt.Sprintf("legacy(device %d)", a.Device)
		}
		return "legacy"
	case hb.KindPerThread:
		if a.Device != 0 {
			return fmt.Sprintf("per_thread(tid %d, device %d)", a.TID, a.Device)
		}
		return fmt.Sprintf("per_thread(tid %d)", a.TID)
	}
	if n := c.tables.Name(model.ObjectStream, a.Handle); n != "" {
		return n
	}
	// Recorded programs name no streams: number them in creation order,
	// which the report ties to code with the creation site. The engine only
	// appends agents, so the count of streams up to each one is kept as
	// agents appear, rather than counted per name.
	for i := len(c.streamRank); i < c.engine.NumAgents(); i++ {
		n := uint32(0)
		if i > 0 {
			n = c.streamRank[i-1]
		}
		if k := c.engine.Kind(hb.AgentID(i)); k == hb.KindBlocking || k == hb.KindNonBlocking {
			n++
		}
		c.streamRank = append(c.streamRank, n)
	}
	return fmt.Sprintf("s%d", c.streamRank[a.ID])
}

// resolvedStack is what frames makes of one stack for one recorded API.
type resolvedStack struct {
	frames []Frame // The program's own frames, shared by every Op of the stack.
	folded int
	api    string
}

// frames returns the program's own frames of a stack, how many were folded
// away, and the API to report for a call recorded as api: the runtime
// function the program called when the shim recorded the driver call it
// made (cudaMallocAsync for cuMemAllocAsync), found in the stack. Reports
// never change frames, so Ops of one stack share them: findings of a loop
// or of one allocation site hold one copy.
func (c *Checker) frames(stack model.StackID, api string) ([]Frame, int, string) {
	key := stackAPI{stack, api}
	if r, ok := c.resolvedStacks[key]; ok {
		return r.frames, r.folded, r.api
	}
	if c.opts.Symbolize != nil && stack != 0 {
		c.opts.Symbolize(c.tables, stack)
	}
	// The whole stack goes into scratch space: what is kept is userFrames'
	// copy of the program's own frames.
	full := c.frameScratch[:0]
	for _, f := range c.tables.Stack(stack) {
		fr := Frame{Func: c.tables.String(f.Func), File: c.tables.String(f.File), Line: int(f.Line), PC: f.PC}
		if f.Module != 0 {
			m := c.tables.Module(f.Module)
			fr.Module = c.tables.String(m.Path)
			if f.PC >= m.Base {
				fr.PC = f.PC - m.Base
			}
		}
		full = append(full, fr)
	}
	c.frameScratch = full
	r := resolvedStack{api: api}
	if isDriverAPI(api) {
		if rt := runtimeAPI(full); rt != "" {
			r.api = rt
		}
	}
	r.frames, r.folded = userFrames(full)
	if c.resolvedStacks == nil {
		c.resolvedStacks = map[stackAPI]resolvedStack{}
	}
	c.resolvedStacks[key] = r
	return r.frames, r.folded, r.api
}

// stackAPI keys resolvedStacks.
type stackAPI struct {
	stack model.StackID
	api   string
}
