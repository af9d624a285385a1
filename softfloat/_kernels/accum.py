"""Accumulation kernels: sums of terms (inputs or exact/rounded products) in an
explicit order (the programs of softfloat/accumulate/programs.py) and
compensated summation. The block-FMA (tensor-core) model is in `block_fma.py`,
the native float32 fast paths in `accum_f32.py`.

Values in flight follow `core.unpack_in_flight`: (cls, sign, exp, sig) with the
value (-1)**sign * sig * 2**exp for finite values. For NaN classes ``exp`` holds
the payload length and ``sig`` the payload (``exp == 0``: a fresh NaN, no
payload), so that `specialize.make_nan` can propagate it. A sum of two values is
the arithmetic core's (`arith.add_pre` + `arith.finish`), rounding a value into a
format the conversion core's (`convert.round_value`); every rounding goes
through `core.round_pack`, every NaN through specialize.py.

Parameters travel as tuples, as the policy does: a format as ``Format.params``
(ebits, mbits, bias, kind code): ``fin`` the inputs', ``facc`` the accumulator's,
``fprod`` the rounded products'; a block-FMA model as ``blk`` = (width,
extra_bits, frame_bits, frame_emin). Each kernel unpacks them once.
"""
import numpy as np
from numba import njit

from .._parallel import run_chunks
from .arith import add_pre, finish
from .convert import round_value
from .core import (C_FINITE, C_INF, C_QNAN, C_SNAN, C_ZERO, F_INVALID, P_DAZ, P_SRBITS,
                   is_stochastic, rand_bits, unpack_in_flight, zero_bits)

# Program op kinds (see softfloat/accumulate/programs.py).
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
def get_term(A, BT, has_b, bt, i, j, k, fin, daz, prod_rounded, fprod, ppol, key, ridx):
    """Term k of output (bt, i, j): A[bt, i, k] (a sum) or its product with
    BT[bt, j, k], exact or rounded into the product format ``fprod``.
    Returns (cls, sign, exp, sig, flags)."""
    iE, iM, ib, ik = fin
    ca, sa, ea, ma = unpack_in_flight(A[bt, i, k], iE, iM, ib, ik, daz)
    if not has_b:
        return ca, sa, ea, ma, 0
    cb, sb, eb, mb = unpack_in_flight(BT[bt, j, k], iE, iM, ib, ik, daz)
    c, s, e, m, fl = mul_exact(ca, sa, ea, ma, cb, sb, eb, mb)
    if prod_rounded:
        rb = np.int64(0)
        if is_stochastic(ppol):
            rb = rand_bits(key, ridx, ppol[P_SRBITS])
        pE, pM, pb, pk = fprod
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
def eval_kahan(A, BT, has_b, C, has_c, bt, i, j, K, fin, facc, pol, prod_rounded, fprod,
               ppol, key, ridx):
    """Kahan's compensated sum of the terms of output (bt, i, j): s = first term
    (or c), comp = 0, then per term x: y = x - comp; t = s + y; comp = (t - s) - y;
    s = t; each step rounded into the accumulator. Returns (bits, flags)."""
    aE, aM, ab, ak = facc
    daz = pol[P_DAZ]
    fl = 0
    if has_c:
        s_bits = np.int64(C[bt, i, j])
        k0 = 0
    else:
        c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, 0, fin, daz, prod_rounded,
                                  fprod, ppol, key, ridx)
        ridx += 1
        s_bits, f2 = round_value(c, s, e, mm, aE, aM, ab, ak, pol, _rb(pol, key, ridx))
        ridx += 1
        fl |= f | f2
        k0 = 1
    comp = zero_bits(np.int64(0), aE, aM, ak)
    for k in range(k0, K):
        c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, k, fin, daz, prod_rounded,
                                  fprod, ppol, key, ridx)
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
def eval_program(A, BT, has_b, C, bt, i, j, slots, prog, fin, facc, pol, prod_rounded, fprod,
                 ppol, key, ridx):
    """Run the program ``prog`` (rows (kind, dst, src); the result in slot 0) for
    output (bt, i, j). Returns (bits, flags)."""
    aE, aM, ab, ak = facc
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
            c, s, e, mm, f = get_term(A, BT, has_b, bt, i, j, src, fin, daz,
                                      prod_rounded, fprod, ppol, key, ridx)
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
def reduce_program_chunk(lo, hi, A, BT, has_b, C, has_c, out, flg, want_flags, prog, nslots,
                         fin, facc, pol, prod_rounded, fprod, ppol, kahan, key):
    """out[bt, i, j] = the sum of the terms k (see `get_term`) evaluated by the
    program ``prog`` (`eval_program`) with every addition rounded into the
    accumulator format ``facc`` under ``pol``, or by Kahan's compensated
    summation (`eval_kahan`) when ``kahan``.
    A: (nb, m, K), BT: (nb, n, K) (B transposed), C/out: (nb, m, n) accumulator
    encodings. Returns the OR of all flags."""
    nb, m, K = A.shape
    n = out.shape[2]
    stride = 4 * K + 8                      # random numbers reserved per output
    slots = np.zeros(max(nslots, 1), np.int64)
    fall = 0
    for lin in range(lo, hi):
        bt = lin // (m * n)
        r = lin - bt * m * n
        i = r // n
        j = r - i * n
        if kahan:
            res, fl = eval_kahan(A, BT, has_b, C, has_c, bt, i, j, K, fin, facc, pol,
                                 prod_rounded, fprod, ppol, key, lin * stride)
        else:
            res, fl = eval_program(A, BT, has_b, C, bt, i, j, slots, prog, fin, facc, pol,
                                   prod_rounded, fprod, ppol, key, lin * stride)
        out[bt, i, j] = res
        if want_flags:
            flg[bt, i, j] = fl
        fall |= fl
    return fall


