# streamcheck-expect: free-while-in-flight
# streamcheck-allow: reuse-while-in-flight
# streamcheck-allow: leak
#
# The classic PyTorch side-stream bug: s2 waits for s1 correctly, but x,
# allocated on s1, is deleted without x.record_stream(s2). The
# cudaMallocAsync backend then frees it with cudaFreeAsync on s1 while s2's
# kernels may still read it, and the next allocation on s1 may be handed the
# same memory. The results are read on the current stream after it waits for
# both streams, so that is the only bug. torch_cross_stream_ok.py shows the
# hand-off done right.
import gc
import sys

import torch


def main() -> int:
    torch.cuda.init()
    dev = torch.device("cuda", 0)
    s1 = torch.cuda.Stream(device=dev)
    s2 = torch.cuda.Stream(device=dev)

    with torch.cuda.stream(s1):
        x = torch.ones(1 << 20, device=dev)
    s2.wait_stream(s1)
    with torch.cuda.stream(s2):
        a = torch.ones(2048, 2048, device=dev)
        for _ in range(8):  # keep s2 busy
            a = torch.mm(a, a) * (1.0 / 2048.0)
        y = x * 2.0 + a.sum()
    del x  # BUG: no x.record_stream(s2); freed on s1 while s2 may still read it
    with torch.cuda.stream(s1):
        z = torch.zeros(1 << 20, device=dev)  # may be handed x's memory
    cur = torch.cuda.current_stream(dev)
    cur.wait_stream(s1)  # the reads below are ordered after both streams' work
    cur.wait_stream(s2)
    total = float(y.sum().item()) + float(z.sum().item())
    print(f"STREAMCHECK_NOTE sum={total:.0f}")

    torch.cuda.synchronize()
    del a, y, z
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
