# train_loop.py: a small training loop for bench/gpu-overhead.sh, to measure
# recording overhead on a real program next to the launch-bound micro-loop.
# Four residual MLP blocks (1024 -> 4096 -> 1024, LayerNorm, GELU), AdamW,
# batches prefetched on a side stream; PyTorch's cudaMallocAsync backend.
# Prints "bench: X ms per step" over STEPS timed steps after a warm-up.
import os
import sys
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    width, batch = 1024, 256
    model = nn.Sequential(*[Block(width) for _ in range(4)], nn.Linear(width, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    host_x = torch.randn(8, batch, width).pin_memory()
    host_y = torch.randint(0, 10, (8, batch)).pin_memory()
    copy = torch.cuda.Stream(device=dev)

    def prefetch(i: int):
        with torch.cuda.stream(copy):
            return host_x[i % 8].to(dev, non_blocking=True), host_y[i % 8].to(dev, non_blocking=True)

    def step(i: int, batch_):
        xb, yb = batch_
        torch.cuda.current_stream(dev).wait_stream(copy)
        xb.record_stream(torch.cuda.current_stream(dev))
        yb.record_stream(torch.cuda.current_stream(dev))
        nxt = prefetch(i + 1)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return nxt

    b = prefetch(0)
    for i in range(20):  # warm-up: allocator pools, cuBLAS handles
        b = step(i, b)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(steps):
        b = step(i, b)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    print(f"bench: {ms:.3f} ms per step ({steps} steps, {os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
