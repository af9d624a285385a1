"""Conversions: any source format (float64, float32 or a simulated format) to any
target format, directly with one rounding; and encodings to exact float64."""
import numpy as np
from numba import njit

from .core import (C_FINITE, C_INF, C_ZERO, F_INVALID, K_FINITE, K_IEEE, NAN_PROPAGATE, P_DAZ,
                   P_FTZ, P_MODE,
                   P_NAN, P_NANBITS, P_OVF, P_SRBITS, P_TINB, clz64, increment_branchfree,
                   inf_bits, is_stochastic, max_mag, rand_bits, round_masks, round_pack,
                   unpack_in_flight, zero_bits, zero_flags)
from .specialize import float64_nan, make_nan, nan_operand


@njit(cache=True)
def round_value(cls, sign, exp, sig, dE, dM, db, dk, pol, rbits):
    """The conversion core: a value in flight (`core.unpack_in_flight`: a finite
    value (-1)**sign * sig * 2**exp, a zero, an infinity or a NaN with its payload)
    -> target encoding, rounded once by round_pack. Returns (bits, flags).
    Used by `convert_one` and by the accumulation kernels."""
    if cls == C_FINITE:
        return round_pack(sign, exp, sig, dE, dM, db, dk, pol, rbits)
    if cls == C_ZERO:
        return zero_bits(sign, dE, dM, dk), zero_flags(dk)
    if cls == C_INF:
        return inf_bits(sign, dE, dM, dk, pol[P_OVF])
    b, f = nan_operand(cls, sign, sig, exp, dE, dM, dk, pol)
    if dk == K_FINITE:                # no NaN there: +0, and the NaN is invalid
        f |= F_INVALID
    return b, f


@njit(cache=True)
def convert_one(x, sE, sM, sb, sk, dE, dM, db, dk, pol, key, idx):
    """One element: source encoding ``x`` -> target encoding. Returns (bits, flags)."""
    cls, sign, exp, sig = unpack_in_flight(x, sE, sM, sb, sk, pol[P_DAZ])
    r = np.int64(0)
    if cls == C_FINITE and is_stochastic(pol):
        r = rand_bits(key, idx, pol[P_SRBITS])
    return round_value(cls, sign, exp, sig, dE, dM, db, dk, pol, r)


@njit(cache=True, nogil=True)
def convert_chunk(lo, hi, src, out, flg, want_flags, sE, sM, sb, sk, dE, dM, db, dk, pol, key):
    """`convert_one` over elements lo..hi (flags written if want_flags); returns
    the OR of the flags. Run by softfloat._parallel.run_chunks."""
    a = 0
    for i in range(lo, hi):
        b, f = convert_one(src[i], sE, sM, sb, sk, dE, dM, db, dk, pol, key, i)
        out[i] = b
        if want_flags:
            flg[i] = f
        a |= f
    return a


@njit(cache=True)
def to_float64_one(x, E, M, bias, kind):
    """Exact float64 bit pattern (as int64) of one encoding; NaN payloads kept
    left-aligned in the float64 fraction, so float64 -> format gives them back."""
    cls, sign, exp, sig = unpack_in_flight(x, E, M, bias, kind, False)
    s = sign << 63
    if cls == C_FINITE:
        lz = clz64(sig) - 11                 # leading one to bit 52
        sig = sig << lz
        exp = exp - lz
        return s | ((exp + 52 + 1023) << 52) | (sig & ((np.int64(1) << 52) - 1))
    if cls == C_ZERO:
        return s
    if cls == C_INF:
        return s | (np.int64(0x7FF) << 52)
    return float64_nan(sign, sig, M, kind)


@njit(cache=True, nogil=True)
def to_float64_chunk(lo, hi, src, out, E, M, bias, kind):
    for i in range(lo, hi):
        out[i] = to_float64_one(src[i], E, M, bias, kind)
    return 0


# ---------------------------------------------------------------------------
# Fast path: host floats (float64/float32/float16) into a format whose normal
# range starts no lower than the source's (every built-in target from float64,
# and from float32 every target with emin >= -126). Same results and flags as
# convert_one, written without branches so that LLVM vectorizes the loop.
# ---------------------------------------------------------------------------

