"""Block-scaled quantization kernels (softfloat.mx), the fast paths: float32
input, 1-D blocks (`quantize_fast_chunk`, `quantize_fast_rows_chunk`): amax and
scales of many blocks at once (`mx_scale.mx_scales`, `nvfp4_scales`), then every
element by `mx_elem.element`. The slow twin is `mx.quantize_chunk`
(tests/test_mx_fast.py compares them code for code).
"""
import numpy as np
from numba import njit

from .core import clz64, round_masks
from .mx_elem import _env_bad, _MAG32, elem_code, elem_value, element, pow2, value_rne32
from .mx_scale import col_amax, mx_scales, nvfp4_scales


@njit(cache=True)
def block_span(k, nL, bl, L, T):
    """Work item k of x viewed as (B, L, T) in blocks of bl along L (nL per row):
    (b, l0, l1, base): the block's rows l0..l1 of slab b = k // nL and the flat index
    of its first element. Its scales start at k * T."""
    b = k // nL
    l0 = (k - b * nL) * bl
    return b, l0, min(L, l0 + bl), (b * L + l0) * T


@njit(cache=True, nogil=True, error_model="numpy")
def quantize_fast_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, ef, mode, sr,
                        nb, key, sc):
    """Blocks of ``bl`` along axis 1 of float32 x viewed as (B, L, T), C order; work
    item k = (b, i): the block row i (rows i*bl.. of the L axis) of slab b, all T
    columns (T == 1: one block). Writes element codes (``want_vals`` 0) or float32
    values X * P (NVFP4: s * P, without the tensor scale) into ``codes`` / ``vals``
    (the layout of x), scale codes into ``scales`` (B, ceil(L / bl), T). ``ef``: the
    element format (`element`); ``mode``: the rounding code (``sr``: stochastic, nb
    random bits from stream ``key``); ``sc``: the scale parameters (stype, rule,
    emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up), as
    `quantize_chunk`. Random bits of element (b, l, t): index (b * T + t) * L + l,
    its position with the blocked axis moved last (as `quantize_chunk`). Returns -1
    (nothing done) when MXCSR flushes subnormals."""
    if _env_bad():
        return -1
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    rm = round_masks(mode)
    M, emin, maxmag, sshift, is_int, maxval = ef
    nL = (L + bl - 1) // bl
    xi = x.view(np.int32)
    amax = np.empty(T, np.int32)
    rr = np.empty(T, np.float64)
    vv = np.empty(T, np.float64)
    ok = np.empty(T, np.uint8)
    maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
    r32 = np.empty(T, np.float32)
    v32 = np.empty(T, np.float32)
    maxval32 = np.float32(maxval)
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, T)
        n = (l1 - l0) * T
        xs = xi[base:base + n]
        # pass 1: amax per column
        col_amax(xs, l1 - l0, T, amax)
        s0 = k * T
        if stype == 1:
            nvfp4_scales(amax, scales[s0:s0 + T], rr, vv, ok, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
        else:
            mx_scales(amax, scales[s0:s0 + T], rr, vv, ok, rule, emax_elem, prec_elem,
                      maxe32)
            for t in range(T):
                r32[t] = np.float32(rr[t])        # powers of two: exact in float32
                v32[t] = np.float32(vv[t])
        # pass 2: the elements, row by row (each row's loop runs over the columns)
        for l in range(l1 - l0):
            o = base + l * T
            xf = x[o:o + T]
            if sr:
                for t in range(T):
                    mag, q, ey, sign = element(xf[t], rr[t], False, True, ef, rm, key,
                                               (b * T + t) * L + l0 + l, nb)
                    if want_vals:
                        vals[o + t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
                    else:
                        codes[o + t] = elem_code(mag, sign, ef) * ok[t]
            elif want_vals:
                vs = vals[o:o + T]
                if stype == 1:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], True, False, ef, rm, key, 0, nb)
                        vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
                elif rm[0]:
                    for t in range(T):
                        vs[t] = value_rne32(xf[t], r32[t], v32[t], M, emin, maxval32, is_int)
                else:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], False, False, ef, rm, key, 0, nb)
                        vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vv[t]))
            else:
                cs = codes[o:o + T]
                if stype == 1:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], True, False, ef, rm, key, 0, nb)
                        cs[t] = elem_code(mag, sign, ef) * ok[t]
                else:
                    for t in range(T):
                        mag, q, ey, sign = element(xf[t], rr[t], False, False, ef, rm, key, 0, nb)
                        cs[t] = elem_code(mag, sign, ef) * ok[t]
    return 0

