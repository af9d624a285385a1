"""Accumulation kernels: sums of terms (inputs or exact/rounded products) in an
explicit order, compensated summation, the block-FMA (tensor-core) model, and
the native float32 fast path.

Values in flight follow `core.unpack_in_flight`: (cls, sign, exp, sig) with the
value (-1)**sign * sig * 2**exp for finite values. For NaN classes ``exp`` holds
the payload length and ``sig`` the payload (``exp == 0``: a fresh NaN, no
payload), so that `specialize.make_nan` can propagate it. A sum of two values is
the arithmetic core's (`arith.add_pre` + `arith.finish`), rounding a value into a
format the conversion core's (`convert.round_value`); every rounding goes
through `core.round_pack`, every NaN through specialize.py.
"""
import numpy as np
from numba import njit, prange

from .._parallel import run_chunks

from .arith import add_pre, finish
from .convert import round_value
from .core import (C_FINITE, C_INF, C_QNAN, C_SNAN, C_ZERO, F_INVALID, P_DAZ, P_OVF,
                   P_SRBITS, clz64, inf_bits, is_stochastic, rand_bits, round_pack,
                   unpack_in_flight, zero_bits)
from .specialize import fresh_nan, nan_operand

# Program op kinds (see softfloat.accumulate._program).
OP_LEAF, OP_ADD_LEAF, OP_ADD_SLOT, OP_COPY, OP_INIT_C = 0, 1, 2, 3, 4


@njit(cache=True)
def mul_exact(ca, sa, ea, ma, cb, sb, eb, mb):
    """Exact product of two values in flight: (cls, sign, exp, sig, flags).
    A signaling NaN operand raises invalid here and becomes quiet (the first NaN
    operand propagates, specialize.nan_operands' order); 0 * inf is a fresh NaN
    (payload length 0) with invalid."""
    s = sa ^ sb
    if ca >= C_QNAN:
        return C_QNAN, sa, ea, ma, (F_INVALID if (ca == C_SNAN or cb == C_SNAN) else 0)
    if cb >= C_QNAN:
        return C_QNAN, sb, eb, mb, (F_INVALID if cb == C_SNAN else 0)
    if ca == C_INF or cb == C_INF:
        if ca == C_ZERO or cb == C_ZERO:
            return C_QNAN, np.int64(0), np.int64(0), np.int64(0), F_INVALID
        return C_INF, s, np.int64(0), np.int64(0), 0
    if ca == C_ZERO or cb == C_ZERO:
        return C_ZERO, s, np.int64(0), np.int64(0), 0
    return C_FINITE, s, ea + eb, ma * mb, 0


@njit(cache=True)
def add_round(c1, s1, e1, m1, c2, s2, e2, m2, E, M, bias, kind, pol, rb):
    """round(x1 + x2) into the format, x1 and x2 exact values in flight whose
    significands are below 2**50: the arithmetic core's addition
    (`arith.add_pre`, `arith.finish`). Returns (bits, flags)."""
    k, s, e, m, fx = add_pre(c1, s1, e1, m1, c2, s2, e2, m2)
    return finish(k, s, e, m, fx, c1, s1, m1, e1, c2, s2, m2, e2, C_ZERO, np.int64(0),
                  np.int64(0), np.int64(0), E, M, bias, kind, pol, rb)


@njit(cache=True)
def get_term(A, BT, has_b, bt, i, j, k, iE, iM, ib, ik, daz, prod_rounded,
             pE, pM, pb, pk, ppol, key, ridx):
    """Term k of output (bt, i, j): A[bt, i, k] (a sum) or its product with
    BT[bt, j, k], exact or rounded into the product format.
    Returns (cls, sign, exp, sig, flags)."""
    ca, sa, ea, ma = unpack_in_flight(A[bt, i, k], iE, iM, ib, ik, daz)
    if not has_b:
        return ca, sa, ea, ma, 0
    cb, sb, eb, mb = unpack_in_flight(BT[bt, j, k], iE, iM, ib, ik, daz)
    c, s, e, m, fl = mul_exact(ca, sa, ea, ma, cb, sb, eb, mb)
    if prod_rounded:
        rb = np.int64(0)
        if is_stochastic(ppol):
            rb = rand_bits(key, ridx, ppol[P_SRBITS])
        bits, f2 = round_value(c, s, e, m, pE, pM, pb, pk, ppol, rb)
        c, s, e, m = unpack_in_flight(bits, pE, pM, pb, pk, ppol[P_DAZ])
        fl |= f2
    return c, s, e, m, fl


