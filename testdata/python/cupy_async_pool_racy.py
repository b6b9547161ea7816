# streamcheck-expect: reuse-while-in-flight
# streamcheck-expect-count: 1
# streamcheck-allow: use-before-alloc
# streamcheck-allow: leak
#
# CuPy with cupy.cuda.MemoryAsyncPool as the allocator (cudaMallocAsync on the
# current stream; CuPy frees with cudaFreeAsync on the allocating stream).
# An array is allocated on non-blocking stream s1 behind a batch of large
# matmuls and read by a kernel on non-blocking stream s2 with no event between
# the streams. Everything is synchronized before any array is freed, so the
# only finding is that one use. `leak` is allowed in case a library keeps a
# stream-ordered workspace alive until exit.
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
        for _ in range(8):  # tens of milliseconds of work queued on s1
            b = (b @ a) * cp.float32(1.0 / 4096.0)
        x = cp.empty(1 << 20, dtype=cp.float32)  # cudaMallocAsync on s1, after the matmuls
        x.fill(1.0)

    with s2:
        # BUG: s2 never waits for s1; x may not even be allocated yet.
        y = x * cp.float32(2.0)
        total = float(y.sum())  # stays on s2 (y was allocated on s2)

    print(f"STREAMCHECK_NOTE sum={total:.0f} (a correct program would print {2 * (1 << 20)})")

    dev.synchronize()
    del a, b, x, y
    gc.collect()
    dev.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
