# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A few steps of a small MLP training loop with AdamW under the
# cudaMallocAsync allocator backend. Batches are copied host-to-device on a
# side stream from pinned memory (non_blocking=True), handed to the default
# stream with wait_stream and protected with record_stream, as in a
# prefetching data loader. Nothing in it is wrong. `leak` is allowed because
# PyTorch keeps some workspaces (e.g. cuBLAS) allocated.
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

    model = nn.Sequential(
        nn.Linear(256, 512),
        nn.GELU(),
        nn.Linear(512, 512),
        nn.GELU(),
        nn.Linear(512, 10),
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()

    steps = 8
    batch = 128
    host_x = [torch.randn(batch, 256).pin_memory() for _ in range(steps)]
    host_y = [torch.randint(0, 10, (batch,)).pin_memory() for _ in range(steps)]

    copy_stream = torch.cuda.Stream(device=dev)
    main_stream = torch.cuda.current_stream(dev)

    def prefetch(i):
        with torch.cuda.stream(copy_stream):
            xb = host_x[i].to(dev, non_blocking=True)
            yb = host_y[i].to(dev, non_blocking=True)
        return xb, yb

    nxt = prefetch(0)
    losses = []
    for step in range(steps):
        main_stream.wait_stream(copy_stream)
        xb, yb = nxt
        xb.record_stream(main_stream)
        yb.record_stream(main_stream)
        if step + 1 < steps:
            nxt = prefetch(step + 1)

        opt.zero_grad(set_to_none=True)
        logits = model(xb)
        loss = loss_fn(logits, yb)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
        del xb, yb, logits, loss

    print("STREAMCHECK_NOTE losses " + " ".join(f"{v:.4f}" for v in losses))

    torch.cuda.synchronize()
    del model, opt, nxt
    gc.collect()
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
