"""Fast matrix-unit kernels (softfloat.mma) of the AMD instructions and of the
fp32/fp64 fused multiply-add chains.

The reference ("slow twin") of each kernel is in `softfloat._kernels.mma_chains`
(``two_stage_chunk``, ``exact_chunk``, ``ftz_chain_chunk``, ``fma32_chunk``) and,
for fp64, MPFR (softfloat.mma.amd._fma64). The fast kernels here compute rows
[lo, hi) of the (nb * m) rows of A at a time and all n columns of an output row
together, B not transposed (nb, K, n), so that the loops over the columns are
contiguous and branch-free for the compiler to vectorise; operands are decoded
once per call and the whole K runs inside one kernel call. The CDNA3 and CDNA1
kernels go as `mma_fast.fdpa_fast_chunk` does: blocks of RB rows share each chunk's B
tile (in L1), columns in blocks of JB with unsigned indices, float64
arithmetic that is exact (integers below 2**53 times powers of two), powers of
two made from their exponent bits, the passes over a chunk fused where one
feeds the next.

* ``two_stage_fast_chunk`` ("two_stage", "two_stage_pairs", CDNA3) and
  ``exact_fast_chunk`` ("exact", CDNA1) take outputs whose operands are all
  finite (and, for bf16/xf32, whose products stay below 2**128); the caller
  redoes the others with the reference kernel (``*_at_chunk``: the reference
  on a list of outputs).
* ``ftz_fast_chunk`` ("ftz_chain", CDNA2) and ``fma32_fast_chunk`` /
  ``fma64_fast_chunk`` ("fma") take every output: their float arithmetic is the
  reference's, special values included.

fp32 and fp64 fused multiply-adds are LLVM's ``llvm.fma`` (the CPU's FMA
instruction, or libm's correctly rounded fma where the CPU has none): one
rounding of the exact x * y + z, as IEEE 754 defines it.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .jit import helper
from .hw import fma32, fma64
from .mma_chains import exact_chunk, two_stage_chunk
from .mma_decode import NO_EXP
from .mma_fast import JB, RB


# IEEE fused multiply-add (one rounding): softfloat._kernels.hw's llvm.fma
fma_f32, fma_f64 = fma32, fma64


@njit(cache=True, nogil=True)
def fma32_fast_chunk(lo, hi, Av, Bv, K, n, Cv, has_c, out):
    """"fma" into binary32: c = fma(a_k, b_k, c) along K. Av (nb * m, K), Bv
    (nb, K, n), Cv and out (nb * m * n) float32; rows [lo, hi)."""
    c = np.empty(n, np.float32)
    m_rows = Av.shape[0] // Bv.shape[0]
    for r in range(lo, hi):
        bt = r // m_rows
        for j in range(n):
            c[j] = Cv[r * n + j] if has_c else np.float32(0.0)
        for t in range(K):
            a = Av[r, t]
            for j in range(n):
                c[j] = fma_f32(a, Bv[bt, t, j], c[j])
        for j in range(n):
            out[r * n + j] = c[j]
    return 0


@njit(cache=True, nogil=True)
def fma64_fast_chunk(lo, hi, Av, Bv, K, n, Cv, has_c, out):
    """"fma" into binary64 (NVIDIA DMMA, AMD fp64 MFMA): as `fma32_fast_chunk`."""
    c = np.empty(n, np.float64)
    m_rows = Av.shape[0] // Bv.shape[0]
    for r in range(lo, hi):
        bt = r // m_rows
        for j in range(n):
            c[j] = Cv[r * n + j] if has_c else 0.0
        for t in range(K):
            a = Av[r, t]
            for j in range(n):
                c[j] = fma_f64(a, Bv[bt, t, j], c[j])
        for j in range(n):
            out[r * n + j] = c[j]
    return 0


@intrinsic
def f64_bits(typingctx, x):
    """The IEEE bit pattern of a float64, as int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(x), codegen


@intrinsic
def f64_from_bits(typingctx, x):
    """The float64 of an IEEE bit pattern (int64)."""
    if x != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(x), codegen


