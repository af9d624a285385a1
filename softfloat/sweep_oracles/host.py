"""The ``host`` oracle (round-to-nearest-even only): the operation in float64,
rounded into the target format by the host FPU's own round-to-nearest-even.

Step 1: hi = RN_53(x) and s = sign(x - hi) as in `ro53.exact_op` (the exact
error terms are needed for the flags only).

Step 2, why RN_t(RN_53(x)) = RN_t(x) (the double rounding is innocuous): for
x = a op b with op in {+, -, *, /, sqrt} and a, b of precision p <= 25, a
midpoint m of a target grid of precision t <= p (normal or subnormal: the
subnormal grid is a fixed quantum, i.e. fewer bits) that x does not equal lies
at distance > 2**-(2p+1) |x| from x (Figueroa 1995, "When is double rounding
innocuous?": a - m*b, a - m*m, ... are nonzero multiples of the operands'
quanta). With 53 >= 2p + 2, RN_53(x) therefore never lands on such a
midpoint, and since rounding is monotone, RN_t(RN_53(x)) = RN_t(x). For
conversions hi = x exactly. (This does NOT hold for fma, whose exact result
can lie arbitrarily close to a midpoint: fma uses the ro53 oracle only.)

Step 3, the hardware rounding, branch-free: with qe the exponent of the
target's quantum at hi (max(exponent(hi), emin) - M) and the float64 constant
C = 1.5 * 2**(qe + 52), the sum |hi| + C lies in [2**(qe+52), 2**(qe+53))
because |hi| < 2**(qe+M+1) <= 2**(qe+51); its ulp is exactly 2**qe, so the FPU
rounds it to the nearest multiple of 2**qe, ties to even (C / 2**qe =
1.5 * 2**52 is even, so the parity of the multiple is that of RN(|hi|)/2**qe);
subtracting C is exact. So r = (|hi| + C) - C = RN at quantum 2**qe of |hi|,
i.e. RN_t(|hi|) with an unbounded exponent above and the subnormal grid below.
(numba compiles without fast-math, so the expression is not reassociated.)

Step 4, flags from exactness: inexact iff r != |hi| or s != 0; overflow iff
r > max (r is the rounding with an unbounded exponent range); tininess after
rounding iff |x| < T = 2**emin * (1 - 2**-(t+1)) (the midpoint below 2**emin at
precision t rounds up to 2**emin, ties to even), decided exactly from hi and
the sign of its error; underflow = tiny and inexact. Encoding r (exactly
representable) is field extraction from its float64 bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import FINITE, FN, FNUZ, IEEE, INEXACT, OVERFLOW, UNDERFLOW, bits_f64, f64_bits
from .nan_rules import nan_out


@njit(cache=True, nogil=True)
def host_rne(hi, s, E, M, bias, kind, fmax, T, dnan):
    """RN_t of x = hi + (error of sign s) into the format: (bits, flags); ``hi``
    finite nonzero, ``fmax`` the largest finite value, ``T`` the tininess
    threshold of the module doc."""
    hb = f64_bits(hi)
    sign = (hb >> 63) & 1
    ah = abs(hi)
    eh = ((hb >> 52) & 0x7FF) - 1023
    emin = 1 - bias
    qe = max(eh, emin) - M
    C = bits_f64(((qe + 52 + 1023) << 52) | (np.int64(1) << 51))   # 1.5 * 2**(qe+52)
    r = (ah + C) - C
    sm = -s if sign else s                      # sign of the error of |x| - |hi|
    inexact = (r != ah) | (sm != 0)
    flags = np.int64(inexact) * INEXACT
    if r > fmax:
        flags |= OVERFLOW | INEXACT
        if kind == IEEE:
            return (sign << (E + M)) | (((np.int64(1) << E) - 1) << M), flags
        if kind == FINITE:                      # saturates (nearest even: host oracle)
            return (sign << (E + M)) | ((np.int64(1) << (E + M)) - 1), flags
        return nan_out(sign, 0, 1, True, E, M, kind, dnan), flags
    tiny = (ah < T) | ((ah == T) & (sm < 0))
    flags |= np.int64(tiny & inexact) * UNDERFLOW
    rb = f64_bits(r)
    er = ((rb >> 52) & 0x7FF) - 1023
    norm = ((er + bias) << M) | ((rb >> (52 - M)) & ((np.int64(1) << M) - 1))
    # below 2**emin: r is a multiple of 2**(emin - M): its encoding is r / 2**(emin - M)
    two_emin = bits_f64((emin + 1023) << 52)
    sub = np.int64(min(r, two_emin) * bits_f64((M - emin + 1023) << 52))
    mag = norm if r >= two_emin else sub
    if kind == FNUZ and mag == 0:
        return np.int64(0), flags
    return (sign << (E + M)) | mag, flags


def tininess_threshold(emin: int, t: int) -> float:
    """T = 2**emin * (1 - 2**-(t+1)) for a format of precision t."""
    return float(np.ldexp(1.0 - np.ldexp(1.0, -(t + 1)), emin))


_unused = (FN,)