@njit(cache=True)
def fast_constants(dE, dM, db, dk, pol):
    """Loop-invariant results of the fast path: overflow and infinity
    encodings per sign, the NaN that a NaN input becomes, the largest magnitude.
    Each one is asked of the general path (round_pack, inf_bits, specialize)."""
    out = np.zeros(10, np.int64)
    for s in range(2):
        # 2**2000 overflows every format: round_pack's overflow result for this sign
        out[s], _ = round_pack(np.int64(s), np.int64(2000), np.int64(1), dE, dM, db, dk,
                               pol, np.int64(0))
        b, f = inf_bits(np.int64(s), dE, dM, dk, pol[P_OVF])
        out[2 + s] = b
        out[4] = f
        # NaN inputs: a fixed pattern (canonical, fn, fnuz) or sign|quiet|payload.
        out[5 + s] = make_nan(np.int64(s), np.int64(0), 1, dE, dM, dk, pol[P_NAN], pol[P_NANBITS])
    # 1: a NaN input keeps sign and payload, quieted (built in the loop); the
    # Python caller sends NAN_KEEP to the general path.
    out[7] = 1 if (dk == K_IEEE and pol[P_NAN] == NAN_PROPAGATE) else 0
    out[8] = max_mag(dE, dM, dk)
    out[9] = 1 if dk == K_FINITE else 0      # every NaN input is invalid (no NaN there)
    return out


@njit(cache=True, inline="always")
def _sel(c, a, b):
    """a if c else b, for c in {0, 1}, without a branch."""
    return a if c != 0 else b


@njit(cache=True, inline="always")
def _b(c):
    """bool -> int64 0/1."""
    return np.int64(c)


@njit(cache=True, inline="always")
def convert_host_branchfree(u, sE, sM, sbias, dE, dM, db, dk, m_rne, m_rna, m_up, m_dn, m_odd, m_sr,
              daz, ftz, tinb, nb, r, cst):
    """Branch-free convert of one host-float bit pattern ``u``; returns (bits, flags).

    Every ``if`` is written as arithmetic on 0/1 integers (``_sel``) so that LLVM
    vectorizes the loop around it. m_* are the mode as 0/1 integers.
    """
    one = np.int64(1)
    zero = np.int64(0)
    u = np.int64(u)
    sign = (u >> (sE + sM)) & 1
    ef = (u >> sM) & ((one << sE) - 1)
    frac = u & ((one << sM) - 1)
    special = _b(ef == (one << sE) - 1)
    issub = _b(ef == 0)
    frac = _sel(issub & daz, zero, frac)
    sig = frac | ((1 - issub) << sM)
    te = _sel(issub, one, ef) - sbias + db      # target biased exponent of the leading bit
    below = 1 - te                              # binades below the target's emin
    sh = sM - dM + _sel(_b(below > 0), below, zero)
    extra = sh - 62                             # keep the rounding point at <= 62: jam
    extra = _sel(_b(extra > 0), extra, zero)
    extra = _sel(_b(extra > 62), np.int64(62), extra)
    sig = (sig >> extra) | _b((sig & ((one << extra) - 1)) != 0)
    sh = sh - extra
    sh = _sel(_b(sh > 62), np.int64(62), sh)
    q = sig >> sh
    rem = sig & ((one << sh) - 1)
    half = one << (sh - 1)
    nz = _b(rem != 0)
    inc = increment_branchfree(sign, q, rem, half, m_rne, m_rna, m_up, m_dn)
    if m_sr:
        d = sh - nb
        dpos = _sel(_b(d > 0), d, zero)
        dneg = _sel(_b(d < 0), -d, zero)
        top = (rem >> dpos) << dneg
        rest = _b((rem & ((one << dpos) - 1)) != 0)
        inc = _b(r < top + rest)
    q = (q | (m_odd & nz)) + inc
    normal = _b(te >= 1)
    mag = _sel(normal, ((te - 1) << dM) + q, q)
    # Tininess: before rounding, the value is below 2**emin. After rounding, also
    # unless rounding to full precision (one more bit) carries up to 2**emin.
    tiny = _b(te < 1) | (issub & _b(sig != 0))
    # (tinb: 0/1, tininess detected before rounding; no carry test for odd or SR)
    # (the last kept bit of that rounding is 1 here: a tie rounds up to even)
    half0 = half >> 1
    rem0 = rem & (half - 1)
    inc0 = increment_branchfree(sign, one, rem0, half0, m_rne, m_rna, m_up, m_dn)
    # the value lies in [2**(emin-1), 2**emin): te == 0, or a source subnormal one
    # binade below a target that shares the source's emin (float32 -> bf16)
    carry = ((_b(te == 0) | (issub & _b(te == 1))) & _b(mag == (one << dM)) & ((sig >> (sh - 1)) & 1) & inc0
             & _b(half0 > 0) & (1 - tinb))
    tiny = tiny & (1 - carry)
    ovf = _b(mag > cst[8])
    flush = ftz & _b(mag > 0) & _b(mag < (one << dM))
    mag = _sel(flush, zero, mag)
    flags = nz | _sel(flush, np.int64(3), (tiny & nz) << 1)
    sign = _sel(_b((dk == 2) | (dk >= 5)) & _b(mag == 0), zero, sign)   # fnuz, P3109: no -0
    res = (sign << (dE + dM)) | mag
    res = _sel(ovf, _sel(sign, cst[1], cst[0]), res)
    flags = _sel(ovf, np.int64(5), flags)
    # Specials: infinity, and NaN (payload propagated, or a fixed pattern).
    isnan = special & _b(frac != 0)
    quiet = (frac >> (sM - 1)) & 1
    nanprop = ((sign << (dE + dM)) | (((one << dE) - 1) << dM) | (one << (dM - 1))
               | (frac >> (sM - dM)))
    nanres = _sel(cst[7], nanprop, _sel(sign, cst[6], cst[5]))
    spres = _sel(isnan, nanres, _sel(sign, cst[3], cst[2]))
    spfl = _sel(isnan, ((1 - quiet) | cst[9]) << 4, cst[4])
    res = _sel(special, spres, res)
    flags = _sel(special, spfl, flags)
    return res, flags


