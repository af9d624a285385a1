"""Block-scaled quantization kernels (softfloat.mx): scale computation, element
rounding, dequantization.

Every element rounding of the general kernel (`quantize_chunk`) is one
`core.round_pack` of the exact quotient or product:
an input value V = (-1)**s * sig * 2**e (float32 or float64 bits, unpacked exactly)
divided by the block's divisor D = dsig * 2**dexp (a power of two for the MX
formats, dsig = 1; for NVFP4 dsig holds the product of the per-tensor fp32 scale's
and the e4m3 block scale's significands, < 2**28). Nothing is first rounded to a
host float, so there is no double rounding. The fast kernels (float32 input, 1-D
blocks; "Fast paths" below) round every element by one helper, `element`, on the
branch-free twin of round_pack (`core.round_masks`, `core.addend_branchfree`).

Blocks: the input is viewed as (B, R, C) with blocks of (br, bc) elements over the
last two axes (br = 1 for 1-D blocks); edge blocks are partial. A chunk kernel
handles the blocks lo..hi (softfloat._parallel.run_chunks). Format parameters
travel as tuples: the element format's (E, M, bias, kind) or, for the fast
kernels, ``ef`` (`element`); the scale parameters ``sc`` (`quantize_chunk`).

numba ``inline="always"`` is kept only on the per-element helpers (`div_round`,
`round_element`, `element`): measured on 10^6 float32 values
(one thread, loaded 2-core machine, 5 interleaved runs), the general mxfp8 quantize
took 19-40 ms with them inlined against 42-54 ms without, while a fresh compile of the
kernels took 6-10 s either way (no measurable difference). The per-block scale helpers
run once per block: inlining them changed neither speed nor compile time measurably,
so they are plain calls. `element` is inlined so that its ``div`` and ``sr``
arguments, constants at each call site, fold away: each element loop compiles to
its own case. The other helpers of the fast kernels need no numba inlining: LLVM
inlines them and vectorises the element loops (checked in their assembly: AVX-512
zmm / AVX2 ymm loops). Per-tensor fp8 scaling has its kernels in fp8_scaling.py.
"""
import math

import numpy as np
from numba import njit

from .core import (C_FINITE, K_FN, K_FNUZ, K_IEEE, P_SRBITS, addend_branchfree, clz64,
                   is_stochastic, rand_bits, round_masks, round_pack, unpack)
from .hw import bits_f32, bits_f64, f32_bits, f64_bits, flushes
from .specialize import signed_nan
from ..formats import E8M0, FP8_E4M3

# scale rules
RULE_FLOOR, RULE_CEIL, RULE_EVEN, RULE_RCEIL, RULE_NEAREST, RULE_UP = 0, 1, 2, 3, 4, 5
# element kinds handled here besides formats: MXINT8's two's complement integers
ELEM_FLOAT, ELEM_INT8 = 0, 1
_I0 = np.int64(0)
# the scale formats' parameters (E, M, bias, kind) as int64 constants: their NaN codes
# (a block with a NaN or an infinity, an E8M0 exponent beyond 127) are the
# specialization's (`signed_nan`, a format without infinity), not spelled here
_E8M0 = tuple(np.int64(v) for v in E8M0.params)
_E4M3 = tuple(np.int64(v) for v in FP8_E4M3.params)


@njit(cache=True)
def floor_log2(exp, sig):
    """floor(log2(sig * 2**exp)) for sig > 0."""
    return exp + 63 - clz64(sig)


@njit(cache=True)
def _ceil_log2_value(exp, sig):
    """ceil(log2(sig * 2**exp)) for sig > 0: floor, plus 1 unless a power of two."""
    f = floor_log2(exp, sig)
    if sig & (sig - 1):
        f += 1
    return f


@njit(cache=True)
def _even_log2(exp, sig, prec):
    """floor(log2(x)) of x = sig * 2**exp after rounding x to ``prec`` significant
    bits with ties away from zero (torchao's EVEN rule: add half an element ulp to
    the amax and keep its exponent): +1 exactly when the rounding carries."""
    f = floor_log2(exp, sig)
    nb = 64 - clz64(sig)                 # significant bits of sig
    if nb <= prec:
        return f
    drop = nb - prec
    r = (sig + (np.int64(1) << (drop - 1))) >> drop
    if r >> prec:
        f += 1
    return f


@njit(cache=True)
def mx_scale_exp(rule, amax_exp, amax_sig, emax_elem, prec_elem, maxe_exp, maxe_sig, host32):
    """Unclamped shared exponent of an MX block whose largest magnitude is
    amax_sig * 2**amax_exp (amax_sig > 0). See softfloat.mx for the formulas.

    rceil: descale = amax / max_elem rounded to nearest-even in the host float
    (float32 for float32 inputs, as cuBLAS computes it; float64 otherwise), then
    ceil(log2(descale)) taken exactly from its bits."""
    if rule == RULE_FLOOR:
        return floor_log2(amax_exp, amax_sig) - emax_elem
    if rule == RULE_CEIL:
        return _ceil_log2_value(amax_exp, amax_sig) - emax_elem
    if rule == RULE_EVEN:
        return _even_log2(amax_exp, amax_sig, prec_elem) - emax_elem
    # RCEIL: an IEEE host division, then an exact ceil(log2) of the quotient
    a = np.float64(amax_sig) * 2.0 ** amax_exp      # exact: amax is a host float
    m = np.float64(maxe_sig) * 2.0 ** maxe_exp
    if host32:
        d = np.float64(np.float32(a) / np.float32(m))
    else:
        d = a / m
    if d == 0.0:
        return np.int64(-100000)
    m2, e2 = math.frexp(d)               # d = m2 * 2**e2 exactly, 0.5 <= m2 < 1
    return np.int64(e2 - 1) if m2 == 0.5 else np.int64(e2)


