"""The oracles over arrays, and the sweep engine's fused oracle + compare kernel.

Each case's operands are read as ``arr[(k >> sh) & mask]`` from up to three
operand arrays (k the case's position in the block), which covers flat arrays
(sh = 0, mask = -1), every pair of a row and a column set (a: sh = log2(cols);
b: mask = cols - 1) and three-operand blocks alike without materialising them.
Operands of at most 16 bits are decoded through per-format tables; float32
sources (``from_float32``) from their fields. The chunk kernels are serial
``nogil`` loops run on threads by `softfloat._parallel.run_chunks`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import config
from .._parallel import run_chunks, run_chunks_weighted
from ._bits import (FIN, INF, M_HOST, M_RO53, NARGS, OP_ADD, OP_CONV, OP_DIV, OP_FMA, OP_MUL,
                    OP_SQRT, OP_SUB, Z, decode_fp32, decode_tables)
from .host import host_rne, tininess_threshold
from .nan_rules import special, zero_out
from .ro53 import exact_fma, exact_op, ro_round
from ._bits import RDN
from . import simd, simd_fma
from .simd_fma import LOG2_RUN, RUN


@njit(cache=True, nogil=True)
def one_case(op, xa, xb, xc, tabc, tabv, src32, sE, sM, sbias, sk, E, M, bias, kind, fmax,
             T, mode, dnan, method):
    """(bits, flags) of one case: operand encodings xa, xb, xc (xb/xc ignored by
    unary ops and conversions)."""
    nargs = 3 if op == OP_FMA else (2 if op <= 3 else 1)
    if src32:
        ca, va = decode_fp32(xa)
        cb, vb = FIN, 1.0
        cc, vc = FIN, 1.0
    else:
        ca, va = tabc[xa], tabv[xa]
        cb, vb = (tabc[xb], tabv[xb]) if nargs >= 2 else (FIN, 1.0)
        cc, vc = (tabc[xc], tabv[xc]) if nargs == 3 else (FIN, 1.0)
    if ca != FIN or cb != FIN or cc != FIN or (op == OP_SQRT and va < 0.0):
        done, bits, fl = special(op, ca, xa, cb, xb, cc, xc, sE, sM, sk, E, M, kind, mode,
                                 dnan)
        if done:
            return bits, fl
    if op == OP_FMA:
        hi, s = exact_fma(va, vb, vc)
    else:
        hi, s = exact_op(op, va, vb)
    if hi == 0.0:            # exact cancellation: +0 (-0 rounding downward)
        return zero_out(1 if mode == RDN else 0, E, M, kind), 0
    if method == M_HOST:
        return host_rne(hi, s, E, M, bias, kind, fmax, T, dnan)
    return ro_round(hi, s, E, M, bias, kind, mode, dnan)


@njit(cache=True, nogil=True)
def oracle_chunk(lo, hi, op, a, sha, ma, b, shb, mb, c, shc, mc, tabc, tabv, src32, sE, sM,
                 sbias, sk, E, M, bias, kind, fmax, T, mode, dnan, method, out, flg):
    """out[k], flg[k] = the oracle's bits and flags for cases k in [lo, hi)."""
    for k in range(lo, hi):
        xa = np.int64(a[(k >> sha) & ma])
        xb = np.int64(b[(k >> shb) & mb])
        xc = np.int64(c[(k >> shc) & mc])
        r, f = one_case(op, xa, xb, xc, tabc, tabv, src32, sE, sM, sbias, sk, E, M, bias,
                        kind, fmax, T, mode, dnan, method)
        out[k] = r
        flg[k] = f
    return 0