@njit(cache=True, nogil=True, error_model="numpy")
def quantize_fast_rows_chunk(lo, hi, x, B, L, T, bl, codes, vals, scales, want_vals, ef, mode,
                             sr, nb, key, sc):
    """`quantize_fast_chunk` for T == 1 (blocks along the last axis, contiguous): work
    item k is block k. Full blocks of a power-of-two size (the usual 16 and 32): the
    blocks lo..hi are the flat range lo*bl..hi*bl; amax and scale per block first,
    then one loop over all their elements (block k = t >> log2(bl)), long enough to
    vectorise well. Otherwise block by block."""
    if _env_bad():
        return -1
    stype, rule, emax_elem, prec_elem, maxe_exp, maxe_sig, ts_exp, ts_sig, s_up = sc
    rm = round_masks(mode)
    M, emin, maxmag, sshift, is_int, maxval = ef
    nL = (L + bl - 1) // bl
    if (bl & (bl - 1)) == 0 and L % bl == 0:
        lb = 63 - clz64(np.int64(bl))
        nbk = hi - lo
        x0 = lo * bl
        n = nbk * bl
        xi = x.view(np.int32)[x0:x0 + n]
        xf = x[x0:x0 + n]
        maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
        # tile by tile (tile elements, g whole blocks; in cache): block maxima, the
        # blocks' scales, their multipliers spread per element (contiguous loads in the
        # element loop, no gathers), then the elements
        tile = bl if bl > 512 else 512
        g = tile >> lb
        ams = np.empty(g, np.int32)
        rr = np.empty(g, np.float64)
        vv = np.empty(g, np.float64)
        ok = np.empty(g, np.uint8)
        re = np.empty(tile, np.float64)
        ve = np.empty(tile, np.float64)
        oe = np.empty(tile, np.uint8)
        re32 = np.empty(tile, np.float32)
        ve32 = np.empty(tile, np.float32)
        maxval32 = np.float32(maxval)
        use32 = want_vals and stype == 0 and not sr and rm[0] == 1      # value_rne32 below
        for t0 in range(0, n, tile):
            m = min(tile, n - t0)
            gm = m >> lb
            k0 = t0 >> lb
            for j in range(gm):
                blk = xi[t0 + j * bl:t0 + (j + 1) * bl]
                am = np.int32(0)
                for t in range(bl):
                    v = blk[t] & _MAG32
                    am = v if v > am else am
                ams[j] = am
            if stype == 1:
                nvfp4_scales(ams[:gm], scales[lo + k0:lo + k0 + gm], rr, vv, ok, maxe_exp,
                             maxe_sig, ts_exp, ts_sig, s_up)
            else:
                mx_scales(ams[:gm], scales[lo + k0:lo + k0 + gm], rr, vv, ok, rule, emax_elem,
                          prec_elem, maxe32)
            if use32:
                for j in range(gm):
                    re32[j * bl:(j + 1) * bl] = np.float32(rr[j])     # exact: 2**-e
                    ve32[j * bl:(j + 1) * bl] = np.float32(vv[j])
            else:
                for j in range(gm):
                    re[j * bl:(j + 1) * bl] = rr[j]
                    ve[j * bl:(j + 1) * bl] = vv[j]
                    oe[j * bl:(j + 1) * bl] = ok[j]
            xt = xf[t0:t0 + m]
            if want_vals:
                vs = vals[x0 + t0:x0 + t0 + m]
                if stype == 1:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], True, False, ef, rm, key, 0, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
                elif sr:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, True,
                                                   ef, rm, key, x0 + t0 + i, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
                elif use32:
                    for i in range(m):
                        vs[i] = value_rne32(xt[i], re32[i], ve32[i], M, emin, maxval32, is_int)
                else:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, False, ef, rm, key, 0, nb)
                        vs[i] = np.float32(elem_value(mag, q, ey, sign, ef, ve[i]))
            else:
                cs = codes[x0 + t0:x0 + t0 + m]
                if stype == 1:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], True, False, ef, rm, key, 0, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
                elif sr:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, True,
                                                   ef, rm, key, x0 + t0 + i, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
                else:
                    for i in range(m):
                        mag, q, ey, sign = element(xt[i], re[i], False, False, ef, rm, key, 0, nb)
                        cs[i] = elem_code(mag, sign, ef) * oe[i]
        return 0
    xi = x.view(np.int32)
    am1 = np.empty(1, np.int32)
    rr1 = np.empty(1, np.float64)
    vv1 = np.empty(1, np.float64)
    ok1 = np.empty(1, np.uint8)
    maxe32 = np.float32(np.float64(maxe_sig) * pow2(maxe_exp))
    for k in range(lo, hi):
        b, l0, l1, base = block_span(k, nL, bl, L, 1)
        n = l1 - l0
        xs = xi[base:base + n]
        am = np.int32(0)
        for t in range(n):
            m = xs[t] & _MAG32
            am = m if m > am else am
        am1[0] = am
        if stype == 1:
            nvfp4_scales(am1, scales[k:k + 1], rr1, vv1, ok1, maxe_exp, maxe_sig, ts_exp,
                         ts_sig, s_up)
        else:
            mx_scales(am1, scales[k:k + 1], rr1, vv1, ok1, rule, emax_elem, prec_elem, maxe32)
        r = rr1[0]
        vm = vv1[0]
        xf = x[base:base + n]
        if ok1[0] == 0:
            if want_vals:
                vals[base:base + n] = np.nan
            else:
                codes[base:base + n] = 0
            continue
        if want_vals:
            vs = vals[base:base + n]
            if stype == 1:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, True, False, ef, rm, key, 0, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
            elif sr:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, True, ef, rm, key, base + t, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
            else:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, False, ef, rm, key, 0, nb)
                    vs[t] = np.float32(elem_value(mag, q, ey, sign, ef, vm))
        else:
            cs = codes[base:base + n]
            if stype == 1:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, True, False, ef, rm, key, 0, nb)
                    cs[t] = elem_code(mag, sign, ef)
            elif sr:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, True, ef, rm, key, base + t, nb)
                    cs[t] = elem_code(mag, sign, ef)
            else:
                for t in range(n):
                    mag, q, ey, sign = element(xf[t], r, False, False, ef, rm, key, 0, nb)
                    cs[t] = elem_code(mag, sign, ef)
    return 0
