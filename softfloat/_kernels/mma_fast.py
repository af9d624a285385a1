"""Matrix-unit kernels (softfloat.mma), the fast twins of NVIDIA's fused dot
products (`mma.fdpa_chunk`, `mma.grouped_chunk`): outputs whose operands are all
finite, blocked over rows and columns, branch-free loops over the columns for
the compiler to vectorise, all in exact float64 arithmetic (see each kernel).
"""
import numpy as np
from numba import njit

from .mma_decode import P2_OFF
from .mma_round import round_out, special_bits

JB = 64                      # columns per block of the fast kernels (n is padded to it)
RB = 16                      # rows per block of the fast kernels


# Steps of the fast kernels over one row's block of JB columns (branch-free
# loops for the compiler to vectorise), inlined before typing. `fdpa_fast_chunk`
# spells the same three steps out in its body: through these it measured 15 to
# 30% slower (256 x 256 outputs, K = 16 and 256); `grouped_fast_chunk` calls them.
@njit(cache=True, inline="always")
def load_c_block(c, cx, ib, Cb, cb, Ec, Mc, cspec, has_c, ez, P2):
    """c[ib:ib+JB], cx[...]: the first c of the block's outputs (Cb[cb:cb+JB],
    binary16 or binary32 encodings of Ec, Mc bits, or +0 without c) as values
    and the exponents they bring to a chunk's maximum (binade exponent, ``ez``
    for zero); an infinite or NaN c is marked in ``cspec`` (the reference kernel
    redoes its output) and read as 0. Returns 1 if there was one."""
    anyspec = np.int64(0)
    if not has_c:
        for j in range(JB):
            c[ib + np.uint64(j)] = 0.0
            cx[ib + np.uint64(j)] = ez
        return anyspec
    cbias = (np.int64(1) << (Ec - 1)) - 1
    cemask = (np.int64(1) << Ec) - 1
    cfmask = (np.int64(1) << Mc) - 1
    for j in range(JB):
        bb = np.int64(Cb[cb + np.uint64(j)])
        ef = (bb >> Mc) & cemask
        sig = (bb & cfmask) | (np.int64(ef != 0) << Mc)
        ec = max(ef, np.int64(1)) - cbias
        sp = ef == cemask
        v = np.float64(sig) * P2[P2_OFF + ec - Mc]
        v = -v if (bb >> (Ec + Mc)) & 1 else v
        c[ib + np.uint64(j)] = 0.0 if (sp or sig == 0) else v
        cx[ib + np.uint64(j)] = ez if (sp or sig == 0) else ec
        cspec[cb + np.uint64(j)] = sp
        anyspec |= np.int64(sp)
    return anyspec


@njit(cache=True, inline="always")
def round_block(S, Sb, mxi, c, cx, ib, F, rne, p, emin, lim, twop, ez, evs, t1, t1b, t2, t2b,
                rq):
    """The chunk results of a block: S[j] (an integer below 2**53, float64; Sb
    its bits) times 2**(mxi[j] - F) rounded to p bits (nearest-even or toward
    zero; subnormal quantum 2**(emin - p + 1)) by a scaling with powers of two
    made from their exponent bits, rint or trunc, and a scaling back; 2**(emax
    + 1) (``lim``) or more is infinite; an infinite c stays. The result and its
    binade exponent (``ez`` for zero and infinities) become c[ib + j], cx[ib + j]."""
    inf = np.inf
    for j in range(JB):
        q0 = mxi[j] - F
        ev = max(q0 + ((Sb[j] >> 52) & 0x7FF) - 1023, np.int64(emin))
        qr = ev - (p - 1)
        evs[j] = ev
        t1b[j] = (1023 + q0 - qr) << 52            # 2.0**(q0 - qr)
        t2b[j] = (1023 + qr) << 52                 # 2.0**qr
    if rne:
        for j in range(JB):
            rq[j] = np.rint(S[j] * t1[j])
    else:
        for j in range(JB):
            rq[j] = np.trunc(S[j] * t1[j])
    for j in range(JB):
        rv = rq[j]
        y = rv * t2[j]
        y = np.copysign(inf, y) if abs(y) >= lim else y
        cj = c[ib + np.uint64(j)]
        y = cj if abs(cj) == inf else y
        c[ib + np.uint64(j)] = y
        cx[ib + np.uint64(j)] = ez if (y == 0.0 or abs(y) == inf) else (
            evs[j] + (1 if abs(rv) == twop else 0))


