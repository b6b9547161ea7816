package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// callKey is what placing a stream in a report reads of a call (its
// creation, or the program's first call on it): the frames its stack
// resolves to for the API and kernel it was recorded with. Streams made or
// first used at one place share one, so that a program that makes a
// stream per step keeps four bytes a stream for it, not a record of the
// call.
type callKey struct {
	stack  model.StackID
	api    model.StringID
	kernel model.StringID
	op     model.Op
}

// streamCalls holds, by agent, the creation of each stream and the
// program's first call on it: 1 + an index in keys, or 0 for none.
type streamCalls struct {
	created []uint32
	first   []uint32
	keys    []callKey
	index   map[callKey]uint32
	last    callKey // The latest noted, and its number.
	lastN   uint32
}

// note sets (*by)[id] to ev's key.
func (s *streamCalls) note(by *[]uint32, id hb.AgentID, ev *model.Event) {
	k := callKey{stack: ev.Stack, api: ev.API, kernel: ev.Kernel, op: ev.Op}
	n, ok := s.lastN, s.lastN != 0 && k == s.last // most come from one place
	if !ok {
		n, ok = s.index[k]
	}
	if !ok {
		if s.index == nil {
			s.index = map[callKey]uint32{}
		}
		s.keys = append(s.keys, k)
		n = uint32(len(s.keys))
		s.index[k] = n
	}
	if int(id) >= len(*by) {
		*by = append(*by, make([]uint32, int(id)+1-len(*by))...)
	}
	(*by)[id], s.last, s.lastN = n, k, n
}

// key returns the call by[id] names, if any.
func (s *streamCalls) key(by []uint32, id hb.AgentID) (callKey, bool) {
	if int(id) < 0 || int(id) >= len(by) || by[id] == 0 {
		return callKey{}, false
	}
	return s.keys[by[id]-1], true
}

// access returns the call of key k as an access, for resolve.
func (k callKey) access() access {
	return access{stack: k.stack, api: k.api, kernel: k.kernel, op: k.op}
}

// streamSite says where a report places a stream (Op.StreamCreatedAt and
// Op.StreamFirstUsedAt).
type streamSite struct{ created, firstUsed string }

// usedByProgram reports whether the program's first call on a stream was
// seen (a slice index: it is asked at every event).
func (c *Checker) usedByProgram(id hb.AgentID) bool {
	f := c.streamCalls.first
	return int(id) >= 0 && int(id) < len(f) && f[id] != 0
}

// noteFirstUse remembers ev if it is the first call on its stream whose
// stack has a frame of the program: a stream a pool made earlier is placed
// where the program first used it. Once one is found, each later call
// costs a slice index.
func (c *Checker) noteFirstUse(ev *model.Event, st *hb.Step) {
	if st.Agent < 0 || ev.Failed() || !c.programStack(ev.Stack) {
		return
	}
	c.streamCalls.note(&c.streamCalls.first, st.Agent, ev)
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

// streamSite returns where reports place a stream, placing every place
// of creation the first time: telling streams apart needs all of their
// creations.
func (c *Checker) streamSite(id hb.AgentID) streamSite {
	if c.streamPlaces == nil {
		c.streamPlaces = c.placeCreations()
	}
	k, ok := c.streamCalls.key(c.streamCalls.created, id)
	switch {
	case !ok:
		return streamSite{firstUsed: c.firstUseSite(id)} // made before recording began
	case c.engine.Agent(id).Implicit:
		return streamSite{firstUsed: c.firstUseSite(id)}
	}
	p := c.streamPlaces[c.streamCalls.index[k]-1]
	if p.again {
		return streamSite{created: p.created, firstUsed: c.firstUseSite(id)}
	}
	return streamSite{created: p.created}
}

// firstUseSite returns the site of the program's first call on a stream,
// or "".
func (c *Checker) firstUseSite(id hb.AgentID) string {
	k, ok := c.streamCalls.key(c.streamCalls.first, id)
	if !ok {
		return ""
	}
	a := k.access()
	o := c.resolve("", &a)
	return o.Site()
}

// creationPlace is where reports place the streams created at one place
// (callKey): created is "" for a creation recorded without a stack; again
// says that another creation was made where it was, which is no help
// telling streams apart (the stream is placed where the program first
// used it as well).
type creationPlace struct {
	created string
	again   bool
}

// placeCreations names where the streams made at each place of creation
// were made, by the place's index in streamCalls.keys.
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
// stack places the stream nowhere. Creations of one place resolve to the
// same frames, so they are compared once.
func (c *Checker) placeCreations() []creationPlace {
	type place struct {
		frames  []Frame
		site    int // Index of the frame Site names; -1 without a stack.
		op      Op
		streams int // Streams created there.
	}
	ps := make([]place, len(c.streamCalls.keys))
	for i := range ps {
		ps[i].site = -1
	}
	for _, n := range c.streamCalls.created {
		if n != 0 {
			ps[n-1].streams++
		}
	}
	for i, k := range c.streamCalls.keys {
		if k.stack != 0 && ps[i].streams > 0 {
			a := k.access()
			ps[i].op = c.resolve("", &a)
			ps[i].frames, ps[i].site = ps[i].op.Stack, ps[i].op.SiteFrame()
		}
	}
	places := make([]creationPlace, len(ps))
	for i := range ps {
		x := &ps[i]
		if x.site < 0 {
			continue // no creation here, or created without a stack: the trace has none to place it
		}
		shared := 0 // The most innermost frames x shares with another creation.
		if x.streams > 1 {
			shared = len(x.frames)
		}
		for j := range ps {
			if j != i && ps[j].site >= 0 {
				shared = max(shared, sharedFrames(x.frames, ps[j].frames))
			}
		}
		switch {
		case shared >= len(x.frames): // made where another was: no help
			places[i] = creationPlace{created: x.op.Site(), again: true}
		case shared > x.site:
			places[i] = creationPlace{created: fmt.Sprintf("%s (via %s)", x.frames[shared], helperName(x.frames[shared-1]))}
		default:
			places[i] = creationPlace{created: x.op.Site()}
		}
	}
	return places
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
