"""Oracles for the sweep engine: the correct result bits and flags of an
operation, computed another way than the kernels in ``softfloat/_kernels``.

Nothing here imports the kernels: decoding, the exact error terms, the rounding
and the encoding are written again, differently, so that a sweep compares two
independent implementations.

Three oracles, each valid for a stated reason.

``host`` -- host float64 + a host rounding (round-to-nearest-even only)
    The operands (at most 24 significant bits, exponents within float32's range)
    are decoded exactly to float64 by numpy/ml_dtypes; the operation is done in
    float64 (rounded once, to 53 bits); the result is rounded into the target by
    numpy's float64 -> float16 cast (fp16), numpy's float64 -> float32 cast
    (fp32) or numpy float64 -> float32 followed by ml_dtypes' float32 -> bfloat16
    / float8 cast (bf16, fp8). Why the double rounding is innocuous: for
    x = a op b with op in {+, -, *, /, sqrt} and a, b of precision p, a midpoint
    m of a target grid of precision <= p (normal or subnormal: the subnormal
    grid is a fixed quantum, i.e. fewer bits) that x does not equal lies at
    distance > 2**-(2p+1) |x| from x (Figueroa 1995, "When is double rounding
    innocuous?": a - m*b, a - m*m, ... are nonzero multiples of the operands'
    quanta). With 53 >= 2p + 2, RN_53(x) therefore never lands on such a
    midpoint, and since rounding is monotone, RN_t(RN_53(x)) = RN_t(x). For
    bf16 the chain is RN_8(RN_24(RN_53(x))): RN_24(RN_53(x)) = RN_24(x) because
    53 >= 2*24 + 2 (bf16 values are 24-bit numbers too), and RN_8(RN_24(x)) =
    RN_8(x) because 24 >= 2*8 + 2; float32 and bf16 share their exponent range,
    so the subnormal grids line up (2**-149 is 16 bits finer than 2**-133).
    fp16 and fp32 are one double rounding (53 >= 2*11+2, 53 >= 2*24+2); fp8
    through float32 is as bf16 (24 >= 2*4+2). Flags come from exactness tests:
    the float64 error (TwoSum for +/-, zero for * whose 2p <= 53 bit product is
    exact, the remainder a - q*b for /, the residual a - s*s for sqrt, each
    computed exactly, see `_exact_op`) and a comparison of the rounded value with
    the float64 one; tininess (after rounding) is |x| < 2**emin (1 - 2**-(p+1)),
    decided exactly from the float64 value and the sign of its error.

``ro53`` -- float64 + exact error -> round to odd -> any rounding
    The same float64 result ``hi`` and the sign of its exact error ``x - hi``
    give x rounded to odd at 55 bits: ``4*sig(hi) + sign(err)`` (the sticky
    quarter keeps x on the right side of every coarser grid point and midpoint).
    Rounding that to p <= 26 bits in any mode gives the correctly rounded x
    (round-to-odd at >= p + 2 bits followed by any rounding to p bits is
    correct rounding, Boldo & Melquiond 2008). The rounding into the format is
    integer code written here (`_round_to_format`), with overflow, subnormals,
    tininess after rounding and the underflow/inexact flags. All six
    deterministic modes.

``mpfr`` -- GNU MPFR through gmpy2 (scalar, slow: a sampled third witness)
    The operation at the format's precision with emin/emax and subnormalize,
    round-to-odd emulated by round-toward-zero plus a jam of the last bit.

Why float64 is safe for the error terms: every value of a format of at most
8 exponent and 24 significand bits lies in [2**-149, 2**128]; sums, products,
quotients and square roots of two of them stay in [2**-300, 2**280], far from
float64's overflow and subnormal ranges, so TwoSum, Veltkamp splitting and
Sterbenz subtraction are exact.

Conventions: results use the project's defaults (subnormals kept, tininess
after rounding, IEEE overflow; formats without infinity give NaN on overflow
and for an infinite result, with invalid). NaN results are the first NaN
operand, quieted, or the format's default NaN (SoftFloat's 8086-SSE rule); the
sweep compares NaN results as "both NaN" unless asked to check patterns.
Stochastic rounding is not covered (it needs the kernel's random stream).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .formats import Format, get_format
from .rounding import Rounding, get_rounding

__all__ = ["BINARY_OPS", "UNARY_OPS", "METHODS", "oracle_binary", "oracle_unary",
           "oracle_convert", "mpfr_binary", "mpfr_unary", "mpfr_convert", "host_supported",
           "default_method"]

BINARY_OPS = ("add", "sub", "mul", "div")
UNARY_OPS = ("sqrt",)
METHODS = ("auto", "host", "ro53", "mpfr")

# op codes of the kernels below
OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_CONV = 0, 1, 2, 3, 4, 5
_OPCODE = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "div": OP_DIV, "sqrt": OP_SQRT,
           "convert": OP_CONV}
# classes (own numbering)
Z, FIN, INF, QNAN, SNAN = 0, 1, 2, 3, 4
# flags: SoftFloat's bit values
INEXACT, UNDERFLOW, OVERFLOW, INFINITE, INVALID = 1, 2, 4, 8, 16
# rounding codes (softfloat.Rounding)
RNE, RNA, RTZ, RUP, RDN, RTO = 0, 1, 2, 3, 4, 5
# kinds (FINITE: no infinity, no NaN: OCP fp4/fp6; the sweeps do not take fnu/e8m0)
IEEE, FN, FNUZ, FINITE = 0, 1, 2, 3

_SPLIT = 134217729.0      # 2**27 + 1: Veltkamp's splitter for float64


# ---------------------------------------------------------------------------
# decoding (own code: field extraction and ldexp)
@njit(cache=True, inline="always")
def _classify_to_float64(bits, E, M, bias, kind):
    """(class, float64 value, sign, fraction) of one encoding."""
    bits = np.int64(bits)
    sign = (bits >> (E + M)) & 1
    ef = (bits >> M) & ((1 << E) - 1)
    fr = bits & ((1 << M) - 1)
    top = (1 << E) - 1
    if kind == IEEE and ef == top:
        if fr == 0:
            return INF, (-math.inf if sign else math.inf), sign, fr
        return (QNAN if (fr >> (M - 1)) & 1 else SNAN), math.nan, sign, fr
    if kind == FN and ef == top and fr == (1 << M) - 1:
        return QNAN, math.nan, sign, fr
    if kind == FNUZ and sign == 1 and ef == 0 and fr == 0:
        return QNAN, math.nan, sign, fr
    if ef == 0:
        if fr == 0:
            return Z, (-0.0 if sign else 0.0), sign, fr
        v = math.ldexp(float(fr), 1 - bias - M)
    else:
        v = math.ldexp(float(fr + (1 << M)), int(ef - bias - M))
    return FIN, (-v if sign else v), sign, fr


# ---------------------------------------------------------------------------
# exact float64 result + sign of the error
@njit(cache=True, inline="always")
def _sgn(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


@njit(cache=True)
def _exact_op(op, x, y):
    """(hi, s): hi = RN_53(x op y) and s = sign(x op y - hi), for finite nonzero
    inputs of at most 26 significant bits in the range noted in the module doc."""
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            y = -y
        # TwoSum (Knuth): s + e == x + y exactly, without branches.
        s = x + y
        bb = s - x
        e = (x - (s - bb)) + (y - bb)
        return s, _sgn(e)
    if op == OP_MUL:
        # two <= 26-bit significands: the product has <= 52 bits, exact.
        return x * y, 0
    if op == OP_DIV:
        q = x / y
        # Split q into 26 + 27 bits (Veltkamp); each half times y (<= 26 bits)
        # is exact. x - qh*y is exact by Sterbenz (qh*y is within 2**-25 of x),
        # and the true remainder x - q*y is representable (q = RN(x/y)), so the
        # last subtraction is exact too.
        c = q * _SPLIT
        qh = c - (c - q)
        ql = q - qh
        r = (x - qh * y) - ql * y
        return q, _sgn(r) * _sgn(y)
    if op == OP_SQRT:
        s = math.sqrt(x)
        # Dekker's exact square: s*s == p + e; x - p exact (Sterbenz); the
        # residual x - s*s of s = RN(sqrt(x)) is representable.
        c = s * _SPLIT
        sh = c - (c - s)
        sl = s - sh
        p = s * s
        e = ((sh * sh - p) + 2.0 * sh * sl) + sl * sl
        r = (x - p) - e
        return s, _sgn(r)
    return x, 0     # conversion: exact


# ---------------------------------------------------------------------------
# rounding of x = 4*sig*2**(ex-2) + s (round to odd at 55 bits) into a format
@njit(cache=True)
def _nan_out(sign, frac, fM, have, E, M, kind, dnan):
    """NaN encoding: quieted source (sign, frac of fM bits) when ``have``.
    FINITE formats have no NaN: +0 stands for it."""
    if kind == FINITE:
        return np.int64(0)
    if kind == FNUZ:
        return np.int64(1) << (E + M)
    if kind == FN:
        return (np.int64(sign) << (E + M)) | ((np.int64(1) << (E + M)) - 1)
    if not have:
        return np.int64(dnan)
    if fM >= M:
        f = frac >> (fM - M)
    else:
        f = frac << (M - fM)
    f |= np.int64(1) << (M - 1)
    return (np.int64(sign) << (E + M)) | (((np.int64(1) << E) - 1) << M) | f


@njit(cache=True)
def _inf_out(sign, E, M, kind, dnan):
    """Exact infinite result: (bits, extra flags); no infinity -> NaN, invalid."""
    if kind == IEEE:
        return (np.int64(sign) << (E + M)) | (((np.int64(1) << E) - 1) << M), 0
    if kind == FINITE:           # the largest value of that sign, invalid
        return (np.int64(sign) << (E + M)) | ((np.int64(1) << (E + M)) - 1), INVALID
    return _nan_out(sign, 0, 1, False, E, M, kind, dnan), INVALID


@njit(cache=True)
def _encode(sign, kept, qe, E, M, bias, kind):
    """Encoding of (-1)**sign * kept * 2**qe, known representable."""
    if kept == 0:
        if kind == FNUZ:
            return np.int64(0)
        return np.int64(sign) << (E + M)
    while kept >= (np.int64(1) << (M + 1)):
        kept >>= 1
        qe += 1
    if kept < (np.int64(1) << M):          # subnormal: qe == emin - M
        mag = kept
    else:
        mag = (np.int64(qe + M + bias) << M) | (kept - (np.int64(1) << M))
    return (np.int64(sign) << (E + M)) | mag


@njit(cache=True)
def _rnd_int(X, d, mode, sign):
    """Round the integer X >= 0 right by d >= 1 bits; (kept, inexact)."""
    if d > 60:                               # X < 2**55: below a quarter of the quantum
        X = np.int64(1) if X != 0 else np.int64(0)
        d = 2
    kept = X >> d
    rem = X & ((np.int64(1) << d) - 1)
    half = np.int64(1) << (d - 1)
    if rem == 0:
        return kept, False
    if mode == RNE:
        if rem > half or (rem == half and (kept & 1) == 1):
            kept += 1
    elif mode == RNA:
        if rem >= half:
            kept += 1
    elif mode == RUP:
        if sign == 0:
            kept += 1
    elif mode == RDN:
        if sign == 1:
            kept += 1
    elif mode == RTO:
        kept |= 1
    return kept, True


@njit(cache=True)
def _round_to_format(hi, s, E, M, bias, kind, fmax, mode, dnan):
    """Correct rounding of x = hi + (tiny error of sign s) into the format.
    ``hi`` finite nonzero float64. Returns (bits, flags)."""
    sign = 1 if hi < 0 else 0
    m, e = math.frexp(abs(hi))              # abs(hi) = m * 2**e, m in [0.5, 1)
    sig = np.int64(m * 9007199254740992.0)   # 53-bit integer significand
    if sign:
        s = -s                               # s relative to the magnitude
    X = sig * 4 + s                          # |x| ~ X * 2**(e - 55), sticky-exact side
    lsb = e - 55                             # exponent of X's unit
    ex = e - 1 if X >= (np.int64(1) << 54) else e - 2   # exponent of the leading bit
    emin = 1 - bias
    qe = (ex if ex > emin else emin) - M     # the format's quantum at x
    kept, inexact = _rnd_int(X, qe - lsb, mode, sign)
    flags = INEXACT if inexact else 0
    # overflow: compare the rounded magnitude with the largest finite value
    if math.ldexp(float(kept), int(qe)) > fmax:
        flags |= OVERFLOW | INEXACT
        to_inf = mode == RNE or mode == RNA or (mode == RUP and sign == 0) or \
            (mode == RDN and sign == 1)
        if to_inf and kind != FINITE:        # FINITE formats saturate in every mode
            if kind == IEEE:
                return (np.int64(sign) << (E + M)) | (((np.int64(1) << E) - 1) << M), flags
            return _nan_out(sign, 0, 1, False, E, M, kind, dnan), flags
        # largest finite value, by value: fmax = kmax * 2**(emax - M)
        fm, fe = math.frexp(fmax)
        kmax = np.int64(fm * 2.0 ** (M + 1))
        return _encode(sign, kmax, fe - M - 1, E, M, bias, kind), flags
    # tininess after rounding: round with an unbounded exponent range
    if ex < emin and inexact:
        ku, _ = _rnd_int(X, ex - M - lsb, mode, sign)
        if math.ldexp(float(ku), int(ex - M)) < math.ldexp(1.0, emin):
            flags |= UNDERFLOW
    return _encode(sign, kept, qe, E, M, bias, kind), flags


# ---------------------------------------------------------------------------
# one case
@njit(cache=True)
def _special(op, ca, va, sa, fa, cb, vb, sb, fb, sM, sk, E, M, bias, kind, mode, dnan):
    """Results that need no rounding. Returns (done, bits, flags)."""
    # NaN operands
    if ca >= QNAN or (op <= OP_DIV and cb >= QNAN):
        fl = INVALID if (ca == SNAN or (op <= OP_DIV and cb == SNAN)) else 0
        if kind == FINITE:                 # no NaN to give: +0 and invalid
            fl = INVALID
        if op == OP_CONV and sk != IEEE:
            return True, _nan_out(sa, 0, 1, True, E, M, kind, dnan), fl
        if ca >= QNAN:
            return True, _nan_out(sa, fa, sM, True, E, M, kind, dnan), fl
        return True, _nan_out(sb, fb, sM, True, E, M, kind, dnan), fl
    if op == OP_CONV:
        if ca == INF:
            b, f = _inf_out(sa, E, M, kind, dnan)
            return True, b, f
        if ca == Z:
            return True, (np.int64(0) if kind == FNUZ else np.int64(sa) << (E + M)), 0
        return False, np.int64(0), 0
    if op == OP_SQRT:
        if ca == Z:
            return True, (np.int64(0) if kind == FNUZ else np.int64(sa) << (E + M)), 0
        if sa == 1:
            return True, _nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
        if ca == INF:
            b, f = _inf_out(0, E, M, kind, dnan)
            return True, b, f
        return False, np.int64(0), 0
    if op == OP_SUB:
        sb = 1 - sb
    if op == OP_ADD or op == OP_SUB:
        if ca == INF or cb == INF:
            if ca == INF and cb == INF and sa != sb:
                return True, _nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
            b, f = _inf_out(sa if ca == INF else sb, E, M, kind, dnan)
            return True, b, f
        if ca == Z and cb == Z:
            s = sa & sb
            if sa != sb:
                s = 1 if mode == RDN else 0
            return True, (np.int64(0) if kind == FNUZ else np.int64(s) << (E + M)), 0
        return False, np.int64(0), 0
    sx = sa ^ sb
    if op == OP_MUL:
        if (ca == INF and cb == Z) or (ca == Z and cb == INF):
            return True, _nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
        if ca == INF or cb == INF:
            b, f = _inf_out(sx, E, M, kind, dnan)
            return True, b, f
        if ca == Z or cb == Z:
            return True, (np.int64(0) if kind == FNUZ else np.int64(sx) << (E + M)), 0
        return False, np.int64(0), 0
    # division
    if (ca == INF and cb == INF) or (ca == Z and cb == Z):
        return True, _nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
    if ca == INF:
        b, f = _inf_out(sx, E, M, kind, dnan)
        return True, b, f
    if cb == Z:
        b, f = _inf_out(sx, E, M, kind, dnan)
        return True, b, f | INFINITE
    if ca == Z or cb == INF:
        return True, (np.int64(0) if kind == FNUZ else np.int64(sx) << (E + M)), 0
    return False, np.int64(0), 0


@njit(cache=True)
def _ro53_one(op, ca, va, sa, fa, cb, vb, sb, fb, sM, sk, E, M, bias, kind, fmax, mode,
              dnan):
    done, bits, fl = _special(op, ca, va, sa, fa, cb, vb, sb, fb, sM, sk, E, M, bias, kind,
                              mode, dnan)
    if done:
        return bits, fl
    hi, s = _exact_op(op, va, vb)
    if hi == 0.0:            # exact cancellation: +0 (-0 rounding downward)
        z = 1 if mode == RDN else 0
        return (np.int64(0) if kind == FNUZ else np.int64(z) << (E + M)), 0
    return _round_to_format(hi, s, E, M, bias, kind, fmax, mode, dnan)


@njit(parallel=True, cache=True)
def _ro53_kernel(op, a, b, outer, sE, sM, sbias, sk, E, M, bias, kind, fmax, mode, dnan,
                 out, flg):
    """Oracle over a[i] op b[i] (outer=False, b may be empty for unary ops), or over
    every pair a[i] op b[j] (outer=True, row-major). Operands are encodings of
    (sE, sM, sbias, sk); results of (E, M, bias, kind)."""
    nb = b.size
    cb = np.empty(nb, np.int64)
    vb = np.empty(nb, np.float64)
    sb = np.empty(nb, np.int64)
    fb = np.empty(nb, np.int64)
    for j in range(nb):
        cb[j], vb[j], sb[j], fb[j] = _classify_to_float64(b[j], sE, sM, sbias, sk)
    if outer:
        for i in prange(a.size):
            ca, va, sa, fa = _classify_to_float64(a[i], sE, sM, sbias, sk)
            base = i * nb
            for j in range(nb):
                r, f = _ro53_one(op, ca, va, sa, fa, cb[j], vb[j], sb[j], fb[j], sM, sk,
                                 E, M, bias, kind, fmax, mode, dnan)
                out[base + j] = r
                flg[base + j] = f
    else:
        n = a.size
        nch = (n + 16383) // 16384
        for c in prange(nch):
            for i in range(c * 16384, min(n, (c + 1) * 16384)):
                ca, va, sa, fa = _classify_to_float64(a[i], sE, sM, sbias, sk)
                if nb:
                    r, f = _ro53_one(op, ca, va, sa, fa, cb[i], vb[i], sb[i], fb[i], sM,
                                     sk, E, M, bias, kind, fmax, mode, dnan)
                else:
                    r, f = _ro53_one(op, ca, va, sa, fa, Z, 0.0, 0, 0, sM, sk, E, M,
                                     bias, kind, fmax, mode, dnan)
                out[i] = r
                flg[i] = f


# ---------------------------------------------------------------------------
# host oracle: float64 in numba, the rounding by numpy / ml_dtypes
@njit(parallel=True, cache=True)
def _host_pre(op, a, b, outer, sE, sM, sbias, sk, E, M, bias, kind, dnan, hi, aux, out,
              flg):
    """Per case: hi = float64 result, aux = sign of its error (+-1, 0) or 2 where
    the result is final (special cases: out/flg written, from `_special`)."""
    nb = b.size
    cb = np.empty(nb, np.int64)
    vb = np.empty(nb, np.float64)
    sb = np.empty(nb, np.int64)
    fb = np.empty(nb, np.int64)
    for j in range(nb):
        cb[j], vb[j], sb[j], fb[j] = _classify_to_float64(b[j], sE, sM, sbias, sk)
    na = a.size
    n = na * nb if outer else na
    nch = (n + 16383) // 16384
    for c in prange(nch):
        for k in range(c * 16384, min(n, (c + 1) * 16384)):
            if outer:
                i = k // nb
                j = k - i * nb
            else:
                i = k
                j = k
            ca, va, sa, fa = _classify_to_float64(a[i], sE, sM, sbias, sk)
            if nb:
                q_c, q_v, q_s, q_f = cb[j], vb[j], sb[j], fb[j]
            else:
                q_c, q_v, q_s, q_f = Z, 0.0, 0, 0
            done, bits, fl = _special(op, ca, va, sa, fa, q_c, q_v, q_s, q_f, sM, sk,
                                      E, M, bias, kind, RNE, dnan)
            if done:
                aux[k] = 2
                out[k] = bits
                flg[k] = fl
                hi[k] = 0.0
            else:
                h, s = _exact_op(op, va, q_v)
                hi[k] = h
                aux[k] = s
                flg[k] = 0


@njit(parallel=True, cache=True)
def _host_post(hi, aux, rv, rbits, emin, p, out, flg):
    """Flags of the rounded cases from exactness tests; rv = the rounded value
    (float64, NaN where an fn format overflowed), rbits its encoding."""
    T = math.ldexp(1.0 - math.ldexp(1.0, -(p + 1)), emin)   # tininess threshold
    n = hi.size
    nch = (n + 16383) // 16384
    for c in prange(nch):
        for k in range(c * 16384, min(n, (c + 1) * 16384)):
            if aux[k] == 2:
                continue
            h = hi[k]
            s = aux[k]
            out[k] = rbits[k]
            f = 0
            v = rv[k]
            if s != 0 or not (v == h):
                f |= INEXACT
            if h != 0.0 and (math.isinf(v) or math.isnan(v)):
                f |= OVERFLOW | INEXACT
            if h != 0.0 and (f & INEXACT):
                ah = abs(h)
                toward0 = (s < 0) if h > 0 else (s > 0)
                if ah < T or (ah == T and toward0):
                    f |= UNDERFLOW
            flg[k] = f


def _host_dtype(fmt: Format):
    """The host type whose cast rounds into ``fmt``, or None."""
    import ml_dtypes
    table = {"fp16": np.float16, "fp32": np.float32, "bf16": ml_dtypes.bfloat16,
             "fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e5m2": ml_dtypes.float8_e5m2,
             "fp8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
             "fp8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz}
    t = table.get(fmt.name)
    if t is None:
        return None
    # only if the named type really has this layout
    ref = {"fp16": (5, 10, 15, "ieee"), "fp32": (8, 23, 127, "ieee"),
           "bf16": (8, 7, 127, "ieee"), "fp8_e4m3": (4, 3, 7, "fn"),
           "fp8_e5m2": (5, 2, 15, "ieee"), "fp8_e4m3fnuz": (4, 3, 8, "fnuz"),
           "fp8_e5m2fnuz": (5, 2, 16, "fnuz")}[fmt.name]
    if (fmt.ebits, fmt.mbits, fmt.bias, fmt.kind) != ref:
        return None
    return np.dtype(t)


def host_supported(fmt, rounding) -> bool:
    """Whether the ``host`` oracle applies: nearest_even into a format with a host type."""
    return get_rounding(rounding) == Rounding.NEAREST_EVEN and \
        _host_dtype(get_format(fmt)) is not None


def _host_round(hi: np.ndarray, fmt: Format):
    """Round float64 -> fmt with the host casts; (encodings, float64 values)."""
    dt = _host_dtype(fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        if dt in (np.dtype(np.float16), np.dtype(np.float32)):
            r = hi.astype(dt)
        else:
            r = hi.astype(np.float32).astype(dt)
        rv = r.astype(np.float64)
    return r.view(fmt.dtype), rv


# ---------------------------------------------------------------------------
# public entry points
def default_method(fmt, rounding) -> str:
    return "host" if host_supported(fmt, rounding) else "ro53"


def _run(op, a, b, outer, src: Format, dst: Format, rounding, method):
    mode = get_rounding(rounding)
    if mode == Rounding.STOCHASTIC:
        raise ValueError("the oracles cover the deterministic rounding modes only")
    if method == "auto":
        method = default_method(dst, mode)
    if method not in ("host", "ro53"):
        raise ValueError(f"unknown oracle method {method!r}; expected 'auto', 'host' or "
                         f"'ro53' (MPFR: use mpfr_binary/mpfr_unary)")
    if max(src.precision, dst.precision) > 26:
        raise ValueError("the float64 oracles need formats of at most 26 significant bits")
    # one compiled version of each kernel: operands travel as int64
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    n = a.size * b.size if outer else a.size
    out = np.empty(n, np.int64)
    flg = np.empty(n, np.uint8)
    sp, dp = src.params, dst.params
    dnan = dst.default_nan_bits
    if method == "ro53":
        _ro53_kernel(_OPCODE[op], a, b, outer, *sp, *dp, float(dst.max), int(mode), dnan,
                     out, flg)
    else:
        if mode != Rounding.NEAREST_EVEN or _host_dtype(dst) is None:
            raise ValueError(f"the host oracle covers nearest_even into fp16, bf16, fp32 "
                             f"and the fp8 formats; got {mode.label} into {dst.name}")
        hi = np.empty(n, np.float64)
        aux = np.empty(n, np.int8)
        _host_pre(_OPCODE[op], a, b, outer, *sp, *dp, dnan, hi, aux, out, flg)
        rbits, rv = _host_round(hi, dst)
        _host_post(hi, aux, rv, rbits.astype(np.int64), dst.emin, dst.precision, out, flg)
    return out, flg


def _bits_arg(x, fmt: Format, name):
    a = np.asarray(x)
    if a.dtype != fmt.dtype:
        raise TypeError(f"{name}: expected {fmt.dtype} encodings of {fmt.name}, got {a.dtype}")
    return a


def oracle_binary(op, a, b, fmt, rounding="nearest_even", *, method="auto", outer=False):
    """Correct (bits, flags) of ``a op b`` on encodings of ``fmt`` (broadcasting;
    ``outer=True``: every pair of the 1-D ``a`` and ``b``, shape (a.size, b.size))."""
    if op not in BINARY_OPS:
        raise ValueError(f"unknown binary op {op!r}; expected one of {BINARY_OPS}")
    f = get_format(fmt)
    a = _bits_arg(a, f, "a")
    b = _bits_arg(b, f, "b")
    if outer:
        bits, flg = _run(op, np.ascontiguousarray(a.ravel()), np.ascontiguousarray(b.ravel()),
                         True, f, f, rounding, method)
        return bits.astype(f.dtype).reshape(a.size, b.size), flg.reshape(a.size, b.size)
    A, B = np.broadcast_arrays(a, b)
    shape = A.shape
    bits, flg = _run(op, np.ascontiguousarray(A).ravel(), np.ascontiguousarray(B).ravel(),
                     False, f, f, rounding, method)
    return bits.astype(f.dtype).reshape(shape), flg.reshape(shape)


def oracle_unary(op, a, fmt, rounding="nearest_even", *, method="auto"):
    """Correct (bits, flags) of a unary op (``sqrt``) on encodings of ``fmt``."""
    if op not in UNARY_OPS:
        raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
    f = get_format(fmt)
    a = _bits_arg(a, f, "a")
    bits, flg = _run(op, np.ascontiguousarray(a).ravel(), np.empty(0, f.dtype), False, f, f,
                     rounding, method)
    return bits.astype(f.dtype).reshape(a.shape), flg.reshape(a.shape)


def oracle_convert(bits, src, dst, rounding="nearest_even", *, method="auto"):
    """Correct (bits, flags) of converting encodings of ``src`` into ``dst``
    (``src`` may be ``"fp32"``: float32 bit patterns as uint32)."""
    s, d = get_format(src), get_format(dst)
    a = _bits_arg(bits, s, "bits")
    out, flg = _run("convert", np.ascontiguousarray(a).ravel(), np.empty(0, s.dtype), False,
                    s, d, rounding, method)
    return out.astype(d.dtype).reshape(a.shape), flg.reshape(a.shape)


# ---------------------------------------------------------------------------
# MPFR (gmpy2): scalar, for sampled cross-checks
def _mpfr_value(bits, fmt: Format):
    """(class, exact value as Fraction or None, sign) of one encoding, in Python."""
    from fractions import Fraction
    bits = int(bits)
    E, M = fmt.ebits, fmt.mbits
    sign = (bits >> (E + M)) & 1
    ef = (bits >> M) & ((1 << E) - 1)
    fr = bits & ((1 << M) - 1)
    top = (1 << E) - 1
    if fmt.kind == "ieee" and ef == top:
        if fr == 0:
            return INF, None, sign
        return (QNAN if fr >> (M - 1) else SNAN), None, sign
    if fmt.kind == "fn" and ef == top and fr == (1 << M) - 1:
        return QNAN, None, sign
    if fmt.kind == "fnuz" and bits == fmt.sign_mask:
        return QNAN, None, sign
    if ef == 0 and fr == 0:
        return Z, Fraction(0), sign
    v = Fraction(fr if ef == 0 else fr + (1 << M)) * Fraction(2) ** ((ef or 1) - fmt.bias - M)
    return FIN, (-v if sign else v), sign


def _mpfr_encode(v, sign, fmt: Format) -> int:
    """Encoding of a representable Fraction value (nonzero or zero with sign)."""
    from fractions import Fraction
    v = abs(Fraction(v))
    s = sign << (fmt.ebits + fmt.mbits)
    if v == 0:
        return 0 if fmt.kind == "fnuz" else s
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1
    if e < fmt.emin:
        k = v / Fraction(2) ** (fmt.emin - fmt.mbits)
        assert k.denominator == 1
        return s | int(k)
    k = v / Fraction(2) ** (e - fmt.mbits)
    assert k.denominator == 1
    return s | ((e + fmt.bias) << fmt.mbits) | (int(k) - (1 << fmt.mbits))


def _mpfr_round(exact_fn, sign, fmt: Format, mode: int):
    """Round the real that ``exact_fn()`` computes with gmpy2 into ``fmt``:
    MPFR truncates it to p + 8 bits (round toward zero, unbounded exponent) and
    reports whether that was inexact; `_frac_round` finishes in exact rationals.
    ``sign`` is the sign of the exact result. Returns (bits, flags)."""
    import gmpy2
    from fractions import Fraction
    with gmpy2.context(precision=fmt.precision + 8, emin=-100000, emax=100000,
                       round=gmpy2.RoundToZero) as c:
        c.clear_flags()
        t = exact_fn()
        if isinstance(t, type(gmpy2.mpq(0))):
            t = gmpy2.mpfr(t)            # rounds under the context
        inexact = bool(c.inexact)
    n, d = t.as_integer_ratio()
    return _frac_round(Fraction(int(n), int(d)), inexact, sign, fmt, mode)


def _frac_round(x, sticky, sign, fmt: Format, mode: int):
    """Round x (a Fraction, truncated from the exact value; ``sticky`` when the
    exact value lies strictly beyond x in magnitude) into fmt, with flags. The
    truncation has p + 8 bits, so the sticky side is enough for every mode."""
    from fractions import Fraction
    flags = 0
    ax = abs(x)
    M, emin = fmt.mbits, fmt.emin
    if ax == 0 and not sticky:
        return _mpfr_encode(0, sign, fmt), 0

    def rnd(q):                     # round ax at quantum q, unbounded
        n = ax / q
        k = n.numerator // n.denominator
        rem = n - k
        if rem == 0 and not sticky:
            return k, False
        half = Fraction(1, 2)
        if mode == RNE:
            up = rem > half or (rem == half and (sticky or k % 2 == 1))
        elif mode == RNA:
            up = rem >= half
        elif mode == RUP:
            up = sign == 0
        elif mode == RDN:
            up = sign == 1
        elif mode == RTO:
            up = False
            k |= 1
        else:
            up = False
        return k + up, True

    e = (ax.numerator.bit_length() - ax.denominator.bit_length()) if ax else emin - M - 10
    if ax and Fraction(2) ** e > ax:
        e -= 1
    qe = max(e, emin) - M
    k, inexact = rnd(Fraction(2) ** qe)
    if inexact:
        flags |= INEXACT
    val = k * Fraction(2) ** qe
    if val > Fraction(fmt.max):
        flags |= OVERFLOW | INEXACT
        to_inf = mode in (RNE, RNA) or (mode == RUP and sign == 0) or (mode == RDN and sign == 1)
        if to_inf:
            if fmt.kind == "ieee":
                return (sign << (fmt.ebits + M)) | fmt.inf_bits, flags
            return (fmt.sign_mask if fmt.kind == "fnuz" else
                    (sign << (fmt.ebits + M)) | (fmt.sign_mask - 1)), flags
        return (sign << (fmt.ebits + M)) | fmt.max_bits, flags
    if e < emin and inexact:
        ku, _ = rnd(Fraction(2) ** (e - M))
        if ku * Fraction(2) ** (e - M) < Fraction(2) ** emin:
            flags |= UNDERFLOW
    return _mpfr_encode(val, sign, fmt), flags


def _mpfr_nan(fmt: Format, src=None):
    """NaN per the propagate rule: quiet(src = (sign, frac, fmt_of_src)) or default."""
    if fmt.kind == "fnuz":
        return fmt.sign_mask
    if src is None:
        return fmt.default_nan_bits
    sign, frac, sfmt = src
    if fmt.kind == "fn":
        return (sign << (fmt.ebits + fmt.mbits)) | (fmt.sign_mask - 1)
    if sfmt.kind != "ieee":
        frac, sM = 0, 1
    else:
        sM = sfmt.mbits
    f = frac >> (sM - fmt.mbits) if sM >= fmt.mbits else frac << (fmt.mbits - sM)
    f |= 1 << (fmt.mbits - 1)
    return (sign << (fmt.ebits + fmt.mbits)) | fmt.inf_bits | f


def _mpfr_inf(sign, fmt: Format):
    if fmt.kind == "ieee":
        return (sign << (fmt.ebits + fmt.mbits)) | fmt.inf_bits, 0
    return _mpfr_nan(fmt), INVALID


def mpfr_binary(op, a, b, fmt, rounding="nearest_even"):
    """Scalar MPFR oracle for ``a op b`` (two encodings, Python ints): (bits, flags)."""
    import gmpy2
    f = get_format(fmt)
    mode = int(get_rounding(rounding))
    ca, va, sa = _mpfr_value(a, f)
    cb, vb, sb = _mpfr_value(b, f)
    if ca >= QNAN or cb >= QNAN:
        fl = INVALID if SNAN in (ca, cb) else 0
        M = f.mbits
        src = (sa, int(a) & ((1 << M) - 1), f) if ca >= QNAN else (sb, int(b) & ((1 << M) - 1), f)
        return _mpfr_nan(f, src), fl
    if op == "sub":
        sb = 1 - sb
        vb = -vb if vb is not None else None
    sx = sa ^ sb
    zero = lambda s: (0 if f.kind == "fnuz" else s << (f.ebits + f.mbits), 0)  # noqa: E731
    if op in ("add", "sub"):
        if INF in (ca, cb):
            if ca == INF and cb == INF and sa != sb:
                return _mpfr_nan(f), INVALID
            return _mpfr_inf(sa if ca == INF else sb, f)
        s_exact = va + vb
        if s_exact == 0:
            if ca == Z and cb == Z and sa == sb:
                return zero(sa)
            return zero(1 if mode == RDN else 0)
        return _mpfr_round(lambda: gmpy2.mpq(s_exact), int(s_exact < 0), f, mode)
    if op == "mul":
        if (ca == INF and cb == Z) or (ca == Z and cb == INF):
            return _mpfr_nan(f), INVALID
        if INF in (ca, cb):
            return _mpfr_inf(sx, f)
        if Z in (ca, cb):
            return zero(sx)
        pr = va * vb
        return _mpfr_round(lambda: gmpy2.mpq(pr), sx, f, mode)
    if op == "div":
        if (ca == INF and cb == INF) or (ca == Z and cb == Z):
            return _mpfr_nan(f), INVALID
        if ca == INF:
            return _mpfr_inf(sx, f)
        if cb == Z:
            r, fl = _mpfr_inf(sx, f)
            return r, fl | INFINITE
        if ca == Z or cb == INF:
            return zero(sx)
        return _mpfr_round(lambda: gmpy2.mpfr(gmpy2.mpq(va)) / gmpy2.mpfr(gmpy2.mpq(vb)),
                           sx, f, mode)
    raise ValueError(f"unknown binary op {op!r}; expected one of {BINARY_OPS}")


def mpfr_unary(op, a, fmt, rounding="nearest_even"):
    """Scalar MPFR oracle for ``sqrt`` of one encoding: (bits, flags)."""
    import gmpy2
    if op != "sqrt":
        raise ValueError(f"unknown unary op {op!r}; expected one of {UNARY_OPS}")
    f = get_format(fmt)
    mode = int(get_rounding(rounding))
    ca, va, sa = _mpfr_value(a, f)
    if ca >= QNAN:
        return _mpfr_nan(f, (sa, int(a) & ((1 << f.mbits) - 1), f)), (INVALID if ca == SNAN else 0)
    if ca == Z:
        return (0 if f.kind == "fnuz" else sa << (f.ebits + f.mbits)), 0
    if sa:
        return _mpfr_nan(f), INVALID
    if ca == INF:
        return _mpfr_inf(0, f)
    return _mpfr_round(lambda: gmpy2.sqrt(gmpy2.mpfr(gmpy2.mpq(va))), 0, f, mode)


def mpfr_convert(bits, src, dst, rounding="nearest_even"):
    """Scalar MPFR oracle for converting one encoding of ``src`` into ``dst``."""
    import gmpy2
    s, d = get_format(src), get_format(dst)
    mode = int(get_rounding(rounding))
    c, v, sg = _mpfr_value(bits, s)
    if c >= QNAN:
        fl = INVALID if c == SNAN else 0
        return _mpfr_nan(d, (sg, int(bits) & ((1 << s.mbits) - 1), s)), fl
    if c == INF:
        return _mpfr_inf(sg, d)
    if c == Z:
        return (0 if d.kind == "fnuz" else sg << (d.ebits + d.mbits)), 0
    return _mpfr_round(lambda: gmpy2.mpq(v), sg, d, mode)
