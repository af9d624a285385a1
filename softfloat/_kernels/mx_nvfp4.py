"""Block-scaled quantization kernels (softfloat.mx), NVFP4 by thresholds
(`nv_fast_chunk`): e2m1 elements found by exact comparisons with the rounding
boundaries of each block, no division (see the comment below). The slow twin is
`mx.quantize_chunk` (tests/test_nvfp4_fast.py).
"""
import numpy as np
from numba import njit

from .hw import f32_bits
from .mx_elem import _env_bad, _MAG32, pow2
from .mx_fast import block_span
from .mx_scale import col_amax, nvfp4_scales


# ---------------------------------------------------------------------------
# NVFP4 elements by thresholds (e2m1 elements; nearest_even, nearest_away and
# toward_zero; float32 input): no division, float32 / int32 lanes only.
#
# The e2m1 magnitudes are v_c = 0, 0.5, 1, 1.5, 2, 3, 4, 6 for the codes c = 0..7.
# With the block divisor D = s * ts (s the e4m3 block scale, ts the fp32 tensor
# scale), x rounds to the code c = the number of boundaries k = 0..6 that |x|
# reaches, where boundary k separates c = k from c = k + 1 and lies at t_k = m_k * D:
#   nearest_even: m_k = the midpoint (v_k + v_(k+1)) / 2 = 0.25, 0.75, 1.25, 1.75, 2.5,
#     3.5, 5; a tie goes to the even code, so boundary k is "reached" when |x| > t_k
#     for k even (tie -> k) and |x| >= t_k for k odd (tie -> k + 1);
#   nearest_away: the same midpoints, always |x| >= t_k (a tie goes up in magnitude);
#   toward_zero: m_k = v_(k+1) = 0.5, 1, 1.5, 2, 3, 4, 6 and |x| >= t_k.
# Beyond 6 * D every boundary is reached: code 7, the saturated largest value (OCP
# elements saturate; round_pack with overflow="saturate" does the same in these
# three modes). This is the definition of the three roundings (the exact |x| / D
# compared with the exact boundaries), so nothing is approximated as long as each
# comparison is exact:
# - t_k = ((4 m_k) * s) * ts * 0.25 in float64 is exact: 4 m_k <= 24 (5 bits) times
#   s (4 significant bits) times ts (24 bits) has <= 33 significant bits, and its
#   magnitude lies between 2**-9 * 2**-149 * 2**-2 and 24 * 448 * 2**128 (float64
#   normal range).
# - |x| is a float32 and t_k need not be: for a float32 a and a real t, a >= t iff
#   a >= u where u is the smallest float32 >= t, and a > t iff a >= u' where u' is
#   the smallest float32 > t. With f = float32(t) (correctly rounded, nearest even,
#   overflowing to inf; exact conversion of a float64 by the hardware, MXCSR checked
#   by the kernels: no flush to zero) and t, f > 0: u = f if f >= t else nextup(f),
#   u' = f if f > t else nextup(f), and nextup of a positive finite float32 is its
#   bit pattern + 1 (FLT_MAX + 1 ulp gives the bits of inf: no finite |x| reaches it).
#   A boundary below 2**-149 gives f = 0 and u = 2**-149 (bits 1): every nonzero
#   float32 reaches it, 0 does not, as the exact comparison says.
# - Positive float32 values order like their bit patterns, so |x| >= u is the int32
#   comparison (x_bits & 0x7FFFFFFF) >= u_bits.
# The value X * P = v_c * s (quantize_values, without ts) is the sum of the steps
# d_k = (v_(k+1) - v_k) * s = 0.5 s, 0.5 s, 0.5 s, 0.5 s, s, s, 2 s over the reached
# boundaries: each d_k and each partial sum v_c * s is exact in float32 (at most 2 + 4
# significant bits, between 2**-10 and 6 * 448), so the float32 additions are exact;
# the sign is x's sign bit OR-ed in (a negative x rounding to 0 gives -0, as the
# general kernel). A block with a NaN scale (a NaN or an infinity in it) starts the
# sum at NaN (values NaN) and gets codes 0.
# Checked against the general kernel (exact integer quotient and round_pack) in
# tests/test_nvfp4_fast.py: every float32 of several binades around the boundaries of
# several block scales and tensor scales, in the three modes.
_NV_MID4 = np.array([1, 3, 5, 7, 10, 14, 20], np.int64)     # 4 * midpoints
_NV_VAL4 = np.array([2, 4, 6, 8, 12, 16, 24], np.int64)     # 4 * v_(k+1)
_NV_STEP4 = np.array([2, 2, 2, 2, 4, 4, 8], np.int64)       # 4 * (v_(k+1) - v_k)
_SIGN32 = np.int32(-2147483648)


