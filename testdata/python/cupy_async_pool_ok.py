# streamcheck-expect: clean
# streamcheck-allow: leak
#
# cupy_async_pool_racy done right: an event recorded on s1 after the
# allocation and fill is waited on by s2 before the use, and an event recorded
# on s2 after the use is waited on by s1 before x is freed (CuPy frees on the
# allocating stream, s1). x is deleted without a device synchronize.
# `leak` is allowed in case a library keeps a stream-ordered workspace alive.
import gc
import sys

import cupy as cp


def main() -> int:
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    dev = cp.cuda.Device(0)
    dev.use()
    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)

    with s1:
        a = cp.ones((4096, 4096), dtype=cp.float32)
        b = a
        for _ in range(8):
            b = (b @ a) * cp.float32(1.0 / 4096.0)
        x = cp.empty(1 << 20, dtype=cp.float32)
        x.fill(1.0)
        ready = s1.record()

    s2.wait_event(ready)
    with s2:
        y = x * cp.float32(2.0)
        done = s2.record()

    s1.wait_event(done)
    with s1:
        del x  # cudaFreeAsync on s1, ordered after the use on s2 by `done`

    with s2:
        total = float(y.sum())
    print(f"STREAMCHECK_NOTE sum={total:.0f} (expect {2 * (1 << 20)})")

    dev.synchronize()
    del a, b, y
    gc.collect()
    dev.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
