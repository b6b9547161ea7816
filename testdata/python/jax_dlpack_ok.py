# streamcheck-expect: clean
# streamcheck-allow: leak
#
# A JAX array handed to PyTorch through DLPack (zero copy) and read on a torch
# side stream that waits for the current stream; the tensor is dropped only after
# the side stream finished, so XLA's free of the buffer on its compute stream
# comes after every read (collect_xla_garbage makes XLA free it at once). jax_dlpack_racy.py drops it early.
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
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        acc = torch.zeros(4096, 4096, device="cuda")
        for _ in range(20):  # keep the side stream reading t
            acc = acc + torch.mm(t, t) * 1e-6
    side.synchronize()  # every read of t is done
    del t
    if not collect_xla_garbage():  # XLA frees the buffer now, after every read
        print("jaxlib has no collect_garbage: the free would wait for exit", file=sys.stderr)
        return 2
    print("sum %.1f" % float(acc.sum()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
