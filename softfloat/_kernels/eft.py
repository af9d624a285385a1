"""fp16 and bf16 add, sub, mul, div, sqrt and fma at hardware pace, in every
deterministic rounding mode, with flags: float32 arithmetic plus error-free
transformations (EFT), then one rounding into the format.

Pass 1 (the kernels here, branch-free so that LLVM vectorizes them) takes every
element whose operands are finite (and, for bf16 div/sqrt, whose dividend or
radicand is at least 2^-100) and whose result is a normal number of the format
or an exact zero; it writes the result and ``scratch[i] = inexact``. Every other
element gets ``scratch[i] = 128``, its index goes to the chunk's list (below),
and the caller recomputes it with the general kernel (`arith.binary_array`,
...): subnormal and tiny results, overflow, infinities and NaNs (so the NaN
rules, flushing, tininess and overflow policies have one owner). For the
elements pass 1 keeps, no flag but inexact can arise.

Special operands need no test of their own (except a divisor: x / inf = 0): an
infinite or NaN operand makes the float32 result s infinite or NaN, which the
range tests send to the general path. Exact zeros stay: r = 0 exactly when s = 0
for sums (TwoSum: s = 0 gives e = 0) and sqrt, and for products and quotients
when an operand (the dividend) is zero (otherwise s = 0 is an underflow: slow).
Their sign is s's, the float32 operation's in nearest-even, which is IEEE 754's
in every mode except x + (-x) downward (-0; 6.3): there the kernels set the sign
from the addends' (-0 unless both are +0).

Slow elements are listed inside the kernel: each block of 512 elements that
has one is scanned again and the indices go to the chunk's own short list
``idx`` (the count is returned; past the list's length the caller scans that
chunk's scratch itself), so the caller never scans the whole scratch array and
allocates no index array as long as the input.

Integer work runs on int32 (`hw.add32` ...: numba types int32 + int32 as int64,
which would halve the vector lanes); conditions stay booleans (vector masks).

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
3. From (s, side) the RTO32 value t = RTO32(r) is formed on the encoding:
   RTO32(r) = RTZ32(r) | inexact, and RTZ32(r) is s when |r| >= |s|, else the
   encoding one below s's magnitude (consecutive encodings are consecutive
   values, across binade boundaries too; the borrow does it).
4. Rounding t into the format (p = 11 or 8 bits) in any mode gives the correct
   rounding of r: round to odd with p + 2 <= 24 bits followed by any rounding
   to p bits is innocuous (Boldo & Melquiond, IEEE TC 2008). Here the result is
   a normal number of the format, so the rounding point is at a fixed position
   of t's significand (sh = 23 - M bits dropped) and the rounding is integer
   arithmetic on t's bits: add the mode's increment (nearest-even 2^(sh-1) - 1
   + the lowest kept bit; nearest-away 2^(sh-1); away from zero, i.e. upward
   for a positive and downward for a negative t, 2^sh - 1; toward zero and odd
   0), then clear the sh dropped bits (odd then sets the lowest kept bit when a
   dropped bit was set). A carry moves into the exponent by itself; the value
   is then an fp16 number (converted exactly by F16C) or the bf16 encoding's
   upper half. inexact iff a dropped bit of t is set (t is odd whenever r is
   not a float32, so an inexact r never looks exact). Results beyond the
   format's largest finite value (and s infinite or NaN) are slow.

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
operand is special (s is then infinite or NaN, or a divisor is infinite), when
0 < |s| <= the format's smallest normal (a
result that is zero, subnormal, or tiny before rounding even if it rounds up
to the smallest normal: tininess and underflow belong to the general path; s
at exactly the smallest normal may stand for an r just below it; exact zeros
stay, as above), or when the result is infinite (overflow) or NaN. fp16 needs
nothing else: every s is a float32 normal or zero (|r| >= 2^-48 for products, >= 2^-40 for
quotients). bf16 keeps the dividend/radicand rule of step 2 and, for products
below 2^-126 (float32 subnormal, possibly inexact), the |s| test makes them
slow.
"""
import numpy as np
from numba import njit

