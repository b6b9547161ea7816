package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// explain fills a finding's Message, Why and Fix from its resolved
// operations.
func (c *Checker) explain(f *Finding, note memNote) {
	op := &f.Ops[0]
	var other *Op
	if len(f.Ops) > 1 {
		other = &f.Ops[1]
	}
	size := ""
	if f.Alloc != nil {
		size = fmt.Sprintf("%d bytes at 0x%x", f.Alloc.Size, f.Alloc.Ptr)
	}
	if f.Capture != "" {
		explainCaptured(f, op, other, size)
		return
	}
	switch f.Rule {
	case RuleUseBeforeAlloc:
		f.Message = fmt.Sprintf("%s uses %s before its allocation is ordered before it", what(op), size)
		f.Why = c.unorderedWhy(other, op)
		f.Fix = c.handOffFix(other, op)
	case RuleReuseWhileInFlight:
		f.Message = fmt.Sprintf("%s uses %s while work on the freed allocation at the same addresses may still run", what(op), size)
		f.Why = fmt.Sprintf("The pool gave these addresses to the allocation made by %s, but %s used them before they were freed and nothing orders that use before %s. %s",
			f.Alloc.Where(), other.Where(), what(op), c.unorderedWhy(&f.Alloc.Op, op))
		f.Fix = c.handOffFix(&f.Alloc.Op, op)
		if f.Alloc.Op.Seq == op.Seq { // a graph launch allocating its own memory again
			f.Why = fmt.Sprintf("The graph allocates these addresses again at each launch (they are the graph's), and %s used the last launch's memory before it was freed; nothing orders that use before %s. %s",
				other.Where(), what(op), c.unorderedWhy(other, op))
			f.Fix = c.handOffFix(other, op)
		}
	case RuleUseAfterFree:
		f.Message = fmt.Sprintf("%s uses %s after it was freed", what(op), size)
		f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was issued (call #%d); the pool may already have handed it to another allocation.",
			other.Where(), other.Seq, what(op), op.Seq)
		f.Fix = fmt.Sprintf("Move the free at %s after the last use, at %s or later.", other.Site(), op.Site())
		if op.Rejected {
			f.Message = fmt.Sprintf("%s uses %s after it was freed (CUDA rejected the call)", what(op), size)
			f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was issued (call #%d). CUDA rejected the call with an error, so it did nothing, but the program still used memory it had freed: with another pool, driver or timing the call can be accepted and use memory handed to another allocation.",
				other.Where(), other.Seq, what(op), op.Seq)
		}
	case RuleFreedArgumentWord:
		f.Message = fmt.Sprintf("%s has a word inside an aggregate parameter equal to 0x%x, in %s, which was freed", what(op), op.Ptr, size)
		f.Why = fmt.Sprintf("Only a word inside a by-value struct or table, not its first, matched memory freed by %s (call #%d), and no pointer slot of the launch (an 8-byte parameter, or the first word of an aggregate) names it. Such words are often padding, unused table entries or bytes the host never filled, so this is a use after free only if the kernel reads that word as a pointer.",
			other.Where(), other.Seq)
		f.Fix = fmt.Sprintf("If the kernel dereferences that member, move the free at %s after the launch at %s; if the word is padding or unused, nothing is wrong (zeroing the parameter's unused bytes makes the note go away).", other.Site(), op.Site())
	case RuleFreeWhileInFlight:
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it", what(op), size, what(other))
		if op.Stream == "" {
			f.Why = fmt.Sprintf("%s does not wait for work that uses the memory: the driver assumes all accesses are complete, but nothing made the host wait for %s.",
				op.API, other.Where())
			f.Fix = fmt.Sprintf("Synchronize stream %s (cudaStreamSynchronize, or cudaEventSynchronize on an event recorded after the use at %s) before the %s at %s, or free with cudaFreeAsync on stream %s.",
				other.Stream, other.Site(), op.API, op.Site(), other.Stream)
		} else {
			f.Why = fmt.Sprintf("The free is ordered on stream %s only; %s is not ordered before it, so the memory can be reused while that work still runs. %s",
				op.Stream, other.Where(), c.unorderedWhy(other, op))
			if op.Op == model.OpGraphLaunch.String() {
				f.Why = "A graph launch frees the memory the graph's last launch allocated and nothing freed since (cudaGraphInstantiateFlagAutoFreeOnLaunch; without it CUDA refuses the launch). " + f.Why
			}
			f.Fix = c.handOffFix(other, op)
		}
	case RuleFreeBeforeAlloc:
		f.Message = fmt.Sprintf("%s frees %s before its allocation is ordered before the free", what(op), size)
		f.Why = c.unorderedWhy(other, op)
		f.Fix = c.handOffFix(other, op)
	case RuleDoubleFree:
		f.Message = fmt.Sprintf("%s frees %s a second time", what(op), size)
		f.Why = fmt.Sprintf("The allocation was already freed by %s (call #%d), and no allocation at this address was made in between.", other.Where(), other.Seq)
		if op.Rejected {
			f.Message += " (CUDA rejected the call)"
			f.Why += " CUDA rejected this free with an error, so it did nothing, but the program still has the bug."
		}
		f.Fix = fmt.Sprintf("Remove the free at %s or the one at %s.", op.Site(), other.Site())
	case RuleInvalidFree:
		if f.Alloc != nil {
			f.Message = fmt.Sprintf("%s frees 0x%x, which points %d bytes into the allocation of %s", what(op), op.Ptr, op.Ptr-f.Alloc.Ptr, size)
			f.Why = fmt.Sprintf("Only the address returned by %s can be freed.", f.Alloc.Where())
			f.Fix = fmt.Sprintf("Free 0x%x, the start of the allocation, at %s.", f.Alloc.Ptr, op.Site())
		} else {
			f.Message = fmt.Sprintf("%s frees 0x%x, which is not a live allocation", what(op), op.Ptr)
			f.Why = "No allocation starting at this address was recorded, or it was freed so long ago that it is no longer remembered."
			f.Fix = fmt.Sprintf("Free only addresses returned by an allocation call, at %s.", op.Site())
		}
		if op.Rejected {
			f.Message += " (CUDA rejected the call)"
			f.Why += " CUDA rejected this free with an error, so it did nothing, but the program still has the bug."
		}
	case RuleLeak:
		f.Message = fmt.Sprintf("%s allocates %s that is never freed", what(op), size)
		f.Why = "The trace ended with the allocation still live; stream-ordered memory stays reserved in its pool until freed."
		f.Fix = fmt.Sprintf("Free it with cudaFreeAsync on stream %s after its last use.", op.Stream)
	case RuleStreamMemOp:
		explainMemOp(f, op, note)
	case RuleWaitUnrecordedEvent:
		f.Message = fmt.Sprintf("%s waits on an event that was never recorded", what(op))
		f.Why = "A wait on an event with no cudaEventRecord before it returns at once and orders nothing."
		f.Fix = fmt.Sprintf("Record the event with cudaEventRecord on the producing stream before the wait at %s.", op.Site())
		if other != nil { // only a graph's event record node records it
			f.Why = fmt.Sprintf("The event is recorded only by a graph's event record node (%s), and no launch recorded it before the wait: an executable graph instantiated before that call does not have it (cudaGraphInstantiate copies the graph), so its launches never record the event, and the wait orders nothing.", other.Where())
			f.Fix = fmt.Sprintf("Make the event record node before cudaGraphInstantiate, or instantiate again (or cudaGraphExecUpdate) after %s, so that the launch before the wait at %s records the event.", other.Site(), op.Site())
		}
	}
}