@njit(cache=True)
def _rb(pol, key, ridx):
    if is_stochastic(pol):
        return rand_bits(key, ridx, pol[P_SRBITS])
    return np.int64(0)


@njit(cache=True)
def eval_kahan(A, BT, has_b, C, has_c, bt, i, j, K, iE, iM, ib, ik, aE, aM, ab, ak, pol,
               prod_rounded, pE, pM, pb, pk, ppol, key, ridx):
    """Kahan's compensated sum of the terms of output (bt, i, j): s = first term
    (or c), comp = 0, then per term x: y = x - comp; t = s + y; comp = (t - s) - y;
    s = t; each step rounded into the accumulator. Returns (bits, flags)."""
    daz = pol[P_DAZ]
    fl = 0
    if has_c:
        s_bits = np.int64(C[bt, i, j])
        k0 = 0
    else:
        c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, 0, iE, iM, ib, ik, daz,
                                  prod_rounded, pE, pM, pb, pk, ppol, key, ridx)
        ridx += 1
        s_bits, f2 = round_value(c, s, e, mm, aE, aM, ab, ak, pol, _rb(pol, key, ridx))
        ridx += 1
        fl |= f | f2
        k0 = 1
    comp = zero_bits(np.int64(0), aE, aM, ak)
    for k in range(k0, K):
        c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, k, iE, iM, ib, ik, daz,
                                  prod_rounded, pE, pM, pb, pk, ppol, key, ridx)
        ridx += 1
        fl |= f
        cc, cs, ce, cm = unpack_in_flight(comp, aE, aM, ab, ak, daz)
        y, f = add_round(c, s, e, mm, cc, 1 - cs, ce, cm, aE, aM, ab, ak, pol,
                         _rb(pol, key, ridx))
        ridx += 1
        fl |= f
        yc, ys, ye, ym = unpack_in_flight(y, aE, aM, ab, ak, daz)
        sc, ss, se, sm = unpack_in_flight(s_bits, aE, aM, ab, ak, daz)
        t, f = add_round(sc, ss, se, sm, yc, ys, ye, ym, aE, aM, ab, ak, pol,
                         _rb(pol, key, ridx))
        ridx += 1
        fl |= f
        tc, ts, te, tm = unpack_in_flight(t, aE, aM, ab, ak, daz)
        d, f = add_round(tc, ts, te, tm, sc, 1 - ss, se, sm, aE, aM, ab, ak, pol,
                         _rb(pol, key, ridx))
        ridx += 1
        fl |= f
        dc, ds, de, dm = unpack_in_flight(d, aE, aM, ab, ak, daz)
        comp, f = add_round(dc, ds, de, dm, yc, 1 - ys, ye, ym, aE, aM, ab, ak, pol,
                            _rb(pol, key, ridx))
        ridx += 1
        fl |= f
        s_bits = t
    return s_bits, fl


