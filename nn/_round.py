"""Value-to-value rounding for nn: float32/float64 values rounded to nearest even
into an IEEE-style format whose values all fit in float32, float32 values out, in
one pass (no trip through encodings). The slow twin is `softfloat.to_bits` +
`softfloat.from_bits` (tests/test_nn_round.py compares them over structured and
strided-exhaustive inputs, and numpy's float16 cast for fp16).

Method (x finite, p = M + 1 bits, emin, emax of the target; the input's encoding
has f fraction bits, 23 or 52):
* |x| >= 2**emin (target-normal): rounding to nearest even at bit d = f - M of the
  input's encoding: add `core.addend_branchfree`'s nearest-even addend 2**(d-1) - 1
  + (bit d), clear the low d bits (d = 0, a float32 input into a 24-bit target:
  nothing to round, the addend is 0). A carry out
  of the fraction steps into the next binade, which is the correct result; a result
  at or above 2**(emax+1) is an overflow and becomes infinity (IEEE, nearest-even:
  everything from max + ulp/2 up rounds to 2**(emax+1) before the range check).
* |x| < 2**emin (the target's subnormal range, quantum q = 2**(emin - M)):
  float32 input: see `_round_f32_chunk`; float64 input: rint(x / q) * q in float64: x / q is exact (a power-of-two scaling of a float64
  with no underflow, |x| >= 2**-1074 and 1/q <= 2**149), rint is round-half-even
  on an integer-valued scale, and the product is exact (a multiple of q below
  2**emin is a value of the format). The sign of zero is kept.
* infinities and NaNs pass through (a NaN stays a NaN; its payload is not kept).
Both branches are computed and selected, so the loop vectorises.
"""
from __future__ import annotations

import numpy as np
from numba import njit

import softfloat as sf
from softfloat._kernels.core import addend_branchfree
from softfloat._kernels.mx import caller_flushes, f32_exact
from softfloat._parallel import MIN_PARALLEL, run_chunks


@njit(cache=True, nogil=True)
def _round_f32_chunk(lo, hi, x0, out0, M, emin, emax):
    """float32 in. Two vectorisable passes: the target-subnormal range by float32
    arithmetic, (|x| + C) - C with C = 2**(emin - M + 23) (|x| < 2**emin <= C, so
    the IEEE sum lies in [C, 2C), whose ulp is the quantum 2**(emin - M): one
    nearest-even rounding, and the subtraction is exact); then the rest on the
    encodings (see the module docstring). (Loops run over slices from 0: indices
    LLVM can prove non-negative, so that the loops vectorise.)"""
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
    minnorm = np.int32((emin + 127) << 23) if emin >= -126 else np.int32(0)
    ovf = np.int32((emax + 1 + 127) << 23) if emax < 127 else np.int32(0x7F800000)
    inf = np.int32(0x7F800000)
    C = np.float32(2.0 ** (emin - M + 23))
    for t in range(x.size):
        out[t] = (np.abs(x[t]) + C) - C          # |result|; the sign is put back below
    for t in range(x.size):
        u = xi[t]
        a = u & np.int32(0x7FFFFFFF)
        r = (a + addend_branchfree(zero, (a >> d) & lbit, half, one, zero, zero, zero)) & mask
        r = inf if r >= ovf else r
        r = a if a >= inf else r
        sg = u & np.int32(-0x80000000)
        rb = sg | r
        o = oi[t] | sg
        oi[t] = rb if a >= minnorm else o
    return 0


@njit(cache=True, nogil=True)
def _round_f64_chunk(lo, hi, x, out, M, emin, emax):
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
    ob = np.empty(1, np.int64)
    of = ob.view(np.float64)
    for t in range(lo, hi):
        u = xi[t]
        a = u & np.int64(0x7FFFFFFFFFFFFFFF)
        r = (a + addend_branchfree(zero, (a >> d) & 1, half, one, zero, zero, zero)) & mask
        r = inf if r >= ovf else r
        r = u if a >= inf else (u & np.int64(-0x8000000000000000)) | r
        if a < minnorm:
            out[t] = np.float32(np.rint(x[t] * inv_q) * q)
        else:
            ob[0] = r
            out[t] = np.float32(of[0])          # exact: a value of the format, or inf/NaN
    return 0


def fits(fmt) -> bool:
    """Whether `round_values` handles ``fmt``: IEEE-style (infinities, NaNs), every
    value a float32 (at most 24 bits, emax <= 127, smallest subnormal >= 2**-149)."""
    return fmt.kind == "ieee" and fmt.fits_float32


def round_values(x, fmt):
    """x (float32 or float64 array) rounded to nearest even into ``fmt`` (see
    `fits`), with IEEE overflow to infinity and subnormals kept; float32 out."""
    x = np.ascontiguousarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"round_values: expected float32 or float64 values, got {x.dtype}")
    if not fits(fmt):
        raise ValueError(f"round_values: {fmt.name} is not an IEEE-style format inside "
                         f"float32")
    if caller_flushes():
        # FTZ/DAZ in the caller's MXCSR: these kernels' float arithmetic would flush
        # subnormals; their slow twin, on integer kernels, gives the same values
        bits = sf.to_bits(x, fmt, "nearest_even", subnormals=True, ftz=False, daz=False,
                          overflow="ieee")
        return f32_exact(sf.from_bits(bits, fmt))
    out = np.empty(x.shape, np.float32)
    kern = _round_f32_chunk if x.dtype == np.float32 else _round_f64_chunk
    args = (x.reshape(-1), out.reshape(-1), int(fmt.mbits), int(fmt.emin), int(fmt.emax))
    if x.size < MIN_PARALLEL:
        kern(0, x.size, *args)                    # small: no thread-pool round trip
    else:
        run_chunks(kern, x.size, *args)
    return out


@njit(cache=True, nogil=True)
def _count_underflow(x, q):
    """(number of nonzero x, number of those whose rounded value q is zero), one pass
    (NaN counts as nonzero, as ``x != 0`` does)."""
    nz = 0
    uf = 0
    for t in range(x.size):
        a = x[t] != 0
        nz += a
        uf += a & (q[t] == 0)
    return nz, uf


def count_underflow(x, q):
    """`_count_underflow` on two arrays of the same shape (any float dtypes)."""
    x = np.ascontiguousarray(x).reshape(-1)
    q = np.ascontiguousarray(q, np.float32).reshape(-1)
    if x.dtype not in (np.float32, np.float64) or x.size != q.size:
        raise ValueError("count_underflow: float arrays of one size expected")
    nz, uf = _count_underflow(x, q)
    return int(nz), int(uf)
