"""The kernel of `softfloat.updates.add_update`: w + delta in float32 (IEEE
nearest even, the host's addition) and, in the same pass, how many deltas were
nonzero and how many of those left w unchanged. Its slow twin is NumPy's
``w + delta`` and two counts (tests/test_updates.py)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def add_count_chunk(lo, hi, w0, delta0, new0):
    """new = w + delta over [lo, hi); returns nonzero * 2**32 + lost (the nonzero
    deltas and those that left w unchanged; a chunk has fewer than 2**31)."""
    w = w0[lo:hi]
    delta = delta0[lo:hi]
    new = new0[lo:hi]
    nz = 0
    lost = 0
    for t in range(w.size):
        d = delta[t]
        r = w[t] + d
        new[t] = r
        moved = d != 0
        nz += moved
        lost += moved & (r == w[t])
    return (np.int64(nz) << 32) | np.int64(lost)
