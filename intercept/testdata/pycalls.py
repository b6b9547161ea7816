# Makes one CUDA driver call through the fake CUPTI from two levels of
# Python functions, for TestPythonCallers: run with the shim preloaded and
# PYTHONPERFSUPPORT=1. PYCALLS_GIL=held calls through ctypes.PyDLL, which
# keeps the GIL; by default ctypes.CDLL releases it, as PyTorch does around
# its operators. The test finds the lines by their "# line:" markers.
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


outer_function()  # line: module
print("pycalls: trampolines", sys.is_stack_trampoline_active())
