"""Block-scaled quantization kernels (softfloat.mx): scale computation, element
rounding, dequantization, per-tensor scaling.

Every element rounding is one `core.round_pack` of the exact quotient or product:
an input value V = (-1)**s * sig * 2**e (float32 or float64 bits, unpacked exactly)
divided by the block's divisor D = dsig * 2**dexp (a power of two for the MX
formats, dsig = 1; for NVFP4 dsig holds the product of the per-tensor fp32 scale's
and the e4m3 block scale's significands, < 2**28). Nothing is first rounded to a
host float, so there is no double rounding.

Blocks: the input is viewed as (B, R, C) with blocks of (br, bc) elements over the
last two axes (br = 1 for 1-D blocks); edge blocks are partial. A chunk kernel
handles the blocks lo..hi (softfloat._parallel.run_chunks).
"""
import math

import numpy as np
from numba import njit

from .core import (C_FINITE, C_INF, C_ZERO, K_FN, K_IEEE, P_MODE, P_SRBITS, RSR, clz64,
                   rand_bits, round_pack, unpack)

# scale rules
RULE_FLOOR, RULE_CEIL, RULE_EVEN, RULE_RCEIL, RULE_NEAREST, RULE_UP = 0, 1, 2, 3, 4, 5
# element kinds handled here besides formats: MXINT8's two's complement integers
ELEM_FLOAT, ELEM_INT8 = 0, 1
_I0 = np.int64(0)


@njit(cache=True, inline="always")
def floor_log2(exp, sig):
    """floor(log2(sig * 2**exp)) for sig > 0."""
    return exp + 63 - clz64(sig)


@njit(cache=True, inline="always")
def _ceil_log2_value(exp, sig):
    """ceil(log2(sig * 2**exp)) for sig > 0: floor, plus 1 unless a power of two."""
    f = floor_log2(exp, sig)
    if sig & (sig - 1):
        f += 1
    return f


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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
def quantize_chunk(lo, hi, x, B, R, C, br, bc, hE, hM, hbias, host32,
                   codes, scales, elem, E, M, bias, kind, pol, key,
                   stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig,
                   scale_pol):
    """Blocks lo..hi: scale code per block, element codes.

    stype 0: E8M0 scales (MX); 1: e4m3 scales times the per-tensor scale
    ts_sig * 2**ts_exp (NVFP4), the e4m3 scale being amax / (max_elem * ts)
    rounded once by ``scale_pol`` (nearest-even or upward, saturating); a scale
    that rounds to 0 becomes 2**-9 (the smallest e4m3 subnormal)."""
    nbr = (R + br - 1) // br
    nbc = (C + bc - 1) // bc
    magmask = (np.int64(1) << (hE + hM)) - 1
    infb = ((np.int64(1) << hE) - 1) << hM
    sr = pol[P_MODE] == RSR
    nb = pol[P_SRBITS]
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
                scode = np.int64(255)
            else:
                if amax == 0:
                    e = np.int64(-127)
                else:
                    cls, s, ae, asg = unpack(amax, hE, hM, hbias, K_IEEE, False)
                    e = mx_scale_exp(rule, ae, asg, emax_elem, prec_elem, maxe_exp, maxe_sig,
                                     host32)
                if e > 127:
                    scode = np.int64(255)     # the scale overflows E8M0: NaN
                else:
                    if e < -127:
                        e = np.int64(-127)
                    scode = e + 127
                    dexp = e
                    if elem == ELEM_INT8:
                        dexp = e - 6          # MXINT8 elements carry an implicit 2**-6
        else:
            if special:
                scode = np.int64(0x7F)        # e4m3 NaN
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
        isnan_scale = (stype == 0 and scode == 255) or (stype == 1 and scode == 0x7F)
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
                elif elem == ELEM_INT8 or kind == 2:
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


@njit(cache=True, inline="always")
def mul_jam(ea, ma, eb, mb):
    """(exp, sig) of ma * 2**ea * mb * 2**eb with ma < 2**53, mb < 2**24, the
    product's bits below bit 15 jammed (exact for rounding to <= 25 bits: the
    77-bit product is (ma_hi * mb) * 2**26 + ma_lo * mb, both parts < 2**51)."""
    hi = ma >> 26
    lo = ma & ((np.int64(1) << 26) - 1)
    A = hi * mb                           # < 2**51
    Bv = lo * mb                          # < 2**50
    s = (A << 11) + (Bv >> 15)            # < 2**62 + 2**35
    if Bv & ((np.int64(1) << 15) - 1):
        s |= 1
    return ea + eb + 15, s


@njit(cache=True, nogil=True)
def scale_cast_chunk(lo, hi, x, hE, hM, hbias, sc_exp, sc_sig, out, E, M, bias, kind, pol, key,
                     nan_code):
    """out[i] = round(x[i] * scale) into the format, one rounding (per-tensor
    scaling; the policy saturates); NaN inputs give ``nan_code``."""
    sr = pol[P_MODE] == RSR
    nb = pol[P_SRBITS]
    for i in range(lo, hi):
        cls, s, ex, sg = unpack(x[i], hE, hM, hbias, K_IEEE, False)
        if cls == C_FINITE:
            e2, s2 = mul_jam(ex, sg, sc_exp, sc_sig)
            rb = rand_bits(key, i, nb) if sr else _I0
            b, f = round_pack(s, e2, s2, E, M, bias, kind, pol, rb)
            out[i] = b
        elif cls == C_ZERO:
            out[i] = 0 if kind == 2 else s << (E + M)
        elif cls == C_INF:
            # saturating cast: the largest finite value of that sign
            b, f = round_pack(s, np.int64(100000), np.int64(1), E, M, bias, kind, pol, _I0)
            out[i] = b
        else:
            out[i] = nan_code
    return 0
