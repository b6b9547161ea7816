package checker

import (
	"fmt"
	"sort"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// firstUse is the first call on a stream made from the program's code.
type firstUse struct {
	a  access
	ok bool
}

// streamSite says where a report places a stream (Op.StreamCreatedAt and
// Op.StreamFirstUsedAt).
type streamSite struct{ created, firstUsed string }

// usedByProgram reports whether the program's first call on a stream was
// seen (a slice index: it is asked at every event).
func (c *Checker) usedByProgram(id hb.AgentID) bool {
	return int(id) >= 0 && int(id) < len(c.firstUse) && c.firstUse[id].ok
}

// noteFirstUse remembers ev if it is the first call on its stream whose
// stack has a frame of the program: a stream a pool made earlier is placed
// where the program first used it. Once one is found, each later call
// costs a slice index.
func (c *Checker) noteFirstUse(ev *model.Event, st *hb.Step) {
	id := int(st.Agent)
	if id < 0 || ev.Failed() || !c.programStack(ev.Stack) {
		return
	}
	if id >= len(c.firstUse) {
		c.firstUse = append(c.firstUse, make([]firstUse, id+1-len(c.firstUse))...)
	}
	c.firstUse[id] = firstUse{a: c.accessOf(ev, st, 0), ok: true}
}

// programStack reports whether a recorded stack has a frame that is not
// CUDA's, the C runtime's or streamcheck's (see runtimeFrame). Stacks are
// looked at once each.
func (c *Checker) programStack(id model.StackID) bool {
	if ok, seen := c.programStacks[id]; seen {
		return ok
	}
	if c.programStacks == nil {
		c.programStacks = map[model.StackID]bool{}
	}
	ok := false
	for _, f := range c.tables.Stack(id) {
		fr := Frame{Func: c.tables.String(f.Func), File: c.tables.String(f.File)}
		if f.Module != 0 {
			fr.Module = c.tables.String(c.tables.Module(f.Module).Path)
		}
		if !runtimeFrame(fr) {
			ok = true
			break
		}
	}
	c.programStacks[id] = ok
	return ok
}

// streamSite returns where reports place a stream, computing the places
// of all streams the first time: telling streams apart needs all of their
// creations.
func (c *Checker) streamSite(id hb.AgentID) streamSite {
	if c.streamSites == nil {
		c.streamSites = c.placeStreams()
	}
	if s, ok := c.streamSites[id]; ok {
		return s
	}
	if _, ok := c.created[id]; ok {
		return streamSite{}
	}
	return streamSite{firstUsed: c.firstUseSite(id)} // made before recording began
}

// firstUseSite returns the site of the program's first call on a stream,
// or "".
func (c *Checker) firstUseSite(id hb.AgentID) string {
	if int(id) < 0 || int(id) >= len(c.firstUse) || !c.firstUse[id].ok {
		return ""
	}
	o := c.resolve("", &c.firstUse[id].a)
	return o.Site()
}

// placeStreams names where each created stream was made.
//
// A helper that creates every stream (a make_stream function) is the
// innermost frame of all their creations, and naming it says nothing
// about which stream is which. So each creation is compared with the
// others: when the frames it shares with another from the innermost out
// cover its site (the frame Site names), the stream is placed at the first
// frame where they differ, the line that called the helper, "main
// app.cu:12 (via make_stream)". A creation identical to another's (streams
// made in one loop, a pool's: PyTorch makes its pool's streams at the
// first torch.cuda.Stream(), whichever stream the program later gets) or
// synthesized for a stream first seen in use is no help: the stream is
// placed where the program first used it. A creation recorded without a
// stack places the stream nowhere.
func (c *Checker) placeStreams() map[hb.AgentID]streamSite {
	type creation struct {
		id       hb.AgentID
		frames   []Frame
		site     int // Index of the frame Site names; -1 without a stack.
		implicit bool
		op       Op
	}
	ids := make([]hb.AgentID, 0, len(c.created))
	for id := range c.created {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	cs := make([]creation, 0, len(ids))
	for _, id := range ids {
		cr := c.created[id]
		cc := creation{id: id, site: -1, implicit: c.engine.Agent(id).Implicit}
		if cr.stack != 0 {
			cc.op = c.resolve("", &cr)
			cc.frames, cc.site = cc.op.Stack, cc.op.SiteFrame()
		}
		cs = append(cs, cc)
	}
	sites := make(map[hb.AgentID]streamSite, len(cs))
	for i := range cs {
		x := &cs[i]
		if x.implicit {
			sites[x.id] = streamSite{firstUsed: c.firstUseSite(x.id)}
			continue
		}
		if x.site < 0 {
			continue // created without a stack: the trace has none to place it
		}
		shared := 0 // The most innermost frames x shares with another creation.
		for j := range cs {
			if j != i && cs[j].site >= 0 {
				shared = max(shared, sharedFrames(x.frames, cs[j].frames))
			}
		}
		switch {
		case shared >= len(x.frames): // made where another was: no help
			sites[x.id] = streamSite{created: x.op.Site(), firstUsed: c.firstUseSite(x.id)}
		case shared > x.site:
			sites[x.id] = streamSite{created: fmt.Sprintf("%s (via %s)", x.frames[shared], helperName(x.frames[shared-1]))}
		default:
			sites[x.id] = streamSite{created: x.op.Site()}
		}
	}
	return sites
}

// sharedFrames counts the frames a and b have in common from the innermost
// out. Frames with a source location compare by it (an inlined helper's
// frames have the caller's address); others by module and address.
func sharedFrames(a, b []Frame) int {
	n := 0
	for n < len(a) && n < len(b) && sameFrame(a[n], b[n]) {
		n++
	}
	return n
}

func sameFrame(a, b Frame) bool {
	if a.File != "" || b.File != "" {
		return a.Func == b.Func && a.File == b.File && a.Line == b.Line
	}
	return a.Func == b.Func && a.Module == b.Module && a.PC == b.PC
}

// helperName names the helper a stream was created through: its function,
// else the frame.
func helperName(f Frame) string {
	if f.Func != "" {
		return f.Func
	}
	return f.String()
}
