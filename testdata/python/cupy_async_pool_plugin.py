"""pytest plugin: every CuPy allocation of the session comes from MemoryAsyncPool.

Used as ``python3 -m pytest -p cupy_async_pool_plugin`` with this folder on
PYTHONPATH, so that CuPy's own tests allocate with cudaMallocFromPoolAsync and
free with cudaFreeAsync, in stream order. It is not a test program itself.
"""
import cupy


def pytest_sessionstart(session):
    cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)
    print("STREAMCHECK_NOTE cupy allocator: MemoryAsyncPool")