from .hw import (MXCSR_DAZ, MXCSR_FTZ, add32, and32, bits_f32, f16_to_f32, f32_bits,
                 f32_to_f16, fma32, mxcsr, or32, shl32, shr32, sub32)

OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA = 0, 1, 2, 3, 10, 11
_RNE, _RNA, _RTZ, _RUP, _RDN, _RTO = 0, 1, 2, 3, 4, 5
_1 = np.int32(1)
_0 = np.int32(0)


@njit(cache=True, error_model="numpy")
def _dec(x, E, M):
    """float32 value of an fp16 (E = 5) or bf16 (E = 8) encoding, exact."""
    if E == 8:
        return bits_f32(shl32(x, 16))
    return f16_to_f32(x)


_FLT_MAX = np.float32(3.4028234663852886e38)
_2M100 = np.float32(2.0 ** -100)
_FLT_MIN = np.float32(2.0 ** -126)


@njit(cache=True, error_model="numpy")
def _special(a):
    """True when the decoded operand is an infinity or a NaN (a float comparison:
    no integer work on the encoding; NaN fails <=)."""
    return not (np.abs(a) <= _FLT_MAX)


@njit(cache=True, error_model="numpy")
def _two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@njit(cache=True, error_model="numpy")
def _rn(s, E):
    """(encoding, its exact float32 value) of RN(s) in fp16 (E = 5) or bf16 (E =
    8), s a float32 that is not NaN (a NaN gives some NaN: such elements are slow)."""
    if E == 8:
        u = f32_bits(s)
        # nearest-even on the 16 dropped bits of the magnitude: + 0x7FFF, + the
        # lowest kept bit; a carry moves into the exponent (to infinity from the
        # largest finite value, the overflow result). The sign bit is never reached
        # for finite s (magnitude + 0x8000 < 2^31).
        h = and32(shr32(add32(add32(u, np.int32(0x7FFF)), and32(shr32(u, 16), _1)), 16),
                  np.int32(0xFFFF))
        return h, bits_f32(shl32(h, 16))
    h = f32_to_f16(s)
    return h, f16_to_f32(h)


@njit(cache=True, error_model="numpy")
def _exact(op, x, y, z, E, M):
    """(s, inx, up, slow, zok, zneg) of one element, all but s booleans: s =
    RN_24(r) the float32 result, inx = r != s, up = r > s, slow = an operand or
    the float32 computation leaves the cases of step 2 (module doc), zok = s = 0
    may stay in the fast path: r = 0 exactly (a product or quotient that
    underflowed is no exact zero) and, in every mode but downward, its sign is
    s's; zneg = a sum's exact zero is -0 downward (IEEE 754 6.3: x + (-x) is +0
    in the other modes, -0 downward; a sum of two zeros keeps their common
    sign: -0 downward unless both are +0)."""
    a = _dec(x, E, M)
    if op == OP_SQRT:
        s = np.sqrt(a)                    # negative a: NaN, slow by its exponent
        rr = fma32(-s, s, a)
        slow = False
        if E == 8:
            slow = np.abs(a) < _2M100
        return s, rr != np.float32(0), rr > np.float32(0), slow, True, s < np.float32(0)
    b = _dec(y, E, M)
    # An infinite or NaN operand makes s infinite or NaN (slow by s's range in the
    # callers), except a divisor: x / inf = 0
    slow = False
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            b = -b
        s, e = _two_sum(a, b)
        inx = e != np.float32(0)
        up = e > np.float32(0)
        zok = True                        # a + b = s + e: s = 0 gives e = 0
        zneg = or32(f32_bits(a), f32_bits(b)) < _0
    elif op == OP_MUL:
        s = a * b                         # exact when s is a float32 normal (step 2)
        inx = False
        up = False
        zok = (a == np.float32(0)) | (b == np.float32(0))
        zneg = s < np.float32(0)
    elif op == OP_DIV:
        s = a / b
        rr = fma32(-s, b, a)
        inx = rr != np.float32(0)
        up = inx & ((rr > np.float32(0)) == (b > np.float32(0)))
        slow = _special(b)
        if E == 8:
            slow |= np.abs(a) < _2M100
        zok = a == np.float32(0)
        zneg = s < np.float32(0)
    else:
        c = _dec(z, E, M)
        p = a * b
        # p is exact unless it left float32's normal range: an overflow is caught
        # by s; a nonzero product below 2^-126 (bf16 only: fp16 products are >=
        # 2^-48) is slow, since fma(a, b, -p) could not tell (it rounds too)
        if E == 8:
            slow = (np.abs(p) < _FLT_MIN) & (a != np.float32(0)) & (b != np.float32(0))
        s, e = _two_sum(p, c)
        inx = e != np.float32(0)
        up = e > np.float32(0)
        zok = True
        zneg = or32(f32_bits(p), f32_bits(c)) < _0
    return s, inx, up, slow, zok, zneg


