package checker

import (
	"fmt"

	"github.com/streamcheck/streamcheck/model"
)

// NCCL's communication calls (model.OpCollective) are uses of the buffers
// they name, on the call's stream, like a copy's: what this file adds is
// how reports name them ("ncclAllReduce of 16 MiB on stream s7") and the
// fix in PyTorch's terms for a collective issued from Python.

// A collective's access keeps its size where a launch's keeps its kernel
// name (access.kernel, which a collective has none of), so that accesses
// stay as small as they are: bytes below 2^31 as they are, larger ones in
// KiB with the top bit set.
const collectiveKiB = 1 << 31

func packCollectiveBytes(n uint64) model.StringID {
	if n < collectiveKiB {
		return model.StringID(n)
	}
	return model.StringID(collectiveKiB | min(n>>10, collectiveKiB-1))
}

func unpackCollectiveBytes(id model.StringID) uint64 {
	if id&collectiveKiB == 0 {
		return uint64(id)
	}
	return uint64(id&^collectiveKiB) << 10
}

// collectiveBytes is the size a report gives a collective: the larger of
// what it reads and what it writes (an all-gather's output, a
// reduce-scatter's input).
func collectiveBytes(ev *model.Event) uint64 { return max(ev.Size, ev.SrcSize) }

// humanBytes writes n as "16 MiB", "4 KiB" when that is exact, else "n bytes".
func humanBytes(n uint64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// collectiveFix is the fix of a missing ordering from before to after
// when one of them is a collective PyTorch issued (torch.distributed over
// NCCL; a CuPy or C++ program passes NCCL its stream itself, and the event
// hand-off of handOffFix is its fix): ProcessGroupNCCL makes its NCCL stream wait for the stream
// current at the call, makes the stream current at work.wait() wait for
// the collective, and frees a tensor on the stream that allocated it. ok
// is false otherwise: the event hand-off of handOffFix applies.
func collectiveFix(before, after *Op) (string, bool) {
	if before.Stream == "" || after.Stream == "" {
		return "", false
	}
	coll := model.OpCollective.String()
	switch {
	case after.Op == coll && frameworkOf(after) == frameworkTorch:
		return fmt.Sprintf("Before the %s at %s, make the stream current there wait for %s, where the %s at %s ran "+
			"(`side.wait_stream(torch.cuda.default_stream())` for a side stream `side`): torch.distributed orders its NCCL stream (here %s) after the current stream only.",
			after.API, after.Site(), before.StreamRef, before.API, before.Site(), after.StreamRef), true
	case before.Op == coll && frameworkOf(before) == frameworkTorch:
		return fmt.Sprintf("Call `work.wait()` on the work of the %s at %s (`async_op=True`) while %s is current, before %s at %s; "+
			"or, where `work.wait()` ran on another stream, call `tensor.record_stream(that stream)` before the tensor is released, so that the free waits for it: "+
			"`work.wait()` orders only the stream current at it after the collective's NCCL stream (here %s).",
			before.API, before.Site(), after.StreamRef, after.API, after.Site(), before.StreamRef), true
	}
	return "", false
}