# ---------------------------------------------------------------------------
# "ftz_chain" (CDNA2)
# ---------------------------------------------------------------------------
@helper
def _fl(x):
    """x flushed to a zero of its sign below 2**-126 (NaN kept)."""
    return x * np.float32(0.0) if abs(x) < np.float32(1.1754943508222875e-38) else x


@njit(cache=True, nogil=True)
def ftz_fast_chunk(lo, hi, Av, Bv, K, n, Cv, has_c, out, P):
    """"ftz_chain" on flushed float32 inputs (Av (nb * m, K), Bv (nb, K, n): every
    input below its format's smallest normal already +0) and a flushed c: the
    products, the pair (P = 2) or pairs-of-pairs (P = 4) sums and the running
    sum, each flushed, in the reference's order."""
    c = np.empty(n, np.float32)
    m_rows = Av.shape[0] // Bv.shape[0]
    for r in range(lo, hi):
        bt = r // m_rows
        for j in range(n):
            c[j] = Cv[r * n + j] if has_c else np.float32(0.0)
        for k0 in range(0, K, P):
            a0 = Av[r, k0]
            a1 = Av[r, k0 + 1]
            if P == 4:
                a2 = Av[r, k0 + 2]
                a3 = Av[r, k0 + 3]
                for j in range(n):
                    p0 = _fl(a0 * Bv[bt, k0, j])
                    p1 = _fl(a1 * Bv[bt, k0 + 1, j])
                    p2 = _fl(a2 * Bv[bt, k0 + 2, j])
                    p3 = _fl(a3 * Bv[bt, k0 + 3, j])
                    s = _fl(_fl(p0 + p1) + _fl(p2 + p3))
                    c[j] = _fl(c[j] + s)
            else:
                for j in range(n):
                    p0 = _fl(a0 * Bv[bt, k0, j])
                    p1 = _fl(a1 * Bv[bt, k0 + 1, j])
                    c[j] = _fl(c[j] + _fl(p0 + p1))
        for j in range(n):
            out[r * n + j] = c[j]
    return 0


# ---------------------------------------------------------------------------
# "exact" (CDNA1)
# ---------------------------------------------------------------------------
@helper
def _round_sum_f32(P, cj):
    """binary32 nearest-even of P + cj (float64, P exact): the two-sum s + e
    (e the exact error), s rounded to odd at 53 bits (its last bit set toward
    e when e != 0) then to binary32: rounding to odd at 53 >= 24 + 2 bits
    and then to nearest gives the nearest of the exact sum (ties and
    subnormals included). An exact zero sum is +0."""
    s = P + cj + 0.0
    bb = s - P
    e = (P - (s - bb)) + (cj - bb)
    sb = f64_bits(s)
    adj = np.int64(e != 0.0) & ~sb & 1
    sb += adj if (e > 0.0) == (s > 0.0) else -adj
    return np.float64(np.float32(f64_from_bits(sb)))


