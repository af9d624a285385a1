"""Matrix-unit kernels (softfloat.mma), operands: decoding and classes, and
where an output's operands lie.

Operands arrive decoded (`decode_chunk`): per element a class (0 finite or zero,
1 infinite, 2 NaN), a signed integer significand ``sig`` (0 for zero; +-1 for
infinities) and ``e``, the binade exponent (the format's smallest one for
subnormals and zero), so that a finite value is ``sig * 2**(e - M)``. A (nb, m, K)
and B transposed (nb, n, K) are flat row-major; C and the output (nb, m, n).
The fast kernels (`mma_fast.py`) take values and exponents instead
(`decode_values_chunk`).
"""
import numpy as np
from numba import njit

from .core import C_INF, C_QNAN, C_ZERO, unpack
from .jit import helper

CLS_FIN, CLS_INF, CLS_NAN = 0, 1, 2
NO_EXP = -(1 << 20)          # the exponent of "no nonzero term yet"
P2_OFF = 1074                # POW2[P2_OFF + x] = 2.0**x, x in [-1074, 1023]
POW2 = np.ldexp(1.0, np.arange(-P2_OFF, 1024))


@helper
def dec_term(b, E, M, bias, kind):
    """(cls, sig, e) of one encoding (see the module docstring)."""
    c, s, e, m = unpack(b, E, M, bias, kind, False)
    if c == C_INF:
        return CLS_INF, np.int64(-1 if s else 1), np.int64(0)
    if c >= C_QNAN:
        return CLS_NAN, np.int64(0), np.int64(0)
    if c == C_ZERO:
        return CLS_FIN, np.int64(0), np.int64(1 - bias)
    return CLS_FIN, (-m if s else m), e + M


@njit(cache=True, nogil=True)
def decode_chunk(lo, hi, bits, sig, exp, cls, E, M, bias, kind, sign_off):
    """Decode encodings [lo, hi) of a format into (sig, exp, cls); ``sign_off``:
    read the sign bit as 0 (the unsigned ue4m3 scales)."""
    smask = ~(np.int64(1) << (E + M))
    for i in range(lo, hi):
        b = np.int64(bits[i])
        if sign_off:
            b &= smask
        cls[i], sig[i], exp[i] = dec_term(b, E, M, bias, kind)
    return 0


@njit(cache=True, nogil=True)
def lut_chunk(lo, hi, codes, l0, l1, l2, o0, o1, o2):
    """o0, o1, o2 [k] = l0, l1, l2 [codes[k]] for k in [lo, hi): a decoding
    through tables made once per format (softfloat.mma.decode._lut)."""
    for k in range(lo, hi):
        x = codes[k]
        o0[k] = l0[x]
        o1[k] = l1[x]
        o2[k] = l2[x]
    return 0


@njit(cache=True, nogil=True)
def decode_ieee_chunk(lo, hi, bits, sig, exp, cls, E, M):
    """`decode_chunk` for an IEEE format (binary32: too wide for a table) by
    `dec_ieee`, which decodes IEEE encodings as `dec_term` does."""
    for i in range(lo, hi):
        cls[i], sig[i], exp[i] = dec_ieee(bits[i], E, M)
    return 0


@njit(cache=True, nogil=True)
def decode_values_chunk(lo, hi, bits, val, exp0, cls, E, M, bias, kind, P2):
    """Decode encodings [lo, hi) for `fdpa_fast_chunk`: ``val`` the value
    (float64, exact; 0 for infinities and NaNs, whose outputs the reference
    kernel redoes), ``exp0`` the binade exponent (NO_EXP for zeros and
    specials), ``cls`` as in `decode_chunk`."""
    for i in range(lo, hi):
        c, s, e = dec_term(np.int64(bits[i]), E, M, bias, kind)
        cls[i] = c
        if c != CLS_FIN or s == 0:
            val[i] = 0.0
            exp0[i] = NO_EXP
        else:
            val[i] = np.float64(s) * P2[P2_OFF + e - M]
            exp0[i] = e
    return 0


@helper
def dec_ieee(bits, E, M):
    """(cls, sig, e) of a binary16/binary32 encoding (the running accumulator)."""
    bits = np.int64(bits)
    bias = (np.int64(1) << (E - 1)) - 1
    neg = (bits >> (E + M)) & 1
    ef = (bits >> M) & ((np.int64(1) << E) - 1)
    fr = bits & ((np.int64(1) << M) - 1)
    if ef == (np.int64(1) << E) - 1:
        if fr == 0:
            return CLS_INF, np.int64(-1 if neg else 1), np.int64(0)
        return CLS_NAN, np.int64(0), np.int64(0)
    if ef == 0:
        return CLS_FIN, (-fr if neg else fr), 1 - bias
    m = fr | (np.int64(1) << M)
    return CLS_FIN, (-m if neg else m), ef - bias


@helper
def prod_special(ca, sa, cb, sb):
    """(nan, +inf, -inf) of a product with an infinite or NaN factor."""
    if ca == CLS_NAN or cb == CLS_NAN:
        return True, False, False
    if (ca == CLS_INF and sb == 0 and cb == CLS_FIN) or (cb == CLS_INF and sa == 0
                                                         and ca == CLS_FIN):
        return True, False, False
    pos = (sa > 0) == (sb > 0)
    return False, pos, not pos


@helper
def out_pos(idx, m, n, K):
    """(bt, i, j, arow, brow) of output ``idx`` of (nb, m, n): its batch, row and
    column, and where its A row (nb, m, K) and B column (nb, n, K) start."""
    mn = m * n
    bt = idx // mn
    r = idx - bt * mn
    i = r // n
    j = r - i * n
    return bt, i, j, (bt * m + i) * K, (bt * n + j) * K


@helper
def c_start(idx, Cs, Ce, Cc, has_c, Mc, Mo):
    """(cls, sig, e, M) of the first step's c: output idx of C, or +0."""
    if has_c:
        return Cc[idx], np.int64(Cs[idx]), np.int64(Ce[idx]), Mc
    return CLS_FIN, np.int64(0), np.int64(0), Mo


@helper
def c_specials(ccls, csig):
    """(nan, +inf, -inf) that the running c brings to a chunk."""
    return ccls == CLS_NAN, ccls == CLS_INF and csig > 0, ccls == CLS_INF and csig < 0
