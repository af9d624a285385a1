"""Kernels of softfloat.p3109: exact decoding of encodings into integer parts
(for formats whose values leave float64, and for the exact block reductions)."""
import numpy as np
from numba import njit

from .arith import (R_FRESH, R_INF, R_NAN, R_ROUND, R_ZERO, add_pre, div_pre, fma_pre,
                    mul_pre, sqrt_pre)
from .core import (C_FINITE, C_INF, C_ZERO, P_OVF, P_SRBITS, inf_bits, is_stochastic,
                   rand_bits, round_pack, unpack, zero_bits, zero_flags)
from .specialize import fresh_nan


@njit(cache=True, nogil=True)
def decode_parts_chunk(lo, hi, src, cls, sign, exp, sig, E, M, bias, kind):
    """Element i: class (core.C_*), sign, and the value (-1)**sign * sig * 2**exp."""
    for i in range(lo, hi):
        c, s, e, m = unpack(np.int64(src[i]), E, M, bias, kind, False)
        cls[i] = c
        sign[i] = s
        exp[i] = e if c == C_FINITE else 0
        sig[i] = m if c == C_FINITE else 0
    return 0


# Operations on exactly decoded operands (class, sign, exp, sig; NaN as C_QNAN),
# each result rounded once into the result format by core.round_pack (through
# convert.round_value), the operands' formats already gone.
OP_ADD, OP_MUL, OP_DIV, OP_FMA, OP_SQRT, OP_ROUND = range(6)


@njit(cache=True, nogil=True)
def apply_chunk(lo, hi, op, ca, sa, ea, ma, cb, sb, eb, mb, cc, sc, ec, mc, out, flg,
                E, M, bias, kind, pol, key):
    """out[i] = op(a[i], b[i], c[i]) rounded once into (E, M, bias, kind):
    OP_ADD a + b, OP_MUL a * b, OP_DIV a / b, OP_FMA a * b + c, OP_SQRT sqrt(a),
    OP_ROUND a itself (its sig at most 62 bits, jammed). Invalid operations and
    NaN operands give the format's fresh NaN (P3109 has one NaN)."""
    fa = 0
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else np.int64(0)
        if op == OP_ADD:
            k, s, e, m, fx = add_pre(ca[i], sa[i], ea[i], ma[i], cb[i], sb[i], eb[i], mb[i])
        elif op == OP_MUL:
            k, s, e, m, fx = mul_pre(ca[i], sa[i], ea[i], ma[i], cb[i], sb[i], eb[i], mb[i])
        elif op == OP_DIV:
            k, s, e, m, fx = div_pre(ca[i], sa[i], ea[i], ma[i], cb[i], sb[i], eb[i], mb[i])
        elif op == OP_FMA:
            k, s, e, m, fx = fma_pre(ca[i], sa[i], ea[i], ma[i], cb[i], sb[i], eb[i], mb[i],
                                     cc[i], sc[i], ec[i], mc[i])
        elif op == OP_SQRT:
            k, s, e, m, fx = sqrt_pre(ca[i], sa[i], ea[i], ma[i])
        else:
            c0 = ca[i]
            if c0 == C_FINITE:
                k, s, e, m, fx = R_ROUND, sa[i], ea[i], ma[i], np.int64(0)
            elif c0 == C_ZERO:
                k, s, e, m, fx = R_ZERO, sa[i], np.int64(0), np.int64(0), np.int64(0)
            elif c0 == C_INF:
                k, s, e, m, fx = R_INF, sa[i], np.int64(0), np.int64(0), np.int64(0)
            else:
                k, s, e, m, fx = R_NAN, np.int64(0), np.int64(0), np.int64(0), np.int64(0)
        if k == R_NAN:
            k = R_FRESH
        if k == R_ROUND:
            v, f = round_pack(s, e, m, E, M, bias, kind, pol, r)
            f |= fx
        elif k == R_ZERO:
            v, f = zero_bits(np.int64(0), E, M, kind), zero_flags(kind)
        elif k == R_INF:
            v, f = inf_bits(s, E, M, kind, pol[P_OVF])
        elif k == R_FRESH:
            v, f = fresh_nan(E, M, kind, pol)
        else:
            v, f = m, fx
        out[i] = v
        flg[i] = f
        fa |= f
    return fa
