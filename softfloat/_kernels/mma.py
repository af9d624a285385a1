"""Matrix-unit kernels (softfloat.mma): one output element of a chain of GPU
matrix instructions per loop iteration, all in integer arithmetic.

Operands arrive decoded (`decode_chunk`): per element a class (0 finite or zero,
1 infinite, 2 NaN), a signed integer significand ``sig`` (0 for zero; +-1 for
infinities) and ``e``, the binade exponent (the format's smallest one for
subnormals and zero), so that a finite value is ``sig * 2**(e - M)``. A (nb, m, K)
and B transposed (nb, n, K) are flat row-major; C and the output (nb, m, n).

Each ``*_chunk(lo, hi, ...)`` kernel computes outputs [lo, hi) (see
softfloat._parallel) and returns 0. The chunk result of one instruction step is
encoded in the output format and decoded again as the next step's c, as the
hardware chains instructions.
"""
import numpy as np
from numba import njit

from .core import C_INF, C_QNAN, C_ZERO, clz64, unpack
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
    through tables made once per format (softfloat.mma.run._lut)."""
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
def bitlen(x):
    return 64 - clz64(x)


@helper
def trunc_shift(mag, sh):
    """floor(mag * 2**sh) for mag >= 0 (truncation toward zero of a magnitude)."""
    if sh >= 0:
        return mag << sh
    if sh <= -63:
        return np.int64(0)
    return mag >> (-sh)


@helper
def floor_shift(x, sh):
    """floor(x * 2**sh) for a signed x (an arithmetic shift)."""
    if sh >= 0:
        return x << sh
    if sh <= -63:
        return np.int64(-1) if x < 0 else np.int64(0)
    return x >> (-sh)


@helper
def special_bits(nan, pinf, ninf, E, M):
    """The encoding of a NaN or infinite result: canonical NaN (all ones but the
    sign: 0x7FFFFFFF, 0x7FFF) for NaN or both infinities."""
    if nan or (pinf and ninf):
        return (np.int64(1) << (E + M)) - 1
    inf = ((np.int64(1) << E) - 1) << M
    return inf | (np.int64(1) << (E + M)) if ninf else inf


@helper
def round_out(S, q, rne, p, emin, E, M, plus_zero):
    """The encoding (E, M: binary16 or binary32) of S * 2**q rounded to ``p``
    significant bits (p - 1 <= M; the quantum of subnormals 2**(emin - p + 1)),
    nearest-even (``rne``) or toward zero; a result of 2**(emax + 1) or more is
    infinite in both modes. A zero result is +0 when ``plus_zero``, else it keeps
    the sign of S."""
    bias = (np.int64(1) << (E - 1)) - 1
    sbit = np.int64(1) << (E + M)
    if S == 0:
        return np.int64(0)
    neg = S < 0
    mag = -S if neg else S
    ev = q + bitlen(mag) - 1
    qr = max(ev, emin) - (p - 1)
    if qr > q:
        d = qr - q
        if d >= 64:
            r = np.int64(0)
        else:
            r = mag >> d
            if rne:
                rem = mag - (r << d)
                half = np.int64(1) << (d - 1)
                if rem > half or (rem == half and (r & 1) == 1):
                    r += 1
        if r == (np.int64(1) << p):
            r >>= 1
            qr += 1
    else:
        r = mag << (q - qr)
    sign = sbit if neg else np.int64(0)
    if r == 0:
        return np.int64(0) if plus_zero else sign
    if r >= (np.int64(1) << (p - 1)):
        be = qr + (p - 1) + bias
        if be >= (np.int64(1) << E) - 1:
            return sign | (((np.int64(1) << E) - 1) << M)
        return sign | (be << M) | ((r - (np.int64(1) << (p - 1))) << (M - (p - 1)))
    return sign | (r << (M - (p - 1)))


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


@helper
def add_trunc(S, v, sh):
    """S + v * 2**sh, the term truncated toward zero."""
    if v > 0:
        return S + trunc_shift(v, sh)
    return S - trunc_shift(-v, sh)


@helper
def add_c_term(S, csig, ce, emax, F, cM):
    """S plus c (significand csig of cM fraction bits, binade exponent ce)
    truncated to F fraction bits below emax."""
    if csig != 0:
        S = add_trunc(S, csig, ce - emax + F - cM)
    return S


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


# ---------------------------------------------------------------------------
# "two_stage" / "two_stage_pairs" (AMD CDNA3)
# ---------------------------------------------------------------------------
@helper
def _part_sum(As, Ae, Bs, Be, arow, brow, t0, t1, step, F, MaMb):
    """(D, e): the products t0, t0 + step, ... < t1 truncated to F fraction bits
    below the largest exponent e and added (D in units of 2**(e - F));
    e = NO_EXP when every product is zero."""
    e = np.int64(NO_EXP)
    for t in range(t0, t1, step):
        if np.int64(As[arow + t]) * np.int64(Bs[brow + t]) != 0:
            x = np.int64(Ae[arow + t]) + np.int64(Be[brow + t])
            if x > e:
                e = x
    D = np.int64(0)
    if e == NO_EXP:
        return D, e
    for t in range(t0, t1, step):
        ps = np.int64(As[arow + t]) * np.int64(Bs[brow + t])
        if ps != 0:
            sh = np.int64(Ae[arow + t]) + np.int64(Be[brow + t]) - e + F - MaMb
            if ps > 0:
                D += trunc_shift(ps, sh)
            else:
                D -= trunc_shift(-ps, sh)
    return D, e


@njit(cache=True, nogil=True)
def two_stage_chunk(lo, hi, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c,
                    out, L, F, F2, MaMb, pairs, check_ovf):
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        if has_c:
            ccls, csig, ce = Cc[idx], np.int64(Cs[idx]), np.int64(Ce[idx])
        else:
            ccls, csig, ce = CLS_FIN, np.int64(0), np.int64(-126)
        bits = np.int64(0)
        for k0 in range(0, K, L):
            nan = ccls == CLS_NAN
            pinf = ccls == CLS_INF and csig > 0
            ninf = ccls == CLS_INF and csig < 0
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
                elif check_ovf and sa * sb != 0:
                    # a product of 2**128 or more is infinite (MMA-Sim's tr_fdpa)
                    mag = sa * sb
                    if mag < 0:
                        mag = -mag
                    big = 1 if mag >= (np.int64(1) << (MaMb + 1)) else 0
                    if np.int64(Ae[arow + t]) + np.int64(Be[brow + t]) + big >= 128:
                        if sa * sb > 0:
                            pinf = True
                        else:
                            ninf = True
            if nan or pinf or ninf:
                bits = special_bits(nan, pinf, ninf, 8, 23)
            else:
                if pairs:
                    D0, e0 = _part_sum(As, Ae, Bs, Be, arow, brow, k0, k0 + L, 2, F, MaMb)
                    D1, e1 = _part_sum(As, Ae, Bs, Be, arow, brow, k0 + 1, k0 + L, 2, F, MaMb)
                    edot = max(e0, e1)
                    X = np.int64(0)
                    if edot != NO_EXP:
                        if e0 != NO_EXP:
                            X += floor_shift(D0, e0 - edot)
                        if e1 != NO_EXP:
                            X += floor_shift(D1, e1 - edot)
                else:
                    X, edot = _part_sum(As, Ae, Bs, Be, arow, brow, k0, k0 + L, 1, F, MaMb)
                emx = max(edot, ce)
                T = np.int64(0)
                if edot != NO_EXP:
                    T = floor_shift(X, edot - emx + F2 + 1 - F)
                if csig != 0:
                    C2 = floor_shift(csig, ce - 23 - emx + F)
                    if pairs and ce < emx - F - 1:
                        C2 = np.int64(0)
                    T += C2 << (F2 + 1 - F)
                g = emx - F2 - 1
                if T != 0:
                    mag = -T if T < 0 else T
                    ev = g + bitlen(mag) - 1
                    qf = max(ev, -126) - F2
                    if qf > g:
                        T = floor_shift(T, g - qf)
                        g = qf
                bits = round_out(T, g, True, 24, -126, 8, 23, False)
            ccls, csig, ce = dec_ieee(bits, 8, 23)
        out[idx] = bits
    return 0


# ---------------------------------------------------------------------------
# "exact" (AMD CDNA1) and the fp32 fused multiply-add chain
# ---------------------------------------------------------------------------
@helper
def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


@helper
def round_expansion_f32(buf, nt):
    """float32 nearest-even of the exact sum of the float64 values buf[:nt]
    (finite, exact doubles). The sum is first made a non-overlapping expansion
    (Shewchuk's Grow-Expansion: two-sums, exact); its largest component x then
    decides the rounding, the sign of the rest breaking a tie at x."""
    for i in range(1, nt):
        q = buf[i]
        for h in range(i):
            q, err = _two_sum(q, buf[h])
            buf[h] = err
        buf[i] = q
    x = buf[nt - 1]
    rs = 0.0
    for h in range(nt - 2, -1, -1):
        if buf[h] != 0.0:
            rs = buf[h]
            break
    f = np.float32(x)
    d = x - np.float64(f)
    if d != 0.0 and rs != 0.0 and np.isfinite(f):
        up = np.nextafter(f, np.float32(np.inf) if d > 0 else np.float32(-np.inf))
        if np.float64(up) - x == x - np.float64(f) and (rs > 0) == (d > 0):
            f = up                     # a tie that the rest pushes over
    return f


@njit(cache=True, nogil=True)
def exact_chunk(lo, hi, Av, Bv, m, n, K, Cv, has_c, out, L):
    """'exact' on float64 values (fp16/bf16 products and fp32 c are exact
    doubles); out float32. NaN: canonical; infinities as their sum."""
    buf = np.empty(L + 1, np.float64)
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        c = np.float64(Cv[idx]) if has_c else 0.0
        for k0 in range(0, K, L):
            nt = 0
            special = not np.isfinite(c)
            sp = c
            for t in range(k0, k0 + L):
                pv = Av[arow + t] * Bv[brow + t]
                if not np.isfinite(pv):
                    special = True
                sp += pv
                if pv != 0.0:
                    buf[nt] = pv
                    nt += 1
            if special:
                c = sp
                if np.isnan(c):
                    c = np.nan
                continue
            if c != 0.0:
                buf[nt] = c
                nt += 1
            if nt == 0:
                c = 0.0
            else:
                c = np.float64(round_expansion_f32(buf, nt))
        out[idx] = np.float32(c)
    return 0


@njit(cache=True, nogil=True)
def fma32_chunk(lo, hi, Av, Bv, m, n, K, Cv, has_c, out):
    """A chain of binary32 fused multiply-adds c = fma(a_k, b_k, c), on float64
    copies of the operands (products exact in float64)."""
    buf = np.empty(2, np.float64)
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        c = np.float32(Cv[idx]) if has_c else np.float32(0.0)
        for t in range(K):
            pv = Av[arow + t] * Bv[brow + t]
            cv = np.float64(c)
            if not (np.isfinite(pv) and np.isfinite(cv)):
                c = np.float32(pv + cv)
                continue
            if pv == 0.0:
                # exact zero product: IEEE signed-zero sum (x + 0 is x)
                c = np.float32(np.float64(c) + pv)
                continue
            buf[0] = pv
            buf[1] = cv
            if cv == 0.0:
                c = np.float32(pv)
            else:
                c = round_expansion_f32(buf, 2)
        out[idx] = c
    return 0


# ---------------------------------------------------------------------------
# "ftz_chain" (AMD CDNA2)
# ---------------------------------------------------------------------------
@helper
def _ftz(x, keep_sign):
    if abs(x) < np.float32(1.1754943508222875e-38):
        return x * np.float32(0.0) if keep_sign else np.float32(0.0)
    return x


@helper
def _ftz_in(x, tiny):
    """An input below its format's smallest normal ``tiny`` read as +0."""
    if abs(x) < tiny:
        return np.float32(0.0)
    return x


@helper
def _ftz_prod(x, y, ta, tb):
    return _ftz(_ftz_in(x, ta) * _ftz_in(y, tb), True)


@njit(cache=True, nogil=True)
def ftz_chain_chunk(lo, hi, Av, Bv, m, n, K, Cv, has_c, out, P, ta, tb):
    """float32 products of flushed inputs, flushed; pairs (P = 2) or pairs of
    pairs (P = 4) added and flushed, then added into c and flushed. ``ta``,
    ``tb``: the inputs' smallest normal numbers (float32)."""
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        c = _ftz(np.float32(Cv[idx]), False) if has_c else np.float32(0.0)
        for k0 in range(0, K, P):
            p0 = _ftz_prod(Av[arow + k0], Bv[brow + k0], ta, tb)
            p1 = _ftz_prod(Av[arow + k0 + 1], Bv[brow + k0 + 1], ta, tb)
            s = _ftz(p0 + p1, True)
            if P == 4:
                p2 = _ftz_prod(Av[arow + k0 + 2], Bv[brow + k0 + 2], ta, tb)
                p3 = _ftz_prod(Av[arow + k0 + 3], Bv[brow + k0 + 3], ta, tb)
                s = _ftz(s + _ftz(p2 + p3, True), True)
            c = _ftz(c + s, True)
        out[idx] = c
    return 0