// explainAlso says in a finding's Why which other rules' occurrences were
// folded into it (see unorderedUse) and lists them in Also.
func (c *Checker) explainAlso(f *Finding, also map[string]int) {
	if f.Allocations > 1 && (f.Rule == RuleUseBeforeAlloc || f.Rule == RuleReuseWhileInFlight) && f.Capture == "" {
		all := fmt.Sprintf("all %d", f.Allocations)
		if f.Allocations == 2 {
			all = "both"
		}
		f.Fix += fmt.Sprintf(" The same wait covers %s allocations this use hit, when the event is recorded after the last of them is made and filled.", all)
	}
	for _, r := range Rules { // a stable order
		n := also[r.ID]
		if n == 0 {
			continue
		}
		f.Also = append(f.Also, r.ID)
		times := "once"
		if n > 1 {
			times = fmt.Sprintf("%d times", n)
		}
		var form string
		switch r.ID {
		case RuleReuseWhileInFlight:
			form = "on memory the pool handed back while work on its earlier allocation may still have run"
		case RuleUseBeforeAlloc:
			form = "before the allocation was ordered before it"
		}
		f.Why += fmt.Sprintf(" The same use, unordered after the same stream, also occurred as %s (%s, %s, counted in this finding): one wait before it fixes both.",
			r.ID, form, times)
	}
}

// what names an operation briefly: "cudaLaunchKernel of scale on stream s2".
func what(o *Op) string {
	s := o.API
	if o.Kernel != "" {
		s += " of " + o.Kernel
	}
	if o.Stream != "" {
		return s + " on stream " + o.Stream
	}
	return s
}

