# streamcheck-expect: clean
# streamcheck-allow: leak
#
# Whole-network capture as in PyTorch's CUDA graphs guide, under the
# cudaMallocAsync allocator backend: warm-up iterations on a side stream,
# then one training step (forward, backward, optimizer step) captured with
# torch.cuda.graph and replayed on fresh data copied into the static input.
# The captured step's allocations become graph memory nodes; nothing in it
# is wrong.
import gc
import os
import sys

import torch
import torch.nn as nn


def main() -> int:
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={conf!r}")
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    static_x = torch.randn(64, 128, device=dev)
    static_y = torch.randint(0, 10, (64,), device=dev)

    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream(dev).wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    try:
        with torch.cuda.graph(graph):
            static_loss = loss_fn(model(static_x), static_y)
            static_loss.backward()
            opt.step()
    except Exception as e:  # an allocator backend that cannot capture
        print(f"STREAMCHECK_NOTE capture failed: {type(e).__name__}: {e}")
        return 3

    losses = []
    for _ in range(5):
        static_x.copy_(torch.randn(64, 128, device=dev))
        static_y.copy_(torch.randint(0, 10, (64,), device=dev))
        graph.replay()
        losses.append(float(static_loss.item()))
    print("STREAMCHECK_NOTE losses " + " ".join(f"{v:.4f}" for v in losses))

    torch.cuda.synchronize()
    del graph, static_loss, model, opt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