@njit(cache=True, inline="always")
def div_round(sign, exp, sig, dsig, dexp, E, M, bias, kind, pol, r):
    """Round (-1)**sign * sig * 2**exp / (dsig * 2**dexp) into a format, exactly:
    the quotient of the leading-bit-62 dividend by dsig (< 2**28) keeps >= 34
    bits, and a nonzero remainder is jammed into bit 0 (round_pack needs only
    the sticky bit below its rounding point, at most 25 bits down)."""
    if dsig == 1:
        return round_pack(sign, exp - dexp, sig, E, M, bias, kind, pol, r)
    la = clz64(sig) - 1
    n = sig << la
    q = n // dsig
    if n - q * dsig != 0:
        q |= 1
    return round_pack(sign, exp - la - dexp, q, E, M, bias, kind, pol, r)


@njit(cache=True, inline="always")
def round_element(sign, exp, sig, dsig, dexp, elem, E, M, bias, kind, pol, r):
    """One finite nonzero element V / D into the element format: its code.
    MXINT8: round to an integer (via a pseudo format whose quantum is 1, as
    arith.int_magnitude), then clamp to +-127 (symmetric, as microxcaling)."""
    if elem == ELEM_INT8:
        bits, f = div_round(sign, exp, sig, dsig, dexp, 8, 30, -29, K_IEEE, pol, r)
        n = bits & ((np.int64(1) << 38) - 1)
        if n > 127:
            n = np.int64(127)
        return (-n if sign else n) & 0xFF
    bits, f = div_round(sign, exp, sig, dsig, dexp, E, M, bias, kind, pol, r)
    return bits


@njit(cache=True, nogil=True)
def quantize_chunk(lo, hi, x, B, R, C, br, bc, host, host32, codes, scales, elem, fmt, pol,
                   key, sc, scale_pol):
    """Blocks lo..hi: scale code per block, element codes. ``host``: (E, M, bias)
    of the input's float format (``host32``: float32); ``fmt``: the element
    format's (E, M, bias, kind) (MXINT8: the integer pseudo format of
    `round_element`), ``pol`` its kernel policy; ``sc``: the scale parameters
    (stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up;
    s_up is in ``scale_pol`` here).

    stype 0: E8M0 scales (MX); 1: e4m3 scales times the per-tensor scale
    ts_sig * 2**ts_exp (NVFP4), the e4m3 scale being amax / (max_elem * ts)
    rounded once by ``scale_pol`` (nearest-even or upward, saturating); a scale
    that rounds to 0 becomes 2**-9 (the smallest e4m3 subnormal)."""
    hE, hM, hbias = host
    E, M, bias, kind = fmt
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    nbr = (R + br - 1) // br
    nbc = (C + bc - 1) // bc
    magmask = (np.int64(1) << (hE + hM)) - 1
    infb = ((np.int64(1) << hE) - 1) << hM
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    snan = (signed_nan(_I0, _E8M0[0], _E8M0[1], _E8M0[3]) if stype == 0 else
            signed_nan(_I0, _E4M3[0], _E4M3[1], _E4M3[3]))
    for k in range(lo, hi):
        b = k // (nbr * nbc)
        rem = k - b * nbr * nbc
        i = rem // nbc
        j = rem - i * nbc
        r0 = i * br
        r1 = min(R, r0 + br)
        c0 = j * bc
        c1 = min(C, c0 + bc)
        # pass 1: the largest magnitude (host-float magnitudes order like their bits)
        amax = _I0
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                m = np.int64(x[base + cc]) & magmask
                if m > amax:
                    amax = m
        special = amax >= infb            # an infinity or a NaN in the block
        dsig = np.int64(1)
        dexp = _I0
        if stype == 0:
            if special:
                scode = snan
            else:
                if amax == 0:
                    e = np.int64(-127)
                else:
                    cls, s, ae, asg = unpack(amax, hE, hM, hbias, K_IEEE, False)
                    e = mx_scale_exp(rule, ae, asg, emax_elem, prec_elem, maxe_exp, maxe_sig,
                                     host32)
                if e > 127:
                    scode = snan              # the scale overflows E8M0: NaN
                else:
                    if e < -127:
                        e = np.int64(-127)
                    scode = e + 127
                    dexp = e
                    if elem == ELEM_INT8:
                        dexp = e - 6          # MXINT8 elements carry an implicit 2**-6
        else:
            if special:
                scode = snan                  # e4m3 NaN
            else:
                if amax == 0:
                    sb = np.int64(1)
                else:
                    cls, s, ae, asg = unpack(amax, hE, hM, hbias, K_IEEE, False)
                    # amax / (max_elem * ts): max_elem * ts = maxe_sig * ts_sig * 2**(..)
                    sb, f = div_round(np.int64(0), ae, asg, maxe_sig * ts_sig, maxe_exp + ts_exp,
                                      4, 3, 7, K_FN, scale_pol, _I0)
                    if sb == 0:
                        sb = np.int64(1)      # clamp to 2**-9
                scode = sb
                cls, s, se, ssg = unpack(sb, 4, 3, 7, K_FN, False)
                dsig = ssg * ts_sig
                dexp = se + ts_exp
                # normalise dsig: drop trailing zeros (keeps the division exact and cheap)
                while dsig > 1 and (dsig & 1) == 0:
                    dsig >>= 1
                    dexp += 1
        scales[k] = scode
        isnan_scale = scode == snan
        # pass 2: the elements
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                idx = base + cc
                if isnan_scale:
                    codes[idx] = 0
                    continue
                cls, s, ex, sg = unpack(x[idx], hE, hM, hbias, K_IEEE, False)
                if cls == C_FINITE:
                    rb = rand_bits(key, idx, nb) if sr else _I0
                    codes[idx] = round_element(s, ex, sg, dsig, dexp, elem, E, M, bias, kind,
                                               pol, rb)
                elif elem == ELEM_INT8 or kind == K_FNUZ:
                    codes[idx] = 0            # no negative zero (int8, fnuz)
                else:
                    codes[idx] = s << (E + M)
    return 0


