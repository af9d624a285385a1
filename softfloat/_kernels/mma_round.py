"""Matrix-unit kernels (softfloat.mma), results: fixed-point alignment of the
terms (truncating shifts) and the output rounding of an exact integer sum
(`round_out`), the encoding of special results (`special_bits`).

The matrix units round as MMA-Sim models them (RNE-/RZ- roundings to p
significant bits of binary16 or binary32, no flags, no policy tuple); their one
NaN is the NaN specialization's (`specialize.all_ones_nan`). `round_out` gives
the results of the core's `round_pack` (rounding into p - 1 fraction bits; a +0
for a zero result, infinity from 2**(emax + 1) on in both modes), checked on
every small sum and on random ones (tests/test_mma.py), and measured 10-24x
faster than it (benchmarks/bench_mma_round.py): it stays on the rounding
allow-list with those figures, as does the fast kernels' `mma_fast.round_block`.
"""
import numpy as np

from .core import clz64
from .jit import helper
from .specialize import all_ones_nan


@helper
def bitlen(x):
    return 64 - clz64(x)


@helper
def trunc_shift(mag, sh):
    """floor(mag * 2**sh) for mag >= 0 (truncation toward zero of a magnitude)."""
    if sh >= 0:
        return mag << sh
    if sh <= -63:
        return np.int64(0)
    return mag >> (-sh)


@helper
def floor_shift(x, sh):
    """floor(x * 2**sh) for a signed x (an arithmetic shift)."""
    if sh >= 0:
        return x << sh
    if sh <= -63:
        return np.int64(-1) if x < 0 else np.int64(0)
    return x >> (-sh)


@helper
def special_bits(nan, pinf, ninf, E, M):
    """The encoding of a NaN or infinite result: canonical NaN (all ones but the
    sign: 0x7FFFFFFF, 0x7FFF) for NaN or both infinities."""
    if nan or (pinf and ninf):
        return all_ones_nan(E, M)
    inf = ((np.int64(1) << E) - 1) << M
    return inf | (np.int64(1) << (E + M)) if ninf else inf


@helper
def round_out(S, q, rne, p, emin, E, M, plus_zero):
    """The encoding (E, M: binary16 or binary32) of S * 2**q rounded to ``p``
    significant bits (p - 1 <= M; the quantum of subnormals 2**(emin - p + 1)),
    nearest-even (``rne``) or toward zero; a result of 2**(emax + 1) or more is
    infinite in both modes. A zero result is +0 when ``plus_zero``, else it keeps
    the sign of S."""
    bias = (np.int64(1) << (E - 1)) - 1
    sbit = np.int64(1) << (E + M)
    if S == 0:
        return np.int64(0)
    neg = S < 0
    mag = -S if neg else S
    ev = q + bitlen(mag) - 1
    qr = max(ev, emin) - (p - 1)
    if qr > q:
        d = qr - q
        if d >= 64:
            r = np.int64(0)
        else:
            r = mag >> d
            if rne:
                rem = mag - (r << d)
                half = np.int64(1) << (d - 1)
                if rem > half or (rem == half and (r & 1) == 1):
                    r += 1
        if r == (np.int64(1) << p):
            r >>= 1
            qr += 1
    else:
        r = mag << (q - qr)
    sign = sbit if neg else np.int64(0)
    if r == 0:
        return np.int64(0) if plus_zero else sign
    if r >= (np.int64(1) << (p - 1)):
        be = qr + (p - 1) + bias
        if be >= (np.int64(1) << E) - 1:
            return sign | (((np.int64(1) << E) - 1) << M)
        return sign | (be << M) | ((r - (np.int64(1) << (p - 1))) << (M - (p - 1)))
    return sign | (r << (M - (p - 1)))


@helper
def add_trunc(S, v, sh):
    """S + v * 2**sh, the term truncated toward zero."""
    if v > 0:
        return S + trunc_shift(v, sh)
    return S - trunc_shift(-v, sh)


@helper
def add_c_term(S, csig, ce, emax, F, cM):
    """S plus c (significand csig of cM fraction bits, binade exponent ce)
    truncated to F fraction bits below emax."""
    if csig != 0:
        S = add_trunc(S, csig, ce - emax + F - cM)
    return S


# ---------------------------------------------------------------------------
