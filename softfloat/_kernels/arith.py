"""Arithmetic on encodings: add, sub, mul, div, sqrt, fma, min/max, compare,
round-to-integral and integer conversions, plus their parallel array loops.

Every operation works on integers only. Each one is split in two:

* a small ``*_pre`` function that takes the unpacked operands and decides the
  result *kind* (``R_*`` below): a finite value ``(sign, exp, sig)`` formed
  exactly or with the bits below the rounding point OR-ed ("jammed") into bit 0,
  a signed zero, a signed infinity, a NaN, or final bits;
* `finish`, called once per array loop, which turns that into an encoding: it
  calls `core.round_pack` (the one place that reads the rounding mode and raises
  underflow, overflow and inexact) and the NaN specialization below.

Unpacking and `finish` are written once per operation family (``add_one``,
``mul_one``, ... and the array loops), not once per branch. The binary operations
have one array loop per family (`addsub_chunk`, `mul_chunk`, `div_chunk`,
`minmax_chunk`; `binary_array` picks it), so that the first add of a process
compiles add's code only. Every scalar helper is a plain numba function
(``@helper``, see jit.py: no CPython or C wrapper): numba compiles it once per
process (and caches it) and LLVM inlines it where that pays. numba's own
``inline="always"`` would copy the body into every caller before typing; with
round_pack in every copy that made compilation take minutes.

What a platform decides about NaNs lives in specialize.py (`nan_operands`,
`fresh_nan`, `invalid_int`): the operations never spell a NaN.
"""
import numpy as np
from numba import njit

from .._parallel import run_chunks

from .core import (C_INF, C_QNAN, C_SNAN, C_ZERO, F_INEXACT, F_INFINITE, F_INVALID, K_IEEE,
                   K_P3109,
                   OVF_IEEE, P_DAZ, P_MODE, P_NAN, P_NANBITS, P_OVF, P_SRBITS, clz64,
                   inf_bits, is_stochastic, rand_bits, round_pack, shift_right_jam, unpack,
                   zero_bits, zero_flags)
from .jit import helper
from .specialize import fresh_nan, invalid_int, nan_operands

# Binary operation codes (binary_array, binary_chunk_kernel).
OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MIN, OP_MAX, OP_MINNUM, OP_MAXNUM = range(8)
# Unary operation codes (unary_array).
OP_SQRT, OP_RINT, OP_RINTX = 0, 1, 2
# Comparison codes (compare_array); a signaling comparison is code + CMP_SIGNALING.
CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_UN = range(7)
CMP_SIGNALING = 8

# Result kinds returned by the *_pre functions: (kind, sign, exp, sig, flags).
R_ROUND = 0     # round (-1)**sign * sig * 2**exp
R_BITS = 1      # sig holds the final encoding
R_ZERO = 2      # zero of that sign
R_INF = 3       # infinity of that sign (formats without one: core.inf_bits decides)
R_FRESH = 4     # invalid operation, no NaN operand: a fresh NaN (also fma(0, inf, NaN))
R_NAN = 5       # a NaN operand decides (specialize.nan_operands over a, b, c)

# Constants passed to helpers are int64 scalars, never Python ints: numba types a
# Python int constant argument as a literal and compiles the callee (and, through
# it, its callees) once more for it.
_I0 = np.int64(0)
_CZ = np.int64(C_ZERO)
_KIEEE = np.int64(K_IEEE)
_I8, _I30, _IM29 = np.int64(8), np.int64(30), np.int64(-29)


@helper
def finish(code, s, e, m, fx, ca, sa, ma, la, cb, sb, mb, lb, cc, sc, mc, lc,
           E, M, bias, kind, pol, r):
    """Encoding and flags for a result kind (see R_*); the operands' class, sign,
    NaN payload and payload length (M for unpacked operands of the format) are
    needed for R_NAN."""
    if code == R_ROUND:
        b, f = round_pack(s, e, m, E, M, bias, kind, pol, r)
        return b, f | fx
    if code == R_BITS:
        return m, fx
    if code == R_ZERO:
        return zero_bits(s, E, M, kind), fx | zero_flags(kind)
    if code == R_INF:
        b, f = inf_bits(s, E, M, kind, pol[P_OVF])
        return b, f | fx
    if code == R_FRESH:
        b, f = fresh_nan(E, M, kind, pol)
        return b, f | fx
    return nan_operands(ca, sa, ma, la, cb, sb, mb, lb, cc, sc, mc, lc, E, M, kind, pol)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
