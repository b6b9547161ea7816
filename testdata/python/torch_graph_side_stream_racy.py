# streamcheck-expect: use-before-alloc
# streamcheck-allow: leak
#
# A race inside a CUDA graph, under the cudaMallocAsync allocator backend:
# during torch.cuda.graph capture, a side stream forks from the capture
# stream, then the capture stream makes x, and the side stream reads x
# without waiting for the capture stream again. In the captured graph the
# side stream's kernel does not depend on x's allocation node (nor on the
# kernel that fills x), so every replay may read x before it exists,
# however the replays are ordered. The side stream joins back before the
# capture ends, as CUDA requires.
import gc
import os
import sys

import torch


def main() -> int:
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={conf!r}")
    dev = torch.device("cuda", 0)
    static_in = torch.randn(1024, 1024, device=dev)
    side = torch.cuda.Stream(device=dev)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            capture_stream = torch.cuda.current_stream(dev)
            side.wait_stream(capture_stream)  # the fork: side joins the capture
            x = static_in * 2
            with torch.cuda.stream(side):
                y = x.sum(dim=0)  # BUG: side has not waited since x was made
            capture_stream.wait_stream(side)  # the join
            out = y + 1
    except Exception as e:
        print(f"STREAMCHECK_NOTE capture failed: {type(e).__name__}: {e}")
        return 3

    for _ in range(3):
        static_in.copy_(torch.randn(1024, 1024, device=dev))
        graph.replay()
    print(f"STREAMCHECK_NOTE out[0] {float(out[0]):.4f}")

    torch.cuda.synchronize()
    del graph, out, x, y
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
