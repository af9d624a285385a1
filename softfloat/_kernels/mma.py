"""Matrix-unit kernels (softfloat.mma), NVIDIA's fused dot products: the
reference "fdpa" and "grouped" kernels, one output element of a chain of GPU
matrix instructions per loop iteration, all in integer arithmetic (their fast
twins are in `mma_fast.py`, the AMD units' and the FMA chains' kernels in
`mma_chains.py`).

Operands arrive decoded (`mma_decode.decode_chunk`: class, integer significand,
binade exponent); terms are aligned and the chunk sums rounded by `mma_round`.

Each ``*_chunk(lo, hi, ...)`` kernel computes outputs [lo, hi) (see
softfloat._parallel) and returns 0. The chunk result of one instruction step is
encoded in the output format and decoded again as the next step's c, as the
hardware chains instructions.
"""
import numpy as np
from numba import njit

from .mma_decode import CLS_FIN, CLS_NAN, c_specials, c_start, dec_ieee, out_pos, prod_special
from .mma_round import add_c_term, add_trunc, round_out, special_bits


# ---------------------------------------------------------------------------
# "fdpa": truncated fused dot-product-add, block scales optional
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def fdpa_chunk(lo, hi, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c, Mc,
               SAs, SAe, SAc, SBs, SBe, SBc, nsb, sblock, scaled,
               out, L, F, MaMb, Ms2, ezero, rne, p, emin, Eo, Mo, idxs, use_idx):
    """The reference "fdpa" kernel (the slow twin of `fdpa_fast_chunk`): outputs
    [lo, hi), or outputs idxs[lo:hi] when ``use_idx``."""
    for q in range(lo, hi):
        idx = idxs[q] if use_idx else q
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        ccls, csig, ce, cM = c_start(idx, Cs, Ce, Cc, has_c, Mc, Mo)
        bits = np.int64(0)
        for k0 in range(0, K, L):
            nan, pinf, ninf = c_specials(ccls, csig)
            emax = np.int64(ezero) if csig == 0 else ce
            esc = np.int64(0)
            ssc = np.int64(1)
            if scaled:
                blk = k0 // sblock
                ia = (bt * m + i) * nsb + blk
                ib = (bt * n + j) * nsb + blk
                if SAc[ia] == CLS_NAN or SBc[ib] == CLS_NAN:
                    nan = True
                esc = np.int64(SAe[ia]) + np.int64(SBe[ib])
                ssc = np.int64(SAs[ia]) * np.int64(SBs[ib])
            for t in range(k0, k0 + L):
                ca = Ac[arow + t]
                cb = Bc[brow + t]
                sa = np.int64(As[arow + t])
                sb = np.int64(Bs[brow + t])
                if ca != CLS_FIN or cb != CLS_FIN:
                    x, y, z = prod_special(ca, sa, cb, sb)
                    nan |= x
                    pinf |= y
                    ninf |= z
                    continue
                if sa * sb * ssc == 0:
                    e = np.int64(ezero)
                else:
                    e = np.int64(Ae[arow + t]) + np.int64(Be[brow + t]) + esc
                if e > emax:
                    emax = e
            if nan or pinf or ninf:
                bits = special_bits(nan, pinf, ninf, Eo, Mo)
            else:
                S = np.int64(0)
                base = F - MaMb - Ms2 - emax + esc
                for t in range(k0, k0 + L):
                    ps = np.int64(As[arow + t]) * np.int64(Bs[brow + t]) * ssc
                    if ps != 0:
                        S = add_trunc(S, ps, np.int64(Ae[arow + t]) + np.int64(Be[brow + t])
                                      + base)
                S = add_c_term(S, csig, ce, emax, F, cM)
                bits = round_out(S, emax - F, rne, p, emin, Eo, Mo, True)
            ccls, csig, ce = dec_ieee(bits, Eo, Mo)
            cM = Mo
        out[idx] = bits
    return 0


# ---------------------------------------------------------------------------
# "grouped": exact group sums, each times its block scales (mxf4 / mxf4nvf4)
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def grouped_chunk(lo, hi, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c, Mc,
                  SAs, SAe, SAc, SBs, SBe, SBc, nsb, sblock,
                  out, L, G, F, qab, emin_a, emin_b, Ms2, ezero, p, emin, Eo, Mo):
    ng = L // G
    gP = np.empty(ng, np.int64)
    gS = np.empty(ng, np.int64)
    gE = np.empty(ng, np.int64)
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        ccls, csig, ce, cM = c_start(idx, Cs, Ce, Cc, has_c, Mc, Mo)
        bits = np.int64(0)
        for k0 in range(0, K, L):
            nan, pinf, ninf = c_specials(ccls, csig)
            emax = np.int64(ezero) if csig == 0 else ce
            for g in range(ng):
                t0 = k0 + g * G
                blk = t0 // sblock
                ia = (bt * m + i) * nsb + blk
                ib = (bt * n + j) * nsb + blk
                if SAc[ia] == CLS_NAN or SBc[ib] == CLS_NAN:
                    nan = True
                P = np.int64(0)
                allzero = True
                for t in range(t0, t0 + G):
                    ca = Ac[arow + t]
                    cb = Bc[brow + t]
                    sa = np.int64(As[arow + t])
                    sb = np.int64(Bs[brow + t])
                    if ca != CLS_FIN or cb != CLS_FIN:
                        x, y, z = prod_special(ca, sa, cb, sb)
                        nan |= x
                        pinf |= y
                        ninf |= z
                        continue
                    ps = sa * sb
                    if ps != 0:
                        allzero = False
                        P += ps << ((np.int64(Ae[arow + t]) - emin_a)
                                    + (np.int64(Be[brow + t]) - emin_b))
                ssc = np.int64(SAs[ia]) * np.int64(SBs[ib])
                gP[g] = P * ssc
                if allzero or ssc == 0:
                    gE[g] = ezero
                else:
                    gE[g] = np.int64(SAe[ia]) + np.int64(SBe[ib])
                gS[g] = 0
                if gE[g] > emax:
                    emax = gE[g]
            if nan or pinf or ninf:
                bits = special_bits(nan, pinf, ninf, Eo, Mo)
            else:
                S = np.int64(0)
                for g in range(ng):
                    v = gP[g]
                    if v != 0:
                        S = add_trunc(S, v, gE[g] - Ms2 + qab - emax + F)
                S = add_c_term(S, csig, ce, emax, F, cM)
                bits = round_out(S, emax - F, False, p, emin, Eo, Mo, True)
            ccls, csig, ce = dec_ieee(bits, Eo, Mo)
            cM = Mo
        out[idx] = bits
    return 0


@njit(cache=True, nogil=True)
def grouped_at_chunk(lo, hi, idxs, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c, Mc,
                     SAs, SAe, SAc, SBs, SBe, SBc, nsb, sblock,
                     out, L, G, F, qab, emin_a, emin_b, Ms2, ezero, p, emin, Eo, Mo):
    """The reference `grouped_chunk` on outputs idxs[lo:hi]."""
    for q in range(lo, hi):
        i = idxs[q]
        grouped_chunk(i, i + 1, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c, Mc,
                      SAs, SAe, SAc, SBs, SBe, SBc, nsb, sblock,
                      out, L, G, F, qab, emin_a, emin_b, Ms2, ezero, p, emin, Eo, Mo)
    return 0
