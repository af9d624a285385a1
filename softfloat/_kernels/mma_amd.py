"""Fast matrix-unit kernels (softfloat.mma) of the AMD instructions and of the
fp32/fp64 fused multiply-add chains, and the exact A B + C check behind the
inexact and underflow flags.

The reference ("slow twin") of each kernel is in `softfloat._kernels.mma_chains`
(``two_stage_chunk``, ``exact_chunk``, ``ftz_chain_chunk``, ``fma32_chunk``) and,
for fp64, MPFR (softfloat.mma.run._fma64). The fast kernels here compute rows
[lo, hi) of the (nb * m) rows of A at a time and all n columns of an output row
together, B not transposed (nb, K, n), so that the loops over the columns are
contiguous and branch-free for the compiler to vectorise; operands are decoded
once per call and the whole K runs inside one kernel call.

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
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .jit import helper
from .core import clz64
from .hw import fma32, fma64
from .mma_chains import exact_chunk, two_stage_chunk
from .mma_decode import NO_EXP, out_pos


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
@njit(cache=True, nogil=True)
def exact_fast_chunk(lo, hi, Av, Bv, K, n, Cv, has_c, out, L):
    """"exact" for outputs with finite operands: per chunk the L products
    (exact float64) and c are made a non-overlapping expansion by Grow-Expansion
    (two-sums, all columns at once; zero terms included, which changes the
    components but not the sum nor the rounding) and rounded to binary32 as
    `round_expansion_f32` does. An infinite (overflowed) running sum stays."""
    T = L + 1
    buf = np.empty((T, n), np.float64)
    c = np.empty(n, np.float64)
    tie = np.empty(n, np.bool_)
    m_rows = Av.shape[0] // Bv.shape[0]
    for r in range(lo, hi):
        bt = r // m_rows
        for j in range(n):
            c[j] = np.float64(Cv[r * n + j]) if has_c else 0.0
        for k0 in range(0, K, L):
            for t in range(L):
                a = Av[r, k0 + t]
                for j in range(n):
                    buf[t, j] = a * Bv[bt, k0 + t, j]
            for j in range(n):
                buf[L, j] = c[j]
            for i in range(1, T):
                for h in range(i):
                    for j in range(n):
                        q = buf[i, j]
                        b = buf[h, j]
                        s = q + b
                        bb = s - q
                        buf[h, j] = (q - (s - bb)) + (b - bb)
                        buf[i, j] = s
            for j in range(n):
                # x to nearest-even binary32 (what `round_expansion_f32` gives
                # unless x is halfway between two binary32 numbers); the rare
                # possible ties (x's 29 low bits 100...0, or x in the subnormal
                # range) are redone below
                x = buf[T - 1, j]
                f = np.float64(np.float32(x))
                tie[j] = ((f64_bits(x) & 0x1FFFFFFF) == 0x10000000) | \
                    (abs(x) < 1.1754943508222875e-38)
                res = 0.0 if x == 0.0 else f
                c[j] = res if np.isfinite(c[j]) else c[j]   # an overflow stays infinite
            for j in range(n):
                x = buf[T - 1, j]
                if tie[j] and np.isfinite(c[j]) and x != 0.0:
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
                            c[j] = np.float64(up)
        for j in range(n):
            out[r * n + j] = np.float32(c[j])
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
def _fsh(x, sh):
    """floor(x * 2**sh) for a signed x, branch-free (|x| << sh stays in range)."""
    return (x << max(sh, np.int64(0))) >> min(max(-sh, np.int64(0)), np.int64(63))


@njit(cache=True, nogil=True)
def two_stage_fast_chunk(lo, hi, As, Ae0, Bs, Be0, m, n, K, Cs, Ce, has_c, out,
                         L, F, F2, MaMb, pairs):
    """"two_stage" / "two_stage_pairs" for outputs with finite operands and
    products below 2**128. As, Ae0: A's (nb * m, K) significands and binade
    exponents, Bs, Be0: B's (nb, K, n), with the exponents of zeros at NO_EXP so
    that a product with a zero factor lies far below every real one (a chunk
    whose largest exponent is under NO_EXP / 2 has only zero products). Every
    product is truncated as (|p| << L0) >> (e - x), L0 = F - Ma - Mb: exactly the
    reference's `trunc_shift` to F fraction bits below the largest exponent e.

    The running c stays decoded between chunks (csig * 2**(ce - 23), as
    `dec_ieee` gives it, the sign of a zero result aside, and a flag for an
    infinite one); the second stage (c and the product sum aligned, floored to
    F2 fraction bits, rounded to nearest-even binary32) is branch-free over the
    columns. The encodings are made once, after the last chunk."""
    L0 = F - MaMb
    half = np.int64(NO_EXP // 2)
    mx0 = np.empty(n, np.int64)
    mx1 = np.empty(n, np.int64)
    S0 = np.empty(n, np.int64)
    S1 = np.empty(n, np.int64)
    csig = np.empty(n, np.int64)
    ce = np.empty(n, np.int64)
    zs = np.empty(n, np.int64)      # a zero result's sign bit
    dn = np.empty(n, np.int64)      # 1: the result overflowed (infinite of csig's sign)
    step = 2 if pairs else 1
    for r in range(lo, hi):
        bt = r // m
        for j in range(n):
            if has_c:
                csig[j] = Cs[r * n + j]
                ce[j] = Ce[r * n + j]
            else:
                csig[j] = 0
                ce[j] = -126
            zs[j] = 0
            dn[j] = 0
        for k0 in range(0, K, L):
            for j in range(n):
                mx0[j] = NO_EXP
                mx1[j] = NO_EXP
                S0[j] = 0
                S1[j] = 0
            for t in range(k0, k0 + L, step):
                ea = np.int64(Ae0[r, t])
                for j in range(n):
                    mx0[j] = max(mx0[j], ea + np.int64(Be0[bt, t, j]))
                if pairs:
                    ea1 = np.int64(Ae0[r, t + 1])
                    for j in range(n):
                        mx1[j] = max(mx1[j], ea1 + np.int64(Be0[bt, t + 1, j]))
            for t in range(k0, k0 + L, step):
                sa = np.int64(As[r, t])
                ea = np.int64(Ae0[r, t])
                for j in range(n):
                    ps = sa * np.int64(Bs[bt, t, j])
                    sg = ps >> 63
                    mag = (ps ^ sg) - sg
                    rs = min(mx0[j] - ea - np.int64(Be0[bt, t, j]), np.int64(63))
                    v = (mag << L0) >> rs
                    S0[j] += (v ^ sg) - sg
                if pairs:
                    sa = np.int64(As[r, t + 1])
                    ea = np.int64(Ae0[r, t + 1])
                    for j in range(n):
                        ps = sa * np.int64(Bs[bt, t + 1, j])
                        sg = ps >> 63
                        mag = (ps ^ sg) - sg
                        rs = min(mx1[j] - ea - np.int64(Be0[bt, t + 1, j]), np.int64(63))
                        v = (mag << L0) >> rs
                        S1[j] += (v ^ sg) - sg
            for j in range(n):
                e0 = mx0[j]
                if pairs:
                    e1 = mx1[j]
                    edot = max(e0, e1)
                    X = (np.int64(e0 >= half) * _fsh(S0[j], e0 - edot)
                         + np.int64(e1 >= half) * _fsh(S1[j], e1 - edot))
                else:
                    edot = e0
                    X = S0[j]
                hp = np.int64(edot >= half)
                cs = csig[j]
                cx = ce[j]
                emx = max(edot, cx)
                T = hp * _fsh(X, edot - emx + F2 + 1 - F)
                C2 = _fsh(cs, cx - 23 - emx + F)
                if pairs:
                    C2 *= np.int64(cx >= emx - F - 1)
                T += C2 << (F2 + 1 - F)
                g = emx - F2 - 1
                sg = T >> 63
                mag = (T ^ sg) - sg
                ev = g + 63 - clz64(mag)
                d1 = max(max(ev, np.int64(-126)) - F2 - g, np.int64(0))
                T = T >> min(d1, np.int64(63))
                g += d1
                mag = (T ^ sg) - sg
                ev = g + 63 - clz64(mag)
                qr = max(ev, np.int64(-126)) - 23
                d = qr - g
                dp = min(max(d, np.int64(0)), np.int64(62))
                dl = min(max(-d, np.int64(0)), np.int64(62))
                rr = (mag << dl) >> dp
                rem = mag & ((np.int64(1) << dp) - 1)
                hv = (np.int64(1) << dp) >> 1
                up = np.int64(rem > hv) | (np.int64(rem == hv) & rr & np.int64(dp > 0))
                rr += up
                cy = rr >> 24
                rr >>= cy
                qr += cy
                ovf = np.int64(qr + 23 > 127)
                nz = np.int64(rr != 0)
                keep = dn[j]
                new_cs = ((rr ^ sg) - sg) * (1 - ovf) + ovf * (sg | 1)
                new_ce = nz * (qr + 23) + (1 - nz) * np.int64(-126)
                csig[j] = keep * cs + (1 - keep) * new_cs
                ce[j] = keep * cx + (1 - keep) * new_ce
                zs[j] = keep * zs[j] + (1 - keep) * (sg & 1)
                dn[j] = keep | ovf
        for j in range(n):
            cs = csig[j]
            neg = np.int64(1) if cs < 0 else np.int64(0)
            mag = -cs if cs < 0 else cs
            if dn[j]:
                b = np.int64(0x7F800000)
            elif mag == 0:
                b = np.int64(0)
                neg = zs[j]
            elif mag >= (np.int64(1) << 23):
                b = ((ce[j] + 127) << 23) | (mag - (np.int64(1) << 23))
            else:
                b = mag
            out[r * n + j] = b | (neg << 31)
    return 0


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


# ---------------------------------------------------------------------------
# The exact A B + C behind the inexact and underflow flags
# ---------------------------------------------------------------------------
@helper
def _acc_add(acc, mag, neg, p):
    """acc += (-1)**neg * mag * 2**p (0 <= mag < 2**62, p >= 0: bit position
    above the accumulator's base); limbs of 32 bits, carries left for later."""
    idx = p >> 5
    off = p & 31
    low = 32 - off
    part0 = (mag & ((np.int64(1) << low) - 1)) << off
    rest = mag >> low
    s = np.int64(-1) if neg else np.int64(1)
    acc[idx] += s * part0
    acc[idx + 1] += s * (rest & np.int64(0xFFFFFFFF))
    acc[idx + 2] += s * (rest >> 32)


@helper
def _acc_norm(acc, nl):
    """Propagate the carries: limbs in [0, 2**32); returns the final carry (0 for
    a value >= 0, -1 for a negative one, in two's complement over the limbs)."""
    carry = np.int64(0)
    for i in range(nl):
        v = acc[i] + carry
        acc[i] = v & np.int64(0xFFFFFFFF)
        carry = v >> 32
    return carry


@helper
def _acc_below(acc, nl, t):
    """Whether the (normalised, non-negative) value is below 2**t (t a bit
    position, may be negative or beyond the limbs)."""
    if t <= 0:
        for i in range(nl):
            if acc[i] != 0:
                return False
        return True
    li = t >> 5
    for i in range(li + 1, nl):
        if acc[i] != 0:
            return False
    if li < nl and (acc[li] >> (t & 31)) != 0:
        return False
    return True


@helper
def _sig53(x):
    """(|x| as a 53-bit integer, exponent, sign) with |x| = sig * 2**e, x finite."""
    fr, ex = math.frexp(abs(x))
    return np.int64(fr * 9007199254740992.0), np.int64(ex) - 53, x < 0


@njit(cache=True, nogil=True)
def exact_flags_chunk(lo, hi, Av, Bv, m, n, K, Cv, has_c, Dv, base, nl, temin, fl):
    """Inexact (1) and underflow (2) of outputs [lo, hi) whose operands are all
    finite (the others are skipped): D (float64 values) against the exact
    V = sum_k a_k b_k + c, accumulated in 32-bit limbs from 2**base: inexact when
    D != V (an infinite D included), underflow when inexact and
    0 < |V| < 2**temin. Av (nb * m, K), Bv (nb * n, K) (block scales already
    applied), Cv, Dv, fl (nb * m * n). Each a (and b) is split into 26- and
    27-bit halves so that every partial product is below 2**54."""
    acc = np.zeros(nl + 3, np.int64)
    for idx in range(lo, hi):
        bt, i, j, arow, brow = out_pos(idx, m, n, K)
        fin = True
        for t in range(K):
            if not (np.isfinite(Av[arow + t]) and np.isfinite(Bv[brow + t])):
                fin = False
                break
        c = Cv[idx] if has_c else 0.0
        if not fin or not np.isfinite(c):
            continue
        d = Dv[idx]
        if not np.isfinite(d):
            fl[idx] |= 1
            continue
        for q in range(nl + 3):
            acc[q] = 0
        for t in range(K):
            x = Av[arow + t]
            y = Bv[brow + t]
            if x == 0.0 or y == 0.0:
                continue
            sx, ex, nx = _sig53(x)
            sy, ey, ny = _sig53(y)
            neg = nx != ny
            xh = sx >> 27
            xl = sx & ((np.int64(1) << 27) - 1)
            yh = sy >> 27
            yl = sy & ((np.int64(1) << 27) - 1)
            p = ex + ey - base
            _acc_add(acc, xl * yl, neg, p)
            _acc_add(acc, xh * yl, neg, p + 27)
            _acc_add(acc, xl * yh, neg, p + 27)
            _acc_add(acc, xh * yh, neg, p + 54)
        if c != 0.0:
            sc, ec, nc = _sig53(c)
            _acc_add(acc, sc, nc, ec - base)
        carry = _acc_norm(acc, nl + 3)
        zero = carry == 0
        if zero:
            for q in range(nl + 3):
                if acc[q] != 0:
                    zero = False
                    break
        tiny = False
        if not zero:
            if carry < 0:                  # |V|: the two's complement negated
                cy = np.int64(0)
                for q in range(nl + 3):
                    v = -acc[q] + cy
                    acc[q] = v & np.int64(0xFFFFFFFF)
                    cy = v >> 32
                tiny = _acc_below(acc, nl + 3, temin - base)
                cy = np.int64(0)
                for q in range(nl + 3):    # back to V
                    v = -acc[q] + cy
                    acc[q] = v & np.int64(0xFFFFFFFF)
                    cy = v >> 32
            else:
                tiny = _acc_below(acc, nl + 3, temin - base)
        if d != 0.0:
            sd, ed, nd = _sig53(d)
            _acc_add(acc, sd, not nd, ed - base)
        carry2 = _acc_norm(acc, nl + 3)
        exact = carry + carry2 == 0
        if exact:
            for q in range(nl + 3):
                if acc[q] != 0:
                    exact = False
                    break
        if not exact:
            fl[idx] |= 1
            if tiny and not zero:
                fl[idx] |= 2
    return 0