@helper
def add_finite(sa, ea, ma, sb, eb, mb):
    """sa*ma*2**ea + sb*mb*2**eb as a result kind, for 0 < ma, mb < 2**50 (every
    caller: operands of <= 24 bits, exact products of <= 48 bits, exact products
    in flight of <= 50 bits), rounded later into a format of <= 24 bits.

    An exact cancellation gives R_ROUND with sig 0 (round_pack gives it the
    mode's zero sign)."""
    # Leading bits to bit 61: one bit of headroom for the carry of an addition.
    la = clz64(ma) - 2
    ma = ma << la
    ea = ea - la
    lb = clz64(mb) - 2
    mb = mb << lb
    eb = eb - lb
    if ea < eb or (ea == eb and ma < mb):      # a is the larger magnitude
        sa, ea, ma, sb, eb, mb = sb, eb, mb, sa, ea, ma
    # Both significands have < 50 bits, so after the shift to bit 61 their low
    # 12 bits are zero: an alignment shift ea - eb <= 12 (the only case where a
    # subtraction can cancel more than one leading bit) loses nothing. A larger
    # shift jams the bits shifted out into bit 0; then the result keeps its
    # leading bit at 60 or 61, the rounding point of a <= 24-bit format lies at
    # bit >= 36, and because ma is even the jammed difference ma - (x | 1) is
    # floor(exact) | 1, i.e. still the exact value jammed (for a sum, trivially).
    mb = shift_right_jam(mb, ea - eb)
    if sa == sb:
        return R_ROUND, sa, ea, ma + mb, _I0
    return R_ROUND, sa, ea, ma - mb, _I0       # ma - mb == 0: exact cancellation


@helper
def isqrt62(n):
    """(floor(sqrt(n)), n - floor(sqrt(n))**2) for 0 <= n < 2**62, digit by digit."""
    r = _I0
    bit = np.int64(1) << 60
    while bit > n:
        bit >>= 2
    while bit != 0:
        if n >= r + bit:
            n -= r + bit
            r = (r >> 1) + bit
        else:
            r >>= 1
        bit >>= 2
    return r, n


@helper
def int_magnitude(sign, exp, sig, pol, rbits):
    """|x| rounded to an integer by the mode (x = sig * 2**exp, exp < 0, sig < 2**30).

    Rounds through `round_pack` with a pseudo format whose smallest subnormal is 1
    (8 exponent bits, 30 fraction bits, bias -29: every |x| < 2**30 is subnormal
    there, so its quantum is 1); flushing and overflow are off. Returns
    (integer magnitude, inexact flag)."""
    ipol = (pol[P_MODE], _I0, _I0, np.int64(OVF_IEEE), _I0, pol[P_NAN], pol[P_NANBITS],
            pol[P_SRBITS])
    bits, f = round_pack(sign, exp, sig, _I8, _I30, _IM29, _KIEEE, ipol, rbits)
    return bits & ((np.int64(1) << 38) - 1), f & F_INEXACT


# --------------------------------------------------------------------------
# Operations on unpacked operands: each returns (kind, sign, exp, sig, flags).
# --------------------------------------------------------------------------
@helper
def add_pre(ca, sa, ea, ma, cb, sb, eb, mb):
    """a + b (for a - b, pass b's sign flipped; a NaN b is reported as it was).
    Operands as unpacked, or values in flight (significands < 2**50)."""
    if ca >= C_QNAN or cb >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    if ca == C_INF:
        if cb == C_INF and sa != sb:
            return R_FRESH, _I0, _I0, _I0, _I0
        return R_INF, sa, _I0, _I0, _I0
    if cb == C_INF:
        return R_INF, sb, _I0, _I0, _I0
    if ca == C_ZERO:
        if cb == C_ZERO:
            if sa == sb:
                return R_ZERO, sa, _I0, _I0, _I0
            return R_ROUND, _I0, _I0, _I0, _I0   # (+0) + (-0): round_pack's zero sign
        return R_ROUND, sb, eb, mb, _I0       # exact, but FTZ may flush it
    if cb == C_ZERO:
        return R_ROUND, sa, ea, ma, _I0
    return add_finite(sa, ea, ma, sb, eb, mb)


