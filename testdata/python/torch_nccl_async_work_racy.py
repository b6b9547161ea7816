# streamcheck-expect: free-while-in-flight
# streamcheck-expect-count: 1
# streamcheck-allow: leak
#
# torch.distributed over NCCL with one rank (world_size=1; the runner
# records it with --preload, which NCCL's calls need), on the
# cudaMallocAsync allocator backend. A tensor made on a side stream is
# all-reduced with async_op=True from that stream. ProcessGroupNCCL keeps
# the tensor alive until work.wait(), which orders only the stream current
# at it after the collective, and then the tensor, dropped already, is
# freed on the side stream that made it.
# Here work.wait() runs on the default stream: the side stream's free is not ordered after the all-reduce on NCCL's stream, one free-while-in-flight.
# `leak` is allowed because PyTorch keeps some workspaces allocated.
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

RACY = True


def main() -> int:
    store = init()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x = torch.full((4 << 20,), 3.0, device="cuda")  # 16 MiB, on the side stream
        work = dist.all_reduce(x, async_op=True)
        del x  # the work keeps it until work.wait()
        if not RACY:
            work.wait()
    if RACY:
        work.wait()  # the default stream waits; the side stream does not
    del work
    finish(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
