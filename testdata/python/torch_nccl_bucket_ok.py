# streamcheck-expect: clean
# streamcheck-allow: leak
#
# torch.distributed over NCCL with one rank (world_size=1; the runner
# records it with --preload, which NCCL's calls need), on the
# cudaMallocAsync allocator backend, as a data-parallel trainer all-reduces
# gradient buckets on a communication stream (Megatron-LM's pattern). Each
# bucket is made on the default stream, the comm stream waits for it, the
# all-reduce runs from the comm stream and its work is waited for there.
# The bucket is then dropped: the allocator frees it on the stream that
# made it, the default stream, which never waited for the comm stream.
# bucket.record_stream(comm) makes the free wait for the comm stream, which waited for the all-reduce: nothing is wrong.
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

RACY = False


def main() -> int:
    store = init()
    comm = torch.cuda.Stream()
    grads = [torch.randn(1 << 20, device="cuda") for _ in range(4)]
    for step in range(3):
        bucket = torch.cat(grads)  # 16 MiB, on the default stream
        comm.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(comm):
            work = dist.all_reduce(bucket, async_op=True)
            work.wait()  # the comm stream waits for the all-reduce
            bucket.div_(1.0)
            if not RACY:
                bucket.record_stream(comm)
        del bucket, work  # freed on the default stream
        # Keep the default stream busy so the all-reduce is still in flight.
        grads = [g * 1.0 for g in grads]
    finish(store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
