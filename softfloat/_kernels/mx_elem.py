"""Block-scaled quantization kernels (softfloat.mx), the fast kernels' element
rounding (`element`: float32 input, exact in every mode; see the comment below)
and the host checks they need (`caller_flushes`, `f32_exact`).
"""
import numpy as np
from numba import njit

from .core import addend_branchfree, rand_bits
from .hw import bits_f32, bits_f64, f32_bits, f64_bits, flushes


# ---------------------------------------------------------------------------
# Fast paths: float32 input, 1-D blocks, every rounding mode but stochastic for
# NVFP4, no flush-to-zero. The slow twin is `mx.quantize_chunk` (tests/test_mx_fast.py
# compares them code for code).
#
# The element rounding, exact in every mode. An element is y = V / D with D the
# block's divisor. MX: D = 2**dexp and y = float64(V) * 2**-dexp is exact (V has 24
# significant bits, |V| >= 2**-149 and 2**-dexp in [2**-127, 2**127]: the product is
# a float64 normal, 2**-276 <= |y| < 2**256). NVFP4: D = ts * s (24 + 4 significant
# bits, exact in float64) and y = fl64(V / D) (one float64 rounding, any direction,
# relative error <= 2**-52). The rounding of y to the element format is then done on
# the float64 bits of |y| (leading exponent ey, 53-bit significand sig): the element
# quantum is 2**(max(ey, emin) - M), i.e. sh = 52 - M + max(emin - ey, 0) bits of sig
# drop (sh is capped at 54: sig < 2**53 <= half the quantum, so every deterministic
# mode then rounds alike: to 0, or to one quantum away from zero; odd sets bit 0).
# The increment is a branch-free (rem + add) >> sh: nearest-even add = half - 1 + (q
# & 1), nearest-away add = half, away from zero (upward for +, downward for -) add =
# 2**sh - 1, toward zero and odd add = 0 (odd ORs (rem != 0) into q). The encoding
# magnitude is (max(ey - emin, 0) << M) + q (a carry into the next binade, or from
# the subnormals into the normals, lands in the exponent field by itself), clamped
# at the largest finite magnitude (OCP: elements saturate, in every mode, as
# round_pack does with overflow="saturate").
# Why fl64(V / D) is good enough for NVFP4: an e2m1 value or midpoint is m = k * 2**j
# with k < 8, and V = m * D * (1 + delta) with V = X * 2**a (X < 2**24) and m * D =
# N * 2**b (N < 2**31): if V != m * D then |V - m * D| >= 2**min(a, b), so |delta| >=
# 2**-31 (a >= b) or >= 2**-25 (a < b, as then 2**a > N * 2**b / 2**25). The float64
# quotient's error (<= 2**-52 relative) can therefore never move y across a value or a
# midpoint of the element format, nor onto one: every deterministic rounding of
# fl64(V / D) equals that of V / D. (Stochastic rounding needs the exact fraction:
# NVFP4 stochastic stays on the general kernel.)
# (NVFP4 in nearest_even, nearest_away and toward_zero does not come here: it takes
# `nv_fast_chunk`, exact comparisons with the rounding boundaries and no division; see
# "NVFP4 elements by thresholds" in mx_nvfp4.py. Upward, downward and odd use this quotient.)
# Stochastic (MX only, y exact): y's significand has <= 24 significant bits, so sig24
# = sig >> 29 and sh24 = sh - 29 (uncapped, then capped at 60: with rem24 < 2**24 and
# nb <= 32, every sh24 >= 57 gives top = [rem24 != 0]); top = ceil(rem24 * 2**nb /
# 2**sh24) and the element rounds up when rbits < top, round_pack's rule.
# MXINT8 is the element "format" M = 6, emin = 0, largest magnitude 127 (multiples of
# 2**-6 below 2; the code is the two's complement of +-mag).
# ---------------------------------------------------------------------------
_FRAC52 = np.int64((1 << 52) - 1)
_HID52 = np.int64(1 << 52)
_MAG32 = np.int32(0x7FFFFFFF)
_MAG64 = np.int64(0x7FFFFFFFFFFFFFFF)


_env_bad = flushes        # MXCSR has FTZ or DAZ set (hw.flushes)