@helper
def mul_pre(ca, sa, ea, ma, cb, sb, eb, mb):
    if ca >= C_QNAN or cb >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    s = sa ^ sb
    if ca == C_INF or cb == C_INF:
        if ca == C_ZERO or cb == C_ZERO:
            return R_FRESH, _I0, _I0, _I0, _I0
        return R_INF, s, _I0, _I0, _I0
    if ca == C_ZERO or cb == C_ZERO:
        return R_ZERO, s, _I0, _I0, _I0
    return R_ROUND, s, ea + eb, ma * mb, _I0   # the exact product: < 2**48


@helper
def div_pre(ca, sa, ea, ma, cb, sb, eb, mb):
    if ca >= C_QNAN or cb >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    s = sa ^ sb
    if ca == C_INF:
        if cb == C_INF:
            return R_FRESH, _I0, _I0, _I0, _I0
        return R_INF, s, _I0, _I0, _I0
    if cb == C_INF:
        return R_ZERO, s, _I0, _I0, _I0
    if cb == C_ZERO:
        if ca == C_ZERO:
            return R_FRESH, _I0, _I0, _I0, _I0
        return R_INF, s, _I0, _I0, F_INFINITE
    if ca == C_ZERO:
        return R_ZERO, s, _I0, _I0, _I0
    # Dividend's leading bit to 62; the divisor has <= 24 bits, so the quotient
    # has >= 38 bits; a nonzero remainder is jammed into bit 0.
    la = clz64(ma) - 1
    n = ma << la
    q = n // mb
    if n - q * mb != 0:
        q |= 1
    return R_ROUND, s, ea - la - eb, q, _I0


@helper
def sqrt_pre(ca, sa, ea, ma):
    if ca >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    if ca == C_ZERO:
        return R_ZERO, sa, _I0, _I0, _I0         # sqrt(-0) = -0
    if sa == 1:
        return R_FRESH, _I0, _I0, _I0, _I0
    if ca == C_INF:
        return R_INF, _I0, _I0, _I0, _I0
    if ea & 1:                                     # make the exponent even
        ma = ma << 1
        ea = ea - 1
    sh = (clz64(ma) - 2) & ~np.int64(1)            # even shift: n in [2**60, 2**62)
    n = ma << sh
    r, rem = isqrt62(n)                            # r in [2**30, 2**31): >= 31 bits
    if rem != 0:
        r |= 1
    return R_ROUND, _I0, (ea - sh) >> 1, r, _I0


@helper
def fma_pre(ca, sa, ea, ma, cb, sb, eb, mb, cc, sc, ec, mc):
    """a * b + c, one rounding; SoftFloat mulAdd's order of special cases."""
    if ca >= C_QNAN or cb >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    sp = sa ^ sb
    if ca == C_INF or cb == C_INF:
        if ca == C_ZERO or cb == C_ZERO:
            # 0 * inf + c, c a NaN too: SoftFloat's mulAdd makes the default NaN
            # and then propagates it over c (propagateNaN(defaultNaN, c) returns
            # its quiet first operand), so the fresh NaN wins; invalid either way.
            f = F_INVALID if cc == C_SNAN else 0
            return R_FRESH, _I0, _I0, _I0, f
        if cc >= C_QNAN:
            return R_NAN, _I0, _I0, _I0, _I0
        if cc == C_INF and sc != sp:               # inf - inf
            return R_FRESH, _I0, _I0, _I0, _I0
        return R_INF, sp, _I0, _I0, _I0
    if cc >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    if cc == C_INF:
        return R_INF, sc, _I0, _I0, _I0
    if ca == C_ZERO or cb == C_ZERO:
        if cc == C_ZERO:
            if sp == sc:
                return R_ZERO, sp, _I0, _I0, _I0
            return R_ROUND, _I0, _I0, _I0, _I0   # (+0) + (-0): round_pack's zero sign
        return R_ROUND, sc, ec, mc, _I0
    mp = ma * mb                                   # the exact product: < 2**48
    ep = ea + eb
    if cc == C_ZERO:
        return R_ROUND, sp, ep, mp, _I0
    return add_finite(sp, ep, mp, sc, ec, mc)


