"""Accumulation kernels, the block-FMA (tensor-core) model: a block of products
truncated to a common quantum below the block's largest exponent, summed
exactly, then rounded into the accumulator (`block_fma_one`, the reference);
its float64 fast twin (`block_fma_fast_chunk`, vectorised over output columns)
and `block_fma`, which picks one.

Values in flight and parameters as in `accum.py`; a block-FMA model travels as
``blk`` = (width, extra_bits, frame_bits, frame_emin).
"""
import math

import numpy as np
from numba import njit

from .._parallel import run_chunks, run_chunks_weighted
from .accum import mul_exact
from .core import (C_FINITE, C_INF, C_QNAN, C_SNAN, C_ZERO, F_INEXACT, F_INVALID, P_DAZ,
                   P_MODE, P_OVF, RDN, RNA, RNE, RTZ, RUP, addend_branchfree, clz64, inf_bits,
                   round_masks, round_pack, unpack, unpack_in_flight, zero_bits)
from .specialize import fresh_nan, nan_operand


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
def block_fma_one(A, BT, C, has_c, bt, i, j, K, blk, fin, facc, pol, bpol):
    """One output of the block-FMA model (see `block_fma`). Returns (bits, flags)."""
    width, extra, frame_bits, frame_emin = blk
    iE, iM, ib, ik = fin
    aE, aM, ab, ak = facc
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
        if cc == C_INF or cc >= C_QNAN:
            break               # a block overflowed: the infinity is the result
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
def block_fma_chunk(lo, hi, A, BT, C, has_c, out, flg, want_flags, blk, fin, facc, pol, bpol):
    """The block-FMA (tensor-core) model; see softfloat.accumulate.BlockFMA.

    ``blk`` = (width, extra, frame_bits, frame_emin). For each output, blocks of
    ``width`` products in order k = 0, 1, ...: the
    block exponent E is the largest unnormalised product exponent (ea + eb,
    subnormal inputs at emin) and that of the running accumulator c (at
    max(floor(log2|c|), frame_emin)); every term (c included) is truncated toward
    zero to a multiple of 2**(E - frame_bits - extra); the exact sum of the
    truncated terms is rounded into the accumulator format under ``bpol`` and
    becomes c. NaN/inf terms: NaN if any NaN or both infinities, else the infinity.
    """
    nb, m, K = A.shape
    n = out.shape[2]
    fall = 0
    for lin in range(lo, hi):
        bt = lin // (m * n)
        r = lin - bt * m * n
        i = r // n
        j = r - i * n
        res, fl = block_fma_one(A, BT, C, has_c, bt, i, j, K, blk, fin, facc, pol, bpol)
        out[bt, i, j] = res
        if want_flags:
            flg[bt, i, j] = fl
        fall |= fl
    return fall


def block_fma_slow(A, BT, C, has_c, out, flg, want_flags, blk, fin, facc, pol, bpol, chunk=None):
    """The reference block-FMA kernel (integer arithmetic, one output at a time):
    the slow twin `block_fma`'s fast path is tested against. Runs `block_fma_chunk`
    over all outputs in parallel chunks; returns the OR of the flags."""
    return run_chunks(block_fma_chunk, out.size, A, BT, C, has_c, out, flg, want_flags, blk,
                      fin, facc, pol, bpol)