@njit(cache=True, error_model="numpy")
def _keep_range(s, zok, bias):
    """True when |s| is above the format's smallest normal (and finite: NaN and
    infinity fail), or s is an exact zero that may stay (zok). Otherwise the
    result is zero, subnormal or tiny (tininess and underflow belong to the
    general path; s at exactly the smallest normal may stand for an r just below
    it), or s overflowed."""
    tiny = bits_f32(np.int32((128 - bias) << 23))     # 2^(1 - bias)
    sa = np.abs(s)
    return ((sa > tiny) & (sa <= _FLT_MAX)) | ((sa == np.float32(0)) & zok)


@njit(cache=True, error_model="numpy")
def _elem_rne(op, x, y, z, E, M, bias):
    """(encoding, inexact, slow): nearest-even by the hardware's rounding of s
    (module doc: innocuous double rounding; not for fma). slow also when RN(s)
    overflows (back infinite)."""
    s, inx, up, slow, zok, zneg = _exact(op, x, y, z, E, M)
    h, back = _rn(s, E)
    # back finite implies s finite
    tiny = bits_f32(np.int32((128 - bias) << 23))     # 2^(1 - bias)
    sa = np.abs(s)
    keep = ((sa > tiny) | ((sa == np.float32(0)) & zok)) & (np.abs(back) <= _FLT_MAX)
    return h, inx | (back != s), slow | (not keep)


@njit(cache=True, error_model="numpy")
def _elem_any(op, x, y, z, E, M, bias, inc_pos, inc_neg, rne_bit, odd_or, rd_sign):
    """(encoding, inexact, slow) in any deterministic mode: steps 3 and 4 of the
    module doc on t's float32 bits, with the mode's increments from `_run`. An
    exact zero (kept) is t = s = +-0, which every increment leaves as it is; its
    sign downward (rd_sign: the format's sign bit, else 0) is zneg's
    (`_exact`).

    Integer work is on int32 bits (`hw.add32` ...: numba's int32 arithmetic would
    run in 64-bit lanes); conditions stay booleans, so that LLVM makes them
    vector masks and selects."""
    s, inx32, up, slow, zok, zneg = _exact(op, x, y, z, E, M)
    u = f32_bits(s)
    neg = s < np.float32(0)
    # step 3: t = RTO32(r) = RTZ32(r) | inexact on the encoding: RTZ32(r) is s
    # when |r| >= |s|, else s's encoding - 1 (magnitude one step down; a borrow
    # crosses binades by itself). |r| < |s| when inexact and (r > s) == (s < 0).
    tb = sub32(u, _1) if (inx32 & (up == neg)) else u
    tb = or32(tb, _1) if inx32 else tb
    # step 4: round t at sh = 23 - M bits by adding the mode's increment and
    # truncating; a carry moves into the exponent by itself, never into the sign
    # (t finite and below 2^128). The increment (`_run`): nearest-even half - 1 +
    # the lowest kept bit (an exact half rounds to even); nearest-away half; away
    # from zero (upward for +, downward for -) 2^sh - 1; else 0. odd then sets
    # the lowest kept bit when a dropped bit is set.
    sh = 23 - M
    low = np.int32((1 << sh) - 1)
    inc = inc_neg if neg else inc_pos
    if op == OP_FMA:
        # nearest-even reaches this kernel only for fma (`KERNELS`)
        inc = add32(inc, and32(shr32(tb, sh), rne_bit))
    inx = and32(tb, low) != _0
    rb = and32(add32(tb, inc), ~low)
    rb = or32(rb, odd_or) if inx else rb
    rf = bits_f32(rb)
    if E == 8:
        h = shr32(rb, 16)                   # the store keeps the low 16 bits
    else:
        h = f32_to_f16(rf)                  # exact: rf is an fp16 normal, +-0 (or slow)
    h = or32(h, rd_sign) if ((s == np.float32(0)) & zneg) else h
    # also slow: a result beyond the largest finite value (overflow)
    big = bits_f32(np.int32(((bias + 127) << 23) | (((1 << M) - 1) << sh)))
    keep = _keep_range(s, zok, bias) & (np.abs(rf) <= big)
    return h, inx, slow | (not keep)