@njit(cache=True)
def eval_program(A, BT, has_b, C, bt, i, j, slots, prog, iE, iM, ib, ik, aE, aM, ab, ak,
                 pol, prod_rounded, pE, pM, pb, pk, ppol, key, ridx):
    """Run the program ``prog`` (rows (kind, dst, src); the result in slot 0) for
    output (bt, i, j). Returns (bits, flags)."""
    daz = pol[P_DAZ]
    fl = 0
    for o in range(prog.shape[0]):
        kind = prog[o, 0]
        dst = prog[o, 1]
        src = prog[o, 2]
        if kind == OP_INIT_C:
            slots[dst] = C[bt, i, j]
        elif kind == OP_COPY:
            slots[dst] = slots[src]
        elif kind == OP_ADD_SLOT:
            c1, s1, e1, m1 = unpack_in_flight(slots[dst], aE, aM, ab, ak, daz)
            c2, s2, e2, m2 = unpack_in_flight(slots[src], aE, aM, ab, ak, daz)
            slots[dst], f = add_round(c1, s1, e1, m1, c2, s2, e2, m2, aE, aM, ab, ak, pol,
                                      _rb(pol, key, ridx))
            ridx += 1
            fl |= f
        else:
            c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, src, iE, iM, ib, ik, daz,
                                      prod_rounded, pE, pM, pb, pk, ppol, key, ridx)
            ridx += 1
            fl |= f
            if kind == OP_LEAF:
                slots[dst], f = round_value(c, s, e, mm, aE, aM, ab, ak, pol,
                                            _rb(pol, key, ridx))
            else:
                c1, s1, e1, m1 = unpack_in_flight(slots[dst], aE, aM, ab, ak, daz)
                slots[dst], f = add_round(c1, s1, e1, m1, c, s, e, mm, aE, aM, ab, ak, pol,
                                          _rb(pol, key, ridx))
            ridx += 1
            fl |= f
    return slots[0], fl


@njit(cache=True, nogil=True)
def reduce_program_chunk(lo, hi, A, BT, has_b, C, has_c, out, flg, want_flags, prog, nslots, iE, iM, ib, ik, aE, aM, ab, ak, pol, prod_rounded, pE, pM, pb, pk, ppol, kahan, key):
    """out[bt, i, j] = the sum of the terms k (see `get_term`) evaluated by the
    program ``prog`` (`eval_program`) with every addition rounded into the
    accumulator format (aE, aM, ab, ak) under ``pol``, or by Kahan's compensated
    summation (`eval_kahan`) when ``kahan``.
    A: (nb, m, K), BT: (nb, n, K) (B transposed), C/out: (nb, m, n) accumulator
    encodings. Returns the OR of all flags."""
    nb, m, K = A.shape
    n = out.shape[2]
    total = nb * m * n
    stride = 4 * K + 8                      # random numbers reserved per output
    slots = np.zeros(max(nslots, 1), np.int64)
    fall = 0
    for lin in range(lo, hi):
        bt = lin // (m * n)
        r = lin - bt * m * n
        i = r // n
        j = r - i * n
        if kahan:
            res, fl = eval_kahan(A, BT, has_b, C, has_c, bt, i, j, K, iE, iM, ib, ik,
                                 aE, aM, ab, ak, pol, prod_rounded, pE, pM, pb, pk,
                                 ppol, key, lin * stride)
        else:
            res, fl = eval_program(A, BT, has_b, C, bt, i, j, slots, prog, iE, iM, ib,
                                   ik, aE, aM, ab, ak, pol, prod_rounded, pE, pM, pb,
                                   pk, ppol, key, lin * stride)
        out[bt, i, j] = res
        if want_flags:
            flg[bt, i, j] = fl
        fall |= fl
    return fall


def reduce_program(A, BT, has_b, C, has_c, out, flg, want_flags, prog, nslots, iE, iM, ib, ik, aE, aM, ab, ak, pol, prod_rounded, pE, pM, pb, pk, ppol, kahan, key, chunk=None):
    """Runs `reduce_program_chunk` over all outputs in parallel chunks; returns the OR of the flags."""
    return run_chunks(reduce_program_chunk, out.size, A, BT, has_b, C, has_c, out, flg, want_flags, prog, nslots, iE, iM, ib, ik, aE, aM, ab, ak, pol, prod_rounded, pE, pM, pb, pk, ppol, kahan, key)


@njit(cache=True)
def _trunc_to(sig, x, q):
    """floor(sig * 2**(x - q)) for sig >= 0: the term truncated to the quantum 2**q."""
    if x >= q:
        return sig << (x - q)
    d = q - x
    if d >= 63:
        return np.int64(0)
    return sig >> d