# ---------------------------------------------------------------------------
# The block-FMA model, fast: float64 arithmetic vectorised over output columns
# ---------------------------------------------------------------------------
# Why float64 gives the same bits as `block_fma_one`'s integers (conditions checked
# by `block_fma_fast_masks`):
# * inputs of at most 26 significant bits inside binary32's range: a product
#   a*b is exact in float64 (<= 52 bits, |a*b| in [2**-298, 2**256]);
# * the block's quantum 2**q, q = E - frame_bits - extra, is a power of two, so
#   (a*b) * 2**-q is exact (a normal float64: >= 2**-298-160), and trunc() of it
#   is floor(|a*b| 2**-q) with a's and b's sign: `_trunc_to` exactly;
# * every truncated term is below 2**(frame_bits + extra + 2) (a product of two
#   significands in [1, 2) is below 4 * 2**(binade(a) + binade(b)) <= 4 * 2**E),
#   so the sum S of width + 1 terms is an integer below 2**53 when
#   (width + 1) * 2**(frame_bits + extra + 2) <= 2**53: exact in float64;
# * S * 2**q is then the exact block value v; while v lies in the accumulator's
#   normal range, rounding it to p = aM + 1 bits is an operation on v's float64
#   encoding: add `core.addend_branchfree`'s addend and clear the d = 52 - aM low
#   bits (toward zero adds 0; nearest-even 2**(d-1) - 1 + (bit d); nearest-away
#   2**(d-1); away from zero, upward for v > 0 and downward for v < 0, 2**d - 1; a
#   carry into the exponent field is the correct next binade). That is round_pack's
#   result and its only flag is inexact (v normal: no tininess; the result's exponent
#   checked <= emax).
#   Every other v (tiny, overflowing) goes through `round_pack` itself, and any
#   output whose row of A, column of B or initial c holds an infinity or NaN, or
#   whose running accumulator becomes one, is recomputed by `block_fma_one`.
_ZEXP = -(1 << 40)          # the "exponent" of a zero term: below every real one


@njit(cache=True)
def bfma_predecode(X, E, M, bias, kind, daz, val, bexp, special):
    """Values of encodings X (flat): val = the exact value (float64), bexp = the
    binade exponent (unpack's exp + M; subnormals at emin) or _ZEXP for zeros,
    special = 1 for infinities and NaNs (val 0, bexp _ZEXP)."""
    for t in range(X.size):
        c, s, e, m = unpack(X[t], E, M, bias, kind, daz)
        if c == C_FINITE:
            v = math.ldexp(float(m), e)
            val[t] = -v if s else v
            bexp[t] = e + M
            special[t] = 0
        else:
            val[t] = 0.0
            bexp[t] = _ZEXP
            special[t] = 1 if c >= C_INF else 0


@njit(cache=True)
def _f64_exp(v):
    """floor(log2 |v|) of a nonzero finite float64."""
    return np.int64(math.frexp(v)[1] - 1)


