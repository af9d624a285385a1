"""fp16 and bf16 add, sub, mul, div, sqrt and fma at hardware pace, in every
deterministic rounding mode, with flags: float32 arithmetic plus error-free
transformations (EFT), then one integer rounding into the format.

Pass 1 (the kernels here, branch-free so that LLVM vectorizes them) takes every
element whose operands are finite (and, for bf16 div/sqrt, whose dividend or
radicand is at least 2^-100) and whose result is a normal number of the format; it writes the result and
``scratch[i] = inexact``. Every other element gets ``scratch[i] = 128`` and is
recomputed by the caller with the general kernel (`arith.binary_array`, ...):
zeros, subnormals, overflow, infinities and NaNs (so the NaN rules, flushing,
tininess and overflow policies have one owner). For the elements pass 1 keeps,
no flag but inexact can arise.

Why the result is right (r = the exact result, RTO32 = round to odd at float32's
24 bits: truncate, and set the last bit if inexact):

1. Operands are exact in float32 (fp16 and bf16 values are float32 values).
2. The float32 result s and the side of r relative to s are known exactly:
   * add/sub: TwoSum (Knuth; Moller): s = fl(a + b), bb = s - a,
     e = (a - (s - bb)) + (b - bb) gives a + b = s + e exactly when no
     overflow occurs (an overflowed s is caught as slow), for any operands, in
     round-to-nearest (float32 arithmetic here runs nearest-even: MXCSR is read
     and FTZ/DAZ excluded). r > s iff e > 0; r = s iff e == 0.
   * mul: p = fl(a * b) is exact: fp16 products have <= 22 significant bits and
     lie in [2^-48, 2^32], bf16 products <= 16 bits, exact unless they leave
     float32's normal range (then the result is subnormal, zero or overflows
     in bf16 too: slow). So r = s.
   * div: q = fl(a / b), rr = fma(-q, b, a) = a - q b exactly: the remainder of
     a correctly rounded quotient is representable (Boldo & Daumas) as long as
     it is a multiple of float32's 2^-149. rr is a multiple of
     min(ulp(a), ulp(q) ulp(b)), and ulp(q) ulp(b) >= 2^(e_a - 31) for bf16
     (2^(e_a - 34) for fp16) with e_q >= e_a - e_b - 1. fp16: e_a >= -24, so
     >= 2^-58; bf16: dividends below 2^-100 are left to the slow pass, so
     >= 2^-131; a quotient that is not a float32 normal is slow (its result
     is subnormal or overflows). r - q = rr / b, so r > q iff rr != 0 and
     sign(rr) == sign(b).
   * sqrt: s = fl(sqrt(a)), rr = fma(-s, s, a) = a - s^2 exactly, a multiple
     of ulp(s)^2 >= 2^(2 e_s - 46): fp16 a >= 2^-24 gives e_s >= -12; bf16
     inputs below 2^-100 are slow, so e_s >= -50 and ulp(s)^2 >= 2^-146.
     sqrt(a) > s iff rr > 0.
   * fma: p = fl(a * b) exact as for mul (a nonzero product below 2^-126, where
     it may not be, is slow; fma(a, b, -p) cannot tell, as it rounds too),
     then TwoSum(p, c).
3. From (s, side) the RTO32 value t = RTO32(r) is formed on the encoding: if
   r != s and s's last bit is even, the other float32 neighbour of r is the
   encoding one step from s toward r, which is odd: magnitude + 1 when |r| > |s|,
   - 1 otherwise (consecutive encodings are consecutive values, across binade
   boundaries too). t = s otherwise.
4. Rounding t into the format (p = 11 or 8 bits) in any mode gives the correct
   rounding of r: round to odd with p + 2 <= 24 bits followed by any rounding
   to p bits is innocuous (Boldo & Melquiond, IEEE TC 2008). Here the result is
   a normal number of the format, so the rounding point is at a fixed position
   of t's significand (23 - M bits dropped) and the rounding is integer
   arithmetic on t's magnitude: an increment carries into the exponent by
   itself. inexact iff a dropped bit of t is set (t is odd whenever r is not a
   float32, so an inexact r never looks exact).

Nearest-even has its own pass-1 kernels (``*_rne_chunk``, chosen per call by
`KERNELS`' entries), cheaper than steps 3-4: the float32 result s is rounded
into the format by the hardware (F16C ``vcvtps2ph`` for fp16; for bf16 the
integer nearest-even rounding of s's bits), i.e. RN_p(RN_24(r)) with s =
RN_24(r). For +, -, *, / and sqrt of p-bit operands this double rounding is
innocuous when 24 >= 2p + 2 (Figueroa 1995, "When is double rounding
innocuous?"): p = 11 and p = 8 qualify, as long as s is a float32 normal (its 24
bits are all there), which holds for every element kept (below). So the result
is RN_p(r). inexact iff r != result: r != s (the EFT of step 2 says so: e, or
the remainder, is nonzero; r is then not even a float32) or s != result (s is
compared with the result's exact float32 value). An element is slow when an
operand is special (as above), when |s| <= the format's smallest normal (a
result that is zero, subnormal, or tiny before rounding even if it rounds up
to the smallest normal: tininess and underflow belong to the general path; s
at exactly the smallest normal may stand for an r just below it), or when the
result's exponent field is all ones (overflow). fp16 needs nothing else: every
s is a float32 normal or zero (|r| >= 2^-48 for products, >= 2^-40 for
quotients). bf16 keeps the dividend/radicand rule of step 2 and, for products
below 2^-126 (float32 subnormal, possibly inexact), the |s| test makes them
slow.
"""
import numpy as np
from numba import njit