@njit(cache=True, nogil=True)
def dequantize_chunk(lo, hi, codes, scales, B, R, C, br, bc, lut, svals, out):
    """out = lut[code] * svals[scale code] over blocks lo..hi (exact products)."""
    nbr = (R + br - 1) // br
    nbc = (C + bc - 1) // bc
    for k in range(lo, hi):
        b = k // (nbr * nbc)
        rem = k - b * nbr * nbc
        i = rem // nbc
        j = rem - i * nbc
        r0 = i * br
        r1 = min(R, r0 + br)
        c0 = j * bc
        c1 = min(C, c0 + bc)
        f = svals[scales[k]]
        for rr in range(r0, r1):
            base = (b * R + rr) * C
            for cc in range(c0, c1):
                out[base + cc] = lut[codes[base + cc]] * f
    return 0


# ---------------------------------------------------------------------------
# Fast paths: float32 input, 1-D blocks, every rounding mode but stochastic for
# NVFP4, no flush-to-zero. The slow twin is `quantize_chunk` above (tests/test_mx_fast.py
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
# "NVFP4 elements by thresholds" below. Upward, downward and odd use this quotient.)
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


def sig_exp(v: float):
    """(exp, odd sig) with v = sig * 2**exp exactly (v > 0, a float): how the
    kernels take a scale or a largest element value."""
    m, e = math.frexp(v)
    sig = int(m * (1 << 53))
    e -= 53
    while sig % 2 == 0:
        sig //= 2
        e += 1
    return e, sig


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


@njit(cache=True, error_model="numpy")
def nvfp4_scales(ams, scales, rr, vv, ok, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up):
    """NVFP4 block scales from the float32 amax bits ``ams`` of many blocks, branch-free
    (the loop vectorises): scale codes, divisors d = s * ts (y = V / d), value
    multipliers s, and 1 / 0 for a finite / NaN-scale block (a NaN or an infinity in
    the block: scale 0x7F, codes 0, values NaN).

    s = round(amax / (max_elem * ts)), nearest even (s_up 0) or upward (s_up 1),
    saturating at 448, 0 -> 2**-9: from fl64(amax / (max_elem * ts)) by `elem_round`
    (M = 3, emin = -6). Exact: the divisor has at most 3 + 24 significant bits, an e4m3
    value or midpoint at most 5, so as in the element argument above (N < 2**32 now)
    the exact quotient lies at least 2**-32 (relative) away from every e4m3 value and
    midpoint it is not equal to, far beyond the float64 quotient's error, and equals
    one exactly when the float64 quotient does."""
    ts = np.float64(ts_sig) * pow2(ts_exp)
    den = np.float64(maxe_sig) * pow2(maxe_exp) * ts          # exact: 27 bits
    rm = (np.int64(1 - s_up), _I0, np.int64(s_up), _I0, _I0)  # nearest even or upward
    snan = signed_nan(_I0, _E4M3[0], _E4M3[1], _E4M3[3])
    for k in range(ams.size):
        am = ams[k]
        sp = am >= 0x7F800000
        a = np.float64(bits_f32(am))
        mag, q, ey = elem_round(f64_bits(a / den), _I0, np.int64(3), np.int64(-6), rm)
        sb = mag if mag < 0x7E else np.int64(0x7E)
        sb = sb if sb > 0 else np.int64(1)
        ef = sb >> 3
        sval = np.float64((sb & 7) | (np.int64(8) if ef > 0 else 0)) * pow2(
            (ef if ef > 0 else 1) - 10)
        scales[k] = snan if sp else sb
        rr[k] = 1.0 if sp else sval * ts
        vv[k] = np.nan if sp else sval
        ok[k] = 0 if sp else 1


