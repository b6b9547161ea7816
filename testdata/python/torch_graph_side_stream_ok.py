# streamcheck-expect: clean
# streamcheck-allow: leak
#
# The twin of torch_graph_side_stream_racy: during torch.cuda.graph capture
# the side stream waits for the capture stream after x is made, so in the
# graph its kernel depends on x's allocation and on the kernel that fills
# x, and the capture stream waits for the side stream before using y.
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
            x = static_in * 2
            side.wait_stream(capture_stream)  # the fork, after x is made
            with torch.cuda.stream(side):
                y = x.sum(dim=0)
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