@helper
def order_key(cls, sign, bits, E, M):
    """An integer that orders non-NaN values like their values (both zeros -> 0)."""
    if cls == C_ZERO:
        return _I0
    mag = np.int64(bits) & ((np.int64(1) << (E + M)) - 1)
    return -mag if sign else mag


@helper
def minmax_pre(op, x, ca, sa, y, cb, sb, E, M):
    """IEEE 754-2019 minimum/maximum (NaN wins, -0 < +0) and
    minimumNumber/maximumNumber (a number wins over a NaN; sNaN raises invalid).
    A DAZ-zeroed operand is returned as a zero."""
    an = ca >= C_QNAN
    bn = cb >= C_QNAN
    if an or bn:
        if (op == OP_MINNUM or op == OP_MAXNUM) and not (an and bn):
            f = F_INVALID if (ca == C_SNAN or cb == C_SNAN) else 0
            if an:
                if cb == C_ZERO:
                    return R_ZERO, sb, _I0, _I0, f
                return R_BITS, _I0, _I0, np.int64(y), f
            if ca == C_ZERO:
                return R_ZERO, sa, _I0, _I0, f
            return R_BITS, _I0, _I0, np.int64(x), f
        return R_NAN, _I0, _I0, _I0, _I0
    want_min = op == OP_MIN or op == OP_MINNUM
    ka = order_key(ca, sa, x, E, M)
    kb = order_key(cb, sb, y, E, M)
    if ka == kb and ca == C_ZERO:                  # both zero: -0 < +0
        return R_ZERO, ((sa | sb) if want_min else (sa & sb)), _I0, _I0, _I0
    if ka == kb or (ka < kb) == want_min:
        if ca == C_ZERO:
            return R_ZERO, sa, _I0, _I0, _I0
        return R_BITS, _I0, _I0, np.int64(x), _I0
    if cb == C_ZERO:
        return R_ZERO, sb, _I0, _I0, _I0
    return R_BITS, _I0, _I0, np.int64(y), _I0


@helper
def rint_pre(x, ca, sa, ea, ma, exact, pol, rbits):
    """roundToIntegral in the mode (inexact raised only when ``exact``)."""
    if ca >= C_QNAN:
        return R_NAN, _I0, _I0, _I0, _I0
    if ca == C_ZERO:
        return R_ZERO, sa, _I0, _I0, _I0
    if ca == C_INF or ea >= 0:                     # already an integer
        return R_BITS, _I0, _I0, np.int64(x), _I0
    n, inx = int_magnitude(sa, ea, ma, pol, rbits)
    flags = inx if exact else 0
    if n == 0:
        return R_ZERO, sa, _I0, _I0, flags
    return R_ROUND, sa, _I0, n, flags              # an integer: exact in the format


@helper
def compare_one(op, x, y, E, M, bias, kind, daz):
    """Comparison predicate and flags: quiet predicates raise invalid for
    signaling NaN operands only, signaling ones (op >= CMP_SIGNALING) for any NaN."""
    ca, sa, ea, ma = unpack(x, E, M, bias, kind, daz)
    cb, sb, eb, mb = unpack(y, E, M, bias, kind, daz)
    base = op & (CMP_SIGNALING - 1)
    if ca >= C_QNAN or cb >= C_QNAN:
        f = F_INVALID if (op >= CMP_SIGNALING or ca == C_SNAN or cb == C_SNAN) else 0
        return (base == CMP_NE or base == CMP_UN), f
    ka = order_key(ca, sa, x, E, M)
    kb = order_key(cb, sb, y, E, M)
    if base == CMP_EQ:
        return ka == kb, _I0
    if base == CMP_NE:
        return ka != kb, _I0
    if base == CMP_LT:
        return ka < kb, _I0
    if base == CMP_LE:
        return ka <= kb, _I0
    if base == CMP_GT:
        return ka > kb, _I0
    if base == CMP_GE:
        return ka >= kb, _I0
    return False, _I0                             # unordered: both are numbers


