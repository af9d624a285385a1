"""Matrix-unit kernels (softfloat.mma), the AMD matrix cores and the fp32
fused multiply-add chain: CDNA3's two-stage sums in integers ("two_stage",
"two_stage_pairs"), CDNA1's exact dots ("exact", two-sum expansions), the fp32
FMA chain ("fma") and CDNA2's flush-to-zero chains ("ftz_chain"). These are the
reference kernels; the fast ones are in `mma_amd.py`.
"""
import numpy as np
from numba import njit

from .jit import helper
from .mma_decode import CLS_FIN, CLS_INF, CLS_NAN, NO_EXP, dec_ieee, out_pos, prod_special
from .mma_round import bitlen, floor_shift, round_out, special_bits, trunc_shift


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
