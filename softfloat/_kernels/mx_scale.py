"""Block-scaled quantization kernels (softfloat.mx), the block scales: the
largest magnitude of a block (amax) and the shared scale chosen from it by each
scale rule (`mx_scale_exp` for the general kernel; `mx_scales`, `nvfp4_scales`
for many blocks at once in the fast kernels), and how the kernels take a scale
value (`sig_exp`).
"""
import math

import numpy as np
from numba import njit

from .core import clz64
from .hw import bits_f32, f32_bits, f64_bits
from .mx_elem import _FRAC52, _MAG32, elem_round, pow2
from .specialize import signed_nan
from ..formats import E8M0, FP8_E4M3

# scale rules
RULE_FLOOR, RULE_CEIL, RULE_EVEN, RULE_RCEIL, RULE_NEAREST, RULE_UP = 0, 1, 2, 3, 4, 5
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


@njit(cache=True, error_model="numpy")
def nvfp4_scales(ams, scales, rr, vv, ok, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up):
    """NVFP4 block scales from the float32 amax bits ``ams`` of many blocks, branch-free
    (the loop vectorises): scale codes, divisors d = s * ts (y = V / d), value
    multipliers s, and 1 / 0 for a finite / NaN-scale block (a NaN or an infinity in
    the block: scale 0x7F, codes 0, values NaN).

    s = round(amax / (max_elem * ts)), nearest even (s_up 0) or upward (s_up 1),
    saturating at 448, 0 -> 2**-9: from fl64(amax / (max_elem * ts)) by `elem_round`
    (M = 3, emin = -6). Exact: the divisor has at most 3 + 24 significant bits, an e4m3
    value or midpoint at most 5, so as in the element argument (mx_elem.py, "Fast
    paths"; N < 2**32 now) the exact quotient lies at least 2**-32 (relative) away from every e4m3 value and
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