@njit(cache=True, inline="always")
def store_block(c, ib, out, ob, Eo, Mo, p, emin, o32, o32b):
    """out[ob:ob+JB]: the block's results c[ib:ib+JB] (values of the output
    format) encoded in it (binary32, or binary16 through `round_out`); a zero
    is +0."""
    if Eo == 8:
        for j in range(JB):
            o32[j] = np.float32(c[ib + np.uint64(j)] + 0.0)   # (a zero is +0)
        for j in range(JB):
            out[ob + np.uint64(j)] = o32b[j]
    else:
        for j in range(JB):
            y = c[ib + np.uint64(j)]
            if abs(y) == np.inf:
                b = special_bits(False, y > 0, y < 0, Eo, Mo)
            else:
                b = round_out(np.int64(y * 16777216.0), -24, False, p, emin, Eo, Mo, True)
            out[ob + np.uint64(j)] = b


@njit(cache=True, nogil=True)
def fdpa_fast_chunk(lo, hi, Av, Ae0, ZA, Bv, Be0, ZB, m, n, K, Cb, Ec, Mc, cspec, has_c,
                    out, L, F, ezero, rne, p, emin, Eo, Mo, P2):
    """"fdpa" without block scales for outputs whose operands are all finite
    (the caller redoes the others with `fdpa_chunk`): rows [lo, hi) of (nb * m)
    in blocks of RB rows that share each chunk's B tile (L x JB, in L1), columns
    in blocks of JB (n a multiple of JB), L a multiple of 4, all K chained inside
    one call.

    Operands as values (float64, exact; `decode_values_chunk`), A (nb, m, K) and B
    (nb, K, n) not transposed, so that every loop over the columns j is
    contiguous and branch-free, for the compiler to vectorise; Ae0, Be0 their
    binade exponents as float32 (NO_EXP for zeros: sums of two are exact, and
    float32 lanes are twice as many as int64 ones); ZA (nb * m, K // L) and ZB
    (nb, K // L, n): whether a chunk of row i of A, of column j of B, has a
    zero. Cb: c's encodings (binary16 or binary32: Ec, Mc bits), decoded as
    `load_c_block` does (an infinite or NaN c marked in ``cspec``: the call then
    returns 1).

    Exactness in float64: with E the chunk's largest exponent, every aligned term
    is trunc(a * b * 2**(F - E)), an integer below 2**(F + 2) (a product of two
    significands of at most 26 bits is exact, the power of two exact, trunc
    exact), and the sum of L + 1 of them stays below 2**53 (the caller checks
    F + 3 + log2(L + 1) <= 53): the sum is the integer S of `fdpa_chunk`, in any
    order. The rounding of S * 2**(E - F) to p bits is a scaling by powers of
    two (made from their exponent bits), rint (nearest-even) or trunc (toward
    zero) and a scaling back; the result, a value of the output format, is the
    next chunk's c. An overflowing chunk leaves its column infinite (finite
    products keep the infinity). P2[P2_OFF + x] = 2.0**x.

    Speed: every inner loop runs over the JB columns with unsigned indices (no
    negative-index wraparound, hence no gathers), four t per pass (a quarter of
    the store-to-load chains through mx and S), the max written as an add (a
    select would become a masked store, which is not forwarded to the next
    load)."""
    nch = K // L
    lim = P2[P2_OFF + (1 << (Eo - 1))]          # 2**(emax_out + 1)
    twop = P2[P2_OFF + p]
    inf = np.inf
    ez = np.int64(ezero)
    mx = np.empty(JB, np.float32)
    mxi = np.empty(JB, np.int64)
    scb = np.empty(JB, np.int64)
    sc = scb.view(np.float64)
    t1b = np.empty(JB, np.int64)
    t1 = t1b.view(np.float64)
    t2b = np.empty(JB, np.int64)
    t2 = t2b.view(np.float64)
    evs = np.empty(JB, np.int64)
    rq = np.empty(JB, np.float64)
    S = np.empty(JB, np.float64)
    Sb = S.view(np.int64)
    c = np.empty(RB * JB, np.float64)
    cx = np.empty(RB * JB, np.int64)
    o32 = np.empty(JB, np.float32)
    o32b = o32.view(np.uint32)
    cbias = (np.int64(1) << (Ec - 1)) - 1
    cemask = (np.int64(1) << Ec) - 1
    cfmask = (np.int64(1) << Mc) - 1
    anyspec = 0
    for r0 in range(lo, hi, RB):
        nr = min(RB, hi - r0)
        for j0 in range(0, n, JB):
            for i in range(nr):
                ib = np.uint64(i * JB)
                if has_c:
                    cb = np.uint64((r0 + i) * n + j0)
                    for j in range(JB):
                        bb = np.int64(Cb[cb + np.uint64(j)])
                        ef = (bb >> Mc) & cemask
                        sig = (bb & cfmask) | (np.int64(ef != 0) << Mc)
                        ec = max(ef, np.int64(1)) - cbias
                        sp = ef == cemask
                        v = np.float64(sig) * P2[P2_OFF + ec - Mc]
                        v = -v if (bb >> (Ec + Mc)) & 1 else v
                        c[ib + np.uint64(j)] = 0.0 if (sp or sig == 0) else v
                        cx[ib + np.uint64(j)] = ez if (sp or sig == 0) else ec
                        cspec[cb + np.uint64(j)] = sp
                        anyspec |= np.int64(sp)
                else:
                    for j in range(JB):
                        c[ib + np.uint64(j)] = 0.0
                        cx[ib + np.uint64(j)] = ez
            for ch in range(nch):
                k0 = ch * L
                for i in range(nr):
                    # row r of the block: its chunk ch against the B tile (L x JB),
                    # which the block's rows share while it is in L1
                    r = r0 + i
                    bt = r // m
                    arow = r * K
                    ib = np.uint64(i * JB)
                    zrow = np.uint64((bt * nch + ch) * n + j0)
                    if ZA[r * nch + ch]:
                        for j in range(JB):
                            mx[j] = np.float32(max(cx[ib + np.uint64(j)], ez))
                    else:
                        for j in range(JB):
                            e = cx[ib + np.uint64(j)]
                            mx[j] = np.float32(max(e, ez) if ZB[zrow + np.uint64(j)] else e)
                    for t in range(k0, k0 + L, 4):
                        e0 = Ae0[arow + t]
                        e1 = Ae0[arow + t + 1]
                        e2 = Ae0[arow + t + 2]
                        e3 = Ae0[arow + t + 3]
                        b0 = np.uint64((bt * K + t) * n + j0)
                        b1 = b0 + np.uint64(n)
                        b2 = b1 + np.uint64(n)
                        b3 = b2 + np.uint64(n)
                        for j in range(JB):
                            u = np.uint64(j)
                            x0 = e0 + Be0[b0 + u]
                            x1 = e1 + Be0[b1 + u]
                            x2 = e2 + Be0[b2 + u]
                            x3 = e3 + Be0[b3 + u]
                            x0 = x0 if x0 > x1 else x1
                            x2 = x2 if x2 > x3 else x3
                            x0 = x0 if x0 > x2 else x2
                            y = mx[j]
                            d = x0 - y
                            mx[j] = y + (d if d > np.float32(0.0) else np.float32(0.0))
                    for j in range(JB):
                        ej = np.int64(mx[j])
                        mxi[j] = ej
                        scb[j] = (1023 + F - ej) << 52          # 2.0**(F - E)
                    for j in range(JB):
                        cj = c[ib + np.uint64(j)]
                        S[j] = np.trunc((cj if abs(cj) < inf else 0.0) * sc[j])
                    for t in range(k0, k0 + L, 4):
                        a0 = Av[arow + t]
                        a1 = Av[arow + t + 1]
                        a2 = Av[arow + t + 2]
                        a3 = Av[arow + t + 3]
                        b0 = np.uint64((bt * K + t) * n + j0)
                        b1 = b0 + np.uint64(n)
                        b2 = b1 + np.uint64(n)
                        b3 = b2 + np.uint64(n)
                        for j in range(JB):
                            u = np.uint64(j)
                            s_ = sc[j]
                            S[j] += ((np.trunc(a0 * Bv[b0 + u] * s_)
                                      + np.trunc(a1 * Bv[b1 + u] * s_))
                                     + (np.trunc(a2 * Bv[b2 + u] * s_)
                                        + np.trunc(a3 * Bv[b3 + u] * s_)))
                    for j in range(JB):
                        q0 = mxi[j] - F
                        ev = max(q0 + ((Sb[j] >> 52) & 0x7FF) - 1023, np.int64(emin))
                        qr = ev - (p - 1)
                        evs[j] = ev
                        t1b[j] = (1023 + q0 - qr) << 52            # 2.0**(q0 - qr)
                        t2b[j] = (1023 + qr) << 52                 # 2.0**qr
                    if rne:
                        for j in range(JB):
                            rq[j] = np.rint(S[j] * t1[j])
                    else:
                        for j in range(JB):
                            rq[j] = np.trunc(S[j] * t1[j])
                    for j in range(JB):
                        rv = rq[j]
                        y = rv * t2[j]
                        y = np.copysign(inf, y) if abs(y) >= lim else y
                        cj = c[ib + np.uint64(j)]
                        y = cj if abs(cj) == inf else y
                        c[ib + np.uint64(j)] = y
                        cx[ib + np.uint64(j)] = ez if (y == 0.0 or abs(y) == inf) else (
                            evs[j] + (1 if abs(rv) == twop else 0))
            for i in range(nr):
                ib = np.uint64(i * JB)
                ob = np.uint64((r0 + i) * n + j0)
                if Eo == 8:
                    for j in range(JB):
                        o32[j] = np.float32(c[ib + np.uint64(j)] + 0.0)   # (a zero is +0)
                    for j in range(JB):
                        out[ob + np.uint64(j)] = o32b[j]
                else:
                    for j in range(JB):
                        y = c[ib + np.uint64(j)]
                        if abs(y) == inf:
                            b = special_bits(False, y > 0, y < 0, Eo, Mo)
                        else:
                            b = round_out(np.int64(y * 16777216.0), -24, False, p, emin, Eo,
                                          Mo, True)
                        out[ob + np.uint64(j)] = b
    return anyspec


