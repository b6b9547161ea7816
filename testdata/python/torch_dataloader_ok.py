# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A training loop fed by torch.utils.data.DataLoader with two forked worker
# processes and pin_memory=True (a pinning thread in the main process), under
# the cudaMallocAsync backend. The workers inherit the recorder but make no
# CUDA calls; batches are copied with non_blocking=True on the current
# stream. Nothing in it is wrong.
import gc
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main() -> int:
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    data = TensorDataset(torch.randn(1024, 64), torch.randint(0, 4, (1024,)))
    loader = DataLoader(data, batch_size=128, shuffle=True, num_workers=2, pin_memory=True,
                        multiprocessing_context="fork")
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 4)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for epoch in range(2):
        for xb, yb in loader:
            xb = xb.to(dev, non_blocking=True)
            yb = yb.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
    print(f"STREAMCHECK_NOTE steps={len(losses)} last={losses[-1]:.4f}")
    torch.cuda.synchronize()
    del model, opt
    gc.collect()
    torch.cuda.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