from .hw import (MXCSR_DAZ, MXCSR_FTZ, bits_f32, f16_to_f32, f32_bits, f32_to_f16, fma32,
                 mxcsr)

OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA = 0, 1, 2, 3, 10, 11
_RNE, _RNA, _RTZ, _RUP, _RDN, _RTO = 0, 1, 2, 3, 4, 5
_1 = np.int32(1)
_0 = np.int32(0)
_MAG = np.int32(0x7FFFFFFF)


@njit(cache=True, inline="always", error_model="numpy")
def _dec(x, E, M):
    """float32 value of an fp16 (E = 5) or bf16 (E = 8) encoding, exact."""
    if E == 8:
        return bits_f32(np.int32(x) << 16)
    return f16_to_f32(x)


@njit(cache=True, inline="always", error_model="numpy")
def _special(x, E, M):
    """1 when the encoding is an infinity or a NaN."""
    emask = (np.int32(1) << E) - 1
    return np.int32(((np.int32(x) >> M) & emask) == emask)


@njit(cache=True, inline="always", error_model="numpy")
def _below_2m100(x, E, M):
    """1 when a bf16 encoding's magnitude is below 2^-100 (zeros and subnormals
    included): there the remainder of a float32 division or square root may
    fall below float32's 2^-149 (module doc, step 2)."""
    return np.int32(((np.int32(x) >> M) & np.int32(255)) < np.int32(27))


@njit(cache=True, inline="always", error_model="numpy")
def _finish(s, inx32, up, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd):
    """(bits, inexact, slow) from the float32 result s and the side of r: inx32 =
    r != s, up = r > s (0/1 int32). Steps 3 and 4 of the module doc."""
    u = f32_bits(s)
    sign = (u >> 31) & _1
    ms = u & _MAG
    slow = np.int32(ms >= np.int32(0x7F800000))            # s overflowed (or NaN)
    # step 3: t = RTO32(r), on the magnitude
    even = _1 - (ms & _1)
    away = up ^ sign                                        # |r| > |s|
    t = ms + (inx32 & even) * (away + away - _1)
    # step 4: round t at 23 - M bits, normal results only
    sh = 23 - M
    q = (t >> sh) - np.int32((127 - bias) << M)             # rebiased magnitude
    rem = t & np.int32((1 << sh) - 1)
    half = np.int32(1 << (sh - 1))
    nz = np.int32(rem != 0)
    inc = ((m_rne & (np.int32(rem > half) | (np.int32(rem == half) & q)))
           | (m_rna & np.int32(rem >= half))
           | (m_up & nz & (_1 - sign))
           | (m_dn & nz & sign))
    mag = (q + (inc & _1)) | (m_odd & nz)
    emask = np.int32((1 << E) - 1)
    slow |= np.int32(q < np.int32(1 << M)) | np.int32(mag >= (emask << M))
    return (sign << (E + M)) | (mag & np.int32((1 << (E + M)) - 1)), nz, slow


