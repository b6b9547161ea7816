# streamcheck-expect: use-before-alloc
# streamcheck-allow: reuse-while-in-flight
# streamcheck-allow: free-while-in-flight
# streamcheck-allow: leak
#
# The side-stream prefetcher of torch_train_ok.py without
# main_stream.wait_stream(copy_stream): each batch is allocated and copied
# host-to-device on copy_stream, and the training step on the default stream
# reads it with nothing ordering the read after the allocation (the batches
# keep record_stream, so their frees are still ordered). One missing line;
# under the cudaMallocAsync backend the read races the stream-ordered
# allocation and the copy.
import gc
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
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
    for step in range(steps):
        xb, yb = nxt  # missing: main_stream.wait_stream(copy_stream)
        xb.record_stream(main_stream)
        yb.record_stream(main_stream)
        if step + 1 < steps:
            nxt = prefetch(step + 1)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        del xb, yb, loss
    torch.cuda.synchronize()
    del model, opt, nxt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
