# streamcheck-expect: clean
# streamcheck-allow: leak
#
# CuPy stream capture with cupy.cuda.MemoryAsyncPool: the temporaries of an
# elementwise chain are allocated inside the capture (graph memory nodes),
# and the graph is launched five times on the capturing stream, each result
# read back after the launch. Nothing in it is wrong.
import gc
import sys

import cupy as cp


def main() -> int:
    cp.cuda.set_allocator(cp.cuda.MemoryAsyncPool().malloc)
    dev = cp.cuda.Device(0)
    dev.use()
    s = cp.cuda.Stream(non_blocking=True)
    x = cp.arange(1 << 16, dtype=cp.float32)
    out = cp.empty_like(x)
    dev.synchronize()
    with s:
        try:
            s.begin_capture()
            t = cp.sin(x) * cp.float32(2.0) + cp.float32(1.0)
            cp.multiply(t, t, out=out)
            del t
            graph = s.end_capture()
        except Exception as e:
            print(f"STREAMCHECK_NOTE capture failed: {type(e).__name__}: {e}")
            return 3
        sums = []
        for _ in range(5):
            graph.launch(s)
            sums.append(float(out.sum()))
    s.synchronize()
    print("STREAMCHECK_NOTE sums " + " ".join(f"{v:.1f}" for v in sums))
    del graph, x, out
    gc.collect()
    dev.synchronize()
    print("STREAMCHECK_DONE")
    return 0


if __name__ == "__main__":
    sys.exit(main())