# ---------------------------------------------------------------------------
# NVFP4 elements by thresholds (e2m1 elements; nearest_even, nearest_away and
# toward_zero; float32 input): no division, float32 / int32 lanes only.
#
# The e2m1 magnitudes are v_c = 0, 0.5, 1, 1.5, 2, 3, 4, 6 for the codes c = 0..7.
# With the block divisor D = s * ts (s the e4m3 block scale, ts the fp32 tensor
# scale), x rounds to the code c = the number of boundaries k = 0..6 that |x|
# reaches, where boundary k separates c = k from c = k + 1 and lies at t_k = m_k * D:
#   nearest_even: m_k = the midpoint (v_k + v_(k+1)) / 2 = 0.25, 0.75, 1.25, 1.75, 2.5,
#     3.5, 5; a tie goes to the even code, so boundary k is "reached" when |x| > t_k
#     for k even (tie -> k) and |x| >= t_k for k odd (tie -> k + 1);
#   nearest_away: the same midpoints, always |x| >= t_k (a tie goes up in magnitude);
#   toward_zero: m_k = v_(k+1) = 0.5, 1, 1.5, 2, 3, 4, 6 and |x| >= t_k.
# Beyond 6 * D every boundary is reached: code 7, the saturated largest value (OCP
# elements saturate; round_pack with overflow="saturate" does the same in these
# three modes). This is the definition of the three roundings (the exact |x| / D
# compared with the exact boundaries), so nothing is approximated as long as each
# comparison is exact:
# - t_k = ((4 m_k) * s) * ts * 0.25 in float64 is exact: 4 m_k <= 24 (5 bits) times
#   s (4 significant bits) times ts (24 bits) has <= 33 significant bits, and its
#   magnitude lies between 2**-9 * 2**-149 * 2**-2 and 24 * 448 * 2**128 (float64
#   normal range).
# - |x| is a float32 and t_k need not be: for a float32 a and a real t, a >= t iff
#   a >= u where u is the smallest float32 >= t, and a > t iff a >= u' where u' is
#   the smallest float32 > t. With f = float32(t) (correctly rounded, nearest even,
#   overflowing to inf; exact conversion of a float64 by the hardware, MXCSR checked
#   by the kernels: no flush to zero) and t, f > 0: u = f if f >= t else nextup(f),
#   u' = f if f > t else nextup(f), and nextup of a positive finite float32 is its
#   bit pattern + 1 (FLT_MAX + 1 ulp gives the bits of inf: no finite |x| reaches it).
#   A boundary below 2**-149 gives f = 0 and u = 2**-149 (bits 1): every nonzero
#   float32 reaches it, 0 does not, as the exact comparison says.
# - Positive float32 values order like their bit patterns, so |x| >= u is the int32
#   comparison (x_bits & 0x7FFFFFFF) >= u_bits.
# The value X * P = v_c * s (quantize_values, without ts) is the sum of the steps
# d_k = (v_(k+1) - v_k) * s = 0.5 s, 0.5 s, 0.5 s, 0.5 s, s, s, 2 s over the reached
# boundaries: each d_k and each partial sum v_c * s is exact in float32 (at most 2 + 4
# significant bits, between 2**-10 and 6 * 448), so the float32 additions are exact;
# the sign is x's sign bit OR-ed in (a negative x rounding to 0 gives -0, as the
# general kernel). A block with a NaN scale (a NaN or an infinity in it) starts the
# sum at NaN (values NaN) and gets codes 0.
# Checked against the general kernel (exact integer quotient and round_pack) in
# tests/test_nvfp4_fast.py: every float32 of several binades around the boundaries of
# several block scales and tensor scales, in the three modes.
_NV_MID4 = np.array([1, 3, 5, 7, 10, 14, 20], np.int64)     # 4 * midpoints
_NV_VAL4 = np.array([2, 4, 6, 8, 12, 16, 24], np.int64)     # 4 * v_(k+1)
_NV_STEP4 = np.array([2, 2, 2, 2, 4, 4, 8], np.int64)       # 4 * (v_(k+1) - v_k)
_SIGN32 = np.int32(-2147483648)


@njit(cache=True, error_model="numpy")
def nv_bounds(vv, ok, nb_, ts, nvm, ub, db, a0):
    """The seven boundaries of blocks j < nb_ (see the comment above; the block scale
    values vv[j], 1 / 0 in ok[j] for a finite / NaN-scale block) as float32 bit
    patterns ub[:, j] (|x| reaches boundary k iff its magnitude bits are >= ub[k, j]),
    the value steps db[:, j] and the value sum's start a0[j] (0, or NaN for a NaN-scale
    block, whose boundaries are computed for s = 1 and never matter). The inner loops
    run over the blocks (they vectorise)."""
    for k in range(7):
        q = np.float64(_NV_VAL4[k] if nvm == 2 else _NV_MID4[k])
        strict = nvm == 0 and (k & 1) == 0
        st = np.float64(_NV_STEP4[k]) * 0.25
        for j in range(nb_):
            s = vv[j] if ok[j] else 1.0
            t = (q * s) * ts * 0.25                             # exact (see above)
            f = np.float32(t)
            g = np.float64(f)
            up = (g < t) | (strict & (g == t))
            ub[k, j] = f32_bits(f) + np.int32(up)
            db[k, j] = np.float32(st * s)
    for j in range(nb_):
        a0[j] = np.float32(0.0) if ok[j] else np.float32(np.nan)


@njit(cache=True)
def _nv_col(ub, j):
    """Block (or column) j's seven boundaries ub[:, j] (or steps db[:, j]) as a tuple."""
    return (ub[0, j], ub[1, j], ub[2, j], ub[3, j], ub[4, j], ub[5, j], ub[6, j])


@njit(cache=True)
def _nv_value(v, u, d, s0):
    """The value bits of float32 bits v: s0 plus the steps d[k] of the boundaries
    u[k] its magnitude reaches, with v's sign (see the comment above)."""
    a = v & _MAG32
    z = np.float32(0.0)
    acc = s0 + (d[0] if a >= u[0] else z)
    acc = acc + (d[1] if a >= u[1] else z)
    acc = acc + (d[2] if a >= u[2] else z)
    acc = acc + (d[3] if a >= u[3] else z)
    acc = acc + (d[4] if a >= u[4] else z)
    acc = acc + (d[5] if a >= u[5] else z)
    acc = acc + (d[6] if a >= u[6] else z)
    return f32_bits(acc) | (v & _SIGN32)