@helper
def to_int_one(x, ibits, exact, E, M, bias, kind, pol, rbits):
    """Encoding -> signed integer of ``ibits`` (32 or 64) bits in the mode.
    NaN, infinity and out-of-range values raise invalid and give the integer
    type's minimum (x86 "integer indefinite", SoftFloat 8086-SSE)."""
    imin = np.int64(-1) << (ibits - 1)
    ca, sa, ea, ma = unpack(x, E, M, bias, kind, pol[P_DAZ])
    if ca >= C_QNAN or ca == C_INF:
        return invalid_int(ibits), F_INVALID
    if ca == C_ZERO:
        return _I0, _I0
    if ea >= 0:                                    # an integer: ma * 2**ea
        width = 64 - clz64(ma) + ea                # its bit length
        if width <= ibits - 1:
            n = ma << ea
            return (-n if sa else n), _I0
        if sa == 1 and width == ibits and (ma & (ma - 1)) == 0:
            return imin, _I0                      # exactly -2**(ibits-1)
        return invalid_int(ibits), F_INVALID
    n, inx = int_magnitude(sa, ea, ma, pol, rbits)  # n <= 2**24: always in range
    return (-n if sa else n), (inx if exact else 0)


@helper
def from_int_one(v, E, M, bias, kind, pol, rbits):
    """Signed 64-bit integer -> encoding, rounded once."""
    v = np.int64(v)
    if v == 0:
        return zero_bits(_I0, E, M, kind), zero_flags(kind)
    s = _I0
    e = _I0
    if v < 0:
        s = np.int64(1)
        if v == np.int64(-9223372036854775807 - 1):   # |v| = 2**63 overflows int64
            v = np.int64(1) << 62
            e = np.int64(1)
        else:
            v = -v
    return round_pack(s, e, v, E, M, bias, kind, pol, rbits)


# One element of each binary operation family: unpack, the family's *_pre, finish.
# One function (and one array loop below) per family, not one for all: the first
# add of a process then compiles add's code only, not mul's, div's and min/max's
# (each family's loop is compiled on its first use). Shared by the general loops
# below and by arith_fast's pass 2. Each returns (bits, flags).
@helper
def add_one(negb, x, y, E, M, bias, kind, pol, r):
    """x + y (negb = 0) or x - y (negb = 1: y's sign flipped, but a NaN y is
    propagated as it was)."""
    daz = pol[P_DAZ]
    ca, sa, ea, xa = unpack(x, E, M, bias, kind, daz)
    cb, sb, eb, xb = unpack(y, E, M, bias, kind, daz)
    k, s, e, m, fx = add_pre(ca, sa, ea, xa, cb, sb ^ negb, eb, xb)
    return finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, _CZ, _I0, _I0, M,
                  E, M, bias, kind, pol, r)


@helper
def mul_one(x, y, E, M, bias, kind, pol, r):
    """x * y."""
    daz = pol[P_DAZ]
    ca, sa, ea, xa = unpack(x, E, M, bias, kind, daz)
    cb, sb, eb, xb = unpack(y, E, M, bias, kind, daz)
    k, s, e, m, fx = mul_pre(ca, sa, ea, xa, cb, sb, eb, xb)
    return finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, _CZ, _I0, _I0, M,
                  E, M, bias, kind, pol, r)


@helper
def div_one(x, y, E, M, bias, kind, pol, r):
    """x / y."""
    daz = pol[P_DAZ]
    ca, sa, ea, xa = unpack(x, E, M, bias, kind, daz)
    cb, sb, eb, xb = unpack(y, E, M, bias, kind, daz)
    k, s, e, m, fx = div_pre(ca, sa, ea, xa, cb, sb, eb, xb)
    if kind >= K_P3109 and cb == C_ZERO and ca < C_QNAN:
        k = R_FRESH                    # P3109: x / 0 is NaN (no signed zero to pick an infinity)
    return finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, _CZ, _I0, _I0, M,
                  E, M, bias, kind, pol, r)