def _make_check(OP, METHOD):
    """The check kernel of one (op, method): both are compile-time constants of
    the closure (numba freezes them, and caches each closure separately), so
    LLVM drops the other ops' code; measured: about 40% less time per case than
    one kernel taking the op as an argument. Compiled on first use only.

    check(lo, hi, ...): code[k] = 0 (agree), 1 (result bits differ), 2 (only the
    flags differ) for cases k in [lo, hi); returns the OR of the codes."""
    NARGS_ = 3 if OP == OP_FMA else (2 if OP <= OP_DIV else 1)

    @njit(cache=True, nogil=True)
    def check(lo, hi, a, sha, ma, b, shb, mb, c, shc, mc, tabc, tabv, src32, sE, sM, sbias,
              sk, E, M, bias, kind, fmax, T, mode, dnan, got, gotf, code):
        acc = 0
        for k in range(lo, hi):
            xa = np.int64(a[(k >> sha) & ma])
            xb = np.int64(b[(k >> shb) & mb]) if NARGS_ >= 2 else np.int64(0)
            xc = np.int64(c[(k >> shc) & mc]) if NARGS_ == 3 else np.int64(0)
            if src32:
                ca, va = decode_fp32(xa)
            else:
                ca, va = tabc[xa], tabv[xa]
            cb, vb = (tabc[xb], tabv[xb]) if NARGS_ >= 2 else (FIN, 1.0)
            cc, vc = (tabc[xc], tabv[xc]) if NARGS_ == 3 else (FIN, 1.0)
            done = False
            r = np.int64(0)
            f = 0
            if ca != FIN or cb != FIN or cc != FIN or (OP == OP_SQRT and va < 0.0):
                done, r, f = special(OP, ca, xa, cb, xb, cc, xc, sE, sM, sk, E, M, kind, mode,
                                     dnan)
            if not done:
                if OP == OP_FMA:
                    h, s = exact_fma(va, vb, vc)
                else:
                    h, s = exact_op(OP, va, vb)
                if h == 0.0:        # exact cancellation: +0 (-0 rounding downward)
                    r, f = zero_out(1 if mode == RDN else 0, E, M, kind), 0
                elif METHOD == M_HOST:
                    r, f = host_rne(h, s, E, M, bias, kind, fmax, T, dnan)
                else:
                    r, f = ro_round(h, s, E, M, bias, kind, mode, dnan)
            cd = 0 if np.int64(got[k]) == r else 1
            if cd == 0 and np.int64(gotf[k]) != f:
                cd = 2
            code[k] = cd
            acc |= cd
        return acc
    return check


CHECK_KERNELS = {(op, m): _make_check(op, m)
                 for op in (OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_CONV)
                 for m in (M_HOST, M_RO53)}
CHECK_KERNELS[(OP_FMA, M_RO53)] = _make_check(OP_FMA, M_RO53)


class Layout:
    """How a block's operands are read: ``arrays`` (1-3 int64 arrays) with
    (shift, mask) per operand, and the block's case count ``n``."""

    def __init__(self, arrays, shifts, masks, n):
        self.arrays = [np.ascontiguousarray(x, dtype=np.int64) for x in arrays]
        self.shifts = list(shifts)
        self.masks = list(masks)
        while len(self.arrays) < 3:                 # unused operands: one dummy element
            self.arrays.append(np.zeros(1, np.int64))
            self.shifts.append(0)
            self.masks.append(0)
        self.n = int(n)

    @classmethod
    def flat(cls, *arrays):
        n = arrays[0].size
        return cls(arrays, [0] * len(arrays), [-1] * len(arrays), n)

    @classmethod
    def outer(cls, *arrays):
        """Every combination of the 1-D arrays, row-major (all but the first of
        power-of-two length)."""
        sizes = [x.size for x in arrays]
        for s in sizes[1:]:
            if s & (s - 1):
                raise ValueError("outer layouts need power-of-two inner sizes")
        shifts, masks = [], []
        for i, s in enumerate(sizes):
            inner = int(np.prod(sizes[i + 1:], dtype=np.int64)) if i + 1 < len(sizes) else 1
            shifts.append(inner.bit_length() - 1)
            masks.append(-1 if i == 0 else s - 1)
        return cls(arrays, shifts, masks, int(np.prod(sizes, dtype=np.int64)))

    def args(self):
        out = []
        for x, s, m in zip(self.arrays, self.shifts, self.masks):
            out += [x, np.int64(s), np.int64(m)]
        return out


@njit(cache=True, nogil=True)
def special_rows(lo, hi, op, a, b, sj, tabc, tabv, sE, sM, sbias, sk, E, M, bias, kind, fmax,
                 T, mode, dnan, method, got, gotf):
    """The cases of rows [lo, hi) of a row x column block that the SIMD row
    kernels skip: every case of a row whose a is not a finite nonzero number,
    else the columns ``sj`` (the positions of the b that are not): the scalar
    oracle (`one_case`) and the compare; returns the OR of the codes."""
    acc = 0
    nb = b.size
    for i in range(lo, hi):
        xa = np.int64(a[i])
        full = tabc[xa] != FIN
        m = nb if full else sj.size
        for t in range(m):
            j = t if full else sj[t]
            k = i * nb + j
            r, f = one_case(op, xa, np.int64(b[j]), np.int64(0), tabc, tabv, False, sE, sM,
                            sbias, sk, E, M, bias, kind, fmax, T, mode, dnan, method)
            cd = 0 if np.int64(got[k]) == r else 1
            if cd == 0 and np.int64(gotf[k]) != f:
                cd = 2
            acc |= cd
    return acc


