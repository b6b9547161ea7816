# Makes CUDA driver calls through the fake CUPTI from Python, for
# TestPythonCallers: run with the shim preloaded and PYTHONPERFSUPPORT=1.
# PYCALLS_GIL=held calls through ctypes.PyDLL, which keeps the GIL; by
# default ctypes.CDLL releases it, as PyTorch does around its operators.
# The first argument picks the scenario; the test finds the lines by their
# "# line:" markers.
import ctypes
import os
import sys

loader = ctypes.PyDLL if os.environ.get("PYCALLS_GIL") == "held" else ctypes.CDLL
fake = loader(os.environ["STREAMCHECK_CUPTI"])
fake.fk_driver_enter.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p]
fake.fk_driver_exit.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]


def inner_function():
    fake.fk_driver_enter(b"cuCtxSynchronize", None, None)
    fake.fk_driver_exit(b"cuCtxSynchronize", None, 0, None)  # line: inner


def outer_function():
    for _ in range(3):
        inner_function()  # line: outer


class Tensor:
    # CPython 3.13 runs __init__ inline in its caller's evaluation once the
    # call site is specialized: __init__ has no trampoline of its own.
    def __init__(self):
        inner_function()  # line: init


def make_tensors():
    for _ in range(6):
        Tensor()  # line: make


class Freed:
    # Called while the frame that owned it is being torn down: that frame
    # has left the chain, but its trampoline is still on the stack.
    def __del__(self):
        inner_function()  # line: del


def dying():
    x = Freed()
    return x is None


def caller():
    dying()  # line: caller


def level(n):
    # Eight Python calls deep, as a PyTorch model's nn.Module layers are:
    # more than 32 native frames between the call and the script's top.
    if n == 0:
        inner_function()  # line: deep-inner
    else:
        level(n - 1)  # line: deep-outer


scenario = sys.argv[1] if len(sys.argv) > 1 else "nested"
if scenario == "deep":
    level(8)  # line: module-deep
elif scenario == "init":
    make_tensors()  # line: module-init
elif scenario == "teardown":
    caller()  # line: module-teardown
else:
    outer_function()  # line: module
print("pycalls: trampolines", sys.is_stack_trampoline_active())
