"""The decorator of the kernels' scalar helpers.

numba compiles every jitted function into machine code of its own, with a
CPython wrapper (so that Python can call it) and a C wrapper. A helper that only
kernels call (round_pack, the ``*_pre`` functions, finish, specialize's NaN
rules, ...) needs neither: ``helper`` leaves them out, which takes about 0.03 s
of CPU per helper off a cold first call (measured on the first fp16 add, whose
general kernel calls some twenty helpers). Kernels called from Python (the
``*_chunk`` loops) keep plain ``@njit(cache=True, nogil=True)``. A helper is
still cached, and numba still compiles each once per process and signature.
"""
from numba import njit

helper = njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