@njit(cache=True)
def _nv_code(v, u, okj):
    """The e2m1 code of float32 bits v: the number of boundaries u[k] its magnitude
    reaches, v's sign as bit 3; 0 in a NaN-scale block (okj 0)."""
    a = v & _MAG32
    c = (np.int32(a >= u[0]) + np.int32(a >= u[1]) + np.int32(a >= u[2])
         + np.int32(a >= u[3]) + np.int32(a >= u[4]) + np.int32(a >= u[5])
         + np.int32(a >= u[6]))
    return np.uint8((c | ((v >> 28) & 8)) * okj)


@njit(cache=True)
def nv_run(xi, xo, oi, oo, n, ub, db, a0, j, want_vals, oc, okj):
    """n contiguous elements of one block j: float32 bits xi[xo:xo + n] -> value bits
    oi[oo:oo + n] (want_vals) or codes oc[oo:oo + n]."""
    u = _nv_col(ub, j)
    xs = xi[xo:xo + n]                  # slices: indices from 0, no wraparound checks
    if want_vals:
        os_ = oi[oo:oo + n]
        d = _nv_col(db, j)
        s0 = a0[j]
        for i in range(n):
            os_[i] = _nv_value(xs[i], u, d, s0)
    else:
        cs = oc[oo:oo + n]
        for i in range(n):
            cs[i] = _nv_code(xs[i], u, okj)


@njit(cache=True)
def nv_row(xi, xo, oi, oo, T, ub, db, a0, want_vals, oc, ok):
    """One row of T columns, column t in block column t (quantize_fast_chunk's layout):
    as `nv_run` with per-column boundaries. The value is formed with fewer loads per
    element: h = sum over the reached boundaries of (v_(k+1) - v_k) / 0.5 = 1, 1, 1,
    1, 2, 2, 4 (h = 2 v_c, an integer <= 12, exact in float32), then h * db[0, t] +
    a0[t] with db[0, t] = 0.5 s: h * 0.5 s = v_c * s exactly (the same float32 as the
    step sum of `nv_run`: at most 6 significant bits, between 2**-10 and 6 * 448), and
    adding a0 = +0 changes nothing (+0 + +0 = +0; the sign is OR-ed in afterwards)
    while a0 = NaN makes a NaN-scale block's values NaN."""
    xs = xi[xo:xo + T]                  # slices: indices from 0, no wraparound checks
    if want_vals:
        os_ = oi[oo:oo + T]
        z = np.float32(0.0)
        one = np.float32(1.0)
        two = np.float32(2.0)
        four = np.float32(4.0)
        for t in range(T):
            v = xs[t]
            a = v & _MAG32
            h = (one if a >= ub[0, t] else z) + (one if a >= ub[1, t] else z)
            h = h + (one if a >= ub[2, t] else z)
            h = h + (one if a >= ub[3, t] else z)
            h = h + (two if a >= ub[4, t] else z)
            h = h + (two if a >= ub[5, t] else z)
            h = h + (four if a >= ub[6, t] else z)
            acc = h * db[0, t] + a0[t]
            os_[t] = f32_bits(acc) | (v & _SIGN32)
    else:
        cs = oc[oo:oo + T]
        for t in range(T):
            cs[t] = _nv_code(xs[t], _nv_col(ub, t), ok[t])


@njit(cache=True)
def mx_exp32(am, rule, emax_elem, prec_elem, maxe32):
    """`mx_scale_exp` for a finite nonzero float32 amax (bits ``am``), branch-free on
    the data: the leading exponent from the bits (a subnormal amax through its exact
    float32 conversion, am < 2**23); ceil adds 1 unless a power of two; even adds the
    carry of rounding the 24-bit significand to prec_elem bits ties away; rceil takes
    the float32 quotient amax / max_elem (maxe32 = max_elem as float32, exact) and
    ceil(log2) of it exactly from its float64 bits (a zero quotient gives -100000)."""
    nrm = am >= 0x800000
    fb = f32_bits(np.float32(am))                    # exact for am < 2**23
    f = (am >> 23) - 127 if nrm else (fb >> 23) - 127 - 149
    sig = (am & 0x7FFFFF) | 0x800000 if nrm else (fb & 0x7FFFFF) | 0x800000
    if rule == RULE_FLOOR:
        return np.int64(f) - emax_elem
    if rule == RULE_CEIL:
        return np.int64(f) + np.int64((sig & 0x7FFFFF) != 0) - emax_elem
    if rule == RULE_EVEN:
        half = np.int64(1) << (23 - prec_elem)
        return np.int64(f) + ((np.int64(sig) + half) >> 24) - emax_elem
    d = np.float64(bits_f32(am) / maxe32)
    db = f64_bits(d)
    e2 = (db >> 52) - 1023 + np.int64((db & _FRAC52) != 0)
    return e2 if d != 0.0 else np.int64(-100000)


