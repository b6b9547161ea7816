# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A few steps of a small MLP trained with DistributedDataParallel over NCCL
# with one rank (world_size=1; the runner records it with --preload, which
# NCCL's calls need), on the cudaMallocAsync allocator backend: DDP
# all-reduces its gradient buckets from its own hooks and orders its
# streams itself. Nothing in it is wrong. `leak` is allowed because PyTorch
# keeps some workspaces allocated.
import os
import sys
import tempfile

import torch
import torch.distributed as dist


def init() -> str:
    os.environ.setdefault("TORCH_NCCL_AVOID_RECORD_STREAMS", "1")  # tensors kept until work.wait(), as PyTorch 2.11 does
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r}")
    torch.cuda.set_device(0)
    store = tempfile.NamedTemporaryFile(prefix="streamcheck-nccl-", delete=False).name
    dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
    warm = torch.ones(1024, device="cuda")  # the communicator and its streams, before the case
    dist.all_reduce(warm)
    torch.cuda.synchronize()
    return store


def finish(store: str) -> None:
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if os.path.exists(store):  # destroy_process_group may have removed it
        os.unlink(store)


def main() -> int:
    store = init()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    ).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0], bucket_cap_mb=1)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    for step in range(5):
        x = torch.randn(64, 256, device="cuda")
        y = torch.randint(0, 10, (64,), device="cuda")
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    print("STREAMCHECK_NOTE loss", float(loss))
    del ddp, model, opt
    finish(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