@njit(cache=True, inline="always", error_model="numpy")
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@njit(cache=True, inline="always", error_model="numpy")
def _bin_one(op, x, y, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd):
    a = _dec(x, E, M)
    b = _dec(y, E, M)
    slow = _special(x, E, M) | _special(y, E, M)
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            b = -b
        s, e = _two_sum(a, b)
        inx32 = np.int32(e != np.float32(0))
        up = np.int32(e > np.float32(0))
    elif op == OP_MUL:
        s = a * b
        inx32 = _0
        up = _0
    else:
        s = a / b
        rr = fma32(-s, b, a)
        inx32 = np.int32(rr != np.float32(0))
        up = inx32 & np.int32((rr > np.float32(0)) == (b > np.float32(0)))
        if E == 8:
            slow |= _below_2m100(x, E, M)
    v, inx, sl = _finish(s, inx32, up, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd)
    return v, inx, slow | sl


@njit(cache=True, inline="always", error_model="numpy")
def _bin_loop(op, a, b, out, scratch, n, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd):
    fa = _0
    for i in range(n):
        v, f, sl = _bin_one(op, a[i], b[i], E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd)
        out[i] = v
        scratch[i] = f | (sl << 7)
        fa |= (f & (_1 - sl)) | (sl << 8)
    return fa


@njit(cache=True, inline="always", error_model="numpy")
def _modes(mode):
    return (np.int32(mode == _RNE), np.int32(mode == _RNA), np.int32(mode == _RUP),
            np.int32(mode == _RDN), np.int32(mode == _RTO))


@njit(cache=True, inline="always", error_model="numpy")
def _binary(lo, hi, op, a, b, out, scratch, mode, E, M, bias):
    if (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0:
        return np.int64(-1)
    # slices: indices from 0, so LLVM drops numba's negative-index wraparound
    a = a[lo:hi]
    b = b[lo:hi]
    out = out[lo:hi]
    scratch = scratch[lo:hi]
    m_rne, m_rna, m_up, m_dn, m_odd = _modes(mode)
    return np.int64(_bin_loop(op, a, b, out, scratch, hi - lo, E, M, bias, m_rne, m_rna, m_up,
                              m_dn, m_odd))


# One small kernel per (format, op), so that a first call compiles one loop.
# Each: pass 1 over elements lo..hi of uint16 arrays; returns -1 when FTZ/DAZ is
# set in MXCSR (nothing done), else the OR of the fast elements' flags, | 256
# when some element is left to the slow pass (scratch[i] >= 128).
_NB = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_NB)
def add_fp16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_ADD, a, b, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def sub_fp16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_SUB, a, b, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def mul_fp16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_MUL, a, b, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def div_fp16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_DIV, a, b, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def add_bf16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_ADD, a, b, out, scratch, mode, 8, 7, 127)


@njit(**_NB)
def sub_bf16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_SUB, a, b, out, scratch, mode, 8, 7, 127)


@njit(**_NB)
def mul_bf16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_MUL, a, b, out, scratch, mode, 8, 7, 127)


@njit(**_NB)
def div_bf16_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary(lo, hi, OP_DIV, a, b, out, scratch, mode, 8, 7, 127)


