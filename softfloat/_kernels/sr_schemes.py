"""The stochastic rounding schemes that take explicit random bits: round_pack's
step 3 for the kernel codes RSR_A, RSR_B, RSR_C and RSR_ADD (codes.py).

Notation (docs/stochastic.md): the exact magnitude is q + nu ulps of the result's
grid (q the truncated significand, 0 < nu < 1 the discarded fraction), R the
random integer, 0 <= R < 2**N. The magnitude rounds away from zero (q + 1) when

* ``stochastic_a`` (P3109 StochasticA):  floor(nu * 2**N) + R >= 2**N
* ``stochastic_b`` (P3109 StochasticB):  floor(nu * 2**(N+1)) + 2R + 1 >= 2**(N+1)
* ``stochastic_c`` (P3109 StochasticC):  RNITE(nu * 2**N) + R >= 2**N
  (RNITE: to the nearest integer, ties to even)
* ``stochastic_add`` (add and truncate):  R is added to the magnitude with its top
  bit just below the last bit that a *normal* result in the value's binade keeps
  (the format's full precision, whatever the exponent range), and the sum is
  truncated on the result's grid. For normal results this is stochastic_a; for
  results below the normal range (more bits discarded than the format's
  precision alone discards) R no longer reaches the top of the discarded field.
"""
import numpy as np

from .codes import RSR, RSR_A, RSR_B, RSR_C
from .jit import helper


@helper
def is_sr_code(mode):
    """Whether the rounding code rounds stochastically (seeded or explicit bits):
    overflow then goes to infinity as nearest rounding does, and tininess is
    detected before rounding."""
    return mode == RSR or mode >= RSR_A


@helper
def scheme_round_up(mode, nb, r, rem, sh, add_pos):
    """1 if the magnitude rounds away from zero under the scheme ``mode``, else 0.

    ``rem``: the discarded field, ``sh`` bits (nu = rem / 2**sh; bit 0 may be a
    jammed sticky bit); ``nb``: N; ``r``: R; ``add_pos``: the bit of ``rem`` where
    R's lowest bit lands under stochastic_add (sh - nb for normal results, less
    below the normal range; < 1 only far below the smallest subnormal, where the
    sum cannot reach it). The callers keep sh - nb >= 2 (softfloat.stochastic
    checks N against the bits each operation computes exactly), so the top N + 1
    bits of rem and the tie test below them are exact."""
    one = np.int64(1)
    if mode == RSR_A:
        return one if (rem >> (sh - nb)) + r >= (one << nb) else np.int64(0)
    if mode == RSR_B:
        return one if (rem >> (sh - nb - 1)) + 2 * r + 1 >= (one << (nb + 1)) else np.int64(0)
    if mode == RSR_C:
        d = sh - nb
        t = rem >> d
        low = rem & ((one << d) - 1)
        h = one << (d - 1)
        if low > h or (low == h and (t & 1) == 1):
            t += 1
        return one if t + r >= (one << nb) else np.int64(0)
    # RSR_ADD: (rem >> add_pos) + R < 2 * 2**(sh - add_pos): the carry is 0 or 1
    if add_pos < 1:
        return np.int64(0)
    return ((rem >> add_pos) + r) >> (sh - add_pos)
