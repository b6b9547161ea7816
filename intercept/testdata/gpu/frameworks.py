# frameworks.py: CuPy (CUfunction handles, array descriptors as kernel
# arguments) and PyTorch (pip CUDA, its own libcupti) under the shim; also a
# launch-bound PyTorch loop for overhead. Usage: python3 frameworks.py cupy|torch|torchbench
import sys, time

what = sys.argv[1]
if what == "cupy":
    import cupy
    a = cupy.arange(1 << 16, dtype=cupy.float32)
    b = a * 2
    c = cupy.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y", "sc_add")(a, b)
    cupy.cuda.Device().synchronize()
    print("cupy a=%#x b=%#x c=%#x" % (a.data.ptr, b.data.ptr, c.data.ptr))
elif what in ("torch", "torchbench"):
    import torch
    x = torch.ones(1024, device="cuda")
    y = torch.ones(1024, device="cuda")
    n = 20000 if what == "torchbench" else 10
    for _ in range(200):
        z = (x + y) * 2
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        z = (x + y) * 2
        z.add_(1)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print("torch x=%#x y=%#x: %.2f us per iteration (3 launches)" % (x.data_ptr(), y.data_ptr(), dt / n * 1e6))
