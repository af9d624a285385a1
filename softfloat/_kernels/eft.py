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
in every mode except x + (-x) downward (-0; 6.3): step 5 computes downward
sums as -RU(-r), which gives that sign.

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
Which kernel rounds (each (op, format, mode) has its own, `kernel`): + - * /
and sqrt in nearest-even by step A, fma in nearest-even and nearest-away by
steps 3-4, every other (op, mode) by step 5.

3. (fma, nearest modes.) From (s, side) the RTO32 value t = RTO32(r) is formed
   on the encoding: RTO32(r) = RTZ32(r) | inexact, and RTZ32(r) is s when |r|
   >= |s|, else the encoding one below s's magnitude (consecutive encodings are
   consecutive values, across binade boundaries too; the borrow does it), i.e.
   when r - s and s have opposite signs.
4. Rounding t into the format (p = 11 or 8 bits) to nearest gives the correct
   rounding of r: round to odd with p + 2 <= 24 bits followed by any rounding
   to p bits is innocuous (Boldo & Melquiond, IEEE TC 2008). Here the result is
   a normal number of the format, so the rounding point is at a fixed position
   of t's significand (sh = 23 - M bits dropped) and the rounding is integer
   arithmetic on t's bits: add half an ulp (nearest-away) or half an ulp - 1 +
   the lowest kept bit (nearest-even), then clear the sh dropped bits. A carry
   moves into the exponent by itself; the value is then an fp16 number
   (converted exactly by F16C) or the bf16 encoding's upper half. inexact iff a
   dropped bit of t is set (t is odd whenever r is not a float32, so an inexact
   r never looks exact).
5. (Every other op and mode.) With u = s's float32 bits and sh as in step 4:
   * r is a format number iff r = s and u has no dropped bit set: that is the
     inexact flag.
   * Toward zero, upward, downward, odd: directed roundings compose,
     RZ_p(RZ_24(r)) = RZ_p(r), and RZ_24(r) is u, or u - 1 when r - s and s
     have opposite signs (step 3). Clearing its sh dropped bits gives RZ_p(r)
     (r normal). Upward is RZ_p(r) plus one ulp (+ 2^sh on the bits; a carry
     moves into the exponent) when r is positive and inexact, downward the same
     when r is negative, odd sets the lowest kept bit when inexact. A downward
     sum or fma is computed as -RU(-r) on negated operands: float32's
     nearest-even zero sum of the negated addends (+0 unless both are -0),
     negated, is the downward zero sum IEEE 754 6.3 asks for (-0 unless both
     addends are +0).
   * Nearest-away (+ - * / sqrt): RN_24(r) is a midpoint m of the format only
     when r = m, so rounding s half away from zero, (u + 2^(sh-1)) with the
     dropped bits cleared, rounds r. Proof: m has p + 1 bits and is no power of
     two, so RN_24(r) = m needs 0 < |r - m| <= 2^(e_m - 24). Products are exact
     in float32 (s = r). A sum r that is no float32 has addends 25 or more bits
     apart, so r lies within 2^(e_a - 13) of the larger addend a, while every
     midpoint is at least 2^(e_a - 12) from a. For a quotient, a - m b is a
     nonzero multiple of ulp(m) ulp(b) and |b| < 2^(p) ulp(b), so |r - m| >=
     2^(e_m - 2p) > 2^(e_m - 24); for a square root, a - m^2 is a nonzero
     multiple of ulp(m)^2 and r + m < 2^(e_m + 2), so |r - m| > 2^(e_m - 2p -
     2) >= 2^(e_m - 24) for p <= 11. (Figueroa 1995 makes the same argument
     for nearest-even double rounding; the exhaustive sweeps check it.)
   * Kept (`_keep`): 2^(1 - bias) < |s| < the largest finite value, or an exact
     zero. Then r lies strictly between them too (|r - s| <= half an ulp of s,
     and both bounds are float32 numbers): the result is normal and no mode
     overflows.

A. Nearest-even + - * / sqrt (``_elem_rne``): the float32 result s is rounded
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
import threading

import numpy as np
from numba import njit

from .hw import (add32, and32, bits_f32, f16_to_f32, f32_bits, f32_to_f16, flushes, fma32,
                 or32, shl32, shr32, xor32)

from .codes import RDN as _RDN, RNA as _RNA, RNE as _RNE, RTO as _RTO, RUP as _RUP

OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA = 0, 1, 2, 3, 10, 11
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
def _exact(op, x, y, z, E, M, flip):
    """(s, inx, sb, slow, zok) of one element: s = RN_24(r) the float32
    result, inx = r != s, sb an int32 whose sign bit is the sign of r
    - s when inx (otherwise anything), slow = an operand or the float32
    computation leaves the cases of step 2 (module doc), zok = s = 0 may stay in
    the fast path: r = 0 exactly (a product or quotient that underflowed is no
    exact zero), with s's sign (IEEE 754 6.3 outside downward). flip (a
    constant; add, sub and fma only) computes -r instead: -a - b, (-a) b - c."""
    a = _dec(x, E, M)
    if op == OP_SQRT:
        s = np.sqrt(a)                    # negative a: NaN, slow by its exponent
        rr = fma32(-s, s, a)
        slow = False
        if E == 8:
            slow = np.abs(a) < _2M100
        return s, rr != np.float32(0), f32_bits(rr), slow, True
    b = _dec(y, E, M)
    # An infinite or NaN operand makes s infinite or NaN (slow by s's range in the
    # callers), except a divisor: x / inf = 0
    slow = False
    if op == OP_ADD or op == OP_SUB:
        if op == OP_SUB:
            b = -b
        if flip:
            a = -a
            b = -b
        s, e = _two_sum(a, b)
        inx = e != np.float32(0)
        sb = f32_bits(e)
        zok = True                        # a + b = s + e: s = 0 gives e = 0
    elif op == OP_MUL:
        s = a * b                         # exact when s is a float32 normal (step 2)
        inx = False
        sb = _0
        zok = (a == np.float32(0)) | (b == np.float32(0))
    elif op == OP_DIV:
        s = a / b
        rr = fma32(-s, b, a)
        inx = rr != np.float32(0)
        sb = xor32(f32_bits(rr), f32_bits(b))   # r - q = rr / b
        slow = _special(b)
        if E == 8:
            slow |= np.abs(a) < _2M100
        zok = a == np.float32(0)
    else:
        c = _dec(z, E, M)
        if flip:
            a = -a
            c = -c
        p = a * b
        # p is exact unless it left float32's normal range: an overflow is caught
        # by s; a nonzero product below 2^-126 (bf16 only: fp16 products are >=
        # 2^-48) is slow, since fma(a, b, -p) could not tell (it rounds too)
        if E == 8:
            slow = (np.abs(p) < _FLT_MIN) & (a != np.float32(0)) & (b != np.float32(0))
        s, e = _two_sum(p, c)
        inx = e != np.float32(0)
        sb = f32_bits(e)
        zok = True
    return s, inx, sb, slow, zok


@njit(cache=True, error_model="numpy")
def _keep(s, zok, bias, M):
    """True when tiny < |s| < the format's largest finite value (tiny = its
    smallest normal), or s is an exact zero that may stay (zok). Then tiny < |r|
    < largest (|r - s| <= half an ulp of float32 at s, and both bounds are
    float32 numbers): the result is normal and no mode overflows. Otherwise the
    result may be zero, subnormal or tiny (tininess and underflow belong to the
    general path), may overflow, or s is infinite or NaN."""
    tiny = bits_f32(np.int32((128 - bias) << 23))     # 2^(1 - bias)
    big = bits_f32(np.int32(((bias + 127) << 23) | (((1 << M) - 1) << (23 - M))))
    sa = np.abs(s)
    return ((sa > tiny) & (sa < big)) | ((sa == np.float32(0)) & zok)


@njit(cache=True, error_model="numpy")
def _elem_rne(op, x, y, z, E, M, bias):
    """(encoding, inexact, slow): nearest-even by the hardware's rounding of s
    (module doc: innocuous double rounding; not for fma). slow also when RN(s)
    overflows (back infinite)."""
    s, inx, sb, slow, zok = _exact(op, x, y, z, E, M, False)
    h, back = _rn(s, E)
    # back finite implies s finite
    tiny = bits_f32(np.int32((128 - bias) << 23))     # 2^(1 - bias)
    sa = np.abs(s)
    keep = ((sa > tiny) | ((sa == np.float32(0)) & zok)) & (np.abs(back) <= _FLT_MAX)
    return h, inx | (back != s), slow | (not keep)