// unorderedWhy says why nothing orders before (on its stream) before after.
func (c *Checker) unorderedWhy(before, after *Op) string {
	if before == nil || after == nil {
		return ""
	}
	if before.Stream == "" {
		return fmt.Sprintf("%s ran on the host after %s was issued.", before.API, what(after))
	}
	if after.Stream == "" {
		return fmt.Sprintf("The host did not synchronize with stream %s (stream, event or device synchronize, or a successful query) between %s and %s.",
			before.Stream, before.Site(), after.Site())
	}
	ba, aa := c.engine.Agent(before.Agent), c.engine.Agent(after.Agent)
	if legacyPair(ba, aa) {
		nb := ba
		if nb.Kind != hb.KindNonBlocking {
			nb = aa
		}
		return fmt.Sprintf("Stream %s is non-blocking, so it does not synchronize with the legacy default stream, and no event or host synchronization orders %s before %s.",
			c.StreamName(nb), before.Site(), after.Site())
	}
	return fmt.Sprintf("They run on different streams (%s, %s) and no event recorded on %s after %s was waited on by %s before %s, nor did the host synchronize with %s in between.",
		before.Stream, after.Stream, before.Stream, before.Site(), after.Stream, after.Site(), before.Stream)
}

func legacyPair(a, b *hb.Agent) bool {
	return (a.Kind == hb.KindLegacy && b.Kind == hb.KindNonBlocking) || (b.Kind == hb.KindLegacy && a.Kind == hb.KindNonBlocking)
}

// handOffFix proposes the event hand-off that orders before before after.
func (c *Checker) handOffFix(before, after *Op) string {
	if before == nil || after == nil {
		return ""
	}
	if before.Stream == "" || after.Stream == "" {
		return fmt.Sprintf("Synchronize the host with the work of %s before %s at %s.", before.Where(), after.API, after.Site())
	}
	return fmt.Sprintf("Record an event on stream %s after the %s at %s and make stream %s wait on it (cudaStreamWaitEvent) before the %s at %s.",
		before.Stream, before.API, before.Site(), after.Stream, after.API, after.Site())
}

// explainCaptured explains a race between two operations captured into one
// graph: at each launch the graph runs its nodes in the order the capture
// gave them, whatever orders the launch itself.
func explainCaptured(f *Finding, op, other *Op, size string) {
	in := fmt.Sprintf(", in the graph captured from stream %s", f.Capture)
	graph := fmt.Sprintf("Both were captured into the graph begun on stream %s, which runs its nodes in the order that stream order and the event waits made during the capture gave them", f.Capture)
	fix := fmt.Sprintf("During the capture, record an event on stream %s after the %s at %s and make stream %s wait on it (cudaStreamWaitEvent) before the %s at %s.",
		other.Stream, other.API, other.Site(), op.Stream, op.API, op.Site())
	switch f.Rule {
	case RuleUseBeforeAlloc:
		f.Message = fmt.Sprintf("%s uses %s before its allocation is ordered before it%s", what(op), size, in)
		f.Why = fmt.Sprintf("%s: nothing orders the allocation at %s before the use at %s, so each launch of the graph may run the use first.", graph, other.Site(), op.Site())
		f.Fix = fix
	case RuleFreeWhileInFlight:
		f.Message = fmt.Sprintf("%s frees %s while %s may still be using it%s", what(op), size, what(other), in)
		f.Why = fmt.Sprintf("%s: nothing orders the use at %s before the free at %s, so each launch of the graph may free the memory while that work runs.", graph, other.Site(), op.Site())
		f.Fix = fix
	case RuleFreeBeforeAlloc:
		f.Message = fmt.Sprintf("%s frees %s before its allocation is ordered before the free%s", what(op), size, in)
		f.Why = fmt.Sprintf("%s: nothing orders the allocation at %s before the free at %s.", graph, other.Site(), op.Site())
		f.Fix = fix
	case RuleUseAfterFree:
		f.Message = fmt.Sprintf("%s uses %s after it was freed%s", what(op), size, in)
		f.Why = fmt.Sprintf("The memory was freed by %s (call #%d) before %s was captured (call #%d); at each launch the graph may hand it to another of its allocations.",
			other.Where(), other.Seq, what(op), op.Seq)
		f.Fix = fmt.Sprintf("Move the free at %s after the last use, at %s or later, in the capture.", other.Site(), op.Site())
	}
}