def reduce_program(A, BT, has_b, C, has_c, out, flg, want_flags, prog, nslots, fin, facc, pol,
                   prod_rounded, fprod, ppol, kahan, key, chunk=None):
    """Runs `reduce_program_chunk` over all outputs in parallel chunks; returns the OR of the flags."""
    return run_chunks(reduce_program_chunk, out.size, A, BT, has_b, C, has_c, out, flg,
                      want_flags, prog, nslots, fin, facc, pol, prod_rounded, fprod, ppol, kahan,
                      key)


@njit(cache=True)
def pairwise_program(K):
    """The program of the pairwise order for K >= 1 terms, op for op the one
    `accumulate.programs._tree_program` compiles from the nested pairs (terms
    paired left to right at each level, an odd one carried up last): the same
    depth-first walk, pre-order slot numbers, so that stochastic rounding draws
    the same random numbers. Returns (rows (kind, dst, src), number of slots)."""
    # the tree: nodes 0..K-1 are the terms, K.. the pairs (left, right children)
    left = np.empty(max(K - 1, 1), np.int64)
    right = np.empty(max(K - 1, 1), np.int64)
    level = np.arange(K)
    nxt = np.empty(K, np.int64)
    nodes = K
    while level.size > 1:
        n = 0
        for p in range(0, level.size - 1, 2):
            left[nodes - K] = level[p]
            right[nodes - K] = level[p + 1]
            nxt[n] = nodes
            nodes += 1
            n += 1
        if level.size % 2:
            nxt[n] = level[level.size - 1]
            n += 1
        level = nxt[:n].copy()
    ops = np.empty((max(2 * K - 2, 1), 3), np.int64)
    if K == 1:
        ops[0, 0], ops[0, 1], ops[0, 2] = OP_LEAF, 0, 0
        return ops, 1
    # an explicit stack of (node, slot, next child)
    st_node = np.empty(K, np.int64)
    st_slot = np.empty(K, np.int64)
    st_i = np.empty(K, np.int64)
    top = 0
    st_node[0], st_slot[0], st_i[0] = nodes - 1, 0, 0
    counter = 0
    o = 0
    while top >= 0:
        node, slot, i = st_node[top], st_slot[top], st_i[top]
        if i == 2:
            top -= 1
            if top >= 0:
                ops[o, 0] = OP_COPY if st_i[top] == 0 else OP_ADD_SLOT
                ops[o, 1], ops[o, 2] = st_slot[top], slot
                o += 1
                st_i[top] += 1
            continue
        child = left[node - K] if i == 0 else right[node - K]
        if child < K:
            ops[o, 0] = OP_LEAF if i == 0 else OP_ADD_LEAF
            ops[o, 1], ops[o, 2] = slot, child
            o += 1
            st_i[top] += 1
        else:
            counter += 1
            top += 1
            st_node[top], st_slot[top], st_i[top] = child, counter, 0
    return ops[:o], counter + 1