@njit(cache=True, nogil=True)
def grouped_fast_chunk(lo, hi, Av, MA, Bv, MB, SAv, SAx, SBv, SBx, m, n, K, nsb, Cb, Ec, Mc,
                       cspec, has_c, out, L, G, sblock, F, ezero, p, emin, Eo, Mo, P2):
    """"grouped" (mxf4 / mxf4nvf4) for outputs whose operands and scales are
    all finite (the caller redoes the others with `grouped_chunk`): rows [lo,
    hi) of (nb * m), blocked as `fdpa_fast_chunk`, all K chained in one call.

    Av (nb * m, K) and Bv (nb, K, n) float32 values, n a multiple of JB: every
    product and every group's sum of G of them exact in float32 (the caller
    checks the formats' ranges); MA (nb * m, K // G), MB (nb, K // G, n): bit t
    set where element t of the group is nonzero (a group has a nonzero product
    iff MA & MB != 0). SAv, SAx (nb * m, nsb) and SBv, SBx (nb, nsb, n): the
    block scales' values (float64, exact; 0 for a zero scale) and binade
    exponents. A group's term is its sum times both scales (exact in float64),
    with the scales' exponent, or ``ezero`` when its products are all zero or a
    scale is zero; with E the largest exponent of a chunk's terms and c, each
    term is trunc(term * 2**(F - E)) (an integer below 2**(F + 12): the sum of
    the L // G + 1 terms is exact below 2**53), and the sum is rounded as in
    `fdpa_fast_chunk` (`round_block`). Cb: c's encodings (`load_c_block`);
    returns 1 if an infinite or NaN c was marked in ``cspec``."""
    nch = K // L
    ng = L // G
    nG = K // G
    lim = P2[P2_OFF + (1 << (Eo - 1))]          # 2**(emax_out + 1)
    twop = P2[P2_OFF + p]
    inf = np.inf
    ez = np.int64(ezero)
    gs = np.empty(JB, np.float32)
    T = np.empty(ng * JB, np.float64)
    GE = np.empty(ng * JB, np.int64)
    mxi = np.empty(JB, np.int64)
    scb = np.empty(JB, np.int64)
    sc = scb.view(np.float64)
    t1b = np.empty(JB, np.int64)
    t1 = t1b.view(np.float64)
    t2b = np.empty(JB, np.int64)
    t2 = t2b.view(np.float64)
    evs = np.empty(JB, np.int64)
    rq = np.empty(JB, np.float64)
    S = np.empty(JB, np.float64)
    Sb = S.view(np.int64)
    c = np.empty(RB * JB, np.float64)
    cx = np.empty(RB * JB, np.int64)
    o32 = np.empty(JB, np.float32)
    o32b = o32.view(np.uint32)
    anyspec = np.int64(0)
    for r0 in range(lo, hi, RB):
        nr = min(RB, hi - r0)
        for j0 in range(0, n, JB):
            for i in range(nr):
                anyspec |= load_c_block(c, cx, np.uint64(i * JB), Cb,
                                        np.uint64((r0 + i) * n + j0), Ec, Mc, cspec, has_c,
                                        ez, P2)
            for ch in range(nch):
                k0 = ch * L
                for i in range(nr):
                    r = r0 + i
                    bt = r // m
                    arow = r * K
                    ib = np.uint64(i * JB)
                    for g in range(ng):
                        t0 = k0 + g * G
                        blk = t0 // sblock
                        sa = SAv[r * nsb + blk]
                        ea = np.int64(SAx[r * nsb + blk])
                        ma = MA[r * nG + t0 // G]
                        for j in range(JB):
                            gs[j] = np.float32(0.0)
                        for t in range(t0, t0 + G, 4):
                            a0 = Av[arow + t]
                            a1 = Av[arow + t + 1]
                            a2 = Av[arow + t + 2]
                            a3 = Av[arow + t + 3]
                            b0 = np.uint64((bt * K + t) * n + j0)
                            b1 = b0 + np.uint64(n)
                            b2 = b1 + np.uint64(n)
                            b3 = b2 + np.uint64(n)
                            for j in range(JB):
                                u = np.uint64(j)
                                gs[j] += ((a0 * Bv[b0 + u] + a1 * Bv[b1 + u])
                                          + (a2 * Bv[b2 + u] + a3 * Bv[b3 + u]))
                        sb0 = np.uint64((bt * nsb + blk) * n + j0)
                        mb0 = np.uint64((bt * nG + t0 // G) * n + j0)
                        gb = np.uint64(g * JB)
                        for j in range(JB):
                            u = np.uint64(j)
                            sbv = SBv[sb0 + u]
                            T[gb + u] = np.float64(gs[j]) * sa * sbv
                            nz = ((ma & MB[mb0 + u]) != 0) and sa != 0.0 and sbv != 0.0
                            GE[gb + u] = ea + np.int64(SBx[sb0 + u]) if nz else ez
                    for j in range(JB):
                        e = cx[ib + np.uint64(j)]
                        for g in range(ng):
                            e = max(e, GE[np.uint64(g * JB + j)])
                        mxi[j] = e
                        scb[j] = (1023 + F - e) << 52          # 2.0**(F - E)
                    for j in range(JB):
                        cj = c[ib + np.uint64(j)]
                        S[j] = np.trunc((cj if abs(cj) < inf else 0.0) * sc[j])
                    for g in range(ng):
                        gb = np.uint64(g * JB)
                        for j in range(JB):
                            S[j] += np.trunc(T[gb + np.uint64(j)] * sc[j])
                    round_block(S, Sb, mxi, c, cx, ib, F, False, p, emin, lim, twop, ez, evs,
                                t1, t1b, t2, t2b, rq)
            for i in range(nr):
                store_block(c, np.uint64(i * JB), out, np.uint64((r0 + i) * n + j0), Eo, Mo, p,
                            emin, o32, o32b)
    return anyspec
