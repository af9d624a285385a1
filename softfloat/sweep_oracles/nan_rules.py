"""Results that need no rounding: NaN operands, infinities, zeros, invalid
operations, and the NaN bit pattern the library's NaN policy promises.

The promised NaN (the library's default policy ``nan="propagate"``, documented
in `softfloat.context` and README, SoftFloat 3e's 8086-SSE specialization with
the format's own default NaN):

* an operation with NaN operands returns the first NaN operand in argument
  order (a, then b, then c), quieted (top fraction bit set), with its sign and
  its top fraction bits; invalid is raised when any operand is a signaling NaN;
* an invalid operation without a NaN to return (inf - inf, 0 * inf, 0 / 0,
  inf / inf, sqrt(x < 0), fma(0, inf, c) for any c, NaN c included, as in
  SoftFloat's mulAdd) returns the format's default NaN (0x7E00 fp16, 0x7FC0
  bf16; fn formats 0x7F: exponent and fraction all ones; fnuz formats 0x80);
* a conversion moves the payload: the source's top fraction bits (shifted
  right, or left with zeros), quieted; sources without payloads (fn, fnuz)
  give only the quiet bit; fn targets keep only the sign (sign | all ones),
  fnuz targets have one NaN;
* an infinite or overflowing result in a format without infinity is NaN with
  the result's sign (fn) or the single NaN (fnuz), raising invalid for an
  exact infinity (overflow raises overflow and inexact instead).

Written from that description, without the kernels' code.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._bits import (FIN, FINITE, FN, FNUZ, IEEE, INF, INFINITE, INVALID, OP_ADD, OP_CONV, OP_DIV,
                    OP_FMA, OP_MUL, OP_SQRT, OP_SUB, QNAN, RDN, SNAN, Z)


@njit(cache=True, nogil=True)
def nan_out(sign, frac, fM, have, E, M, kind, dnan):
    """The promised NaN encoding: a quieted source (sign, frac of fM bits) when
    ``have``, else the default NaN ``dnan``. FINITE formats: +0 stands for it."""
    if kind == FINITE:
        return np.int64(0)
    if kind == FNUZ:
        return np.int64(1) << (E + M)
    if kind == FN:
        s = np.int64(sign) if have else np.int64(0)
        return (s << (E + M)) | ((np.int64(1) << (E + M)) - 1)
    if not have:
        return np.int64(dnan)
    frac = np.int64(frac)
    if fM >= M:
        f = frac >> (fM - M)
    else:
        f = frac << (M - fM)
    f |= np.int64(1) << (M - 1)
    return (np.int64(sign) << (E + M)) | (((np.int64(1) << E) - 1) << M) | f


@njit(cache=True, nogil=True)
def inf_out(sign, E, M, kind, dnan):
    """Exact infinite result: (bits, extra flags); no infinity: NaN and invalid."""
    if kind == IEEE:
        return (np.int64(sign) << (E + M)) | (((np.int64(1) << E) - 1) << M), 0
    if kind == FINITE:           # the largest value of that sign, invalid
        return (np.int64(sign) << (E + M)) | ((np.int64(1) << (E + M)) - 1), INVALID
    return nan_out(sign, 0, 1, True, E, M, kind, dnan), INVALID


@njit(cache=True, nogil=True)
def zero_out(sign, E, M, kind):
    return np.int64(0) if kind == FNUZ else np.int64(sign) << (E + M)


@njit(cache=True, nogil=True)
def _src_nan(bits, sE, sM, sk, E, M, kind, dnan):
    """The quieted NaN of a NaN operand ``bits`` of the source format."""
    bits = np.int64(bits)
    sign = (bits >> (sE + sM)) & 1
    if sk != IEEE:
        return nan_out(sign, 0, 1, True, E, M, kind, dnan)
    return nan_out(sign, bits & ((np.int64(1) << sM) - 1), sM, True, E, M, kind, dnan)


@njit(cache=True, nogil=True)
def special(op, ca, xa, cb, xb, cc, xc, sE, sM, sk, E, M, kind, mode, dnan):
    """(done, bits, flags): the result when it needs no rounding (see the module
    doc), else done=False. ``c*`` are operand classes, ``x*`` raw encodings of
    the source format (sE, sM, sk); unused operands are passed as class FIN."""
    sa = (np.int64(xa) >> (sE + sM)) & 1
    sb = (np.int64(xb) >> (sE + sM)) & 1
    sc = (np.int64(xc) >> (sE + sM)) & 1
    # NaN operands: the first NaN operand, quieted; invalid for any signaling NaN
    if op == OP_FMA:
        if ca >= QNAN or cb >= QNAN:
            fl = INVALID if (ca == SNAN or cb == SNAN or cc == SNAN) else 0
            src = xa if ca >= QNAN else xb
            return True, _src_nan(src, sE, sM, sk, E, M, kind, dnan), fl
        sp = sa ^ sb
        if ca == INF or cb == INF:
            if ca == Z or cb == Z:
                # 0 * inf: invalid, the default NaN, whatever c is (SoftFloat mulAdd)
                return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
            if cc >= QNAN:
                return True, _src_nan(xc, sE, sM, sk, E, M, kind, dnan), \
                    (INVALID if cc == SNAN else 0)
            if cc == INF and sc != sp:
                return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
            b, f = inf_out(sp, E, M, kind, dnan)
            return True, b, f
        if cc >= QNAN:
            return True, _src_nan(xc, sE, sM, sk, E, M, kind, dnan), \
                (INVALID if cc == SNAN else 0)
        if cc == INF:
            b, f = inf_out(sc, E, M, kind, dnan)
            return True, b, f
        if ca == Z or cb == Z:
            if cc == Z:
                s = sp & sc
                if sp != sc:
                    s = 1 if mode == RDN else 0
                return True, zero_out(s, E, M, kind), 0
            return False, np.int64(0), 0    # 0 + c: c, rounded (exact when same format)
        return False, np.int64(0), 0
    if ca >= QNAN or (op <= OP_DIV and cb >= QNAN):
        fl = INVALID if (ca == SNAN or (op <= OP_DIV and cb == SNAN)) else 0
        if kind == FINITE:                 # no NaN to give: +0 and invalid
            fl = INVALID
        src = xa if ca >= QNAN else xb
        return True, _src_nan(src, sE, sM, sk, E, M, kind, dnan), fl
    if op == OP_CONV:
        if ca == INF:
            b, f = inf_out(sa, E, M, kind, dnan)
            return True, b, f
        if ca == Z:
            return True, zero_out(sa, E, M, kind), 0
        return False, np.int64(0), 0
    if op == OP_SQRT:
        if ca == Z:
            return True, zero_out(sa, E, M, kind), 0
        if sa == 1:
            return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
        if ca == INF:
            b, f = inf_out(0, E, M, kind, dnan)
            return True, b, f
        return False, np.int64(0), 0
    if op == OP_SUB:
        sb = 1 - sb
    if op == OP_ADD or op == OP_SUB:
        if ca == INF or cb == INF:
            if ca == INF and cb == INF and sa != sb:
                return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
            b, f = inf_out(sa if ca == INF else sb, E, M, kind, dnan)
            return True, b, f
        if ca == Z and cb == Z:
            s = sa & sb
            if sa != sb:
                s = 1 if mode == RDN else 0
            return True, zero_out(s, E, M, kind), 0
        return False, np.int64(0), 0
    sx = sa ^ sb
    if op == OP_MUL:
        if (ca == INF and cb == Z) or (ca == Z and cb == INF):
            return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
        if ca == INF or cb == INF:
            b, f = inf_out(sx, E, M, kind, dnan)
            return True, b, f
        if ca == Z or cb == Z:
            return True, zero_out(sx, E, M, kind), 0
        return False, np.int64(0), 0
    # division
    if (ca == INF and cb == INF) or (ca == Z and cb == Z):
        return True, nan_out(0, 0, 0, False, E, M, kind, dnan), INVALID
    if ca == INF:
        b, f = inf_out(sx, E, M, kind, dnan)
        return True, b, f
    if cb == Z:
        b, f = inf_out(sx, E, M, kind, dnan)
        return True, b, f | INFINITE
    if ca == Z or cb == INF:
        return True, zero_out(sx, E, M, kind), 0
    return False, np.int64(0), 0


FIN_ = FIN   # re-exported for the check kernels