@njit(cache=True, error_model="numpy")
def mx_scales(ams, scales, rr, vv, ok, rule, emax_elem, prec_elem, maxe32):
    """MX block scales from the float32 amax bits ``ams`` of many blocks (the loop
    vectorises): E8M0 codes, multipliers r = 2**-e (y = V * r), value multipliers
    2**e, and 1 / 0 for a finite / NaN-scale block. e = `mx_exp32` (the rule), -127
    for an all-zero block, clamped below at -127; the NaN scale 0xFF for e > 127 or
    a NaN or infinity in the block (as `quantize_chunk`)."""
    snan = signed_nan(_I0, _E8M0[0], _E8M0[1], _E8M0[3])
    for k in range(ams.size):
        am = ams[k]
        e = mx_exp32(am, rule, emax_elem, prec_elem, maxe32)
        e = e if am != 0 else np.int64(-127)
        e = e if e > -127 else np.int64(-127)
        sp = (am >= 0x7F800000) | (e > 127)
        ec = e if e < 127 else np.int64(127)
        scales[k] = snan if sp else ec + 127
        rr[k] = 1.0 if sp else pow2(-ec)
        vv[k] = np.nan if sp else pow2(ec)
        ok[k] = 0 if sp else 1


@njit(cache=True)
def block_span(k, nL, bl, L, T):
    """Work item k of x viewed as (B, L, T) in blocks of bl along L (nL per row):
    (b, l0, l1, base): the block's rows l0..l1 of slab b = k // nL and the flat index
    of its first element. Its scales start at k * T."""
    b = k // nL
    l0 = (k - b * nL) * bl
    return b, l0, min(L, l0 + bl), (b * L + l0) * T


@njit(cache=True)
def col_amax(xs, nrows, T, amax):
    """amax[t] = the largest magnitude bits of column t of nrows rows of T int32
    float32 bit patterns in xs (float32 magnitudes order like their bits)."""
    for t in range(T):
        amax[t] = 0
    for l in range(nrows):
        row = xs[l * T:(l + 1) * T]
        for t in range(T):
            m = row[t] & _MAG32
            amax[t] = m if m > amax[t] else amax[t]


@njit(cache=True, nogil=True, error_model="numpy")
def quantize_fast_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, ef, mode, sr,
                        nb, key, sc):
    """Blocks of ``bl`` along axis 1 of float32 x viewed as (B, L, T), C order; work
    item k = (b, i): the block row i (rows i*bl.. of the L axis) of slab b, all T
    columns (T == 1: one block). Writes element codes (``want_vals`` 0) or float32
    values X * P (NVFP4: s * P, without the tensor scale) into ``codes`` / ``vals``
    (the layout of x), scale codes into ``scales`` (B, ceil(L / bl), T). ``ef``: the
    element format (`element`); ``mode``: the rounding code (``sr``: stochastic, nb
    random bits from stream ``key``); ``sc``: the scale parameters (stype, rule,
    emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up), as
    `quantize_chunk`. Random bits of element (b, l, t): index (b * T + t) * L + l,
    its position with the blocked axis moved last (as `quantize_chunk`). Returns -1
    (nothing done) when MXCSR flushes subnormals."""
    if _env_bad():
        return -1
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    rm = round_masks(mode)
    M, emin, maxmag, sshift, is_int, maxval = ef
    nL = (L + bl - 1) // bl
    xi = x.view(np.int32)
    amax = np.empty(T, np.int32)
    rr = np.empty(T, np.float64)
    vv = np.empty(T, np.float64)
    ok = np.empty(T, np.uint8)
    maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
    r32 = np.empty(T, np.float32)
    v32 = np.empty(T, np.float32)
    maxval32 = np.float32(maxval)
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, T)
        n = (l1 - l0) * T
        xs = xi[base:base + n]
        # pass 1: amax per column
        col_amax(xs, l1 - l0, T, amax)
        s0 = k * T
        if stype == 1:
            nvfp4_scales(amax, scales[s0:s0 + T], rr, vv, ok, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
        else:
            mx_scales(amax, scales[s0:s0 + T], rr, vv, ok, rule, emax_elem, prec_elem,
                      maxe32)
            for t in range(T):
                r32[t] = np.float32(rr[t])        # powers of two: exact in float32
                v32[t] = np.float32(vv[t])
        # pass 2: the elements, row by row (each row's loop runs over the columns)
        for l in range(l1 - l0):
            o = base + l * T
            xf = x[o:o + T]
            if sr:
                for t in range(T):
                    mag, q, ey, sign = element(xf[t], rr[t], False, True, ef, rm, key,
                                               (b * T + t) * L + l0 + l, nb)
                    if want_vals:
                        vals[o + t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
                    else:
                        codes[o + t] = elem_code(mag, sign, ef) * ok[t]
            elif want_vals:
                vs = vals[o:o + T]
                if stype == 1:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], True, False, ef, rm, key, 0, nb)
                        vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
                elif rm[0]:
                    for t in range(T):
                        vs[t] = value_rne32(xf[t], r32[t], v32[t], M, emin, maxval32, is_int)
                else:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], False, False, ef, rm, key, 0, nb)
                        vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
            else:
                cs = codes[o:o + T]
                if stype == 1:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], True, False, ef, rm, key, 0, nb)
                        cs[t] = elem_code(mag, sign, ef) * ok[t]
                else:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], False, False, ef, rm, key, 0, nb)
                        cs[t] = elem_code(mag, sign, ef) * ok[t]
    return 0