@helper
def minmax_one(op, x, y, E, M, bias, kind, pol, r):
    """minimum/maximum/minimumNumber/maximumNumber (op: OP_MIN..OP_MAXNUM)."""
    daz = pol[P_DAZ]
    ca, sa, ea, xa = unpack(x, E, M, bias, kind, daz)
    cb, sb, eb, xb = unpack(y, E, M, bias, kind, daz)
    k, s, e, m, fx = minmax_pre(op, x, ca, sa, y, cb, sb, E, M)
    return finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, _CZ, _I0, _I0, M,
                  E, M, bias, kind, pol, r)


# --------------------------------------------------------------------------
# Array loops. Operands are flat; an operand of size 1 is broadcast by a zero
# index mask (ma = 0), a full one indexed directly (ma = -1). Each loop returns
# the OR of all flags; ``flg`` is written only if want_flags.
# --------------------------------------------------------------------------
# The binary loops: one per operation family (see add_one), all with the same
# arguments (``op`` selects add or sub, or which of min/max; mul and div ignore it).
@njit(cache=True, nogil=True)
def addsub_chunk(lo, hi, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = a[i & ma] + b[i & mb] (op OP_ADD) or - (op OP_SUB)."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    negb = np.int64(1) if op == OP_SUB else _I0
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        v, f = add_one(negb, np.int64(a[i & ma]), np.int64(b[i & mb]), E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def mul_chunk(lo, hi, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = a[i & ma] * b[i & mb] (op: OP_MUL, unused)."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        v, f = mul_one(np.int64(a[i & ma]), np.int64(b[i & mb]), E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def div_chunk(lo, hi, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = a[i & ma] / b[i & mb] (op: OP_DIV, unused)."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        v, f = div_one(np.int64(a[i & ma]), np.int64(b[i & mb]), E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


@njit(cache=True, nogil=True)
def minmax_chunk(lo, hi, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = op(a[i & ma], b[i & mb]) for op OP_MIN, OP_MAX, OP_MINNUM, OP_MAXNUM
    (no rounding: key unused)."""
    fa = 0
    for i in range(lo, hi):
        v, f = minmax_one(op, np.int64(a[i & ma]), np.int64(b[i & mb]), E, M, bias, kind, pol,
                          _I0)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def binary_chunk_kernel(op):
    """The loop of a binary operation code (add/sub, mul, div, min/max family)."""
    if op == OP_ADD or op == OP_SUB:
        return addsub_chunk
    if op == OP_MUL:
        return mul_chunk
    if op == OP_DIV:
        return div_chunk
    if OP_MIN <= op <= OP_MAXNUM:
        return minmax_chunk
    raise ValueError(f"unknown binary operation code {op}")


def binary_array(op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, pol, key, chunk=None):
    """out = op(a, b) for the add/sub/mul/div/min/max codes: runs the operation's
    loop (`binary_chunk_kernel`) in parallel chunks; returns the OR of the flags.
    a, b: flat uint32 encodings; ma, mb: index masks (0 broadcasts element 0, -1
    indexes directly); out: uint32; flg: uint8, written only if want_flags."""
    return run_chunks(binary_chunk_kernel(op), out.size, op, a, b, ma, mb, out, flg, want_flags,
                      E, M, bias, kind, pol, key)


@njit(cache=True, nogil=True)
def fma_chunk(lo, hi, a, b, c, ma, mb, mc, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = fma(a[i & ma], b[i & mb], c[i & mc])."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    daz = pol[P_DAZ]
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        ca, sa, ea, xa = unpack(np.int64(a[i & ma]), E, M, bias, kind, daz)
        cb, sb, eb, xb = unpack(np.int64(b[i & mb]), E, M, bias, kind, daz)
        cc, sc, ec, xc = unpack(np.int64(c[i & mc]), E, M, bias, kind, daz)
        k, s, e, m, fx = fma_pre(ca, sa, ea, xa, cb, sb, eb, xb, cc, sc, ec, xc)
        v, f = finish(k, s, e, m, fx, ca, sa, xa, M, cb, sb, xb, M, cc, sc, xc, M,
                      E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def fma_array(a, b, c, ma, mb, mc, out, flg, want_flags, E, M, bias, kind, pol, key, chunk=None):
    """Run `fma_chunk` over the output in parallel chunks; returns the OR of the flags."""
    return run_chunks(fma_chunk, out.size, a, b, c, ma, mb, mc, out, flg, want_flags, E, M, bias, kind, pol, key)


@njit(cache=True, nogil=True)
def unary_chunk(lo, hi, op, a, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = sqrt / roundToIntegral / roundToIntegralExact of a[i]."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    daz = pol[P_DAZ]
    exact = op == OP_RINTX
    fa = 0
    for i in range(lo, hi):
        x = np.int64(a[i])
        r = rand_bits(key, i, nb) if sr else _I0
        ca, sa, ea, xa = unpack(x, E, M, bias, kind, daz)
        if op == OP_SQRT:
            k, s, e, m, fx = sqrt_pre(ca, sa, ea, xa)
        else:
            k, s, e, m, fx = rint_pre(x, ca, sa, ea, xa, exact, pol, r)
        v, f = finish(k, s, e, m, fx, ca, sa, xa, M, _CZ, _I0, _I0, M, _CZ, _I0, _I0,
                      M, E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def unary_array(op, a, out, flg, want_flags, E, M, bias, kind, pol, key, chunk=None):
    """Run `unary_chunk` over the output in parallel chunks; returns the OR of the flags."""
    return run_chunks(unary_chunk, out.size, op, a, out, flg, want_flags, E, M, bias, kind, pol, key)


@njit(cache=True, nogil=True)
def compare_chunk(lo, hi, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, daz):
    """out[i] (bool) = predicate op of (a[i & ma], b[i & mb])."""
    fa = 0
    for i in range(lo, hi):
        v, f = compare_one(op, np.int64(a[i & ma]), np.int64(b[i & mb]), E, M, bias, kind, daz)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def compare_array(op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, daz, chunk=None):
    """Run `compare_chunk` over the output in parallel chunks; returns the OR of the flags."""
    return run_chunks(compare_chunk, out.size, op, a, b, ma, mb, out, flg, want_flags, E, M, bias, kind, daz)


@njit(cache=True, nogil=True)
def to_int_chunk(lo, hi, a, out, flg, want_flags, ibits, exact, E, M, bias, kind, pol, key):
    """out[i] (int32/int64) = a[i] rounded to an integer of ibits bits."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        v, f = to_int_one(np.int64(a[i]), ibits, exact, E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def to_int_array(a, out, flg, want_flags, ibits, exact, E, M, bias, kind, pol, key, chunk=None):
    """Run `to_int_chunk` over the output in parallel chunks; returns the OR of the flags."""
    return run_chunks(to_int_chunk, out.size, a, out, flg, want_flags, ibits, exact, E, M, bias, kind, pol, key)


@njit(cache=True, nogil=True)
def from_int_chunk(lo, hi, a, out, flg, want_flags, E, M, bias, kind, pol, key):
    """out[i] = the int64 a[i] rounded into the format."""
    sr = is_stochastic(pol)
    nb = pol[P_SRBITS]
    fa = 0
    for i in range(lo, hi):
        r = rand_bits(key, i, nb) if sr else _I0
        v, f = from_int_one(a[i], E, M, bias, kind, pol, r)
        out[i] = v
        if want_flags:
            flg[i] = f
        fa |= f
    return fa


def from_int_array(a, out, flg, want_flags, E, M, bias, kind, pol, key, chunk=None):
    """Run `from_int_chunk` over the output in parallel chunks; returns the OR of the flags."""
    return run_chunks(from_int_chunk, out.size, a, out, flg, want_flags, E, M, bias, kind, pol, key)