@njit(cache=True, nogil=True)
def special_cases(lo, hi, op, a, b, pos, tabc, tabv, sE, sM, sbias, sk, E, M, bias, kind,
                  fmax, T, mode, dnan, method, got, gotf):
    """The cases pos[lo:hi] of a flat block (operands a[k], b[k]) that the SIMD
    flat kernels skip: the scalar oracle and the compare; the OR of the codes."""
    acc = 0
    for t in range(lo, hi):
        k = pos[t]
        r, f = one_case(op, np.int64(a[k]), np.int64(b[k]), np.int64(0), tabc, tabv, False, sE,
                        sM, sbias, sk, E, M, bias, kind, fmax, T, mode, dnan, method)
        cd = 0 if np.int64(got[k]) == r else 1
        if cd == 0 and np.int64(gotf[k]) != f:
            cd = 2
        acc |= cd
    return acc


@njit(cache=True, nogil=True)
def special_runs(lo, hi, ids, n, a, sha, ma, b, shb, mb, c, shc, mc, tabc, tabv, sE, sM,
                 sbias, sk, E, M, bias, kind, fmax, T, mode, dnan, method, got, gotf):
    """The cases with an infinite or NaN operand in the runs ids[lo:hi] (each
    the cases [RUN*id, RUN*id + RUN) of a block of n): the scalar oracle
    (`one_case`) and the compare; returns the OR of the codes."""
    acc = 0
    for t in range(lo, hi):
        k0 = ids[t] << LOG2_RUN
        for k in range(k0, min(k0 + RUN, n)):
            xa = np.int64(a[(k >> sha) & ma])
            xb = np.int64(b[(k >> shb) & mb])
            xc = np.int64(c[(k >> shc) & mc])
            if tabc[xa] < INF and tabc[xb] < INF and tabc[xc] < INF:
                continue                       # done by fma_check
            r, f = one_case(np.int64(OP_FMA), xa, xb, xc, tabc, tabv, False, sE, sM, sbias, sk,
                            E, M, bias, kind, fmax, T, mode, dnan, method)
            cd = 0 if np.int64(got[k]) == r else 1
            if cd == 0 and np.int64(gotf[k]) != f:
                cd = 2
            acc |= cd
    return acc


def _simd_kind(op, layout):
    """'rows' for a row x column block of a binary op, 'flat' for a flat one,
    else None (the scalar kernels)."""
    if op not in ("add", "sub", "mul", "div"):
        return None
    if layout.shifts[:2] == [0, 0] and layout.masks[:2] == [-1, -1] \
            and layout.arrays[0].size == layout.arrays[1].size == layout.n:
        return "flat"
    return "rows" if _rows_shape(op, layout) else None


def _rows_shape(op, layout):
    """nb when ``layout`` is a row x column block of a binary op (case k =
    (a[k >> log2 nb], b[k & (nb - 1)]), b of nb = 2**j entries), else 0."""
    if op not in ("add", "sub", "mul", "div"):
        return 0
    b = layout.arrays[1]
    nb = b.size
    if (nb & (nb - 1)) or layout.shifts[1] != 0 or layout.masks[1] != nb - 1 \
            or layout.masks[0] != -1 or (1 << layout.shifts[0]) != nb \
            or layout.n != layout.arrays[0].size * nb:
        return 0
    return nb


#: use the SIMD kernels (`simd`, `simd_fma`) for + - * / and fma blocks; False
#: (or the environment variable SOFTFLOAT_SWEEP_SIMD=0) runs the scalar kernels
#: only (the tests compare both on the same blocks)
USE_SIMD = config.sweep_simd()


def _params(op, src, dst, mode, method):
    from ._bits import OPCODE
    src32 = src.nbits == 32
    if src32:
        tabc, tabv = np.zeros(1, np.int8), np.zeros(1, np.float64)
    else:
        tabc, tabv = decode_tables(*src.params)
    E, M, bias, kind = dst.params
    return (np.int64(OPCODE[op]),), (tabc, tabv, src32, *src.params, E, M, bias, kind,
                                     float(dst.max), tininess_threshold(dst.emin,
                                                                        dst.precision),
                                     np.int64(int(mode)), np.int64(dst.default_nan_bits),
                                     np.int64(method))


def oracle_block(op, layout: Layout, src, dst, mode, method):
    """(bits int64[n], flags uint8[n]) of the block's cases."""
    (opc,), rest = _params(op, src, dst, mode, method)
    out = np.empty(layout.n, np.int64)
    flg = np.empty(layout.n, np.uint8)
    run_chunks(oracle_chunk, layout.n, opc, *layout.args(), *rest, out, flg)
    return out, flg