@njit(cache=True, error_model="numpy")
def _elem_fma_near(op, x, y, z, E, M, bias, mode):
    """(encoding, inexact, slow) of fma in nearest-even or nearest-away (a
    constant): steps 3 and 4 of the module doc on t = RTO_24(r)'s float32 bits.
    An exact zero (kept) is t = s = +-0, which the increment leaves as it is.

    Integer work is on int32 bits (`hw.add32` ...: numba's int32 arithmetic would
    run in 64-bit lanes); conditions stay booleans, so that LLVM makes them
    vector masks and selects."""
    s, inx32, sb, slow, zok = _exact(op, x, y, z, E, M, False)
    u = f32_bits(s)
    # step 3: t = RTO_24(r) = RZ_24(r) | inexact on the encoding: RZ_24(r) is s
    # when |r| >= |s|, else s's encoding - 1 (magnitude one step down; a borrow
    # crosses binades by itself), i.e. when r - s and s have opposite signs
    tb = add32(u, shr32(xor32(sb, u), 31)) if inx32 else u
    tb = or32(tb, _1) if inx32 else tb
    # step 4: round t at sh = 23 - M bits by adding half an ulp (nearest-away) or
    # half an ulp - 1 + the lowest kept bit (nearest-even: an exact half rounds
    # to even) and truncating; a carry moves into the exponent by itself, never
    # into the sign (t finite and below 2^128)
    sh = 23 - M
    low = np.int32((1 << sh) - 1)
    inc = np.int32(1 << (sh - 1))
    if mode == _RNE:
        inc = add32(inc - _1, and32(shr32(tb, sh), _1))
    inx = and32(tb, low) != _0
    rb = and32(add32(tb, inc), ~low)
    if E == 8:
        h = shr32(rb, 16)                   # the store keeps the low 16 bits
    else:
        h = f32_to_f16(bits_f32(rb))        # exact: an fp16 normal or +-0 (or slow)
    return h, inx, slow | (not _keep(s, zok, bias, M))


@njit(cache=True, error_model="numpy")
def _elem_dir(op, x, y, z, E, M, bias, mode):
    """(encoding, inexact, slow) in a mode other than nearest-even (nearest-away
    only for + - * / sqrt), mode a constant: step 5 of the module doc on s's
    float32 bits u, with the rounding point at sh = 23 - M bits."""
    # downward sums: RD(r) = -RU(-r), which also gives an exact zero sum its
    # downward sign (-0 unless both addends are +0) from float32's nearest-even
    # one (+0 unless both are -0) of the negated addends
    flip = mode == _RDN and (op == OP_ADD or op == OP_SUB or op == OP_FMA)
    s, inx32, sb, slow, zok = _exact(op, x, y, z, E, M, flip)
    u = f32_bits(s)
    sh = 23 - M
    low = np.int32((1 << sh) - 1)
    lsb = np.int32(1 << sh)
    # r is a format number iff r = s and s has no bit below the format's
    inx = inx32 | (and32(u, low) != _0)
    if mode == _RNA:
        # RN_24(r) is a midpoint of the format only when r is (module doc)
        rb = and32(add32(u, np.int32(1 << (sh - 1))), ~low)
    else:
        # RZ_24(r): u, or u - 1 (magnitude one step down) when r - s and s have
        # opposite signs; then truncated: RZ_p(r). Upward adds an ulp to an
        # inexact positive result, downward to an inexact negative one.
        # sqrt: a kept result is +0, -0 or positive, so r - s has the sign of the
        # remainder, upward is RU_24(r) = u + (r > s) rounded up and downward
        # never adds an ulp
        if op == OP_SQRT and mode == _RUP:
            rz = add32(u, low + _1) if (inx32 & (sb >= _0)) else add32(u, low)
        elif op == OP_SQRT:
            rz = add32(u, shr32(sb, 31)) if inx32 else u
        else:
            rz = add32(u, shr32(xor32(sb, u), 31)) if inx32 else u
        rb = and32(rz, ~low)
        if mode == _RTO:
            rb = or32(rb, lsb) if inx else rb
        elif op == OP_SQRT:
            pass                            # upward: above; downward: toward zero
        elif mode == _RUP or flip:
            rb = add32(rb, lsb) if (inx & (u >= _0)) else rb
        elif mode == _RDN:
            rb = add32(rb, lsb) if (inx & (u < _0)) else rb
    if flip:
        rb = xor32(rb, np.int32(-2147483648))
    if E == 8:
        h = shr32(rb, 16)                   # the store keeps the low 16 bits
    else:
        h = f32_to_f16(bits_f32(rb))        # exact: an fp16 normal or +-0 (or slow)
    return h, inx, slow | (not _keep(s, zok, bias, M))


_BLK = 512


