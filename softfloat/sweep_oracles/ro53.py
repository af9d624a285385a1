"""The ``ro53`` oracle: the exact result as float64 + the sign of its error,
i.e. the result rounded to odd at 55 bits, then rounded into the target format
by integer code written here, in every deterministic mode.

Step 1, exact error terms (`exact_op`, `exact_fma`): for finite nonzero operands
of at most 26 significant bits (every format of at most 8 exponent bits lies in
[2**-149, 2**128]), ``hi = RN_53(x)`` and ``s = sign(x - hi)`` where x is the
exact result:

* add/sub: TwoSum (Knuth): s + e == x + y exactly, branch-free, no
  overflow or underflow possible (|x + y| <= 2**129, nonzero sums >= 2**-149
  are multiples of 2**-149, far above float64's subnormals);
* mul: two <= 26-bit significands: the product has <= 52 bits, exact (e = 0);
* div: q = RN(x / y); the remainder x - q*y is representable (q is a correctly
  rounded quotient, and it is a multiple of ulp(q) * ulp(y), far above float64's
  subnormals), so
  one fused multiply-add computes it exactly: r = fma(-q, y, x);
  sign(r) * sign(y) = sign(x/y - q);
* sqrt: s = RN(sqrt(x)); the residual x - s*s is representable (s is a
  correctly rounded square root), so r = fma(-s, s, x) is exact and
  sign(r) = sign(sqrt(x) - s);
* fma (x*y + z): the product p = x*y is exact (two <= 24-bit significands give
  <= 48 bits; |p| in [2**-298, 2**256]); TwoSum(p, z) gives hi = RN(p + z) and
  the exact error e = p + z - hi (TwoSum is exact without overflow, whatever
  the exponents), so s = sign(e). hi == 0 means p + z == 0 exactly.

Step 2, round to odd: with hi = sig * 2**(e-52) (sig a 53-bit integer), the
integer X = 4*sig + s stands for x on the grid of quantum 2**(e-54). Why that
is enough: |x - hi| <= ulp(hi)/2 (and <= ulp(hi)/4 below a power of two), so x
and X*2**(e-54) lie strictly on the same side of every multiple of ulp(hi)/2
(or are both equal to hi); every point and midpoint of a target grid of at most
51 bits at that magnitude is such a multiple; so both round the same way in
every mode, with the same inexactness (Boldo & Melquiond 2008: round-to-odd
at p + 2 bits followed by any rounding to p bits is correct rounding).

Step 3, `ro_round`: round the integer X right to the format's quantum at x
(the subnormal quantum below 2**emin), in the requested mode; overflow against
the largest finite value; tininess after rounding (rounding X with an
unbounded exponent range and comparing with 2**emin); encoding from the
integer significand and exponent.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._bits import (FINITE, FN, FNUZ, IEEE, INEXACT, OP_ADD, OP_DIV, OP_MUL, OP_SQRT, OP_SUB,
                    OVERFLOW, RDN, RNA, RNE, RTO, RUP, UNDERFLOW, bits_f64, f64_bits, fma_f64)
from .nan_rules import nan_out

@njit(cache=True, nogil=True)
def _sgn(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


@njit(cache=True, nogil=True)
def two_sum(x, y):
    """(s, e) with s = RN(x + y) and s + e == x + y exactly (Knuth)."""
    s = x + y
    bb = s - x
    e = (x - (s - bb)) + (y - bb)
    return s, e


@njit(cache=True, nogil=True)
def exact_op(op, x, y):
    """(hi, s): hi = RN_53(x op y), s = sign(x op y - hi); see the module doc."""
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            y = -y
        s, e = two_sum(x, y)
        return s, _sgn(e)
    if op == OP_MUL:
        return x * y, 0
    if op == OP_DIV:
        q = x / y
        return q, _sgn(fma_f64(-q, y, x)) * _sgn(y)
    if op == OP_SQRT:
        s = math.sqrt(x)
        return s, _sgn(fma_f64(-s, s, x))
    return x, 0     # conversion: exact


@njit(cache=True, nogil=True)
def exact_fma(x, y, z):
    """(hi, s) of x*y + z (see the module doc: exact product, TwoSum)."""
    p = x * y
    s, e = two_sum(p, z)
    return s, _sgn(e)


@njit(cache=True, nogil=True)
def _rnd_int(X, d, mode, sign):
    """Round the integer X >= 0 right by d >= 1 bits in ``mode`` (sign = the
    result's sign); (kept, inexact)."""
    if d > 60:                               # X < 2**56 lies below a quarter of the quantum
        X = np.int64(1) if X != 0 else np.int64(0)
        d = 2
    kept = X >> d
    rem = X & ((np.int64(1) << d) - 1)
    half = np.int64(1) << (d - 1)
    if rem == 0:
        return kept, False
    if mode == RNE:
        if rem > half or (rem == half and (kept & 1) == 1):
            kept += 1
    elif mode == RNA:
        if rem >= half:
            kept += 1
    elif mode == RUP:
        if sign == 0:
            kept += 1
    elif mode == RDN:
        if sign == 1:
            kept += 1
    elif mode == RTO:
        kept |= 1
    return kept, True


@njit(cache=True, nogil=True)
def ro_round(hi, s, E, M, bias, kind, mode, dnan):
    """Correct rounding of x = hi + (an error of sign s, smaller than half an ulp
    of hi) into the format (E, M, bias, kind) in ``mode``: (bits, flags).
    ``hi`` finite nonzero float64 of magnitude in [2**-1000, 2**1000]."""
    hb = f64_bits(hi)
    sign = (hb >> 63) & 1
    e = ((hb >> 52) & 0x7FF) - 1023                    # hi = sig * 2**(e - 52)
    sig = (hb & ((np.int64(1) << 52) - 1)) | (np.int64(1) << 52)
    X = sig * 4 + (-s if sign else s)                  # |x| on the grid 2**(e - 54)
    lsb = e - 54
    ex = e if X >= (np.int64(1) << 54) else e - 1      # exponent of x's leading bit
    emin = 1 - bias
    qe = (ex if ex > emin else emin) - M               # the format's quantum at x
    kept, inexact = _rnd_int(X, qe - lsb, mode, sign)
    flags = INEXACT if inexact else 0
    if kept >= (np.int64(1) << (M + 1)):               # rounded up to the next binade
        kept >>= 1
        qe += 1
    # the largest finite value: kmax * 2**(emax - M); fn formats lose the all-ones fraction
    emax = ((np.int64(1) << E) - 2 - bias) if kind == IEEE else ((np.int64(1) << E) - 1 - bias)
    kmax = (np.int64(1) << (M + 1)) - (2 if kind == FN else 1)
    if qe > emax - M or (qe == emax - M and kept > kmax):
        flags |= OVERFLOW | INEXACT
        to_inf = mode == RNE or mode == RNA or (mode == RUP and sign == 0) or \
            (mode == RDN and sign == 1)
        if to_inf and kind != FINITE:      # FINITE formats saturate in every mode
            if kind == IEEE:
                return (sign << (E + M)) | (((np.int64(1) << E) - 1) << M), flags
            return nan_out(sign, 0, 1, True, E, M, kind, dnan), flags
        kept = kmax
        qe = emax - M
    elif ex < emin and inexact:
        # tininess after rounding: x rounded with an unbounded exponent range < 2**emin
        ku, _ = _rnd_int(X, ex - M - lsb, mode, sign)
        # ku in [2**M, 2**(M+1)]: below 2**emin unless it carried to 2**(ex+1) == 2**emin
        if not (ku >= (np.int64(1) << (M + 1)) and ex + 1 >= emin):
            flags |= UNDERFLOW
    # encode (-1)**sign * kept * 2**qe
    if kept == 0:
        return (np.int64(0) if kind == FNUZ else sign << (E + M)), flags
    if kept < (np.int64(1) << M):                      # subnormal (qe == emin - M)
        mag = kept
    else:
        mag = ((qe + M + bias) << M) | (kept - (np.int64(1) << M))
    return (sign << (E + M)) | mag, flags


_unused = bits_f64