def check_block(op, layout: Layout, src, dst, mode, method, got, gotf):
    """Compare the results under test (``got`` bits in the target's dtype and
    ``gotf`` uint8 flags, flat, in the layout's case order) with the oracle.
    Returns (n_bits_mismatches, n_flag_only_mismatches, code or None)."""
    (opc,), rest = _params(op, src, dst, mode, method)
    if op == "fma" and USE_SIMD and src.nbits <= 16:
        return _check_simd_fma(layout, dst, mode, method, rest, got, gotf)
    kind = _simd_kind(op, layout) if USE_SIMD and src.nbits <= 16 else None
    if kind is not None:
        return _check_simd(kind, int(opc), layout, src, dst, mode, method, rest, got, gotf)
    kernel = CHECK_KERNELS[(int(opc), int(method))]
    rest = rest[:-1]                        # the method is the kernel's constant
    code = np.empty(layout.n, np.uint8)
    acc = run_chunks(kernel, layout.n, *layout.args(), *rest, got, gotf, code)
    if not acc:
        return 0, 0, None
    return int(np.count_nonzero(code == 1)), int(np.count_nonzero(code == 2)), code


def _check_simd(kind, opc, layout, src, dst, mode, method, rest, got, gotf):
    """check_block by a SIMD kernel (`simd`: 'rows' or 'flat' layouts), the
    special cases by the scalar oracle (`special_rows`, `special_cases`); the
    per-case codes, needed only when something mismatches, by the scalar check
    kernel."""
    tabc, tabv = rest[0], rest[1]
    E, M, bias, knd = (int(x) for x in dst.params)
    a, b = layout.arrays[0], layout.arrays[1]
    host = int(method) == M_HOST
    consts = simd.mode_params(E, M, bias, knd, mode, dst.default_nan_bits, host)
    fmt = (np.int64(E), np.int64(M), np.int64(bias), np.int64(knd), float(dst.max), rest[-4])
    scal = (*rest[:2], *rest[3:], got, gotf)     # special_*: no src32 argument
    if kind == "rows":
        nb = b.size
        vb = np.ascontiguousarray(tabv[b])
        acc = run_chunks(simd.row_kernel(opc, host), layout.n, a, np.int64(layout.shifts[0]),
                         vb, tabc, tabv, *fmt, *consts, got, gotf)
        sj = np.flatnonzero(tabc[b] != FIN).astype(np.int64)
        nfull = int(np.count_nonzero(tabc[a] != FIN))
        # cost per row in simple steps: a scalar case is about 16 (so that the
        # special cases of a block, 3% of fp16's, are split over the threads too)
        cost = 16 * max(1, (nfull * nb + (a.size - nfull) * sj.size) // max(1, a.size))
        acc |= run_chunks_weighted(special_rows, a.size, cost, np.int64(opc), a, b, sj, *scal)
    else:
        acc = run_chunks(simd.flat_kernel(opc, host), layout.n, tabv[a], tabv[b], *fmt,
                         *consts, got, gotf)
        pos = np.flatnonzero((tabc[a] != FIN) | (tabc[b] != FIN)).astype(np.int64)
        acc |= run_chunks_weighted(special_cases, pos.size, 16, np.int64(opc), a, b, pos, *scal)
    if not acc:
        return 0, 0, None
    kernel = CHECK_KERNELS[(int(opc), int(method))]
    code = np.empty(layout.n, np.uint8)
    run_chunks(kernel, layout.n, *layout.args(), *rest[:-1], got, gotf, code)
    return int(np.count_nonzero(code == 1)), int(np.count_nonzero(code == 2)), code


def _check_simd_fma(layout, dst, mode, method, rest, got, gotf):
    """check_block of an fma block (any layout) by a `simd_fma` kernel, the
    cases with an infinite or NaN operand by the scalar oracle
    (`special_runs`, over the runs the vector kernel flagged); the per-case
    codes, needed only when something mismatches, by the scalar check kernel."""
    tabv = rest[1]
    E, M, bias, knd = (int(x) for x in dst.params)
    consts = simd.mode_params(E, M, bias, knd, mode, dst.default_nan_bits, False)
    fmt = (np.int64(E), np.int64(M), np.int64(bias), np.int64(knd))
    n = layout.n
    runs = np.zeros((n >> LOG2_RUN) + 1, np.uint8)
    kernel, ops = simd_fma.kernel_args(layout, tabv)
    acc = run_chunks(kernel, n, *ops, tabv, *fmt, *consts, got, gotf, runs)
    ids = np.flatnonzero(runs).astype(np.int64)
    if ids.size:
        # cost per run in simple steps: up to RUN scalar cases of about 16 each
        acc |= run_chunks_weighted(special_runs, ids.size, 16 * RUN, ids, np.int64(n),
                                   *layout.args(), *rest[:2], *rest[3:], got, gotf)
    if not acc:
        return 0, 0, None
    kernel = CHECK_KERNELS[(OP_FMA, int(method))]
    code = np.empty(n, np.uint8)
    run_chunks(kernel, n, *layout.args(), *rest[:-1], got, gotf, code)
    return int(np.count_nonzero(code == 1)), int(np.count_nonzero(code == 2)), code


_unused = (NARGS, Z)