@njit(cache=True, inline="always")
def _fast_chunk(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk, pol, key):
    """Elements lo..hi through `convert_host_branchfree`: plain loops that LLVM vectorizes. The
    mode becomes 0/1 integers; SR and flag writing get loops of their own."""
    cst = fast_constants(dE, dM, db, dk, pol)
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(pol[P_MODE])
    daz = np.int64(pol[P_DAZ] != 0)
    ftz = np.int64(pol[P_FTZ] != 0)
    tinb = np.int64(pol[P_TINB] != 0)
    nb = pol[P_SRBITS]
    a = np.int64(0)
    # Slices, indexed from 0: LLVM can then drop numba's negative-index
    # wraparound and use contiguous vector loads (with i from lo it gathers).
    src = src[lo:hi]
    out = out[lo:hi]
    flg = flg[lo:hi] if want_flags else flg
    if is_stochastic(pol):
        for i in range(hi - lo):
            b, f = convert_host_branchfree(src[i], sE, sM, sbias, dE, dM, db, dk, m_rne, m_rna, m_up,
                             m_dn, m_odd, np.int64(1), daz, ftz, tinb, nb,
                             rand_bits(key, i + lo, nb), cst)
            out[i] = b
            a |= f
            if want_flags:
                flg[i] = f
    elif want_flags:
        for i in range(hi - lo):
            b, f = convert_host_branchfree(src[i], sE, sM, sbias, dE, dM, db, dk, m_rne, m_rna, m_up,
                             m_dn, m_odd, np.int64(0), daz, ftz, tinb, nb, np.int64(0), cst)
            out[i] = b
            flg[i] = f
            a |= f
    elif daz == 0 and ftz == 0 and tinb == 0:
        # the default policies as constants: LLVM drops their arithmetic (~1.5x faster)
        for i in range(hi - lo):
            b, f = convert_host_branchfree(src[i], sE, sM, sbias, dE, dM, db, dk, m_rne, m_rna, m_up,
                             m_dn, m_odd, np.int64(0), np.int64(0), np.int64(0),
                             np.int64(0), nb, np.int64(0), cst)
            out[i] = b
            a |= f
    else:
        for i in range(hi - lo):
            b, f = convert_host_branchfree(src[i], sE, sM, sbias, dE, dM, db, dk, m_rne, m_rna, m_up,
                             m_dn, m_odd, np.int64(0), daz, ftz, tinb, nb, np.int64(0), cst)
            out[i] = b
            a |= f
    return a


@njit(cache=True, nogil=True)
def fast_chunk(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk, pol, key):
    """Any IEEE source whose normal range covers the target's (formats at run time)."""
    return _fast_chunk(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk, pol, key)


# The common pairs get their formats as literal constants, which lets LLVM fold
# the shifts and masks (3-4x faster than the same loop with run-time formats).
# Each is compiled on first use only.

@njit(cache=True, nogil=True)
def fast_chunk_f32_fp16(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk,
                        pol, key):
    return _fast_chunk(lo, hi, src, out, flg, want_flags, 8, 23, 127, 5, 10, 15, 0, pol, key)


@njit(cache=True, nogil=True)
def fast_chunk_f32_bf16(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk,
                        pol, key):
    return _fast_chunk(lo, hi, src, out, flg, want_flags, 8, 23, 127, 8, 7, 127, 0, pol, key)