@njit(cache=True, nogil=True)
def block_fma_fast_chunk(lo, hi, Av, Ae, Aspec, Bv, Be, Bspec, Cv, Cspec, has_c, A, BT, C, out,
                         flg, want_flags, blk, fin, facc, pol, bpol, masks):
    """Outputs [lo, hi) (linear over (nb, m, n)) of the block-FMA model, row segment
    by row segment, vectorised over the columns j (see the proof above).
    Av, Ae: (nb, m, K) values and binade exponents of A; Bv, Be: (nb, K, n) of B;
    *spec: 1 where an infinity or NaN sits (A, B per element; Cspec per output);
    Cv: (nb, m, n) values of c. A, BT, C: the encodings, for `block_fma_one`.
    ``masks``: the block rounding's `core.round_masks` (`block_fma_fast_masks`)."""
    width, extra, frame_bits, frame_emin = blk
    aE, aM, ab, ak = facc
    m_rne, m_rna, m_up, m_dn, m_odd = masks
    nb, m, K = Av.shape
    n = Bv.shape[2]
    daz = pol[P_DAZ]
    drop = 52 - aM
    low = (np.int64(1) << drop) - 1
    half = np.int64(1) << (drop - 1)
    mmask = (np.int64(1) << aM) - 1
    emin = 1 - ab
    emax = (np.int64(1) << aE) - 2 - ab
    fe = np.int64(frame_emin)
    zhalf = np.int64(_ZEXP // 2)
    cval = np.empty(n, np.float64)
    cvi = cval.view(np.int64)               # encodings of the running values c
    cbits = np.empty(n, np.int64)
    edge = np.zeros(n, np.uint8)            # c last set by round_pack (cbits holds it)
    Emax = np.empty(n, np.int64)
    scI = np.empty(n, np.int64)
    sc = scI.view(np.float64)               # 2**-q
    pI = np.empty(n, np.int64)
    p2 = pI.view(np.float64)                # 2**q
    S = np.empty(n, np.float64)
    Vf = np.empty(n, np.float64)
    Vi = Vf.view(np.int64)
    qv = np.empty(n, np.int64)
    ok = np.empty(n, np.uint8)
    fl = np.zeros(n, np.int64)
    redo = np.zeros(n, np.uint8)
    fall = 0
    lin = lo
    while lin < hi:
        bt = lin // (m * n)
        r = lin - bt * m * n
        i = r // n
        j0 = r - i * n
        j1 = min(n, j0 + (hi - lin))
        L = j1 - j0
        rowspec = False
        for k in range(K):
            if Aspec[bt, i, k]:
                rowspec = True
        for jj in range(L):
            fl[jj] = 0
            edge[jj] = 0
            redo[jj] = 1 if rowspec else 0
            cval[jj] = 0.0
        if has_c:
            for jj in range(L):
                cval[jj] = Cv[bt, i, j0 + jj]
                if Cspec[bt, i, j0 + jj]:
                    redo[jj] = 1
        if not rowspec:
            for k in range(K):
                bs = Bspec[bt, k, j0:j1]
                for jj in range(L):
                    if bs[jj]:
                        redo[jj] = 1
        for k0 in range(0, K, width):
            k1 = min(K, k0 + width)
            # the block exponent: c's (floor(log2|c|), at least frame_emin), products'
            for jj in range(L):
                ce = ((cvi[jj] >> 52) & 0x7FF) - 1023
                Emax[jj] = max(ce, fe) if cval[jj] != 0.0 else _ZEXP
            for k in range(k0, k1):
                ea = Ae[bt, i, k]
                if ea == _ZEXP:
                    continue
                be = Be[bt, k, j0:j1]
                for jj in range(L):
                    Emax[jj] = max(Emax[jj], ea + be[jj])
            for jj in range(L):
                q = Emax[jj] - frame_bits - extra
                q = q if Emax[jj] >= zhalf else np.int64(0)    # empty block: S stays 0
                qv[jj] = q
                scI[jj] = (1023 - q) << 52
                pI[jj] = (1023 + q) << 52
                S[jj] = np.trunc(cval[jj] * sc[jj])
            for k in range(k0, k1):
                a = Av[bt, i, k]
                if a == 0.0:
                    continue
                bv = Bv[bt, k, j0:j1]
                for jj in range(L):
                    S[jj] += np.trunc((a * bv[jj]) * sc[jj])
            # round each block value into the accumulator: the next c
            for jj in range(L):
                Vf[jj] = S[jj] * p2[jj]                    # exact: S * 2**q
                vb = Vi[jj]
                ex = ((vb >> 52) & 0x7FF) - 1023
                add = addend_branchfree((vb >> 63) & 1, (vb >> drop) & 1, half, m_rne, m_rna,
                                        m_up, m_dn)
                rb = (vb + add) & ~low
                rex = ((rb >> 52) & 0x7FF) - 1023
                good = (emin <= ex) & (rex <= emax) & (Emax[jj] >= zhalf) & (S[jj] != 0.0)
                ok[jj] = good
                fl[jj] |= F_INEXACT if (good and rb != vb) else 0
                cvi[jj] = rb if good else cvi[jj]
                edge[jj] = 0 if good else edge[jj]
            for jj in range(L):
                if ok[jj] or redo[jj]:
                    continue
                s_ = S[jj]
                if Emax[jj] < zhalf or s_ == 0.0:
                    cval[jj] = 0.0                        # +0, as block_fma_one
                    edge[jj] = 0
                    continue
                sg = np.int64(1) if s_ < 0 else np.int64(0)
                mag = np.int64(-s_ if s_ < 0 else s_)
                bits, f = round_pack(sg, qv[jj], mag, aE, aM, ab, ak, bpol, np.int64(0))
                fl[jj] |= f
                cc, cs, ce, cm = unpack(bits, aE, aM, ab, ak, daz)
                cbits[jj] = bits
                edge[jj] = 1
                if cc == C_FINITE:
                    vv = math.ldexp(float(cm), ce)
                    cval[jj] = -vv if cs else vv
                elif cc == C_ZERO:
                    cval[jj] = 0.0
                else:
                    redo[jj] = 1                          # became inf/NaN: reference
        for jj in range(L):
            j = j0 + jj
            if redo[jj]:
                res, f = block_fma_one(A, BT, C, has_c, bt, i, j, K, blk, fin, facc, pol,
                                       bpol)
                out[bt, i, j] = res
                fl[jj] = f
            elif edge[jj]:
                out[bt, i, j] = cbits[jj]
            elif cval[jj] == 0.0:
                out[bt, i, j] = 0
            else:                                         # a normal value: encode it
                cb = cvi[jj]
                out[bt, i, j] = ((((cb >> 63) & 1) << (aE + aM))
                                 | ((((cb >> 52) & 0x7FF) - 1023 + ab) << aM)
                                 | ((cb >> drop) & mmask))
            if want_flags:
                flg[bt, i, j] = fl[jj]
            fall |= fl[jj]
        lin += L
    return fall


def block_fma_fast_masks(blk, fin, facc, bpol):
    """The block rounding's `core.round_masks` where `block_fma_fast_chunk` applies
    (see the proof above its kernels), else None: IEEE-style accumulator of <= 24
    bits inside binary32's range, inputs of <= 26 bits inside binary32's range,
    exact block sums in float64, and the block result rounded in a mode of
    `core.addend_branchfree` (nearest-even, nearest-away, upward, downward, toward
    zero; not odd or stochastic rounding)."""
    width, extra, frame_bits, frame_emin = blk
    iE, iM, ib, ik = fin
    aE, aM, ab, ak = facc
    fin_emax = (1 << iE) - 2 - ib
    fin_emin_sub = 1 - ib - iM
    acc_emax = (1 << aE) - 2 - ab
    acc_emin_sub = 1 - ab - aM
    if not (int(bpol[P_MODE]) in (RNE, RNA, RUP, RDN, RTZ) and ak == 0 and aM <= 23
            and acc_emax <= 127 and acc_emin_sub >= -149
            and iM <= 25 and fin_emax <= 127 and fin_emin_sub >= -149
            and (width + 1) * 2.0 ** (frame_bits + extra + 2) <= 2.0 ** 53):
        return None
    return round_masks(bpol[P_MODE])


def block_fma(A, BT, C, has_c, out, flg, want_flags, blk, fin, facc, pol, bpol, chunk=None):
    """The block-FMA model over all outputs (see `block_fma_chunk` for the model):
    the float64 fast kernel where `block_fma_fast_masks` allows, else
    `block_fma_slow`. Bit for bit the same results and flags
    (tests/test_block_fma_fast.py compares them). Returns the OR of the flags."""
    masks = block_fma_fast_masks(blk, fin, facc, bpol)
    if masks is None:
        return block_fma_slow(A, BT, C, has_c, out, flg, want_flags, blk, fin, facc, pol, bpol)
    iE, iM, ib, ik = fin
    aE, aM, ab, ak = facc
    K = A.shape[2]
    B = np.ascontiguousarray(np.swapaxes(BT, 1, 2))
    daz = pol[P_DAZ]
    Av = np.empty(A.shape, np.float64)
    Ae = np.empty(A.shape, np.int64)
    As = np.empty(A.shape, np.uint8)
    bfma_predecode(A.reshape(-1), iE, iM, ib, ik, daz, Av.reshape(-1), Ae.reshape(-1),
                   As.reshape(-1))
    Bv = np.empty(B.shape, np.float64)
    Be = np.empty(B.shape, np.int64)
    Bs = np.empty(B.shape, np.uint8)
    bfma_predecode(B.reshape(-1), iE, iM, ib, ik, daz, Bv.reshape(-1), Be.reshape(-1),
                   Bs.reshape(-1))
    if has_c:
        Cb = np.array(np.broadcast_to(C, out.shape))      # a writable copy (one signature)
        Cv = np.empty(out.shape, np.float64)
        Ce = np.empty(out.shape, np.int64)
        Cs = np.empty(out.shape, np.uint8)
        bfma_predecode(Cb.reshape(-1), aE, aM, ab, ak, daz, Cv.reshape(-1), Ce.reshape(-1),
                       Cs.reshape(-1))
    else:
        Cb = C
        Cv = np.zeros((1, 1, 1), np.float64)
        Cs = np.zeros((1, 1, 1), np.uint8)
    return run_chunks_weighted(block_fma_fast_chunk, out.size, K, Av, Ae, As, Bv, Be, Bs, Cv,
                               Cs, has_c, A, BT, Cb, out, flg, want_flags, blk, fin, facc, pol,
                               bpol, masks)