@njit(cache=True, inline="always", error_model="numpy")
def _sqrt_fma(lo, hi, op, a, b, c, out, scratch, mode, E, M, bias):
    if (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0:
        return np.int64(-1)
    a = a[lo:hi]
    out = out[lo:hi]
    scratch = scratch[lo:hi]
    n = hi - lo
    m_rne, m_rna, m_up, m_dn, m_odd = _modes(mode)
    fa = _0
    if op == OP_SQRT:
        for i in range(n):
            x = a[i]
            av = _dec(x, E, M)
            s = np.sqrt(av)
            rr = fma32(-s, s, av)
            inx32 = np.int32(rr != np.float32(0))
            up = np.int32(rr > np.float32(0))
            slow = _special(x, E, M)
            if E == 8:
                slow |= _below_2m100(x, E, M)
            v, f, sl = _finish(s, inx32, up, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd)
            sl |= slow
            out[i] = v
            scratch[i] = f | (sl << 7)
            fa |= (f & (_1 - sl)) | (sl << 8)
    else:
        b = b[lo:hi]
        c = c[lo:hi]
        for i in range(n):
            x = a[i]
            y = b[i]
            z = c[i]
            av = _dec(x, E, M)
            bv = _dec(y, E, M)
            cv = _dec(z, E, M)
            p = av * bv
            # p is exact unless it left float32's normal range: an overflow is
            # caught below (s infinite); a nonzero product below 2^-126 is slow
            tinyp = (np.int32((f32_bits(p) & np.int32(0x7F800000)) == 0)
                     & np.int32(av != np.float32(0)) & np.int32(bv != np.float32(0)))
            slow = _special(x, E, M) | _special(y, E, M) | _special(z, E, M) | tinyp
            s, e = _two_sum(p, cv)
            inx32 = np.int32(e != np.float32(0))
            up = np.int32(e > np.float32(0))
            v, f, sl = _finish(s, inx32, up, E, M, bias, m_rne, m_rna, m_up, m_dn, m_odd)
            sl |= slow
            out[i] = v
            scratch[i] = f | (sl << 7)
            fa |= (f & (_1 - sl)) | (sl << 8)
    return np.int64(fa)


@njit(**_NB)
def sqrt_fp16_chunk(lo, hi, a, out, scratch, mode):
    """Pass 1 of sqrt for fp16 (as the binary kernels)."""
    return _sqrt_fma(lo, hi, OP_SQRT, a, a, a, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def sqrt_bf16_chunk(lo, hi, a, out, scratch, mode):
    return _sqrt_fma(lo, hi, OP_SQRT, a, a, a, out, scratch, mode, 8, 7, 127)


@njit(**_NB)
def fma_fp16_chunk(lo, hi, a, b, c, out, scratch, mode):
    """Pass 1 of fma(a, b, c) for fp16 (as the binary kernels)."""
    return _sqrt_fma(lo, hi, OP_FMA, a, b, c, out, scratch, mode, 5, 10, 15)


@njit(**_NB)
def fma_bf16_chunk(lo, hi, a, b, c, out, scratch, mode):
    return _sqrt_fma(lo, hi, OP_FMA, a, b, c, out, scratch, mode, 8, 7, 127)


# --------------------------------------------------------------------------
# Nearest-even: the hardware's rounding of the float32 result (module doc)
# --------------------------------------------------------------------------
@njit(cache=True, inline="always", error_model="numpy")
def _rn(s, E):
    """(encoding, its exact float32 value) of RN(s) in fp16 (E = 5) or bf16 (E =
    8), s a float32 that is not NaN (a NaN gives some NaN: such elements are slow)."""
    if E == 8:
        u = f32_bits(s)
        # nearest-even on the 16 dropped bits of the magnitude: + 0x7FFF, + the
        # lowest kept bit; a carry moves into the exponent (to infinity from the
        # largest finite value, the overflow result). The sign bit is never reached
        # for finite s (magnitude + 0x8000 < 2^31).
        h = ((u + np.int32(0x7FFF) + ((u >> 16) & _1)) >> 16) & np.int32(0xFFFF)
        return h, bits_f32(h << 16)
    h = f32_to_f16(s)
    return h, f16_to_f32(h)


@njit(cache=True, inline="always", error_model="numpy")
def _rn_keep(s, h, E, M, bias):
    """1 when the element must go to the general path: |s| <= the format's
    smallest normal (zero, subnormal or tiny results) or h's exponent field is all
    ones (overflow, or a special operand's NaN/infinity result)."""
    tiny = np.int32((128 - bias) << 23)          # float32 bits of 2^(1 - bias)
    emask = np.int32((1 << E) - 1)
    return (np.int32((f32_bits(s) & _MAG) <= tiny)
            | np.int32(((h >> M) & emask) == emask))


@njit(cache=True, inline="always", error_model="numpy")
def _binary_rne(lo, hi, op, a, b, out, scratch, E, M, bias):
    if (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0:
        return np.int64(-1)
    a = a[lo:hi]
    b = b[lo:hi]
    out = out[lo:hi]
    scratch = scratch[lo:hi]
    fa = _0
    for i in range(hi - lo):
        x = a[i]
        y = b[i]
        av = _dec(x, E, M)
        bv = _dec(y, E, M)
        slow = _special(x, E, M) | _special(y, E, M)
        if op == OP_ADD or op == OP_SUB:
            if op == OP_SUB:
                bv = -bv
            s, e = _two_sum(av, bv)
            inx32 = np.int32(e != np.float32(0))
        elif op == OP_MUL:
            s = av * bv                   # exact when s is a float32 normal (step 2)
            inx32 = _0
        else:
            s = av / bv
            inx32 = np.int32(fma32(-s, bv, av) != np.float32(0))
            if E == 8:
                slow |= _below_2m100(x, E, M)
        h, back = _rn(s, E)
        inx = inx32 | np.int32(back != s)
        slow |= _rn_keep(s, h, E, M, bias)
        out[i] = h
        scratch[i] = inx | (slow << 7)
        fa |= (inx & (_1 - slow)) | (slow << 8)
    return np.int64(fa)


@njit(cache=True, inline="always", error_model="numpy")
def _sqrt_rne(lo, hi, a, out, scratch, E, M, bias):
    if (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0:
        return np.int64(-1)
    a = a[lo:hi]
    out = out[lo:hi]
    scratch = scratch[lo:hi]
    fa = _0
    for i in range(hi - lo):
        x = a[i]
        av = _dec(x, E, M)
        s = np.sqrt(av)                   # negative av: NaN, slow by its exponent
        inx = np.int32(fma32(-s, s, av) != np.float32(0))
        slow = _special(x, E, M)
        if E == 8:
            slow |= _below_2m100(x, E, M)
        h, back = _rn(s, E)
        inx |= np.int32(back != s)
        slow |= _rn_keep(s, h, E, M, bias)
        out[i] = h
        scratch[i] = inx | (slow << 7)
        fa |= (inx & (_1 - slow)) | (slow << 8)
    return np.int64(fa)


# Same signatures as the all-modes kernels (``mode`` is ignored: always nearest-even).
@njit(**_NB)
def add_fp16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_ADD, a, b, out, scratch, 5, 10, 15)


@njit(**_NB)
def sub_fp16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_SUB, a, b, out, scratch, 5, 10, 15)


@njit(**_NB)
def mul_fp16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_MUL, a, b, out, scratch, 5, 10, 15)


@njit(**_NB)
def div_fp16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_DIV, a, b, out, scratch, 5, 10, 15)


