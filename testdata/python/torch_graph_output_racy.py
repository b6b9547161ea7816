# streamcheck-expect: use-before-alloc
# streamcheck-allow: leak
#
# Reading a CUDA graph's output on another stream without waiting for the
# replay, under the cudaMallocAsync allocator backend. The captured step's
# output is memory the graph allocates and does not free: each replay
# allocates it anew on the replay stream (PyTorch instantiates with
# cudaGraphInstantiateFlagAutoFreeOnLaunch, so the next replay frees it
# first). A side stream reads the output right after graph.replay() without
# wait_stream: it may read it before the replay has written it.
import gc
import os
import sys

import torch


def main() -> int:
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={conf!r}")
    dev = torch.device("cuda", 0)
    static_in = torch.randn(2048, 2048, device=dev)
    side = torch.cuda.Stream(device=dev)
    # Warm up outside the capture: cuBLAS sets up its handle and workspace
    # at the first matmul, which a capture does not allow.
    warm = static_in @ static_in
    del warm
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            static_out = static_in @ static_in
    except Exception as e:
        print(f"STREAMCHECK_NOTE capture failed: {type(e).__name__}: {e}")
        return 3

    sums = []
    for _ in range(3):
        static_in.copy_(torch.randn(2048, 2048, device=dev))
        graph.replay()
        with torch.cuda.stream(side):
            s = static_out.sum()  # BUG: side has not waited for the replay
        torch.cuda.current_stream(dev).wait_stream(side)
        sums.append(float(s))
    print("STREAMCHECK_NOTE sums " + " ".join(f"{v:.1f}" for v in sums))

    torch.cuda.synchronize()
    del graph, static_out, s
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
