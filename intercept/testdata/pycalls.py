# Makes one CUDA driver call through the fake CUPTI from two levels of
# Python functions, for TestPythonCallers: run with the shim preloaded and
# PYTHONPERFSUPPORT=1.
import ctypes
import os
import sys

fake = ctypes.CDLL(os.environ["STREAMCHECK_CUPTI"])
fake.fk_driver_enter.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p]
fake.fk_driver_exit.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]


def inner_function():
    fake.fk_driver_enter(b"cuCtxSynchronize", None, None)
    fake.fk_driver_exit(b"cuCtxSynchronize", None, 0, None)


def outer_function():
    inner_function()


outer_function()
print("pycalls: trampolines", sys.is_stack_trampoline_active())