@njit(cache=True)
def block_fma_one(A, BT, C, has_c, bt, i, j, K, width, extra, frame_bits, frame_emin,
                  iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol):
    """One output of the block-FMA model (see `block_fma`). Returns (bits, flags)."""
    daz = pol[P_DAZ]
    fl = 0
    if has_c:
        cbits = np.int64(C[bt, i, j])
    else:
        cbits = zero_bits(np.int64(0), aE, aM, ak)
    # 1. Special values decide the whole dot product.
    cc, cs, ce, cm = unpack_in_flight(cbits, aE, aM, ab, ak, daz)
    nan_found = cc >= C_QNAN
    nan_s, nan_e, nan_m = cs, ce, cm
    if cc == C_SNAN:
        fl |= F_INVALID
    pinf = cc == C_INF and cs == 0
    ninf = cc == C_INF and cs == 1
    for k in range(K):
        ca, sa, ea, ma = unpack_in_flight(A[bt, i, k], iE, iM, ib, ik, daz)
        cb, sb, eb, mb = unpack_in_flight(BT[bt, j, k], iE, iM, ib, ik, daz)
        c, s, e, mm, f = mul_exact(ca, sa, ea, ma, cb, sb, eb, mb)
        fl |= f
        if c >= C_QNAN:
            if not nan_found:
                nan_s, nan_e, nan_m = s, e, mm
            nan_found = True
        elif c == C_INF:
            if s == 0:
                pinf = True
            else:
                ninf = True
    if nan_found:
        r, f = nan_operand(C_QNAN, nan_s, nan_m, nan_e, aE, aM, ak, pol)
        return r, fl | f
    if pinf and ninf:
        r, f = fresh_nan(aE, aM, ak, pol)
        return r, fl | f
    if pinf or ninf:
        r, f = inf_bits(np.int64(1 if ninf else 0), aE, aM, ak, pol[P_OVF])
        return r, fl | f
    # 2. Blocks.
    for k0 in range(0, K, width):
        k1 = min(K, k0 + width)
        cc, cs, ce, cm = unpack_in_flight(cbits, aE, aM, ab, ak, daz)
        have = cc == C_FINITE
        E = np.int64(0)
        if have:
            E = max(ce + 63 - clz64(cm), np.int64(frame_emin))
        for k in range(k0, k1):
            ca, sa, ea, ma = unpack_in_flight(A[bt, i, k], iE, iM, ib, ik, daz)
            cb, sb, eb, mb = unpack_in_flight(BT[bt, j, k], iE, iM, ib, ik, daz)
            if ca == C_FINITE and cb == C_FINITE:
                ep = ea + eb + 2 * iM           # unnormalised: binade(a) + binade(b)
                if not have or ep > E:
                    E = ep
                have = True
        if not have:
            cbits = zero_bits(np.int64(0), aE, aM, ak)
            continue
        q = E - frame_bits - extra
        S = np.int64(0)
        if cc == C_FINITE:
            t = _trunc_to(cm, ce, q)
            S += -t if cs else t
        for k in range(k0, k1):
            ca, sa, ea, ma = unpack_in_flight(A[bt, i, k], iE, iM, ib, ik, daz)
            cb, sb, eb, mb = unpack_in_flight(BT[bt, j, k], iE, iM, ib, ik, daz)
            if ca == C_FINITE and cb == C_FINITE:
                t = _trunc_to(ma * mb, ea + eb, q)
                S += -t if (sa ^ sb) else t
        if S == 0:
            cbits = zero_bits(np.int64(0), aE, aM, ak)
        else:
            sg = np.int64(1) if S < 0 else np.int64(0)
            cbits, f = round_pack(sg, q, S if S > 0 else -S, aE, aM, ab, ak, bpol,
                                  np.int64(0))
            fl |= f
    return cbits, fl


