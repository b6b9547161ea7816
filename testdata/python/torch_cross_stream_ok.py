# streamcheck-expect: clean
# streamcheck-allow: leak
#
# torch_cross_stream_racy done right: s2.wait_stream(s1) before the use on s2,
# and x.record_stream(s2) before x is freed, so the cudaMallocAsync backend
# frees it only after s2's work (it syncs a "unifying" stream with both
# streams through events before cudaFreeAsync). x is deleted while s2's work
# may still be running, without a device synchronize. `leak` is allowed
# because PyTorch keeps some workspaces (e.g. cuBLAS) allocated.
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
        for _ in range(8):
            b = torch.mm(b, a) * (1.0 / 4096.0)
        x = torch.empty(1 << 20, device=dev)
        x.fill_(1.0)

    s2.wait_stream(s1)
    with torch.cuda.stream(s2):
        y = x * 2.0
        for _ in range(4):  # keep s2 busy for a while
            y = torch.sqrt(y * y + 1.0) - 1.0 + 2.0
        x.record_stream(s2)
    del x  # freed by the allocator once s2's uses are done (event-ordered)

    with torch.cuda.stream(s2):
        total = float(y.sum().item())
    print(f"STREAMCHECK_NOTE sum={total:.0f}")

    torch.cuda.synchronize()
    del a, b, y
    gc.collect()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