@njit(cache=True, nogil=True)
def fast_chunk_f64_fp16(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk,
                        pol, key):
    return _fast_chunk(lo, hi, src, out, flg, want_flags, 11, 52, 1023, 5, 10, 15, 0, pol, key)


@njit(cache=True, nogil=True)
def fast_chunk_f64_bf16(lo, hi, src, out, flg, want_flags, sE, sM, sbias, dE, dM, db, dk,
                        pol, key):
    return _fast_chunk(lo, hi, src, out, flg, want_flags, 11, 52, 1023, 8, 7, 127, 0, pol, key)


@njit(cache=True, inline="always")
def _ne_chunk(lo, hi, src, out, sE, sM, sbias, dE, dM, db, dk, pol):
    """The most common call, nearest-even under the default policies without
    per-element flags, in one loop with the formats and the mode as constants
    (`convert_host_branchfree`, as `_fast_chunk`: identical bits and flags).
    Returns the OR of the flags, or -1 (nothing written) for any other mode or
    policy, which the caller then sends to `fast_chunk`. One loop keeps the
    first compilation short (a few seconds a format pair)."""
    m_rne, m_rna, m_up, m_dn, m_odd = round_masks(pol[P_MODE])
    if m_rne == 0 or pol[P_DAZ] != 0 or pol[P_FTZ] != 0 or pol[P_TINB] != 0:
        return np.int64(-1)
    cst = fast_constants(dE, dM, db, dk, pol)
    one = np.int64(1)
    zero = np.int64(0)
    nb = pol[P_SRBITS]
    a = zero
    src = src[lo:hi]
    out = out[lo:hi]
    for i in range(hi - lo):
        b, f = convert_host_branchfree(src[i], sE, sM, sbias, dE, dM, db, dk, one, zero, zero,
                                       zero, zero, zero, zero, zero, zero, nb, zero, cst)
        out[i] = b
        a |= f
    return a


# fp8, fp6 and fp4 targets from float32 / float64 in nearest-even (see _ne_chunk):
# float64 -> fp8_e4m3 about 1.8x faster than `fast_chunk` with run-time formats,
# modes and a uint32 output (AMD EPYC Zen 5, 4e6 elements, 2 threads).
# (lo, hi, src (uint32 or int64 bits), out (uint8), pol) -> flags or -1

@njit(cache=True, nogil=True)
def ne_chunk_f32_e4m3(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 8, 23, 127, 4, 3, 7, 1, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f32_e5m2(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 8, 23, 127, 5, 2, 15, 0, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f64_e4m3(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 11, 52, 1023, 4, 3, 7, 1, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f64_e5m2(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 11, 52, 1023, 5, 2, 15, 0, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f32_e2m3(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 8, 23, 127, 2, 3, 1, 3, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f32_e3m2(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 8, 23, 127, 3, 2, 3, 3, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f32_e2m1(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 8, 23, 127, 2, 1, 1, 3, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f64_e2m3(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 11, 52, 1023, 2, 3, 1, 3, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f64_e3m2(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 11, 52, 1023, 3, 2, 3, 3, pol)


@njit(cache=True, nogil=True)
def ne_chunk_f64_e2m1(lo, hi, src, out, pol):
    return _ne_chunk(lo, hi, src, out, 11, 52, 1023, 2, 1, 1, 3, pol)


FAST_SPECS = {(8, 23, 127, 5, 10, 15, 0): fast_chunk_f32_fp16,
              (8, 23, 127, 8, 7, 127, 0): fast_chunk_f32_bf16,
              (11, 52, 1023, 5, 10, 15, 0): fast_chunk_f64_fp16,
              (11, 52, 1023, 8, 7, 127, 0): fast_chunk_f64_bf16}

NE_SPECS = {(8, 23, 127, 4, 3, 7, 1): ne_chunk_f32_e4m3,
            (8, 23, 127, 5, 2, 15, 0): ne_chunk_f32_e5m2,
            (11, 52, 1023, 4, 3, 7, 1): ne_chunk_f64_e4m3,
            (11, 52, 1023, 5, 2, 15, 0): ne_chunk_f64_e5m2,
            (8, 23, 127, 2, 3, 1, 3): ne_chunk_f32_e2m3,
            (8, 23, 127, 3, 2, 3, 3): ne_chunk_f32_e3m2,
            (8, 23, 127, 2, 1, 1, 3): ne_chunk_f32_e2m1,
            (11, 52, 1023, 2, 3, 1, 3): ne_chunk_f64_e2m3,
            (11, 52, 1023, 3, 2, 3, 3): ne_chunk_f64_e3m2,
            (11, 52, 1023, 2, 1, 1, 3): ne_chunk_f64_e2m1}
