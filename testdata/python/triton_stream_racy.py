# streamcheck-expect: use-before-alloc
# streamcheck-expect-count: 1
# streamcheck-expect-api: cuLaunchKernelEx
# streamcheck-allow: leak
#
# A Triton kernel, which Triton launches through the driver API from its own
# launcher (no cudart involved), with PyTorch's cudaMallocAsync allocator
# backend (the runner sets PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync).
# The input is allocated on side stream s1 behind a batch of matmuls that
# write into preallocated buffers (so the pool hands out fresh memory, not
# memory just freed), and the Triton kernel reads it on side stream s2
# without s2.wait_stream(s1): the read is not ordered after the allocation.
# `leak` is allowed because PyTorch keeps some workspaces allocated for the
# process's lifetime.
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def run(handoff: bool) -> int:
    dev = torch.device("cuda", 0)
    n = 1 << 20
    s1 = torch.cuda.Stream(device=dev)
    s2 = torch.cuda.Stream(device=dev)
    with torch.cuda.stream(s2):
        y = torch.empty(n, device=dev)
        # Compile and load the kernel once, on data s2 owns, before the race.
        scale_kernel[(triton.cdiv(n, 1024),)](y, y, n, BLOCK=1024)
    torch.cuda.synchronize()

    with torch.cuda.stream(s1):
        a = torch.ones(4096, 4096, device=dev)
        b, c = torch.empty_like(a), torch.empty_like(a)
        torch.mm(a, a, out=b)
        for _ in range(8):  # tens of milliseconds of work queued on s1
            torch.mm(b, a, out=c)
            torch.mm(c, a, out=b)
        x = torch.ones(n, device=dev)  # cudaMallocAsync on s1, after the matmuls

    with torch.cuda.stream(s2):
        if handoff:
            s2.wait_stream(s1)
            x.record_stream(s2)
        # In the racy program nothing orders this launch after x's allocation.
        scale_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        total = float(y.sum().item())

    print(f"STREAMCHECK_NOTE sum={total:.0f} (a correct program prints {2 * n})")
    torch.cuda.synchronize()
    del a, b, c, x, y
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(run(handoff=False))