def caller_flushes() -> bool:
    """Whether the calling thread's MXCSR has FTZ or DAZ set (e.g. by
    ``torch.set_flush_denormal(True)``): then float32/float64 arithmetic and
    numpy's float casts read or write subnormals as zero, and a fast path that uses
    them must refuse (its caller takes an integer path). False on hosts without
    MXCSR (not x86-64)."""
    if not _X86:
        return False
    return bool(_env_bad())


_X86 = __import__("platform").machine().lower() in ("x86_64", "amd64")




def f32_exact(v) -> np.ndarray:
    """float64 values that are float32 values as float32, by integer operations on
    their bits (numpy's cast, like any float arithmetic, flushes float32 subnormals
    when the caller's MXCSR has FTZ set): the same result as ``v.astype(np.float32)``
    with subnormals kept; magnitudes at or above 2**128 give +-inf and NaNs keep
    their sign and top payload bits, quieted (as the cast). Values with more than 24
    significant bits are truncated (the callers pass float32 values only)."""
    v = np.ascontiguousarray(v, np.float64)
    if not caller_flushes():
        with np.errstate(over="ignore"):
            return v.astype(np.float32)       # the same, where the cast keeps subnormals
    u = v.view(np.uint64)
    sign = ((u >> np.uint64(63)).astype(np.uint32) << np.uint32(31))
    e = ((u >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = u & np.uint64((1 << 52) - 1)
    out = np.zeros(v.shape, np.uint32)
    norm = (e >= 1023 - 126) & (e < 1023 + 128)
    out[norm] = (((e[norm] - (1023 - 127)).astype(np.uint64) << np.uint64(23))
                 | (frac[norm] >> np.uint64(29))).astype(np.uint32)
    sub = (e > 0) & (e < 1023 - 126)
    # 2**-149 <= |v| < 2**-126: the integer |v| * 2**149 (exact float64 arithmetic on
    # normal float64 values, which MXCSR does not change) is the fraction field
    out[sub] = (np.abs(v[sub]) * 2.0 ** 149).astype(np.uint32)
    out[(e >= 1023 + 128) & (e < 0x7FF)] = 0x7F800000
    out[(e == 0x7FF) & (frac == 0)] = 0x7F800000
    nan = (e == 0x7FF) & (frac != 0)
    # as the hardware cast: the top payload bits kept, the quiet bit set
    out[nan] = (np.uint64(0x7FC00000) | (frac[nan] >> np.uint64(29))).astype(np.uint32)
    return (out | sign).view(np.float32)


@njit(cache=True)
def pow2(k):
    """2.0**k for -1022 <= k <= 1023, from its bits."""
    return bits_f64((np.int64(k) + 1023) << 52)


@njit(cache=True)
def elem_round(yb, sign, M, emin, rm):
    """(mag, q, ey): |y| (float64 bits yb, sign cleared; 0 allowed; ``sign`` its
    sign) rounded to the element format by the mode masks ``rm`` (the five of
    `core.round_masks`): the unclamped encoding magnitude, the quotient q in quanta
    of 2**(max(ey, emin) - M), and y's exponent (see the comment above). The
    increment is `core.addend_branchfree`'s, odd rounding ORs the sticky bit in."""
    m_rne, m_rna, m_up, m_dn, m_odd = rm
    ey = (yb >> 52) - 1023
    sig = (yb & _FRAC52) | _HID52
    sig = sig if yb != 0 else np.int64(0)
    dd = emin - ey
    sh = 52 - M + (dd if dd > 0 else 0)
    sh = sh if sh < 54 else np.int64(54)
    half = np.int64(1) << (sh - 1)
    q = (sig + addend_branchfree(sign, (sig >> sh) & 1, half, m_rne, m_rna, m_up, m_dn)) >> sh
    q |= m_odd & np.int64((sig & ((half << 1) - 1)) != 0)
    eo = ey - emin
    mag = ((eo if eo > 0 else 0) << M) + q
    return mag, q, ey


@njit(cache=True)
def elem_round_sr(yb, M, emin, rb, nb):
    """`elem_round` for stochastic rounding of an exact y (24 significant bits)."""
    ey = (yb >> 52) - 1023
    sig = ((yb & _FRAC52) | _HID52) >> 29
    sig = sig if yb != 0 else np.int64(0)
    dd = emin - ey
    sh = 23 - M + (dd if dd > 0 else 0)
    sh = sh if sh < 60 else np.int64(60)
    low = (np.int64(1) << sh) - 1
    top = (((sig & low) << nb) + low) >> sh
    q = (sig >> sh) + np.int64(rb < top)
    eo = ey - emin
    mag = ((eo if eo > 0 else 0) << M) + q
    return mag, q, ey


@njit(cache=True)
def value_rne32(xv, r32, vm32, M, emin, maxval32, is_int):
    """MX, nearest even, values out, all in float32 (16 lanes per AVX-512 vector
    instead of 8): the element value X * P of float32 x for the block multipliers r32
    = 2**-e and vm32 = 2**e (float32; 2**-127 is a float32 subnormal, read as such:
    the caller checked MXCSR). y = x * r32 is exact when |y| >= 2**-126 (a float32
    normal; x has 24 bits); a smaller |y| lies far below half the smallest element
    quantum (>= 2**-17), so it rounds to zero whatever its error. With qexp =
    max(ey, emin) - M and C = 2**(qexp + 23): |y| < 2**(qexp + M + 1) <= C, the sum
    |y| + C lies in [C, 2C) whose float32 ulp is 2**qexp, so it is |y| rounded to the
    element quantum, nearest even (a carry into the next binade included), and
    subtracting C is exact. Saturate at maxval, put the sign back (MXINT8: +0, no
    negative zero), and r * vm32 is exact (a multiple of 2**(emin - M) times 2**e >=
    2**-127, so at least 2**-143: a float32), up to overflow to +-inf, as the float64
    path's cast."""
    y = xv * r32
    a = np.abs(y)
    ey = ((f32_bits(a) >> 23) & 0xFF) - 127
    qe = ey if ey > emin else emin
    c = bits_f32(np.int32((qe - M + 23 + 127) << 23))
    r = (a + c) - c
    r = r if r < maxval32 else maxval32
    r = r * vm32
    neg = (f32_bits(y) < 0) & ((r != 0) | (not is_int))
    return -r if neg else r


@njit(cache=True)
def elem_code(mag, sign, ef):
    """The element code of a rounded magnitude (saturated at the largest one) in the
    element format ``ef`` (see `element`)."""
    M, emin, maxmag, sshift, is_int, maxval = ef
    m = mag if mag < maxmag else maxmag
    if is_int:
        return ((m ^ -sign) + sign) & 0xFF          # two's complement of +-m
    return (sign << sshift) | m


@njit(cache=True)
def elem_value(mag, q, ey, sign, ef, vm):
    """The element's value times vm (float64; exact: see softfloat.mx.quantize_values).
    MXINT8 has no negative zero."""
    M, emin, maxmag, sshift, is_int, maxval = ef
    e = ey if ey > emin else emin
    v = np.float64(q) * pow2(e - M)
    v = v if mag <= maxmag else maxval
    v = v * vm
    return -v if sign and (v != 0 or not is_int) else v


@njit(cache=True, inline="always")
def element(xv, r, div, sr, ef, rm, key, idx, nb):
    """One element of the fast kernels, rounded: (mag, q, ey, sign) as `elem_round`.

    x (float32 xv) is brought into the element's units, y = x * r (MX: r = 2**-e,
    exact) or x / r (``div``, NVFP4: r = s * ts, one float64 rounding: see above),
    its sign taken off, and |y| rounded to the element format ``ef`` = (M, emin,
    largest magnitude encoding, sign bit position, is MXINT8, largest value;
    `softfloat.mx.elem_params`): by the mode masks ``rm`` (`core.round_masks`), or
    stochastically (``sr``) with the nb random bits of element ``idx`` of stream
    ``key``. ``div`` and ``sr`` are constants at every call site (inlined: each
    loop compiles to its own case)."""
    y = np.float64(xv) / r if div else np.float64(xv) * r
    yb = f64_bits(y)
    sign = (yb >> 63) & 1
    yb &= _MAG64
    if sr:
        mag, q, ey = elem_round_sr(yb, ef[0], ef[1], rand_bits(key, idx, nb), nb)
    else:
        mag, q, ey = elem_round(yb, sign, ef[0], ef[1], rm)
    return mag, q, ey, sign
