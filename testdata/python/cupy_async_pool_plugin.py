"""pytest plugin: every CuPy allocation of the session comes from MemoryAsyncPool.

Used as ``python3 -m pytest -p cupy_async_pool_plugin`` with this folder on
PYTHONPATH, so that CuPy's own tests allocate with cudaMallocFromPoolAsync and
free with cudaFreeAsync, in stream order. It is not a test program itself.

``STREAMCHECK_PYTEST_EVERY=N`` keeps every Nth collected test (the first, the
N+1st, ...), so a large parametrized file can be traced across all of its
parameters at a trace size the corpus can keep.

``STREAMCHECK_PYTEST_TIMES=FILE`` appends one line per finished test to FILE
(node id, outcome, seconds of its call phase), written as each test ends, so
a run stopped by a timeout still tells how long every test it finished took.
"""
import os

import cupy


def pytest_sessionstart(session):
    cupy.cuda.set_allocator(cupy.cuda.MemoryAsyncPool().malloc)
    print("STREAMCHECK_NOTE cupy allocator: MemoryAsyncPool")


def pytest_collection_modifyitems(session, config, items):
    every = int(os.environ.get("STREAMCHECK_PYTEST_EVERY", "1") or "1")
    if every > 1:
        kept = items[::every]
        kept_ids = {id(item) for item in kept}
        config.hook.pytest_deselected(
            items=[item for item in items if id(item) not in kept_ids])
        items[:] = kept
        print(f"STREAMCHECK_NOTE kept every {every}th test: {len(kept)} tests")


def pytest_runtest_logreport(report):
    path = os.environ.get("STREAMCHECK_PYTEST_TIMES")
    if not path or report.when != "call":
        return
    with open(path, "a") as f:
        f.write(f"{report.nodeid}\t{report.outcome}\t{report.duration:.3f}\n")
