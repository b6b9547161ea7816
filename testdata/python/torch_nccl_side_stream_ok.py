# streamcheck-expect: clean
# streamcheck-allow: leak
#
# torch.distributed over NCCL with one rank (world_size=1, a file:// store;
# the runner records it with --preload, which NCCL's calls need), on the
# cudaMallocAsync allocator backend. A tensor made on the default stream is
# all-reduced from a side stream. ProcessGroupNCCL makes its NCCL stream
# wait for the current stream, the side stream, only: here the side
# stream waits for the default stream first (wait_stream), so nothing is
# wrong. Everything is synchronized before the tensor is freed. `leak` is
# allowed because PyTorch keeps some workspaces allocated.
import os
import sys
import tempfile

import torch
import torch.distributed as dist

RACY = False


def main() -> int:
    print(f"STREAMCHECK_NOTE PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r}")
    torch.cuda.set_device(0)
    store = tempfile.NamedTemporaryFile(prefix="streamcheck-nccl-", delete=False).name
    dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
    dev = torch.device("cuda", 0)
    side = torch.cuda.Stream(device=dev)
    # Warm NCCL up (communicator, its streams) before the case.
    warm = torch.ones(1024, device=dev)
    dist.all_reduce(warm)
    torch.cuda.synchronize()

    x = torch.full((4 << 20,), 2.0, device=dev)  # 16 MiB, on the default stream
    with torch.cuda.stream(side):
        if not RACY:
            side.wait_stream(torch.cuda.default_stream(dev))
        dist.all_reduce(x)
    torch.cuda.synchronize()
    print("STREAMCHECK_NOTE sum", float(x.sum()))
    del x, warm
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if os.path.exists(store):  # destroy_process_group may have removed it
        os.unlink(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
