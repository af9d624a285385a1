"""Per-tensor scaling kernels (softfloat.fp8_scaling, nn.fp8): a whole tensor
times one float32 scale, rounded once into an fp8 format.

`scale_cast_chunk` (the general kernel, every mode): the exact product of the
input's bits and the scale's significand (`mul_jam`), one `core.round_pack`.
`scale_values_chunk` (`fp8_scaling.quantize_per_tensor_values`' fast path,
nearest even, values out): the product in float64 (exact: 24 + 24 bits), rounded
by the MX fast kernels' element helper (`_kernels.mx_elem.element`);
tests/test_fp8_scaling_values.py compares the two bit for bit.
"""
import numpy as np
from numba import njit

from .core import (C_FINITE, C_INF, C_ZERO, K_FNUZ, K_IEEE, P_SRBITS, RNE, is_stochastic,
                   rand_bits, round_masks, round_pack, unpack)
from .mx_elem import elem_value, element

_I0 = np.int64(0)
_MAG32 = np.int32(0x7FFFFFFF)


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
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    for i in range(lo, hi):
        cls, s, ex, sg = unpack(x[i], hE, hM, hbias, K_IEEE, False)
        if cls == C_FINITE:
            e2, s2 = mul_jam(ex, sg, sc_exp, sc_sig)
            rb = rand_bits(key, i, nb) if sr else _I0
            b, f = round_pack(s, e2, s2, E, M, bias, kind, pol, rb)
            out[i] = b
        elif cls == C_ZERO:
            out[i] = 0 if kind == K_FNUZ else s << (E + M)
        elif cls == C_INF:
            # saturating cast: the largest finite value of that sign
            b, f = round_pack(s, np.int64(100000), np.int64(1), E, M, bias, kind, pol, _I0)
            out[i] = b
        else:
            out[i] = nan_code
    return 0


@njit(cache=True, nogil=True)
def scale_values_chunk(lo, hi, x, s, out, ef):
    """Per-tensor scaling, values out: out = the element value of round(x * s) to
    nearest even, saturating at the largest value (float32 x finite, s a positive
    float32: x * s is exact in float64; ``ef`` the element format as
    `_kernels.mx_elem.element` takes it); the codes' values, not divided by s. Returns
    the largest magnitude bits of x[lo:hi] (for delayed scaling's history)."""
    xs = x[lo:hi]
    os_ = out[lo:hi]
    xi = xs.view(np.int32)
    rm = round_masks(RNE)
    m = np.int32(0)
    for t in range(hi - lo):
        a = xi[t] & _MAG32
        m = a if a > m else m
        mag, q, ey, sign = element(xs[t], s, False, False, ef, rm, _I0, 0, _I0)
        os_[t] = np.float32(elem_value(mag, q, ey, sign, ef, 1.0))
    return m