_BLK = 512


@njit(cache=True, inline="always", error_model="numpy")
def _run(lo, hi, op, kind, a, b, c, out, scratch, idx, mode, E, M, bias):
    """Pass 1 over elements lo..hi by `_elem_rne` (kind 0) or `_elem_any` (kind
    1); each block of _BLK elements with a slow one is scanned again and its slow
    elements' indices are written to idx (this chunk's own list, the first
    idx.size of them; the count returned may be larger: the caller then scans
    scratch[lo:hi] itself)."""
    if (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0:
        return np.int64(-1)
    cap = idx.size
    # the mode's increments before truncation at 23 - M bits (see `_elem_any`)
    half = np.int32(1 << (22 - M))
    low = half + half - _1
    inc_pos = _0
    inc_neg = _0
    if mode == _RNE:
        inc_pos = half - _1
        inc_neg = half - _1
    elif mode == _RNA:
        inc_pos = half
        inc_neg = half
    elif mode == _RUP:
        inc_pos = low
    elif mode == _RDN:
        inc_neg = low
    rne_bit = np.int32(1 if mode == _RNE else 0)
    odd_or = np.int32(1 << (23 - M)) if mode == _RTO else _0
    rd_sign = np.int32(1 << (E + M)) if mode == _RDN else _0
    anyinx = False
    cnt = np.int64(0)
    for b0 in range(lo, hi, _BLK):
        b1 = min(hi, b0 + _BLK)
        # slices: indices from 0, so LLVM drops numba's negative-index wraparound
        ab = a[b0:b1]
        bb = b[b0:b1]
        cb = c[b0:b1]
        ob = out[b0:b1]
        sb = scratch[b0:b1]
        anyslow = False
        for i in range(b1 - b0):
            if kind == 0:
                v, inx, slow = _elem_rne(op, ab[i], bb[i], cb[i], E, M, bias)
            else:
                v, inx, slow = _elem_any(op, ab[i], bb[i], cb[i], E, M, bias, inc_pos, inc_neg,
                                         rne_bit, odd_or, rd_sign)
            ob[i] = v
            sb[i] = (np.uint8(128) if slow else np.uint8(0)) | (np.uint8(1) if inx else np.uint8(0))
            anyinx |= inx & (not slow)
            anyslow |= slow
        if anyslow:
            for i in range(b1 - b0):
                if sb[i] >= 128:
                    if cnt < cap:
                        idx[cnt] = b0 + i
                    cnt += 1
    return np.int64(1 if anyinx else 0) | (cnt << 9)


# One small kernel per (format, op, nearest-even `_rne` or any mode), so that a
# first call compiles one loop. Each: pass 1 over elements lo..hi of uint16 arrays;
# returns -1 when FTZ/DAZ is set in MXCSR (nothing done), else the OR of the fast
# elements' flags | (the number of elements left to the slow pass << 9), the
# first idx.size of their indices in idx (scratch[i] >= 128 marks them all).
# sqrt passes a for b and c, the binary ops a for c (not read).
_NB = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_NB)
def add_fp16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_ADD, 0, a, b, a, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def add_fp16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_ADD, 1, a, b, a, out, scratch, idx, mode, 5, 10, 15)



@njit(**_NB)
def sub_fp16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_SUB, 0, a, b, a, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def sub_fp16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_SUB, 1, a, b, a, out, scratch, idx, mode, 5, 10, 15)