@helper
def _two_sum(a, b):
    """(s, e): s = fl(a + b) and e = a + b - s exactly (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@helper
def _twosum_block(Av, Bv, arow, bt, K, n, j0, k0, L, c, ib, bad):
    """The chunk k0 (L = 2 or 4 products) of row ``arow`` for the columns
    j0 + j with bad[j] set: the products and c added by two-sums (s and the
    errors e_i, s + sum e_i the exact sum), the errors added by two-sums too;
    where those are exact (their own errors zero), s + (sum e_i) is the exact
    sum as a two-term sum and `_round_sum_f32` rounds it, and bad[j] is
    cleared. Returns how many stay bad (for `_expansion_block`)."""
    a0 = Av[arow + k0]
    a1 = Av[arow + k0 + 1]
    b0 = np.uint64((bt * K + k0) * n + j0)
    b1 = b0 + np.uint64(n)
    left = 0
    if L == 4:
        a2 = Av[arow + k0 + 2]
        a3 = Av[arow + k0 + 3]
        b2 = b1 + np.uint64(n)
        b3 = b2 + np.uint64(n)
        for j in range(JB):
            u = np.uint64(j)
            s1, e1 = _two_sum(a0 * Bv[b0 + u], a1 * Bv[b1 + u])
            s2, e2 = _two_sum(a2 * Bv[b2 + u], a3 * Bv[b3 + u])
            s3, e3 = _two_sum(s1, s2)
            cj = c[ib + u]
            s, e4 = _two_sum(s3, cj)
            r1, d1 = _two_sum(e1, e2)
            r2, d2 = _two_sum(e3, e4)
            r, d3 = _two_sum(r1, r2)
            bj = np.int64(bad[j])
            fix = bj & np.int64((d1 == 0.0) & (d2 == 0.0) & (d3 == 0.0))
            y = _round_sum_f32(s, r)
            c[ib + u] = y if fix else cj
            bad[j] = bj - fix
            left += bj - fix
    else:
        for j in range(JB):
            u = np.uint64(j)
            s1, e1 = _two_sum(a0 * Bv[b0 + u], a1 * Bv[b1 + u])
            cj = c[ib + u]
            s, e4 = _two_sum(s1, cj)
            r, d1 = _two_sum(e1, e4)
            bj = np.int64(bad[j])
            fix = bj & np.int64(d1 == 0.0)
            y = _round_sum_f32(s, r)
            c[ib + u] = y if fix else cj
            bad[j] = bj - fix
            left += bj - fix
    return left


@helper
def _expansion_block(Av, Bv, arow, bt, K, n, j0, k0, L, c, ib, bad, buf, tie):
    """The chunk k0 of row ``arow`` for the columns j0 + j with bad[j] set: per
    column the L products (exact float64) and c[ib + j] made a non-overlapping
    expansion by Grow-Expansion (two-sums, all columns at once; zero terms
    included, which changes the components but not the sum nor the rounding)
    and rounded to binary32 as `round_expansion_f32` does: its largest
    component x to nearest-even, the rare possible ties (x's 29 low bits
    100...0, or x in binary32's subnormal range) redone with the rest's sign."""
    T = L + 1
    for t in range(L):
        a = Av[arow + k0 + t]
        bb = np.uint64((bt * K + k0 + t) * n + j0)
        for j in range(JB):
            buf[t, j] = a * Bv[bb + np.uint64(j)]
    for j in range(JB):
        buf[L, j] = c[ib + np.uint64(j)]
    for i in range(1, T):
        for h in range(i):
            for j in range(JB):
                q = buf[i, j]
                b = buf[h, j]
                s = q + b
                bv = s - q
                buf[h, j] = (q - (s - bv)) + (b - bv)
                buf[i, j] = s
    for j in range(JB):
        x = buf[T - 1, j]
        f = np.float64(np.float32(x))
        tie[j] = ((f64_bits(x) & 0x1FFFFFFF) == 0x10000000) | (abs(x) < 1.1754943508222875e-38)
        cj = c[ib + np.uint64(j)]
        c[ib + np.uint64(j)] = (0.0 if x == 0.0 else f) if bad[j] else cj
    for j in range(JB):
        x = buf[T - 1, j]
        if bad[j] and tie[j] and np.isfinite(c[ib + np.uint64(j)]) and x != 0.0:
            rs = 0.0
            for h in range(T - 2, -1, -1):
                if buf[h, j] != 0.0:
                    rs = buf[h, j]
                    break
            f = np.float32(x)
            d = x - np.float64(f)
            if d != 0.0 and rs != 0.0 and np.isfinite(f):
                up = np.nextafter(f, np.float32(np.inf) if d > 0 else np.float32(-np.inf))
                if np.float64(up) - x == d and (rs > 0) == (d > 0):
                    c[ib + np.uint64(j)] = np.float64(up)


@njit(cache=True, nogil=True)
def exact_fast_chunk(lo, hi, Av, Bv, WA, WB, m, n, K, Cv, has_c, out, L, lim):
    """"exact" for outputs with finite operands: rows [lo, hi) of (nb * m) in
    blocks of RB rows sharing each chunk's B tile, columns in blocks of JB (n a
    multiple of JB). Av (nb * m * K) and Bv (nb * K * n, not transposed)
    float64 values (products exact), Cv (nb * m * n) float32, out float32.

    WA (nb * m, K // L) and WB (nb, K // L, n): per chunk of a row of A (column
    of B) the largest binade exponent of its nonzero values less the smallest
    exponent of their format's quantum (very negative without one). When
    WA + WB <= lim (51 - ceil(log2 L)), every product of the chunk is a
    multiple of one power of two 2**q and their sum is below 2**(q + 53): the
    float64 sum P of the products is exact, and `_round_sum_f32` rounds P + c
    (a two-sum, rounding to odd, then to binary32). A row's chunk with other
    columns (products spanning more than 53 bits) is redone for those by
    `_expansion_block` (Grow-Expansion over the columns). An overflowed
    (infinite) running sum is not carried on: it turns the rest of its chain
    infinite or NaN, and the call returns how many outputs ended so, for the
    caller to redo them with the reference (which keeps the infinity)."""
    nch = K // L
    inf = np.inf
    nonfin = np.int64(0)
    c = np.empty(RB * JB, np.float64)
    P = np.empty(JB, np.float64)
    bad = np.empty(JB, np.uint8)
    buf = np.empty((L + 1, JB), np.float64)
    tie = np.empty(JB, np.bool_)
    for r0 in range(lo, hi, RB):
        nr = min(RB, hi - r0)
        for j0 in range(0, n, JB):
            for i in range(nr):
                ib = np.uint64(i * JB)
                cb = np.uint64((r0 + i) * n + j0)
                if has_c:
                    for j in range(JB):
                        c[ib + np.uint64(j)] = np.float64(Cv[cb + np.uint64(j)])
                else:
                    for j in range(JB):
                        c[ib + np.uint64(j)] = 0.0
            for ch in range(nch):
                k0 = ch * L
                for i in range(nr):
                    r = r0 + i
                    bt = r // m
                    arow = r * K
                    ib = np.uint64(i * JB)
                    wa = np.int64(WA[r * nch + ch])
                    wb0 = np.uint64((bt * nch + ch) * n + j0)
                    b0 = np.uint64((bt * K + k0) * n + j0)
                    nbad = 0
                    if L == 4:
                        # the products and the rounding in one pass
                        a0 = Av[arow + k0]
                        a1 = Av[arow + k0 + 1]
                        a2 = Av[arow + k0 + 2]
                        a3 = Av[arow + k0 + 3]
                        b1 = b0 + np.uint64(n)
                        b2 = b1 + np.uint64(n)
                        b3 = b2 + np.uint64(n)
                        for j in range(JB):
                            u = np.uint64(j)
                            pj = ((a0 * Bv[b0 + u] + a1 * Bv[b1 + u])
                                  + (a2 * Bv[b2 + u] + a3 * Bv[b3 + u]))
                            cj = c[ib + u]
                            y = _round_sum_f32(pj, cj)
                            ok = wa + np.int64(WB[wb0 + u]) <= lim
                            c[ib + u] = y if ok else cj
                            bad[j] = not ok
                            nbad += np.int64(not ok)
                    elif L == 2:
                        a0 = Av[arow + k0]
                        a1 = Av[arow + k0 + 1]
                        b1 = b0 + np.uint64(n)
                        for j in range(JB):
                            u = np.uint64(j)
                            pj = a0 * Bv[b0 + u] + a1 * Bv[b1 + u]
                            cj = c[ib + u]
                            y = _round_sum_f32(pj, cj)
                            ok = wa + np.int64(WB[wb0 + u]) <= lim
                            c[ib + u] = y if ok else cj
                            bad[j] = not ok
                            nbad += np.int64(not ok)
                    else:
                        for j in range(JB):
                            P[j] = 0.0
                        for t in range(k0, k0 + L, 2):
                            a0 = Av[arow + t]
                            a1 = Av[arow + t + 1]
                            bt0 = np.uint64((bt * K + t) * n + j0)
                            bt1 = bt0 + np.uint64(n)
                            for j in range(JB):
                                u = np.uint64(j)
                                P[j] += a0 * Bv[bt0 + u] + a1 * Bv[bt1 + u]
                        for j in range(JB):
                            u = np.uint64(j)
                            cj = c[ib + u]
                            y = _round_sum_f32(P[j], cj)
                            ok = wa + np.int64(WB[wb0 + u]) <= lim
                            c[ib + u] = y if ok else cj
                            bad[j] = not ok
                            nbad += np.int64(not ok)
                    if nbad and (L == 2 or L == 4):
                        nbad = _twosum_block(Av, Bv, arow, bt, K, n, j0, k0, L, c, ib, bad)
                    if nbad:
                        _expansion_block(Av, Bv, arow, bt, K, n, j0, k0, L, c, ib, bad, buf,
                                         tie)
            for i in range(nr):
                ib = np.uint64(i * JB)
                ob = np.uint64((r0 + i) * n + j0)
                for j in range(JB):
                    y = c[ib + np.uint64(j)]
                    out[ob + np.uint64(j)] = np.float32(y)
                    nonfin += np.int64(not (abs(y) < inf))
    return nonfin


W_NONE = -(1 << 21)           # `windows_chunk`: a chunk without a nonzero value
W_SPECIAL = 1 << 22           # `windows_chunk`: a chunk with an infinite or NaN value


@njit(cache=True, nogil=True)
def windows_chunk(lo, hi, v, L, nc, W, emin, M):
    """For `exact_fast_chunk`: v (G, L, nc) float64 values of a format with
    M fraction bits and smallest normal binade emin; for the chunks g in
    [lo, hi) and columns c, W[g * nc + c] is the largest binade exponent of
    the chunk's nonzero values v[g, :, c] less the smallest exponent of their
    quantum (max(binade, emin) - M); W_NONE without a nonzero value,
    W_SPECIAL with an infinite or NaN one."""
    big = np.int64(1 << 20)
    mx = np.empty(nc, np.int64)
    mn = np.empty(nc, np.int64)
    sp = np.empty(nc, np.int64)
    for g in range(lo, hi):
        for c in range(nc):
            mx[c] = -big
            mn[c] = big
            sp[c] = 0
        for t in range(L):
            o = (g * L + t) * nc
            for c in range(nc):
                x = v[o + c]
                ef = (f64_bits(x) >> 52) & 0x7FF
                e = ef - np.int64(1023)
                nz = x != 0.0
                fin = ef != 0x7FF
                mx[c] = max(mx[c], e) if (nz & fin) else mx[c]
                mn[c] = min(mn[c], max(e, np.int64(emin)) - M) if (nz & fin) else mn[c]
                sp[c] |= np.int64(not fin)
        for c in range(nc):
            w = mx[c] - mn[c]
            W[g * nc + c] = W_SPECIAL if sp[c] else max(w, np.int64(W_NONE))
    return 0


@njit(cache=True, nogil=True)
def exact_at_chunk(lo, hi, idxs, Av, Bv, m, n, K, Cv, has_c, out, L):
    """The reference `exact_chunk` on outputs idxs[lo:hi]."""
    for q in range(lo, hi):
        i = idxs[q]
        exact_chunk(i, i + 1, Av, Bv, m, n, K, Cv, has_c, out, L)
    return 0


# ---------------------------------------------------------------------------
# "two_stage" / "two_stage_pairs" (CDNA3)
# ---------------------------------------------------------------------------
@helper
def _p2(k):
    """2.0**k for an integer k in [-1022, 1023] (its exponent bits)."""
    return f64_from_bits((k + np.int64(1023)) << 52)


@helper
def _binade(x):
    """The binade exponent of a float64 x, at least -126 (-126 for zero and the
    binary32 subnormals: binary32's decoding)."""
    return max(((f64_bits(x) >> 52) & 0x7FF) - np.int64(1023), np.int64(-126))


@helper
def _stage2(X, e, cj, F, F2, pairs):
    """The second stage and the rounding of one output: X (an integer, float64)
    the chunk's product sum in units of 2**(e - F) (e: its exponent, far below
    -2**19 when every product was zero); cj the running c (a binary32 value,
    finite). Returns the new c: c floored to F fraction bits below
    emx = max(e, c's exponent) (with pairs: dropped when its exponent is below
    emx - F - 1), the product sum floored to F2 + 1, the sum floored to F2 + 1
    significant bits (at least at 2**(-126 - F2)) and rounded to nearest-even
    binary32 (float32: IEEE's rounding, subnormals and overflow included). Every
    value is an integer below 2**53 times a power of two: exact in float64."""
    ec = _binade(cj)
    emx = max(e, ec)
    g = emx - F2 - 1
    T = np.floor(X * _p2(max(e - g - F, np.int64(-200))))
    C2 = np.floor(cj * _p2(F - emx))
    if pairs:
        C2 = C2 if ec >= emx - F - 1 else 0.0
    T += C2 * _p2(F2 + 1 - F)
    eT = ((f64_bits(T) >> 52) & 0x7FF) - np.int64(1023)
    d = max(max(eT + g, np.int64(-126)) - F2 - g, np.int64(0))
    y = np.floor(T * _p2(-d)) * _p2(g + d)
    return np.float64(np.float32(y))


@njit(cache=True, inline="always")
def _pairs_max(Ae0, Be0, arow, bt, K, n, j0, k0, L, F, mx0, mx1, sc0, sc1):
    """"two_stage_pairs": the largest exponents of a chunk's even and odd
    products (mx0, mx1, float32) and their scales 2**(F - e) (sc0, sc1)."""
    for t in range(k0, k0 + L, 4):
        e0 = Ae0[arow + t]
        e1 = Ae0[arow + t + 1]
        e2 = Ae0[arow + t + 2]
        e3 = Ae0[arow + t + 3]
        b0 = np.uint64((bt * K + t) * n + j0)
        b1 = b0 + np.uint64(n)
        b2 = b1 + np.uint64(n)
        b3 = b2 + np.uint64(n)
        if t == k0:
            for j in range(JB):
                u = np.uint64(j)
                mx0[j] = max(e0 + Be0[b0 + u], e2 + Be0[b2 + u])
                mx1[j] = max(e1 + Be0[b1 + u], e3 + Be0[b3 + u])
        else:
            for j in range(JB):
                u = np.uint64(j)
                mx0[j] = max(max(e0 + Be0[b0 + u], e2 + Be0[b2 + u]), mx0[j])
                mx1[j] = max(max(e1 + Be0[b1 + u], e3 + Be0[b3 + u]), mx1[j])
    big = np.int64(1000)
    for j in range(JB):
        sc0[j] = _p2(min(F - np.int64(mx0[j]), big))
        sc1[j] = _p2(min(F - np.int64(mx1[j]), big))


@njit(cache=True, inline="always")
def _pairs_sum(Av, Bv, arow, bt, K, n, j0, k0, L, sc0, sc1, S0, S1):
    """"two_stage_pairs": the truncated even and odd products of a chunk added
    (S0, S1)."""
    for j in range(JB):
        S0[j] = 0.0
        S1[j] = 0.0
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
            s0 = sc0[j]
            s1 = sc1[j]
            S0[j] += np.trunc(a0 * Bv[b0 + u] * s0) + np.trunc(a2 * Bv[b2 + u] * s0)
            S1[j] += np.trunc(a1 * Bv[b1 + u] * s1) + np.trunc(a3 * Bv[b3 + u] * s1)


@njit(cache=True, nogil=True)
def two_stage_fast_chunk(lo, hi, Av, Ae0, Bv, Be0, m, n, K, Cv, has_c, out, sums):
    """"two_stage" / "two_stage_pairs" for outputs with finite operands and
    products below 2**128 (the caller redoes the others with
    `two_stage_chunk`): rows [lo, hi) of (nb * m) in blocks of RB rows sharing
    each chunk's B tile, columns in blocks of JB (n a multiple of JB), all K
    chained inside the call. Av (nb * m * K) and Bv (nb * K * n, not
    transposed) the operands' values (float64, exact), Ae0, Be0 their binade
    exponents (float32, NO_EXP for zeros: a sum of two is exact, and a product
    with a zero factor lies far below every other); Cv (nb * m * n) c as
    float32; out the binary32 encodings (uint32); ``sums`` the model's (L, F, F2,
    pairs): products per chunk, fraction bits of the two stages, and whether
    the even and odd products are summed apart.

    First stage, in float64 as `fdpa_fast_chunk` does: with e the largest
    product exponent of the chunk (or of its even and odd products, pairs),
    every product is trunc(a * b * 2**(F - e)), an integer below 2**(F + 2),
    and their sum (below 2**53: the caller checks F + 2 + log2(L) <= 52) the
    integer of `two_stage_chunk`'s `_part_sum`. Second stage by `_stage2`;
    the result, a binary32 value, is the next chunk's c. An overflowed
    (infinite) c is not carried on: it turns the rest of its chain infinite or
    NaN, and the call returns how many outputs ended so, for the caller to
    redo them with the reference (which keeps the infinity)."""
    L, F, F2, pairs = sums
    nch = K // L
    inf = np.inf
    nonfin = np.int64(0)
    big = np.int64(1000)
    c = np.empty(RB * JB, np.float64)
    mx0 = np.empty(JB, np.float32)
    mx1 = np.empty(JB, np.float32)
    sc0 = np.empty(JB, np.float64)
    sc1 = np.empty(JB, np.float64)
    S0 = np.empty(JB, np.float64)
    S1 = np.empty(JB, np.float64)
    o32 = np.empty(JB, np.float32)
    o32b = o32.view(np.uint32)
    for r0 in range(lo, hi, RB):
        nr = min(RB, hi - r0)
        for j0 in range(0, n, JB):
            for i in range(nr):
                ib = np.uint64(i * JB)
                cb = np.uint64((r0 + i) * n + j0)
                if has_c:
                    for j in range(JB):
                        v = np.float64(Cv[cb + np.uint64(j)])
                        c[ib + np.uint64(j)] = v if abs(v) < inf else 0.0
                else:
                    for j in range(JB):
                        c[ib + np.uint64(j)] = 0.0
            for ch in range(nch):
                k0 = ch * L
                for i in range(nr):
                    r = r0 + i
                    bt = r // m
                    arow = r * K
                    ib = np.uint64(i * JB)
                    if pairs:
                        _pairs_max(Ae0, Be0, arow, bt, K, n, j0, k0, L, F, mx0, mx1, sc0, sc1)
                        _pairs_sum(Av, Bv, arow, bt, K, n, j0, k0, L, sc0, sc1, S0, S1)
                        for j in range(JB):
                            e0 = np.int64(mx0[j])
                            e1 = np.int64(mx1[j])
                            e = max(e0, e1)
                            X = (np.floor(S0[j] * _p2(max(e0 - e, np.int64(-200))))
                                 + np.floor(S1[j] * _p2(max(e1 - e, np.int64(-200)))))
                            cj = c[ib + np.uint64(j)]
                            c[ib + np.uint64(j)] = _stage2(X, e, cj, F, F2, True)
                        continue
                    # the largest product exponent (and the scale 2**(F - e)) of
                    # the chunk, the first pass setting it, the last the scale
                    for t in range(k0, k0 + L, 4):
                        e0 = Ae0[arow + t]
                        e1 = Ae0[arow + t + 1]
                        e2 = Ae0[arow + t + 2]
                        e3 = Ae0[arow + t + 3]
                        b0 = np.uint64((bt * K + t) * n + j0)
                        b1 = b0 + np.uint64(n)
                        b2 = b1 + np.uint64(n)
                        b3 = b2 + np.uint64(n)
                        first = t == k0
                        last = t == k0 + L - 4
                        if first and last:
                            for j in range(JB):
                                u = np.uint64(j)
                                x0 = max(e0 + Be0[b0 + u], e1 + Be0[b1 + u])
                                x2 = max(e2 + Be0[b2 + u], e3 + Be0[b3 + u])
                                x0 = max(x0, x2)
                                mx0[j] = x0
                                sc0[j] = _p2(min(F - np.int64(x0), big))
                        elif first:
                            for j in range(JB):
                                u = np.uint64(j)
                                x0 = max(e0 + Be0[b0 + u], e1 + Be0[b1 + u])
                                x2 = max(e2 + Be0[b2 + u], e3 + Be0[b3 + u])
                                mx0[j] = max(x0, x2)
                        else:
                            for j in range(JB):
                                u = np.uint64(j)
                                x0 = max(e0 + Be0[b0 + u], e1 + Be0[b1 + u])
                                x2 = max(e2 + Be0[b2 + u], e3 + Be0[b3 + u])
                                x0 = max(max(x0, x2), mx0[j])
                                mx0[j] = x0
                                if last:
                                    sc0[j] = _p2(min(F - np.int64(x0), big))
                    # the truncated products added, the last pass going on with
                    # the second stage
                    for t in range(k0, k0 + L, 4):
                        a0 = Av[arow + t]
                        a1 = Av[arow + t + 1]
                        a2 = Av[arow + t + 2]
                        a3 = Av[arow + t + 3]
                        b0 = np.uint64((bt * K + t) * n + j0)
                        b1 = b0 + np.uint64(n)
                        b2 = b1 + np.uint64(n)
                        b3 = b2 + np.uint64(n)
                        first = t == k0
                        if t != k0 + L - 4:
                            for j in range(JB):
                                u = np.uint64(j)
                                s0 = sc0[j]
                                v = ((np.trunc(a0 * Bv[b0 + u] * s0)
                                      + np.trunc(a1 * Bv[b1 + u] * s0))
                                     + (np.trunc(a2 * Bv[b2 + u] * s0)
                                        + np.trunc(a3 * Bv[b3 + u] * s0)))
                                S0[j] = v + 0.0 if first else S0[j] + v    # (+0, not -0)
                        else:
                            for j in range(JB):
                                u = np.uint64(j)
                                s0 = sc0[j]
                                v = ((np.trunc(a0 * Bv[b0 + u] * s0)
                                      + np.trunc(a1 * Bv[b1 + u] * s0))
                                     + (np.trunc(a2 * Bv[b2 + u] * s0)
                                        + np.trunc(a3 * Bv[b3 + u] * s0)))
                                X = v + 0.0 if first else S0[j] + v
                                cj = c[ib + u]
                                c[ib + u] = _stage2(X, np.int64(mx0[j]), cj, F, F2, False)
            for i in range(nr):
                ib = np.uint64(i * JB)
                ob = np.uint64((r0 + i) * n + j0)
                for j in range(JB):
                    y = c[ib + np.uint64(j)]
                    o32[j] = np.float32(y)
                    nonfin += np.int64(not (abs(y) < inf))
                for j in range(JB):
                    out[ob + np.uint64(j)] = o32b[j]
    return nonfin


@njit(cache=True, nogil=True)
def two_stage_at_chunk(lo, hi, idxs, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c,
                       out, L, F, F2, MaMb, pairs, check_ovf):
    """The reference `two_stage_chunk` on outputs idxs[lo:hi]."""
    for q in range(lo, hi):
        i = idxs[q]
        two_stage_chunk(i, i + 1, As, Ae, Ac, Bs, Be, Bc, m, n, K, Cs, Ce, Cc, has_c,
                        out, L, F, F2, MaMb, pairs, check_ovf)
    return 0


__all__ = ["fma_f32", "fma_f64", "fma32_fast_chunk", "fma64_fast_chunk", "ftz_fast_chunk",
           "exact_fast_chunk", "exact_at_chunk", "two_stage_fast_chunk", "two_stage_at_chunk"]
