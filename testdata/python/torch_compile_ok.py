# streamcheck-expect: clean
# streamcheck-allow: leak
#
# torch.compile (Inductor): the compiled model's kernels are Triton kernels
# launched through the driver API by Triton's own launcher, plus cuBLAS
# calls, under the cudaMallocAsync backend. A few training steps; nothing in
# it is wrong.
import gc
import sys

import torch
import torch.nn as nn


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.LayerNorm(128), nn.Linear(128, 8)).to(dev)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(4):
        x = torch.randn(256, 64, device=dev)
        y = torch.randn(256, 8, device=dev)
        opt.zero_grad(set_to_none=True)
        loss = ((compiled(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    print("STREAMCHECK_NOTE losses " + " ".join(f"{v:.4f}" for v in losses))
    torch.cuda.synchronize()
    del model, compiled, opt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