@njit(cache=True, error_model="numpy")
def nv_bounds(vv, ok, nb_, ts, nvm, ub, db, a0):
    """The seven boundaries of blocks j < nb_ (see the comment above; the block scale
    values vv[j], 1 / 0 in ok[j] for a finite / NaN-scale block) as float32 bit
    patterns ub[:, j] (|x| reaches boundary k iff its magnitude bits are >= ub[k, j]),
    the value steps db[:, j] and the value sum's start a0[j] (0, or NaN for a NaN-scale
    block, whose boundaries are computed for s = 1 and never matter). The inner loops
    run over the blocks (they vectorise)."""
    for k in range(7):
        q = np.float64(_NV_VAL4[k] if nvm == 2 else _NV_MID4[k])
        strict = nvm == 0 and (k & 1) == 0
        st = np.float64(_NV_STEP4[k]) * 0.25
        for j in range(nb_):
            s = vv[j] if ok[j] else 1.0
            t = (q * s) * ts * 0.25                             # exact (see above)
            f = np.float32(t)
            g = np.float64(f)
            up = (g < t) | (strict & (g == t))
            ub[k, j] = f32_bits(f) + np.int32(up)
            db[k, j] = np.float32(st * s)
    for j in range(nb_):
        a0[j] = np.float32(0.0) if ok[j] else np.float32(np.nan)


@njit(cache=True)
def _nv_col(ub, j):
    """Block (or column) j's seven boundaries ub[:, j] (or steps db[:, j]) as a tuple."""
    return (ub[0, j], ub[1, j], ub[2, j], ub[3, j], ub[4, j], ub[5, j], ub[6, j])


@njit(cache=True)
def _nv_value(v, u, d, s0):
    """The value bits of float32 bits v: s0 plus the steps d[k] of the boundaries
    u[k] its magnitude reaches, with v's sign (see the comment above)."""
    a = v & _MAG32
    z = np.float32(0.0)
    acc = s0 + (d[0] if a >= u[0] else z)
    acc = acc + (d[1] if a >= u[1] else z)
    acc = acc + (d[2] if a >= u[2] else z)
    acc = acc + (d[3] if a >= u[3] else z)
    acc = acc + (d[4] if a >= u[4] else z)
    acc = acc + (d[5] if a >= u[5] else z)
    acc = acc + (d[6] if a >= u[6] else z)
    return f32_bits(acc) | (v & _SIGN32)


@njit(cache=True)
def _nv_code(v, u, okj):
    """The e2m1 code of float32 bits v: the number of boundaries u[k] its magnitude
    reaches, v's sign as bit 3; 0 in a NaN-scale block (okj 0)."""
    a = v & _MAG32
    c = (np.int32(a >= u[0]) + np.int32(a >= u[1]) + np.int32(a >= u[2])
         + np.int32(a >= u[3]) + np.int32(a >= u[4]) + np.int32(a >= u[5])
         + np.int32(a >= u[6]))
    return np.uint8((c | ((v >> 28) & 8)) * okj)