@njit(**_NB)
def mul_fp16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_MUL, 0, a, b, a, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def mul_fp16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_MUL, 1, a, b, a, out, scratch, idx, mode, 5, 10, 15)



@njit(**_NB)
def div_fp16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_DIV, 0, a, b, a, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def div_fp16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_DIV, 1, a, b, a, out, scratch, idx, mode, 5, 10, 15)



@njit(**_NB)
def sqrt_fp16_rne_chunk(lo, hi, a, out, scratch, idx, mode):
    return _run(lo, hi, OP_SQRT, 0, a, a, a, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def sqrt_fp16_chunk(lo, hi, a, out, scratch, idx, mode):
    return _run(lo, hi, OP_SQRT, 1, a, a, a, out, scratch, idx, mode, 5, 10, 15)



@njit(**_NB)
def fma_fp16_chunk(lo, hi, a, b, c, out, scratch, idx, mode):
    """fma in every mode (nearest-even too: its sum is no +-*/sqrt result, so
    RN(s) is not RN(r) near midpoints: `_elem_any` rounds RTO32(r))."""
    return _run(lo, hi, OP_FMA, 1, a, b, c, out, scratch, idx, mode, 5, 10, 15)


@njit(**_NB)
def add_bf16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_ADD, 0, a, b, a, out, scratch, idx, mode, 8, 7, 127)


@njit(**_NB)
def add_bf16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_ADD, 1, a, b, a, out, scratch, idx, mode, 8, 7, 127)



@njit(**_NB)
def sub_bf16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_SUB, 0, a, b, a, out, scratch, idx, mode, 8, 7, 127)


@njit(**_NB)
def sub_bf16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_SUB, 1, a, b, a, out, scratch, idx, mode, 8, 7, 127)



@njit(**_NB)
def mul_bf16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_MUL, 0, a, b, a, out, scratch, idx, mode, 8, 7, 127)


@njit(**_NB)
def mul_bf16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_MUL, 1, a, b, a, out, scratch, idx, mode, 8, 7, 127)



@njit(**_NB)
def div_bf16_rne_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_DIV, 0, a, b, a, out, scratch, idx, mode, 8, 7, 127)


@njit(**_NB)
def div_bf16_chunk(lo, hi, a, b, out, scratch, idx, mode):
    return _run(lo, hi, OP_DIV, 1, a, b, a, out, scratch, idx, mode, 8, 7, 127)



@njit(**_NB)
def sqrt_bf16_rne_chunk(lo, hi, a, out, scratch, idx, mode):
    return _run(lo, hi, OP_SQRT, 0, a, a, a, out, scratch, idx, mode, 8, 7, 127)


@njit(**_NB)
def sqrt_bf16_chunk(lo, hi, a, out, scratch, idx, mode):
    return _run(lo, hi, OP_SQRT, 1, a, a, a, out, scratch, idx, mode, 8, 7, 127)



@njit(**_NB)
def fma_bf16_chunk(lo, hi, a, b, c, out, scratch, idx, mode):
    """fma in every mode (nearest-even too: its sum is no +-*/sqrt result, so
    RN(s) is not RN(r) near midpoints: `_elem_any` rounds RTO32(r))."""
    return _run(lo, hi, OP_FMA, 1, a, b, c, out, scratch, idx, mode, 8, 7, 127)


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
_G = globals()
KERNELS = {(P, code): ByMode(_G[f"{op}_{name}_rne_chunk"], _G[f"{op}_{name}_chunk"])
           for P, name in ((FP16, "fp16"), (BF16, "bf16"))
           for op, code in (("add", OP_ADD), ("sub", OP_SUB), ("mul", OP_MUL), ("div", OP_DIV),
                            ("sqrt", OP_SQRT))}
# fma: one all-modes kernel (its sum is no +-*/sqrt result: RN(s) may miss)
KERNELS[FP16, OP_FMA] = ByMode(None, fma_fp16_chunk)
KERNELS[BF16, OP_FMA] = ByMode(None, fma_bf16_chunk)
"""(format params, op) -> pass-1 chunk kernel (`ByMode`)."""