@njit(cache=True, inline="always", error_model="numpy")
def _run(lo, hi, op, kind, a, b, c, out, scratch, idx, mode, E, M, bias):
    """Pass 1 over elements lo..hi by `_elem_rne` (kind 0), `_elem_fma_near`
    (kind 1) or `_elem_dir` (kind 2); each block of _BLK elements with a slow
    one is scanned again and its slow elements' indices are written to idx (this
    chunk's own list, the first idx.size of them; the count returned may be
    larger: the caller then scans scratch[lo:hi] itself)."""
    if flushes():
        return np.int64(-1)
    cap = idx.size
    acc = np.uint8(0)
    cnt = np.int64(0)
    for b0 in range(lo, hi, _BLK):
        b1 = min(hi, b0 + _BLK)
        # slices: indices from 0, so LLVM drops numba's negative-index wraparound
        ab = a[b0:b1]
        bb = b[b0:b1]
        cb = c[b0:b1]
        ob = out[b0:b1]
        sb = scratch[b0:b1]
        for i in range(b1 - b0):
            if kind == 0:
                v, inx, slow = _elem_rne(op, ab[i], bb[i], cb[i], E, M, bias)
            elif kind == 2:
                v, inx, slow = _elem_dir(op, ab[i], bb[i], cb[i], E, M, bias, mode)
            else:
                v, inx, slow = _elem_fma_near(op, ab[i], bb[i], cb[i], E, M, bias, mode)
            ob[i] = v
            # 128 for a slow element, else its inexact flag
            sb[i] = np.uint8(128) if slow else (np.uint8(1) if inx else np.uint8(0))
        # the block's summary by a second, byte-wide pass (OR-ing masks in the loop
        # above would keep them live across iterations: spills)
        bacc = np.uint8(0)
        for i in range(b1 - b0):
            bacc |= sb[i]
        acc |= bacc
        if bacc >= 128:
            for i in range(b1 - b0):
                if sb[i] >= 128:
                    if cnt < cap:
                        idx[cnt] = b0 + i
                    cnt += 1
    return np.int64(acc & np.uint8(1)) | (cnt << 9)


_NB = dict(cache=True, nogil=True, error_model="numpy")


def _make(op, E, M, bias, mode):
    """The pass-1 chunk kernel of one (op, format, mode), compiled on first use:
    ``(lo, hi, a, out, scratch, idx)`` for sqrt, ``(lo, hi, a, b, c, out,
    scratch, idx)`` for fma, ``(lo, hi, a, b, out, scratch, idx)`` otherwise.
    It returns -1 when FTZ/DAZ is set in MXCSR (nothing done), else the OR of the
    fast elements' flags | (the number of elements left to the slow pass << 9),
    the first idx.size of their indices in idx (scratch[i] >= 128 marks them
    all). Nearest-even + - * / sqrt: `_elem_rne`; fma nearest-even and
    nearest-away: `_elem_fma_near` (RN(s) may miss r's rounding near a midpoint);
    every other (op, mode): `_elem_dir`. The mode is a constant of the closure,
    so each kernel is one straight loop (numba keys its cache on the closure's
    values)."""
    if mode == _RNE and op != OP_FMA:
        kind = 0
    elif op == OP_FMA and mode in (_RNE, _RNA):
        kind = 1
    else:
        kind = 2
    if op == OP_SQRT:
        @njit(**_NB)
        def chunk1(lo, hi, a, out, scratch, idx):
            return _run(lo, hi, op, kind, a, a, a, out, scratch, idx, mode, E, M, bias)
        return chunk1
    if op == OP_FMA:
        @njit(**_NB)
        def chunk3(lo, hi, a, b, c, out, scratch, idx):
            return _run(lo, hi, op, kind, a, b, c, out, scratch, idx, mode, E, M, bias)
        return chunk3

    @njit(**_NB)
    def chunk2(lo, hi, a, b, out, scratch, idx):
        return _run(lo, hi, op, kind, a, b, a, out, scratch, idx, mode, E, M, bias)
    return chunk2


FP16 = (5, 10, 15, 0)
BF16 = (8, 7, 127, 0)
OPS = (OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA)
_KERNELS = {}
_LOCK = threading.Lock()


def kernel(params, op, mode):
    """The pass-1 chunk kernel (`_make`) of format params `FP16` or `BF16`, op
    code (`OPS`) and deterministic mode code (0..5), made on first use."""
    key = (tuple(params), int(op), int(mode))
    k = _KERNELS.get(key)
    if k is None:
        if key[0] not in (FP16, BF16) or key[1] not in OPS or not 0 <= key[2] <= 5:
            raise ValueError(f"no EFT kernel for params {params}, op {op}, mode {mode}")
        with _LOCK:
            k = _KERNELS.get(key)
            if k is None:
                k = _KERNELS[key] = _make(key[1], *key[0][:3], key[2])
    return k