@njit(cache=True)
def nv_run(xi, xo, oi, oo, n, ub, db, a0, j, want_vals, oc, okj):
    """n contiguous elements of one block j: float32 bits xi[xo:xo + n] -> value bits
    oi[oo:oo + n] (want_vals) or codes oc[oo:oo + n]."""
    u = _nv_col(ub, j)
    xs = xi[xo:xo + n]                  # slices: indices from 0, no wraparound checks
    if want_vals:
        os_ = oi[oo:oo + n]
        d = _nv_col(db, j)
        s0 = a0[j]
        for i in range(n):
            os_[i] = _nv_value(xs[i], u, d, s0)
    else:
        cs = oc[oo:oo + n]
        for i in range(n):
            cs[i] = _nv_code(xs[i], u, okj)


@njit(cache=True)
def nv_row(xi, xo, oi, oo, T, ub, db, a0, want_vals, oc, ok):
    """One row of T columns, column t in block column t (quantize_fast_chunk's layout):
    as `nv_run` with per-column boundaries. The value is formed with fewer loads per
    element: h = sum over the reached boundaries of (v_(k+1) - v_k) / 0.5 = 1, 1, 1,
    1, 2, 2, 4 (h = 2 v_c, an integer <= 12, exact in float32), then h * db[0, t] +
    a0[t] with db[0, t] = 0.5 s: h * 0.5 s = v_c * s exactly (the same float32 as the
    step sum of `nv_run`: at most 6 significant bits, between 2**-10 and 6 * 448), and
    adding a0 = +0 changes nothing (+0 + +0 = +0; the sign is OR-ed in afterwards)
    while a0 = NaN makes a NaN-scale block's values NaN."""
    xs = xi[xo:xo + T]                  # slices: indices from 0, no wraparound checks
    if want_vals:
        os_ = oi[oo:oo + T]
        z = np.float32(0.0)
        one = np.float32(1.0)
        two = np.float32(2.0)
        four = np.float32(4.0)
        for t in range(T):
            v = xs[t]
            a = v & _MAG32
            h = (one if a >= ub[0, t] else z) + (one if a >= ub[1, t] else z)
            h = h + (one if a >= ub[2, t] else z)
            h = h + (one if a >= ub[3, t] else z)
            h = h + (two if a >= ub[4, t] else z)
            h = h + (two if a >= ub[5, t] else z)
            h = h + (four if a >= ub[6, t] else z)
            acc = h * db[0, t] + a0[t]
            os_[t] = f32_bits(acc) | (v & _SIGN32)
    else:
        cs = oc[oo:oo + T]
        for t in range(T):
            cs[t] = _nv_code(xs[t], _nv_col(ub, t), ok[t])

