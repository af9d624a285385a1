"""Value-to-value rounding (the fast path of `softfloat.quantize`): float32 or
float64 values rounded to nearest even into an IEEE-style format whose values all
fit in float32, values out, in one pass (no trip through encodings), with the
IEEE flags of the whole array. The slow twin is `softfloat.to_bits` +
`softfloat.from_bits` (`softfloat.conversions.quantize` with ``fast_paths`` off;
tests/test_quantize_fast.py compares them over structured and strided-exhaustive
inputs, values and flags).

Method (x finite, p = M + 1 bits, emin, emax of the target; the input's encoding
has f fraction bits, 23 or 52):
* |x| >= 2**emin (target-normal): rounding to nearest even at bit d = f - M of the
  input's encoding: add `core.addend_branchfree`'s nearest-even addend 2**(d-1) - 1
  + (bit d), clear the low d bits (d = 0, a float32 input into a 24-bit target:
  nothing to round, the addend is 0). A carry out of the fraction steps into the
  next binade, which is the correct result; a result at or above 2**(emax+1) is an
  overflow and becomes infinity (IEEE, nearest-even: everything from max + ulp/2 up
  rounds to 2**(emax+1) before the range check). For float32 inputs this needs
  2**emin to be a float32 normal (emin >= -126; the caller checks).
* |x| < 2**emin (the target's subnormal range, quantum q = 2**(emin - M)):
  float32 input: (|x| + C) - C in float32 with C = 2**(emin - M + 23) (|x| <
  2**emin <= C, so the IEEE sum lies in [C, 2C), whose ulp is q: one nearest-even
  rounding, and the subtraction is exact); float64 input: rint(x / q) * q in
  float64 (x / q is exact, a power-of-two scaling with no underflow; rint is
  round-half-even; the product, a multiple of q below 2**emin, is exact). The sign
  of zero is kept.
* Flags: inexact where the result differs from x, overflow where the rounded
  magnitude reaches 2**(emax+1), underflow where x is tiny (below ``tiny``: the
  smallest float32 / float64 at or above the tininess threshold, after rounding
  2**emin - 2**(emin - p - 1), before rounding 2**emin) and the result inexact.
* Infinities pass through; a NaN sets bit 256 of the result and its element is
  left for the caller (the NaN rule is the general kernel's).
Both branches are computed and selected, so the loops vectorise. A kernel
returns -1 (and writes nothing useful) when the thread's MXCSR has FTZ or DAZ
set: its float arithmetic would flush subnormals.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .codes import F_INEXACT, F_OVERFLOW, F_UNDERFLOW
from .core import addend_branchfree
from .hw import bits_f64, f64_bits, flushes

NAN_SEEN = 256


@njit(cache=True, nogil=True)
def round_f32_chunk(lo, hi, x0, out0, M, emin, emax, tiny):
    """float32 x in, float32 out (see the module docstring); returns the OR of the
    flags, NAN_SEEN if a NaN was met, -1 under FTZ/DAZ. (Loops run over slices from
    0: indices LLVM can prove non-negative, so that the loops vectorise.)"""
    if flushes():
        return -1
    x = x0[lo:hi]
    out = out0[lo:hi]
    xi = x.view(np.int32)
    oi = out.view(np.int32)
    d = 23 - M
    # d = 0: the addend half - 1 + lsb is 0 with half = 1 and the lsb masked off
    half = np.int32(1 << (d - 1)) if d > 0 else np.int32(1)
    lbit = np.int32(1) if d > 0 else np.int32(0)
    one, zero = np.int32(1), np.int32(0)
    mask = np.int32(~((1 << d) - 1))
    minnorm = np.int32((emin + 127) << 23)
    ovf = np.int32((emax + 1 + 127) << 23) if emax < 127 else np.int32(0x7F800000)
    inf = np.int32(0x7F800000)
    tiny32 = np.int32(tiny)
    C = np.float32(2.0 ** (emin - M + 23))
    for t in range(x.size):
        out[t] = (np.abs(x[t]) + C) - C          # |result|; the sign is put back below
    # the flags as reductions that vectorise: the OR of result ^ input (nonzero:
    # inexact somewhere; infinities and NaNs pass through unchanged), the same over
    # the tiny inputs (underflow), the largest magnitude (overflow, NaN)
    f_in = zero
    f_un = zero
    m_all = zero
    for t in range(x.size):
        u = xi[t]
        a = u & np.int32(0x7FFFFFFF)
        r = (a + addend_branchfree(zero, (a >> d) & lbit, half, one, zero, zero, zero)) & mask
        r = inf if r >= ovf else r
        r = a if a >= inf else r
        sg = u & np.int32(-0x80000000)
        res = (sg | r) if a >= minnorm else (oi[t] | sg)
        oi[t] = res
        dif = res ^ u
        f_in |= dif
        f_un |= dif if a < tiny32 else zero
        m_all = a if a > m_all else m_all
    m_fin = m_all
    if m_all >= inf:            # an infinity or a NaN: the largest finite magnitude
        m_fin = zero
        for t in range(x.size):
            a = xi[t] & np.int32(0x7FFFFFFF)
            m_fin = a if (a > m_fin and a < inf) else m_fin
    # rounding is monotonic: some finite input overflows iff the largest one does
    r = (m_fin + addend_branchfree(zero, (m_fin >> d) & lbit, half, one, zero, zero,
                                   zero)) & mask
    return _flags(f_in != 0, f_un != 0, r >= ovf and m_fin >= minnorm, m_all > inf)


@njit(cache=True, inline="always")
def _flags(inexact, underflow, overflow, nan):
    return ((F_INEXACT if inexact else 0) | (F_UNDERFLOW if underflow else 0)
            | ((F_OVERFLOW | F_INEXACT) if overflow else 0) | (NAN_SEEN if nan else 0))


@njit(cache=True, nogil=True)
def round_f64_chunk(lo, hi, x0, out0, M, emin, emax, tiny):
    """float64 x in, float32 or float64 out (the values are float32 values: the
    store is exact); flags as `round_f32_chunk`."""
    if flushes():
        return -1
    x = x0[lo:hi]
    out = out0[lo:hi]
    xi = x.view(np.int64)
    d = 52 - M
    half = np.int64(1 << (d - 1))
    one, zero = np.int64(1), np.int64(0)
    mask = np.int64(~((1 << d) - 1))
    minnorm = np.int64(emin + 1023) << 52
    ovf = np.int64(emax + 1 + 1023) << 52
    inf = np.int64(0x7FF) << 52
    inv_q = 2.0 ** (M - emin)
    q = 2.0 ** (emin - M)
    f_in = zero
    f_un = zero
    m_all = zero
    for t in range(x.size):
        u = xi[t]
        a = u & np.int64(0x7FFFFFFFFFFFFFFF)
        r = (a + addend_branchfree(zero, (a >> d) & 1, half, one, zero, zero, zero)) & mask
        r = inf if r >= ovf else r
        rb = u if a >= inf else (u & np.int64(-0x8000000000000000)) | r
        sb = f64_bits(np.rint(x[t] * inv_q) * q)      # the subnormal branch's value
        vb = rb if a >= minnorm else sb
        out[t] = bits_f64(vb)
        dif = vb ^ u
        f_in |= dif
        f_un |= dif if a < tiny else zero
        m_all = a if a > m_all else m_all
    m_fin = m_all
    if m_all >= inf:
        m_fin = zero
        for t in range(x.size):
            a = xi[t] & np.int64(0x7FFFFFFFFFFFFFFF)
            m_fin = a if (a > m_fin and a < inf) else m_fin
    r = (m_fin + addend_branchfree(zero, (m_fin >> d) & 1, half, one, zero, zero, zero)) & mask
    return _flags(f_in != 0, f_un != 0, r >= ovf and m_fin >= minnorm, m_all > inf)