// explainMemOp explains a stream memory operation whose ordering streamcheck
// does not follow, by why it does not.
func explainMemOp(f *Finding, op *Op, note memNote) {
	// A node added to a graph by hand runs at the graph's launches, on no
	// stream of its own.
	on := "stream " + op.Stream
	if op.Stream == "" {
		on = "the launches of its graph"
	}
	falseAlarms := fmt.Sprintf("Findings between %s and the streams this value orders it with may be false alarms", on)
	eventFix := "order those streams with an event as well (cudaEventRecord, cudaStreamWaitEvent), or suppress the findings with a reason."
	switch note {
	case memNoteNoWrite:
		f.Message = fmt.Sprintf("%s waits for a value that no write recorded before it gives", what(op))
		f.Why = "streamcheck orders a wait for a value in memory (cuStreamWaitValue*) after the writes recorded before it at the same address (cuStreamWriteValue*) that can meet its condition. None can meet this one: the value comes from a kernel, a copy, the host, another process, or a write issued after the wait, which streamcheck does not follow, so it takes the work after the wait as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: issue the cuStreamWriteValue before the wait at %s, or %s", falseAlarms, op.Site(), eventFix)
	case memNoteNoBarrier:
		f.Message = fmt.Sprintf("%s waits for a value written without a memory barrier", what(op))
		f.Why = "A write that can meet this wait was made with CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, which lets it land before the earlier writes of its stream: seeing the value does not make the writer's earlier work visible, so streamcheck does not order the waiting stream after it."
		f.Fix = fmt.Sprintf("Drop CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER from the write this wait at %s reads, or %s", op.Site(), eventFix)
	case memNoteUnknown:
		f.Message = fmt.Sprintf("%s waits for a value in a way streamcheck cannot follow", what(op))
		f.Why = "Either the wait's condition is not one streamcheck knows, or more writes were made to this 8-byte block of memory than it keeps (32) and the waiting stream is not ordered after the older ones, so it cannot tell which writes can meet the wait."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteGraphWrite:
		f.Message = fmt.Sprintf("%s waits for a value that a graph may write", what(op))
		f.Why = "A write in a graph (captured, or a node added by hand) changes this memory at the graph's launches, which streamcheck does not follow for values: it cannot tell which write meets the wait, so it takes the work after the wait as unordered with every writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteAfterUnknown:
		f.Message = fmt.Sprintf("%s waits for a value after a stream memory operation streamcheck cannot read", what(op))
		f.Why = "An earlier stream memory operation in the trace is of a kind streamcheck does not know, and may have written this memory, so no wait after it is followed: the work after the wait is taken as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteCaptured:
		f.Message = fmt.Sprintf("%s waits for a value in a graph (captured, or a node added by hand), which streamcheck does not follow", what(op))
		f.Why = "The wait is a node of a graph and runs at its launches; streamcheck does not follow what a graph's memory operations order, so it takes the graph's work after the wait as unordered with the writer."
		f.Fix = fmt.Sprintf("%s: %s", falseAlarms, eventFix)
	case memNoteCapturedWrite:
		f.Message = fmt.Sprintf("%s writes a value in a graph (captured, or a node added by hand), which streamcheck does not follow", what(op))
		f.Why = "The write is a node of a graph and lands at the graph's launches: waits for values at this memory are not followed, and one taken before as ordered after other writes may have been met by this one first, so races after it may be missed."
		f.Fix = "Order the streams that wait for this value with an event as well: waits for it are not followed, and races after a wait it may have met first can be missed."
	case memNoteLateWrite:
		f.Message = fmt.Sprintf("%s writes a value that an earlier wait may have read first", what(op))
		f.Why = "A wait for a value recorded before this write was taken as ordered after the writes recorded before it; this write can meet the wait too, and nothing orders it after them or after the wait, so on the GPU it may have released the wait first. The work after that wait was taken as ordered after more than it is: races after it may be missed."
		f.Fix = fmt.Sprintf("Make the value this write gives one the earlier wait does not wait for, order the write after the wait's other writers with an event, or order the streams with an event as well; the write is at %s.", op.Site())
	case memNoteUnread:
		f.Message = fmt.Sprintf("%s writes a value that no recorded wait reads", what(op))
		f.Why = "No cuStreamWaitValue* was recorded at this memory. If the host or a kernel waits for the value, the ordering that gives is not followed: streamcheck takes what runs after that wait as unordered with this stream."
		f.Fix = fmt.Sprintf("Findings between %s and work ordered by this value may be false alarms: order them with an event or a stream synchronization as well, or suppress them with a reason.", on)
	case memNoteUnknownType:
		f.Message = fmt.Sprintf("%s is a stream memory operation of a type streamcheck does not know", what(op))
		f.Why = "The recorder did not know this operation's parameters, so streamcheck cannot tell what memory it changes: no wait for a value after it is followed, and a wait followed before it may have been met by it first (races after that wait may be missed)."
		f.Fix = fmt.Sprintf("Findings between %s and the streams that wait for values may be false alarms, and races after waits before it may be missed: order them with an event as well.", on)
	default:
		f.Message = fmt.Sprintf("%s orders work through memory, which streamcheck does not follow", what(op))
		f.Why = "The trace does not say what this stream memory operation waited for or wrote (it was recorded by an older streamcheck), so streamcheck takes the streams it orders as unordered."
		f.Fix = fmt.Sprintf("Findings between %s and the streams it is ordered with this way may be false alarms: record the program again, or %s", on, eventFix)
	}
}