@njit(cache=True, nogil=True, error_model="numpy")
def nv_fast_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, nvm, sc):
    """NVFP4 by thresholds (see "NVFP4 elements by thresholds"; nvm: 0 nearest_even,
    1 nearest_away, 2 toward_zero; ``sc`` the scale parameters of
    `quantize_fast_chunk`): blocks of ``bl`` along axis 1 of float32 x viewed as (B, L, T), C order,
    work items as `quantize_fast_chunk` (T == 1: item k is block k; T > 1: item k is
    the block row of all T columns). Same outputs as `quantize_fast_chunk`: codes
    (``want_vals`` 0) or the float32 values s * P as bits, and the e4m3 scale codes
    (`nvfp4_scales`). Returns -1 (nothing done) when MXCSR flushes subnormals."""
    if _env_bad():
        return -1
    maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc[4], sc[5], sc[6], sc[7], sc[8]
    nL = (L + bl - 1) // bl
    xi = x.view(np.int32)
    vi = vals.view(np.int32)
    ts = np.float64(ts_sig) * pow2(ts_exp)
    if T == 1:
        # groups of G blocks: maxima, scales (`nvfp4_scales` vectorises over blocks),
        # boundaries, then the elements block by block
        G = 256
        # blocks of 16 tiling each row (NVFP4's usual case): block k is x[16k:16k + 16]
        # (no integer division per block); otherwise block by block as item k says
        full = bl == 16 and L % 16 == 0
        ams = np.empty(G, np.int32)
        rr = np.empty(G, np.float64)
        vv = np.empty(G, np.float64)
        ok = np.empty(G, np.uint8)
        ub = np.empty((7, G), np.int32)
        db = np.empty((7, G), np.float32)
        a0 = np.empty(G, np.float32)
        h1 = np.empty(G * 8, np.int32)          # pairwise maxima (scratch)
        h2 = np.empty(G * 4, np.int32)
        for k0 in range(lo, hi, G):
            gm = min(G, hi - k0)
            # the group's elements as slices (full case): indices j * 16 + t from 0 need
            # no negative-index wraparound, so the loads are plain vector loads
            g0 = k0 * 16 if full else 0
            g1 = (k0 + gm) * 16 if full else 0
            xg = xi[g0:g1]
            vg = vi[g0:g1] if want_vals else vi
            cg = codes[g0:g1] if not want_vals else codes
            if full:
                # block maxima by a tree of pairwise maxima over contiguous data
                # (16 -> 8 -> 4 -> 2 -> 1 per block): each loop vectorises with plain
                # loads (a loop per block would be vectorised across blocks, with
                # gathers, and was about 5 times slower on data out of cache)
                for i in range(gm * 8):
                    u = xg[2 * i] & _MAG32
                    w = xg[2 * i + 1] & _MAG32
                    h1[i] = u if u > w else w
                for i in range(gm * 4):
                    u = h1[2 * i]
                    w = h1[2 * i + 1]
                    h2[i] = u if u > w else w
                for i in range(gm * 2):
                    u = h2[2 * i]
                    w = h2[2 * i + 1]
                    h1[i] = u if u > w else w
                for i in range(gm):
                    u = h1[2 * i]
                    w = h1[2 * i + 1]
                    ams[i] = u if u > w else w
            else:
                for j in range(gm):
                    am = np.int32(0)
                    b, l0, l1, base = block_span(k0 + j, nL, bl, L, 1)
                    for t in range(l1 - l0):
                        v = xi[base + t] & _MAG32
                        am = v if v > am else am
                    ams[j] = am
            nvfp4_scales(ams[:gm], scales[k0:k0 + gm], rr, vv, ok, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
            nv_bounds(vv, ok, gm, ts, nvm, ub, db, a0)
            for j in range(gm):
                if not full:
                    b, l0, l1, base = block_span(k0 + j, nL, bl, L, 1)
                    nv_run(xi, base, vi, base, l1 - l0, ub, db, a0, j, want_vals, codes, ok[j])
                    continue
                # a full block of 16 (NVFP4's size), written out here: a loop of a
                # constant 16 vectorises into whole vectors (a run-time count of 16
                # would run in the vectoriser's scalar remainder loop)
                u = _nv_col(ub, j)
                if want_vals:
                    d = _nv_col(db, j)
                    s0 = a0[j]
                    for t in range(16):
                        vg[j * 16 + t] = _nv_value(xg[j * 16 + t], u, d, s0)
                else:
                    okj = ok[j]
                    for t in range(16):
                        cg[j * 16 + t] = _nv_code(xg[j * 16 + t], u, okj)
        return 0
    amax = np.empty(T, np.int32)
    rr = np.empty(T, np.float64)
    vv = np.empty(T, np.float64)
    ok = np.empty(T, np.uint8)
    ub = np.empty((7, T), np.int32)
    db = np.empty((7, T), np.float32)
    a0 = np.empty(T, np.float32)
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, T)
        col_amax(xi[base:base + (l1 - l0) * T], l1 - l0, T, amax)
        s0 = k * T
        nvfp4_scales(amax, scales[s0:s0 + T], rr, vv, ok, maxe_exp, maxe_sig, ts_exp, ts_sig,
                     s_up)
        nv_bounds(vv, ok, T, ts, nvm, ub, db, a0)
        for l in range(l1 - l0):
            nv_row(xi, base + l * T, vi, base + l * T, T, ub, db, a0, want_vals, codes, ok)
    return 0
