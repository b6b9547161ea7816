# streamcheck-expect: reuse-while-in-flight
# streamcheck-expect-count: 1
# streamcheck-allow: use-before-alloc
# streamcheck-allow: leak
#
# PyTorch with the cudaMallocAsync allocator backend (the runner sets
# PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync). A tensor is allocated on
# side stream s1 behind a batch of large matmuls, and read by a kernel on side
# stream s2 without s2.wait_stream(s1): the read is not ordered after the
# stream-ordered allocation. Everything is synchronized before any tensor is
# freed, so the only finding is the one use. `leak` is allowed because
# PyTorch keeps some workspaces (e.g. cuBLAS) allocated for the process's
# lifetime.
import gc
import os
import sys

import torch


def main() -> int:
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={conf!r}")
    if "cudaMallocAsync" not in conf:
        print("STREAMCHECK_NOTE warning: not using the cudaMallocAsync backend")
    torch.cuda.init()
    dev = torch.device("cuda", 0)
    s1 = torch.cuda.Stream(device=dev)
    s2 = torch.cuda.Stream(device=dev)

    with torch.cuda.stream(s1):
        a = torch.ones(4096, 4096, device=dev)
        b = a
        for _ in range(8):  # tens of milliseconds of work queued on s1
            b = torch.mm(b, a) * (1.0 / 4096.0)
        x = torch.empty(1 << 20, device=dev)  # cudaMallocAsync on s1, after the matmuls
        x.fill_(1.0)

    with torch.cuda.stream(s2):
        # BUG: missing s2.wait_stream(s1); x may not even be allocated yet.
        y = x * 2.0
        total = float(y.sum().item())  # stays on s2 (y was allocated on s2)

    print(f"STREAMCHECK_NOTE sum={total:.0f} (a correct program would print {2 * (1 << 20)})")

    torch.cuda.synchronize()
    del a, b, x, y
    gc.collect()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