@njit(**_NB)
def sqrt_fp16_rne_chunk(lo, hi, a, out, scratch, mode):
    return _sqrt_rne(lo, hi, a, out, scratch, 5, 10, 15)


@njit(**_NB)
def add_bf16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_ADD, a, b, out, scratch, 8, 7, 127)


@njit(**_NB)
def sub_bf16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_SUB, a, b, out, scratch, 8, 7, 127)


@njit(**_NB)
def mul_bf16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_MUL, a, b, out, scratch, 8, 7, 127)


@njit(**_NB)
def div_bf16_rne_chunk(lo, hi, a, b, out, scratch, mode):
    return _binary_rne(lo, hi, OP_DIV, a, b, out, scratch, 8, 7, 127)


@njit(**_NB)
def sqrt_bf16_rne_chunk(lo, hi, a, out, scratch, mode):
    return _sqrt_rne(lo, hi, a, out, scratch, 8, 7, 127)


class ByMode:
    """A pass-1 chunk kernel ``(lo, hi, *arrays, mode)`` that runs ``rne`` for
    nearest-even and ``other`` (all modes) otherwise, so that each compiles only
    when its mode is used. ``rne`` None: ``other`` for every mode."""
    __slots__ = ("rne", "other")

    def __init__(self, rne, other):
        self.rne = rne
        self.other = other

    def __call__(self, lo, hi, *args):
        k = self.rne if (self.rne is not None and args[-1] == _RNE) else self.other
        return k(lo, hi, *args)


FP16 = (5, 10, 15, 0)
BF16 = (8, 7, 127, 0)
KERNELS = {
    (FP16, OP_ADD): ByMode(add_fp16_rne_chunk, add_fp16_chunk),
    (FP16, OP_SUB): ByMode(sub_fp16_rne_chunk, sub_fp16_chunk),
    (FP16, OP_MUL): ByMode(mul_fp16_rne_chunk, mul_fp16_chunk),
    (FP16, OP_DIV): ByMode(div_fp16_rne_chunk, div_fp16_chunk),
    (FP16, OP_SQRT): ByMode(sqrt_fp16_rne_chunk, sqrt_fp16_chunk),
    (FP16, OP_FMA): ByMode(None, fma_fp16_chunk),   # fma's sum is no +-*/sqrt: not innocuous
    (BF16, OP_ADD): ByMode(add_bf16_rne_chunk, add_bf16_chunk),
    (BF16, OP_SUB): ByMode(sub_bf16_rne_chunk, sub_bf16_chunk),
    (BF16, OP_MUL): ByMode(mul_bf16_rne_chunk, mul_bf16_chunk),
    (BF16, OP_DIV): ByMode(div_bf16_rne_chunk, div_bf16_chunk),
    (BF16, OP_SQRT): ByMode(sqrt_bf16_rne_chunk, sqrt_bf16_chunk),
    (BF16, OP_FMA): ByMode(None, fma_bf16_chunk),
}
"""(format params, op) -> pass-1 chunk kernel (`ByMode`)."""
