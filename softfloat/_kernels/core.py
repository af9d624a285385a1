"""Unpack, the one round_pack and the counter-based random source.

One rounding rule, in two forms, both here:

* `round_pack` (with `_round_increment`): the general, branchy rounding, the
  only one that reads the rounding mode from the policy tuple per element;
* its branch-free twin for the fast paths, which take the mode apart once per
  chunk: `round_masks` (the mode as five 0/1 masks), `increment_branchfree`
  (``_round_increment`` as mask arithmetic on the remainder) and
  `addend_branchfree` (the same increment as the addend that is added before
  the dropped bits are cut off). tests/test_rounding_rule.py checks the three
  against each other on every mode, sign, parity and remainder.

The loops ask `is_stochastic` whether to draw random bits. Which NaN a result
gets is specialize.py's.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .codes import (C_FINITE, C_INF, C_QNAN, C_SNAN, C_ZERO, F_INEXACT, F_INFINITE,  # noqa: F401
                    F_INVALID, F_OVERFLOW, F_UNDERFLOW, K_FINITE, K_FN, K_FNU, K_FNUZ, K_IEEE,
                    K_P3109, K_P3SE, K_P3SF, K_P3UE, K_P3UF, NAN_CANONICAL, SAT_FINITE, SAT_NONE,
                    SAT_PROPAGATE,
                    NAN_KEEP, NAN_PROPAGATE, OVF_IEEE, OVF_NAN, OVF_SATURATE, P_DAZ, P_FTZ,
                    P_MODE, P_NAN, P_NANBITS, P_OVF, P_SRBITS, P_TINB, RDN, RNA, RNE, RSR, RSR_A,
                    RTO, RTZ, RUP)
from .jit import helper
from .sr_schemes import is_sr_code, scheme_round_up
from .specialize import nan_payload_length, signed_nan

# The codes (rounding modes, flags, policies, classes, the policy tuple layout)
# live in codes.py and are re-exported here.


@intrinsic
def clz64(typingctx, x):
    """Count leading zeros of a 64-bit integer (64 for zero): LLVM's ctlz."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
        fn = builder.module.declare_intrinsic("llvm.ctlz", [ir.IntType(64)], fnty)
        return builder.call(fn, [v, ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


@helper
def shift_right_jam(x, n):
    """x >> n with every bit shifted out OR-ed into bit 0 (x >= 0, n >= 0)."""
    if n == 0:
        return x
    if n >= 63:
        return np.int64(1) if x != 0 else np.int64(0)
    out = x >> n
    if x & ((np.int64(1) << n) - 1):
        out |= 1
    return out


@helper
def rand_bits(key, idx, nbits):
    """``nbits`` (1..32) uniform random bits for element ``idx`` of a stream ``key``.

    SplitMix64 finaliser over ``key + (idx + 1) * golden``: a pure function of
    (key, idx), so results do not depend on threads or chunking.
    """
    z = np.uint64(key) + np.uint64(idx + 1) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(64 - nbits))


@helper
def unpack(bits, E, M, bias, kind, daz):
    """Classify and decode one encoding.

    Returns ``(cls, sign, exp, sig)``: for finite nonzero values the value is
    ``(-1)**sign * sig * 2**exp`` with sig the integer significand (hidden bit
    included). ``daz`` reads subnormal inputs as signed zero.
    """
    bits = np.int64(bits)
    sign = (bits >> (E + M)) & 1
    efield = (bits >> M) & ((np.int64(1) << E) - 1)
    frac = bits & ((np.int64(1) << M) - 1)
    eall = (np.int64(1) << E) - 1
    if kind == K_IEEE:
        if efield == eall:
            if frac == 0:
                return C_INF, sign, np.int64(0), np.int64(0)
            if frac >> (M - 1):
                return C_QNAN, sign, np.int64(0), frac
            return C_SNAN, sign, np.int64(0), frac
    elif kind == K_FN or kind == K_FNU:
        if efield == eall and frac == (np.int64(1) << M) - 1:
            return C_QNAN, sign, np.int64(0), frac
        if kind == K_FNU:             # no subnormals: field 0 is 2**-bias
            return C_FINITE, sign, efield - bias - M, frac | (np.int64(1) << M)
    elif kind == K_FNUZ:
        if sign == 1 and efield == 0 and frac == 0:
            return C_QNAN, sign, np.int64(0), frac
    elif kind >= K_P3109:
        c = p3109_special(bits, E, M, kind)
        if c != C_FINITE:
            return c, sign if c == C_INF else np.int64(0), np.int64(0), np.int64(0)
    if efield == 0:
        if frac == 0 or daz:
            return C_ZERO, sign, np.int64(0), np.int64(0)
        return C_FINITE, sign, 1 - bias - M, frac
    return C_FINITE, sign, efield - bias - M, frac | (np.int64(1) << M)


@helper
def p3109_special(bits, E, M, kind):
    """C_QNAN for the one NaN of a P3109 format (signed: the -0 pattern; unsigned:
    all ones), C_INF for its infinities (extended: the largest magnitude code;
    unsigned: all ones minus one), C_FINITE for every other code."""
    full = (np.int64(1) << (E + M)) - 1
    mag = bits & full
    if kind <= K_P3SF:                          # signed
        if mag == 0:
            return C_QNAN if (bits >> (E + M)) & 1 else C_FINITE
        if kind == K_P3SE and mag == full:
            return C_INF
        return C_FINITE
    if mag == full:
        return C_QNAN
    if kind == K_P3UE and mag == full - 1:
        return C_INF
    return C_FINITE


@helper
def p3109_nan(E, M, kind):
    """The one NaN of a P3109 format."""
    if kind <= K_P3SF:
        return np.int64(1) << (E + M)
    return (np.int64(1) << (E + M)) - 1


@helper
def p3109_saturate(sign, is_inf, mode, E, M, kind, sat):
    """P3109 saturation (the report's table, rules in order) of a rounded result
    out of [Mlo, Mhi] (``is_inf`` 0) or of an exact infinity (``is_inf`` 1) of sign
    ``sign``; ``sat`` is SAT_FINITE, SAT_PROPAGATE or SAT_NONE, ``mode`` the
    rounding code (SatNone resolves directed and odd rounding). Mlo is -Mhi
    (signed) or 0 (unsigned: every negative result is below it)."""
    signed = kind <= K_P3SF
    ext = kind == K_P3SE or kind == K_P3UE
    mhi = max_mag(E, M, kind)
    inf = mhi + 1
    if sign == 0:
        if sat == SAT_FINITE or not ext:
            return mhi
        if is_inf:
            return inf
        if sat == SAT_PROPAGATE:
            return mhi
        if mode == RTZ or mode == RDN or (mode == RTO and not signed):
            return mhi
        return inf
    if not signed:                              # below Mlo = 0
        if sat != SAT_NONE or (not is_inf and (mode == RTZ or mode == RUP)):
            return np.int64(0)
        return p3109_nan(E, M, kind)
    sbit = np.int64(1) << (E + M)
    if sat == SAT_FINITE or not ext:
        return sbit | mhi
    if is_inf:
        return sbit | inf
    if sat == SAT_PROPAGATE or mode == RTZ or mode == RUP:
        return sbit | mhi
    return sbit | inf


@helper
def p3109_saturate_flags(bits, E, M, kind):
    """Flags of a saturated P3109 result: invalid where it is the NaN (a negative
    result in an unsigned format under SatNone), else overflow and inexact."""
    if bits == p3109_nan(E, M, kind):
        return F_INVALID
    return F_OVERFLOW | F_INEXACT


@helper
def unpack_in_flight(bits, E, M, bias, kind, daz):
    """`unpack` for values in flight between kernel steps: a NaN's ``exp`` holds
    the length of its payload (``sig``), as specialize.make_nan reads it."""
    cls, sign, exp, sig = unpack(bits, E, M, bias, kind, daz)
    if cls >= C_QNAN:
        if kind != K_IEEE:
            sig = np.int64(0)
        return cls, sign, nan_payload_length(M, kind), sig
    return cls, sign, exp, sig


@helper
def _round_increment(mode, sign, q, rem, half):
    """1 if the magnitude q (with remainder rem, half = the half-ulp) rounds up.
    Not for RTO or stochastic rounding, which round_pack handles itself."""
    if rem == 0:
        return 0
    if mode == RNE:
        return 1 if (rem > half or (rem == half and (q & 1) == 1)) else 0
    if mode == RNA:
        return 1 if rem >= half else 0
    if mode == RUP:
        return 1 - sign
    if mode == RDN:
        return sign
    return 0


# The branch-free twin. inline="always", as the fast loops that call them are:
# they are one expression each and compile inside the caller's loop.
@njit(cache=True, inline="always")
def round_masks(mode):
    """The rounding code ``mode`` as five 0/1 int64 masks (rne, rna, up, dn, odd):
    one is 1 for nearest-even, nearest-away, upward, downward, odd; all are 0
    toward zero (and for stochastic rounding, which the fast loops do apart)."""
    return (np.int64(mode == RNE), np.int64(mode == RNA), np.int64(mode == RUP),
            np.int64(mode == RDN), np.int64(mode == RTO))


@njit(cache=True, inline="always")
def increment_branchfree(sign, q, rem, half, m_rne, m_rna, m_up, m_dn):
    """`_round_increment` without branches: 1 if the magnitude q (remainder rem,
    half = the half-ulp, all >= 0) rounds up. Odd rounding sets the last bit of
    q instead (``q | (m_odd & (rem != 0))``); its increment is 0."""
    nz = np.int64(rem != 0)
    return ((m_rne & (np.int64(rem > half) | (np.int64(rem == half) & q & 1)))
            | (m_rna & np.int64(rem >= half))
            | (m_up & nz & (1 - sign))
            | (m_dn & nz & sign))


@njit(cache=True, inline="always")
def addend_branchfree(sign, lsb, half, m_rne, m_rna, m_up, m_dn):
    """The same increment as an addend: (x + addend) >> sh is x rounded at bit sh
    (half = 2**(sh-1), lsb = the lowest kept bit of x): half - 1 + lsb to nearest
    even, half to nearest away, 2**sh - 1 away from zero (upward for sign 0,
    downward for sign 1), 0 toward zero; a carry moves into the exponent."""
    away = (m_up & (1 - sign)) | (m_dn & sign)
    return m_rne * (half - 1 + lsb) + m_rna * half + away * (half + half - 1)


@helper
def max_mag(E, M, kind):
    """Magnitude encoding of the largest finite value."""
    if kind == K_IEEE:
        return (((np.int64(1) << E) - 1) << M) - 1
    if kind == K_FN or kind == K_FNU or kind == K_P3SE or kind == K_P3UF:
        return (np.int64(1) << (E + M)) - 2
    if kind == K_P3UE:
        return (np.int64(1) << (E + M)) - 3
    return (np.int64(1) << (E + M)) - 1


@helper
def overflow_result(sign, to_inf, E, M, kind, ovf):
    """Encoding for an overflowed result (the flags are the caller's). ``to_inf``:
    the rounding mode carries this sign's overflow to infinity (round_pack says).
    finite formats saturate in every mode (OCP MX v1.0: conversions saturate)."""
    if ovf == OVF_SATURATE or not to_inf or kind == K_FINITE:
        return (sign << (E + M)) | max_mag(E, M, kind)
    if kind == K_IEEE:
        return (sign << (E + M)) | (((np.int64(1) << E) - 1) << M)
    # fn/fnuz: NaN with the sign kept (as ml_dtypes does), whatever the NaN policy
    return signed_nan(sign, E, M, kind)


@helper
def round_pack(sign, exp, sig, E, M, bias, kind, pol, rbits):
    """Round ``(-1)**sign * sig * 2**exp`` (sig > 0, maybe jammed: bits below
    bit 0 OR-ed into bit 0) into the format. Returns ``(bits, flags)``.

    The only general rounding and the only function that reads the rounding
    mode per element (the fast paths use its branch-free twin above). ``rbits``
    is the random integer (pol[P_SRBITS] bits) for stochastic rounding.
    ``sig == 0`` stands for the exact zero of a cancellation x + (-x) (or of
    (+0) + (-0)): -0 rounding downward, +0 in every other mode (IEEE 754 6.3),
    whatever ``sign``.
    """
    mode = pol[P_MODE]
    flags = 0
    if sig == 0:
        return zero_bits(np.int64(1) if mode == RDN else np.int64(0), E, M, kind), zero_flags(kind)
    fnu = kind == K_FNU
    if fnu and sign == 1:             # fnu (e8m0) has no negative values
        return signed_nan(sign, E, M, kind), F_INVALID
    # 1. Normalize: leading one at bit 62.
    lz = clz64(sig) - 1
    sig = sig << lz
    exp = exp - lz
    e = exp + 62                      # exponent of the leading bit
    emin = 1 - bias
    # fnu has no subnormals: it rounds to M bits at every exponent (see step 6)
    tiny_before = e < emin and not fnu
    # 2. Rounding point: M fraction bits for normal results, fewer below emin.
    sh = 62 - M
    if tiny_before:
        sh += emin - e
    sh_full = sh
    if sh > 62:                       # keep sh <= 62 so that q, rem, half fit
        sig = shift_right_jam(sig, sh - 62)
        sh = 62
    q = sig >> sh
    rem = sig & ((np.int64(1) << sh) - 1)
    half = np.int64(1) << (sh - 1)
    # 3. Round the magnitude. (P3109 with P = 1, M = 0: the parity that
    # nearest-even and odd rounding read is the code's, i.e. the biased exponent's.)
    p3 = kind >= K_P3109
    qpar = q + (e + bias - 1) if (p3 and M == 0 and not tiny_before) else q
    if rem != 0:
        flags |= F_INEXACT
        if mode == RTO:
            if p3 and M == 0 and not tiny_before:
                q += 1 - (qpar & 1)     # P = 1: the next code when the lower one is even
            else:
                q |= 1
        elif mode == RSR:
            nb = pol[P_SRBITS]
            top = rem >> (sh - nb)
            rest = rem & ((np.int64(1) << (sh - nb)) - 1)
            if rest != 0:
                top += 1
            if rbits < top:           # P(up) = ceil(frac * 2**nb) / 2**nb
                q += 1
        elif mode >= RSR_A:           # explicit-bit schemes (sr_schemes.py)
            nb = pol[P_SRBITS]
            q += scheme_round_up(mode, nb, rbits, rem, sh, 62 - M - nb - (sh_full - sh))
        else:
            q += _round_increment(mode, sign, qpar, rem, half)
    # 4. Pack: a carry out of the significand moves into the exponent by itself.
    if tiny_before:
        mag = q
    else:
        mag = ((e + bias - 1) << M) + q
    # 5. Overflow (P3109: saturation, pol[P_OVF] holding the SAT_* mode; a
    # negative result of an unsigned format lies below its Mlo = 0).
    if p3 and ((sign == 1 and kind >= K_P3UE and mag > 0) or mag > max_mag(E, M, kind)):
        b = p3109_saturate(sign, False, mode, E, M, kind, pol[P_OVF])
        return b, p3109_saturate_flags(b, E, M, kind)
    if mag > max_mag(E, M, kind):
        flags |= F_OVERFLOW | F_INEXACT
        to_inf = (mode == RNE or mode == RNA or is_sr_code(mode)
                  or (mode == RUP and sign == 0) or (mode == RDN and sign == 1))
        return overflow_result(sign, to_inf, E, M, kind, pol[P_OVF]), flags
    # 6. Tininess and underflow.
    if fnu:
        # mag = ((e + bias - 1) << M) + q is the encoding of q * 2**(e - M) also
        # below 2**-bias (negative there; 0 exactly at 2**-bias, reached by a carry
        # from e = -bias - 1). No zero, no subnormals: clamp to 2**-bias.
        # Tininess as for every format: the smallest value is 2**-bias. After
        # rounding (the default) a result that rounds up to 2**-bias (mag == 0 from
        # e = -bias - 1, or more) is not tiny; before rounding (tininess="before",
        # and always under stochastic rounding and round-to-odd) every exact value
        # below 2**-bias is tiny, and inexact there, so it raises underflow.
        if mag < 0:
            return np.int64(0), flags | F_UNDERFLOW | F_INEXACT
        if e < -bias and (pol[P_TINB] != 0 or is_sr_code(mode) or mode == RTO):
            flags |= F_UNDERFLOW
        return mag, flags
    tiny = tiny_before
    if tiny and e == emin - 1 and pol[P_TINB] == 0 and not is_sr_code(mode) and mode != RTO:
        # after rounding: would rounding to full precision carry up to 2**emin?
        sh0 = 62 - M
        q0 = sig >> sh0
        rem0 = sig & ((np.int64(1) << sh0) - 1)
        q0 += _round_increment(mode, sign, q0, rem0, np.int64(1) << (sh0 - 1))
        if q0 >> (M + 1):
            tiny = False
    if pol[P_FTZ] and 0 < mag < (np.int64(1) << M):
        flags |= F_UNDERFLOW | F_INEXACT
        mag = 0
    elif tiny and rem != 0:
        flags |= F_UNDERFLOW
    if (kind == K_FNUZ or p3) and mag == 0:
        return np.int64(0), flags
    return (sign << (E + M)) | mag, flags


@helper
def zero_bits(sign, E, M, kind):
    """Encoding of a zero result. fnu formats have no zero: their NaN (callers
    raise invalid there: see `zero_flags`)."""
    if kind == K_FNUZ or kind >= K_P3109:
        return np.int64(0)
    if kind == K_FNU:
        return signed_nan(np.int64(0), E, M, kind)
    return sign << (E + M)


@helper
def zero_flags(kind):
    """Flags of a zero result: invalid for fnu formats, which have no zero."""
    return F_INVALID if kind == K_FNU else 0


@helper
def inf_bits(sign, E, M, kind, ovf):
    """Encoding for an exact infinite result; formats without infinity give NaN
    (or their largest value when overflow saturates); finite formats (no NaN) give
    their largest value and raise invalid; fnu gives NaN for -inf; P3109 formats
    saturate as ``ovf`` (a SAT_* mode there) says. Returns (bits, flags)."""
    if kind >= K_P3109:
        b = p3109_saturate(sign, True, np.int64(RNE), E, M, kind, ovf)
        return b, (F_INVALID if b == p3109_nan(E, M, kind) else 0)
    if kind == K_IEEE:
        return (sign << (E + M)) | (((np.int64(1) << E) - 1) << M), 0
    if kind == K_FINITE:
        return (sign << (E + M)) | max_mag(E, M, kind), F_INVALID
    if kind == K_FNU and sign == 1:
        return signed_nan(sign, E, M, kind), F_INVALID
    if ovf == OVF_SATURATE:
        return (sign << (E + M)) | max_mag(E, M, kind), 0
    return signed_nan(sign, E, M, kind), F_INVALID


@helper
def is_stochastic(pol):
    """Whether the policy rounds stochastically (the loops then draw random bits)."""
    return pol[P_MODE] == RSR