@njit(cache=True, nogil=True)
def amax_chunk(lo, hi, x):
    """Largest float32 magnitude bits of x[lo:hi] (NaNs and infinities included:
    their bits are larger than every finite magnitude's)."""
    xs = x.view(np.int32)[lo:hi]
    m = np.int32(0)
    for t in range(hi - lo):
        a = xs[t] & _MAG32
        m = a if a > m else m
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def quantize_fast_rows_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, ef, mode,
                             sr, nb, key, sc):
    """`quantize_fast_chunk` for T == 1 (blocks along the last axis, contiguous): work
    item k is block k. Full blocks of a power-of-two size (the usual 16 and 32): the
    blocks lo..hi are the flat range lo*bl..hi*bl; amax and scale per block first,
    then one loop over all their elements (block k = t >> log2(bl)), long enough to
    vectorise well. Otherwise block by block."""
    if _env_bad():
        return -1
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    rm = round_masks(mode)
    M, emin, maxmag, sshift, is_int, maxval = ef
    nL = (L + bl - 1) // bl
    if (bl & (bl - 1)) == 0 and L % bl == 0:
        lb = 63 - clz64(np.int64(bl))
        nbk = hi - lo
        x0 = lo * bl
        n = nbk * bl
        xi = x.view(np.int32)[x0:x0 + n]
        xf = x[x0:x0 + n]
        maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
        # tile by tile (tile elements, g whole blocks; in cache): block maxima, the
        # blocks' scales, their multipliers spread per element (contiguous loads in the
        # element loop, no gathers), then the elements
        tile = bl if bl > 512 else 512
        g = tile >> lb
        ams = np.empty(g, np.int32)
        rr = np.empty(g, np.float64)
        vv = np.empty(g, np.float64)
        ok = np.empty(g, np.uint8)
        re = np.empty(tile, np.float64)
        ve = np.empty(tile, np.float64)
        oe = np.empty(tile, np.uint8)
        re32 = np.empty(tile, np.float32)
        ve32 = np.empty(tile, np.float32)
        maxval32 = np.float32(maxval)
        use32 = want_vals and stype == 0 and not sr and rm[0] == 1      # value_rne32 below
        for t0 in range(0, n, tile):
            m = min(tile, n - t0)
            gm = m >> lb
            k0 = t0 >> lb
            for j in range(gm):
                blk = xi[t0 + j * bl:t0 + (j + 1) * bl]
                am = np.int32(0)
                for t in range(bl):
                    v = blk[t] & _MAG32
                    am = v if v > am else am
                ams[j] = am
            if stype == 1:
                nvfp4_scales(ams[:gm], scales[lo + k0:lo + k0 + gm], rr, vv, ok, maxe_exp,
                             maxe_sig, ts_exp, ts_sig, s_up)
            else:
                mx_scales(ams[:gm], scales[lo + k0:lo + k0 + gm], rr, vv, ok, rule, emax_elem,
                          prec_elem, maxe32)
            if use32:
                for j in range(gm):
                    re32[j * bl:(j + 1) * bl] = np.float32(rr[j])     # exact: 2**-e
                    ve32[j * bl:(j + 1) * bl] = np.float32(vv[j])
            else:
                for j in range(gm):
                    re[j * bl:(j + 1) * bl] = rr[j]
                    ve[j * bl:(j + 1) * bl] = vv[j]
                    oe[j * bl:(j + 1) * bl] = ok[j]
            xt = xf[t0:t0 + m]
            if want_vals:
                vs = vals[x0 + t0:x0 + t0 + m]
                if stype == 1:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], True, False, ef, rm, key, 0, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
                elif sr:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, True,
                                                   ef, rm, key, x0 + t0 + i, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
                elif use32:
                    for i in range(m):
                        vs[i] = value_rne32(xt[i], re32[i], ve32[i], M, emin, maxval32, is_int)
                else:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, False, ef, rm, key, 0, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
            else:
                cs = codes[x0 + t0:x0 + t0 + m]
                if stype == 1:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], True, False, ef, rm, key, 0, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
                elif sr:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, True,
                                                   ef, rm, key, x0 + t0 + i, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
                else:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, False, ef, rm, key, 0, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
        return 0
    xi = x.view(np.int32)
    am1 = np.empty(1, np.int32)
    rr1 = np.empty(1, np.float64)
    vv1 = np.empty(1, np.float64)
    ok1 = np.empty(1, np.uint8)
    maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, 1)
        n = l1 - l0
        xs = xi[base:base + n]
        am = np.int32(0)
        for t in range(n):
            m = xs[t] & _MAG32
            am = m if m > am else am
        am1[0] = am
        if stype == 1:
            nvfp4_scales(am1, scales[k:k + 1], rr1, vv1, ok1, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
        else:
            mx_scales(am1, scales[k:k + 1], rr1, vv1, ok1, rule, emax_elem, prec_elem, maxe32)
        r = rr1[0]
        vm = vv1[0]
        xf = x[base:base + n]
        if ok1[0] == 0:
            if want_vals:
                vals[base:base + n] = np.nan
            else:
                codes[base:base + n] = 0
            continue
        if want_vals:
            vs = vals[base:base + n]
            if stype == 1:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, True, False, ef, rm, key, 0, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
            elif sr:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, True, ef, rm, key, base + t, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
            else:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, False, ef, rm, key, 0, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
        else:
            cs = codes[base:base + n]
            if stype == 1:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, True, False, ef, rm, key, 0, nb)
                    cs[t] = elem_code(mag, sign, ef)
            elif sr:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, True, ef, rm, key, base + t, nb)
                    cs[t] = elem_code(mag, sign, ef)
            else:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, False, ef, rm, key, 0, nb)
                    cs[t] = elem_code(mag, sign, ef)
    return 0


