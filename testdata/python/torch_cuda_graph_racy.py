# streamcheck-expect: free-while-in-flight
# streamcheck-allow: reuse-while-in-flight
# streamcheck-allow: leak
#
# A CUDA graph captured with torch.cuda.graph reads the static input x,
# allocated on the current stream. The graph is replayed on a side stream
# (which waits for the current stream first), and then x is deleted without
# x.record_stream(side): the cudaMallocAsync backend frees it on the current
# stream while the replays on the side stream may still read it.
# streamcheck sees the replay's use of x because each graph launch is
# checked as the uses of the work captured into its graph.
import gc
import sys

import torch


def main() -> int:
    dev = torch.device("cuda", 0)
    x = torch.randn(2048, 2048, device=dev)
    w = torch.randn(2048, 2048, device=dev) / 64.0
    graph = torch.cuda.CUDAGraph()
    warm = torch.cuda.Stream(device=dev)
    warm.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(warm):
        y = x @ w
    torch.cuda.current_stream(dev).wait_stream(warm)
    try:
        with torch.cuda.graph(graph):
            y = x
            for _ in range(8):
                y = torch.tanh(y @ w)
    except Exception as e:  # an allocator backend that cannot capture
        print(f"STREAMCHECK_NOTE capture failed: {type(e).__name__}: {e}")
        return 3

    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(4):
            graph.replay()  # reads x
    del x  # BUG: no x.record_stream(side); freed while the replays may still read it
    torch.cuda.synchronize()
    print(f"STREAMCHECK_NOTE y.sum={float(y.sum().item()):.3f}")
    del graph, y, w
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
