# streamcheck-expect: free-while-in-flight
# streamcheck-allow: use-before-alloc
# streamcheck-allow: reuse-while-in-flight
# streamcheck-allow: leak
#
# A JAX array handed to PyTorch through DLPack (zero copy) and read on a torch
# side stream that never waits for anything; the tensor is then dropped, and
# the DLPack deleter makes XLA free the buffer on its own compute stream while
# the side stream's kernels still read it. jax_dlpack_ok.py waits first.
# XLA queues the dropped buffer for its next garbage collection (at exit
# otherwise, after everything finished): collect_xla_garbage runs it while
# the side stream is still busy.
import sys

import jax
import jax.numpy as jnp
import torch


def collect_xla_garbage() -> bool:
    """Runs XLA's collection of Python-dropped buffers now (jaxlib's
    collect_garbage, the function JAX registers to run at exit)."""
    from jax._src import lib

    for mod in (getattr(lib, "_jax", None), getattr(getattr(lib, "xla_client", None), "_xla", None),
                getattr(lib, "xla_extension", None)):
        collect = getattr(mod, "collect_garbage", None)
        if collect is not None:
            collect()
            return True
    return False


def main() -> int:
    if jax.default_backend() != "gpu" or not torch.cuda.is_available():
        print("no GPU", file=sys.stderr)
        return 1
    x = jnp.ones((4096, 4096), dtype=jnp.float32)
    x.block_until_ready()
    t = torch.from_dlpack(x)
    del x
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        acc = torch.zeros(4096, 4096, device="cuda")
        for _ in range(20):  # keep the side stream reading t
            acc = acc + torch.mm(t, t) * 1e-6
    del t  # the deleter hands the JAX buffer back to XLA
    if not collect_xla_garbage():
        print("jaxlib has no collect_garbage: the free would wait for exit", file=sys.stderr)
        return 2
    # XLA freed it on its own stream: nothing waited for `side`.
    side.synchronize()
    print("sum %.1f" % float(acc.sum()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