@njit(cache=True, nogil=True, error_model="numpy")
def nv_fast_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, nvm, sc):
    """NVFP4 by thresholds (see "NVFP4 elements by thresholds"; nvm: 0 nearest_even,
    1 nearest_away, 2 toward_zero; ``sc`` the scale parameters of
    `quantize_fast_chunk`): blocks of ``bl`` along axis 1 of float32 x viewed as (B, L, T), C order,
    work items as `quantize_fast_chunk` (T == 1: item k is block k; T > 1: item k is
    the block row of all T columns). Same outputs as `quantize_fast_chunk`: codes
    (``want_vals`` 0) or the float32 values s * P as bits, and the e4m3 scale codes
    (`nvfp4_scales`). Returns -1 (nothing done) when MXCSR flushes subnormals."""
    if _env_bad():
        return -1
    maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc[4], sc[5], sc[6], sc[7], sc[8]
    nL = (L + bl - 1) // bl
    xi = x.view(np.int32)
    vi = vals.view(np.int32)
    ts = np.float64(ts_sig) * pow2(ts_exp)
    if T == 1:
        # groups of G blocks: maxima, scales (`nvfp4_scales` vectorises over blocks),
        # boundaries, then the elements block by block
        G = 256
        # blocks of 16 tiling each row (NVFP4's usual case): block k is x[16k:16k + 16]
        # (no integer division per block); otherwise block by block as item k says
        full = bl == 16 and L % 16 == 0
        ams = np.empty(G, np.int32)
        rr = np.empty(G, np.float64)
        vv = np.empty(G, np.float64)
        ok = np.empty(G, np.uint8)
        ub = np.empty((7, G), np.int32)
        db = np.empty((7, G), np.float32)
        a0 = np.empty(G, np.float32)
        h1 = np.empty(G * 8, np.int32)          # pairwise maxima (scratch)
        h2 = np.empty(G * 4, np.int32)
        for k0 in range(lo, hi, G):
            gm = min(G, hi - k0)
            # the group's elements as slices (full case): indices j * 16 + t from 0 need
            # no negative-index wraparound, so the loads are plain vector loads
            g0 = k0 * 16 if full else 0
            g1 = (k0 + gm) * 16 if full else 0
            xg = xi[g0:g1]
            vg = vi[g0:g1] if want_vals else vi
            cg = codes[g0:g1] if not want_vals else codes
            if full:
                # block maxima by a tree of pairwise maxima over contiguous data
                # (16 -> 8 -> 4 -> 2 -> 1 per block): each loop vectorises with plain
                # loads (a loop per block would be vectorised across blocks, with
                # gathers, and was about 5 times slower on data out of cache)
                for i in range(gm * 8):
                    u = xg[2 * i] & _MAG32
                    w = xg[2 * i + 1] & _MAG32
                    h1[i] = u if u > w else w
                for i in range(gm * 4):
                    u = h1[2 * i]
                    w = h1[2 * i + 1]
                    h2[i] = u if u > w else w
                for i in range(gm * 2):
                    u = h2[2 * i]
                    w = h2[2 * i + 1]
                    h1[i] = u if u > w else w
                for i in range(gm):
                    u = h1[2 * i]
                    w = h1[2 * i + 1]
                    ams[i] = u if u > w else w
            else:
                for j in range(gm):
                    am = np.int32(0)
                    b, l0, l1, base = block_span(k0 + j, nL, bl, L, 1)
                    for t in range(l1 - l0):
                        v = xi[base + t] & _MAG32
                        am = v if v > am else am
                    ams[j] = am
            nvfp4_scales(ams[:gm], scales[k0:k0 + gm], rr, vv, ok, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
            nv_bounds(vv, ok, gm, ts, nvm, ub, db, a0)
            for j in range(gm):
                if not full:
                    b, l0, l1, base = block_span(k0 + j, nL, bl, L, 1)
                    nv_run(xi, base, vi, base, l1 - l0, ub, db, a0, j, want_vals, codes, ok[j])
                    continue
                # a full block of 16 (NVFP4's size), written out here: a loop of a
                # constant 16 vectorises into whole vectors (a run-time count of 16
                # would run in the vectoriser's scalar remainder loop)
                u = _nv_col(ub, j)
                if want_vals:
                    d = _nv_col(db, j)
                    s0 = a0[j]
                    for t in range(16):
                        vg[j * 16 + t] = _nv_value(xg[j * 16 + t], u, d, s0)
                else:
                    okj = ok[j]
                    for t in range(16):
                        cg[j * 16 + t] = _nv_code(xg[j * 16 + t], u, okj)
        return 0
    amax = np.empty(T, np.int32)
    rr = np.empty(T, np.float64)
    vv = np.empty(T, np.float64)
    ok = np.empty(T, np.uint8)
    ub = np.empty((7, T), np.int32)
    db = np.empty((7, T), np.float32)
    a0 = np.empty(T, np.float32)
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, T)
        col_amax(xi[base:base + (l1 - l0) * T], l1 - l0, T, amax)
        s0 = k * T
        nvfp4_scales(amax, scales[s0:s0 + T], rr, vv, ok, maxe_exp, maxe_sig, ts_exp, ts_sig,
                     s_up)
        nv_bounds(vv, ok, T, ts, nvm, ub, db, a0)
        for l in range(l1 - l0):
            nv_row(xi, base + l * T, vi, base + l * T, T, ub, db, a0, want_vals, codes, ok)
    return 0
