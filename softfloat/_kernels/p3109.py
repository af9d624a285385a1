"""Kernels of softfloat.p3109: exact decoding of encodings into integer parts
(for formats whose values leave float64, and for the exact block reductions)."""
import numpy as np
from numba import njit

from .core import C_FINITE, unpack


@njit(cache=True, nogil=True)
def decode_parts_chunk(lo, hi, src, cls, sign, exp, sig, E, M, bias, kind):
    """Element i: class (core.C_*), sign, and the value (-1)**sign * sig * 2**exp."""
    for i in range(lo, hi):
        c, s, e, m = unpack(np.int64(src[i]), E, M, bias, kind, False)
        cls[i] = c
        sign[i] = s
        exp[i] = e if c == C_FINITE else 0
        sig[i] = m if c == C_FINITE else 0
    return 0
