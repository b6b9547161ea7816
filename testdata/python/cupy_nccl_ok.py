# streamcheck-expect: clean
# streamcheck-allow: leak
#
# CuPy calling NCCL directly (cupy.cuda.nccl, one rank) with
# cupy.cuda.MemoryAsyncPool as the allocator; the runner records it with
# --preload, which NCCL's calls need. An array allocated and filled on
# non-blocking stream s1 is all-reduced in place on non-blocking stream s2.
# Here s2 waits for an event recorded on s1 first: nothing is wrong.
import sys

import cupy as cp
from cupy.cuda import nccl

RACY = False


def main() -> int:
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    cp.cuda.Device(0).use()
    comm = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    with s1:
        a = cp.full((4 << 20,), 2.0, dtype=cp.float32)  # 16 MiB, on s1
    if not RACY:
        s2.wait_event(s1.record())
    comm.allReduce(a.data.ptr, a.data.ptr, a.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, s2.ptr)
    cp.cuda.Device(0).synchronize()
    print("STREAMCHECK_NOTE sum", float(a.sum()))
    del a
    cp.cuda.Device(0).synchronize()
    comm.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
