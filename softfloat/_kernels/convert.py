"""Conversions: any source format (float64, float32 or a simulated format) to any
target format, directly with one rounding; and encodings to exact float64."""
import numpy as np
from numba import njit, prange

from .core import (C_FINITE, C_INF, C_SNAN, C_ZERO, F_INVALID, K_IEEE, P_DAZ, P_MODE,
                   P_NAN, P_NANBITS, P_OVF, P_SRBITS, RSR, clz64, inf_bits, make_nan,
                   rand_bits, round_pack, unpack, zero_bits)


@njit(cache=True, inline="always")
def convert_one(x, sE, sM, sb, sk, dE, dM, db, dk, pol, key, idx):
    """One element: source encoding ``x`` -> target encoding. Returns (bits, flags)."""
    cls, sign, exp, sig = unpack(x, sE, sM, sb, sk, pol[P_DAZ])
    if cls == C_FINITE:
        r = np.int64(0)
        if pol[P_MODE] == RSR:
            r = rand_bits(key, idx, pol[P_SRBITS])
        return round_pack(sign, exp, sig, dE, dM, db, dk, pol, r)
    if cls == C_ZERO:
        return zero_bits(sign, dE, dM, dk), 0
    if cls == C_INF:
        return inf_bits(sign, dE, dM, dk, pol[P_OVF], pol[P_NANBITS])
    # NaN: the source fraction is the payload (ieee sources); fn/fnuz carry none.
    flags = F_INVALID if cls == C_SNAN else 0
    if sk == K_IEEE:
        return make_nan(sign, sig, sM, dE, dM, dk, pol[P_NAN], pol[P_NANBITS]), flags
    return make_nan(sign, np.int64(0), 1, dE, dM, dk, pol[P_NAN], pol[P_NANBITS]), flags


@njit(parallel=True, cache=True)
def convert_array(src, out, flg, want_flags, sE, sM, sb, sk, dE, dM, db, dk, pol, key, chunk):
    """Parallel loop of `convert_one` over flat arrays, in chunks of ``chunk``
    elements; ``flg`` is written if want_flags. Returns the OR of all flags."""
    n = src.size
    nch = (n + chunk - 1) // chunk
    acc = np.zeros(nch, np.int64)
    for c in prange(nch):
        a = 0
        for i in range(c * chunk, min(n, (c + 1) * chunk)):
            b, f = convert_one(src[i], sE, sM, sb, sk, dE, dM, db, dk, pol, key, i)
            out[i] = b
            if want_flags:
                flg[i] = f
            a |= f
        acc[c] = a
    r = 0
    for c in range(nch):
        r |= acc[c]
    return r


@njit(cache=True, inline="always")
def to_float64_one(x, E, M, bias, kind):
    """Exact float64 bit pattern (as int64) of one encoding; NaN payloads kept
    left-aligned in the float64 fraction, so float64 -> format gives them back."""
    cls, sign, exp, sig = unpack(x, E, M, bias, kind, False)
    s = sign << 63
    if cls == C_FINITE:
        lz = clz64(sig) - 11                 # leading one to bit 52
        sig = sig << lz
        exp = exp - lz
        return s | ((exp + 52 + 1023) << 52) | (sig & ((np.int64(1) << 52) - 1))
    if cls == C_ZERO:
        return s
    if cls == C_INF:
        return s | (np.int64(0x7FF) << 52)
    if kind != K_IEEE:                       # fn / fnuz NaN: the default quiet NaN
        return s | (np.int64(0xFFF) << 51)
    return s | (np.int64(0x7FF) << 52) | (sig << (52 - M))


@njit(parallel=True, cache=True)
def to_float64_array(src, out, E, M, bias, kind):
    for i in prange(src.size):
        out[i] = to_float64_one(src[i], E, M, bias, kind)