@njit(cache=True, nogil=True)
def block_fma_chunk(lo, hi, A, BT, C, has_c, out, flg, want_flags, width, extra, frame_bits, frame_emin, iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol):
    """The block-FMA (tensor-core) model; see softfloat.accumulate.BlockFMA.

    For each output, blocks of ``width`` products in order k = 0, 1, ...: the
    block exponent E is the largest unnormalised product exponent (ea + eb,
    subnormal inputs at emin) and that of the running accumulator c (at
    max(floor(log2|c|), frame_emin)); every term (c included) is truncated toward
    zero to a multiple of 2**(E - frame_bits - extra); the exact sum of the
    truncated terms is rounded into the accumulator format under ``bpol`` and
    becomes c. NaN/inf terms: NaN if any NaN or both infinities, else the infinity.
    """
    nb, m, K = A.shape
    n = out.shape[2]
    total = nb * m * n
    fall = 0
    for lin in range(lo, hi):
        bt = lin // (m * n)
        r = lin - bt * m * n
        i = r // n
        j = r - i * n
        res, fl = block_fma_one(A, BT, C, has_c, bt, i, j, K, width, extra, frame_bits,
                                frame_emin, iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol)
        out[bt, i, j] = res
        if want_flags:
            flg[bt, i, j] = fl
        fall |= fl
    return fall


def block_fma(A, BT, C, has_c, out, flg, want_flags, width, extra, frame_bits, frame_emin, iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol, chunk=None):
    """Runs `block_fma_chunk` over all outputs in parallel chunks; returns the OR of the flags."""
    return run_chunks(block_fma_chunk, out.size, A, BT, C, has_c, out, flg, want_flags, width, extra, frame_bits, frame_emin, iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol)


@njit(parallel=True, cache=True)
def matmul_f32_seq(A, B, C, has_c, out):
    """Native float32: out[bt, i, :] = sequential k sum of A[bt, i, k] * B[bt, k, :]
    (after C, if given, else starting from the k = 0 product). Exact products and
    IEEE float32 addition make this equal to the nearest-even sequential model; rows
    go in groups of four (each row of B is used four times), the loop over j
    vectorises, and the k order of every output is kept."""
    nb, m, K = A.shape
    n = B.shape[2]
    ngrp = (m + 3) // 4
    for lin in prange(nb * ngrp):
        bt = lin // ngrp
        i0 = (lin - bt * ngrp) * 4
        rows = min(4, m - i0)
        acc = np.empty((4, n), np.float32)
        if has_c:
            for r in range(rows):
                for j in range(n):
                    acc[r, j] = C[bt, i0 + r, j]
            k0 = 0
        else:
            for r in range(rows):
                a0 = A[bt, i0 + r, 0]
                for j in range(n):
                    acc[r, j] = a0 * B[bt, 0, j]
            k0 = 1
        if rows == 4:
            acc0 = acc[0]
            acc1 = acc[1]
            acc2 = acc[2]
            acc3 = acc[3]
            for k in range(k0, K):
                a0 = A[bt, i0, k]
                a1 = A[bt, i0 + 1, k]
                a2 = A[bt, i0 + 2, k]
                a3 = A[bt, i0 + 3, k]
                brow = B[bt, k]
                for j in range(n):
                    b = brow[j]
                    acc0[j] = acc0[j] + a0 * b
                    acc1[j] = acc1[j] + a1 * b
                    acc2[j] = acc2[j] + a2 * b
                    acc3[j] = acc3[j] + a3 * b
        else:
            for r in range(rows):
                accr = acc[r]
                for k in range(k0, K):
                    a = A[bt, i0 + r, k]
                    brow = B[bt, k]
                    for j in range(n):
                        accr[j] = accr[j] + a * brow[j]
        for r in range(rows):
            for j in range(n):
                out[bt, i0 + r, j] = acc[r, j]


@njit(parallel=True, cache=True)
def sum_f32_seq(X, out):
    """Native float32 sequential row sums of X (rows, K): ((x0 + x1) + x2) + ..."""
    rows, K = X.shape
    for r in prange(rows):
        s = X[r, 0]
        for k in range(1, K):
            s = s + X[r, k]
        out[r] = s
