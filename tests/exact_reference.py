"""A slow, obviously-right reference for encodings and rounding.

Written independently of ``softfloat._kernels``: plain Python ints and exact
``fractions.Fraction`` arithmetic, one value at a time. From a format it reads
only the four numbers that define it (``ebits``, ``mbits``, ``bias``, ``kind``)
and derives everything else here, so a wrong constant in ``softfloat.formats``
shows up as a disagreement.

Contents
--------
decode(bits, fmt)            -> Decoded(cls, sign, value)
round_exact(sign, mag, fmt, rounding, ...) -> (bits, flags)   mag > 0 exact
round_value(x, fmt, rounding, ...)         -> (bits, flags)   floats/Fractions incl. 0/inf/nan
mpfr_round(x, fmt, rounding) -> bits       a second witness (gmpy2/MPFR), IEEE formats
all_encodings(fmt)           -> list of every encoding (formats of <= 16 bits)
Layout helpers: layout(fmt), max_value(fmt), nan_bits(fmt), is_nan_bits(bits, fmt).

Flag bits are SoftFloat's: inexact 1, underflow 2, overflow 4, infinite 8, invalid 16.

Policy choices that IEEE 754 leaves open (they mirror the library's stated rules,
see softfloat/context.py):
- stochastic rounding rounds up iff ``r < ceil(frac * 2**sr_bits)`` with
  ``frac = (mag - lower) / (upper - lower)``; its tininess is "before rounding"
  whatever ``tininess`` says (the unbounded-exponent rounding of a random
  rounding is not defined); an up-rounding past the largest finite overflows like
  round-to-nearest does.
- round to odd never overflows to infinity: it gives the largest finite value.
- fn/fnuz formats (no infinity): where IEEE would give infinity the result is NaN
  (overflow=None/'ieee'/'nan'), or the largest finite value (overflow='saturate').
  An infinite *input* becomes NaN with invalid, or the largest finite value
  (saturate) with no flag.
- finite formats (OCP fp4/fp6: no infinity, no NaN): an overflow gives the
  largest finite value of its sign in every mode and policy (overflow, inexact);
  an infinite input gives it too, with invalid; a NaN input gives +0 with invalid.
- fnu formats (OCP E8M0: no sign bit, no zero, no subnormals, all-ones NaN):
  negative values, zeros and -inf give the NaN with invalid; a positive value is
  rounded to M fraction bits at its own exponent (no subnormal grid), and a
  result below 2**-bias becomes 2**-bias (underflow, inexact); overflow and +inf
  as for fn formats.
"""
from __future__ import annotations

import math
import struct
from collections import namedtuple
from fractions import Fraction

INEXACT, UNDERFLOW, OVERFLOW, INFINITE, INVALID = 1, 2, 4, 8, 16

MODES = ("nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd",
         "stochastic")
DETERMINISTIC = MODES[:-1]
_ALIASES = {"rne": "nearest_even", "rna": "nearest_away", "rtz": "toward_zero",
            "rup": "upward", "rdn": "downward", "rto": "odd", "sr": "stochastic"}

Decoded = namedtuple("Decoded", "cls sign value")
Decoded.__doc__ = """cls in 'zero','finite','inf','qnan','snan'; sign 0/1;
value: exact Fraction magnitude*sign for finite, Fraction(0) for zero, None otherwise."""

Layout = namedtuple("Layout", "E M bias kind nbits emin emax max_frac")


# --------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------
_HOST = {"fp64": (11, 52, 1023, "ieee"), "float64": (11, 52, 1023, "ieee"),
         "fp32": (8, 23, 127, "ieee"), "float32": (8, 23, 127, "ieee"),
         "fp16": (5, 10, 15, "ieee"), "float16": (5, 10, 15, "ieee")}


def layout(fmt) -> Layout:
    """The defining numbers of a format and what follows from them.

    ``fmt`` is anything with ebits/mbits/bias/kind attributes (softfloat.Format),
    a tuple (ebits, mbits, bias, kind), or one of the host names in _HOST.
    """
    if isinstance(fmt, Layout):
        return fmt
    if isinstance(fmt, str):
        E, M, bias, kind = _HOST[fmt]
    elif isinstance(fmt, tuple):
        E, M, bias, kind = fmt
    else:
        E, M, bias, kind = fmt.ebits, fmt.mbits, fmt.bias, fmt.kind
    assert kind in ("ieee", "fn", "fnuz", "finite", "fnu")
    top = (1 << E) - 1                # the all-ones exponent field
    emin = 1 - bias                   # exponent of the smallest normal (field 1)
    nbits = 1 + E + M
    if kind == "fnu":                 # no sign bit; field 0 is a normal exponent
        emin = -bias
        nbits = E + M
        if M == 0:                    # the all-ones field is the NaN as a whole
            emax, max_frac = top - 1 - bias, 0
        else:
            emax, max_frac = top - bias, (1 << M) - 2
    elif kind == "ieee":
        emax = (top - 1) - bias       # all-ones field is inf/NaN
        max_frac = (1 << M) - 1
    elif kind == "fn":
        emax = top - bias             # all-ones field is usable ...
        max_frac = (1 << M) - 2       # ... except all-ones fraction (NaN)
    else:
        emax = top - bias             # fnuz: only 0x80-like pattern is NaN; finite: none
        max_frac = (1 << M) - 1
    return Layout(E, M, bias, kind, nbits, emin, emax, max_frac)


def max_value(fmt) -> Fraction:
    """Largest finite value."""
    L = fmt if isinstance(fmt, Layout) else layout(fmt)
    return (1 + Fraction(L.max_frac, 1 << L.M)) * Fraction(2) ** L.emax


def nan_bits(fmt, sign=0) -> int:
    """A quiet NaN encoding (the format's default one; fn keeps the sign).
    finite formats have none: None."""
    L = layout(fmt)
    if L.kind == "finite":
        return None
    if L.kind == "fnu":
        return (1 << (L.E + L.M)) - 1
    if L.kind == "ieee":
        return (sign << (L.E + L.M)) | (((1 << L.E) - 1) << L.M) | (1 << (L.M - 1))
    if L.kind == "fn":
        return (sign << (L.E + L.M)) | ((1 << (L.E + L.M)) - 1)
    return 1 << (L.E + L.M)


def is_nan_bits(bits: int, fmt) -> bool:
    return decode(bits, fmt).cls in ("qnan", "snan")


def all_encodings(fmt) -> list:
    """Every encoding 0 .. 2**nbits - 1 of a format of at most 16 bits."""
    L = layout(fmt)
    assert L.nbits <= 16, "all_encodings is for formats of at most 16 bits"
    return list(range(1 << L.nbits))


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------
def decode(bits: int, fmt) -> Decoded:
    """Class, sign and exact value of one encoding."""
    L = layout(fmt)
    bits = int(bits)
    assert 0 <= bits < (1 << L.nbits), "not an encoding of this format"
    sign = bits >> (L.E + L.M)
    efield = (bits >> L.M) & ((1 << L.E) - 1)
    frac = bits & ((1 << L.M) - 1)
    top = (1 << L.E) - 1
    if L.kind == "ieee" and efield == top:
        if frac == 0:
            return Decoded("inf", sign, None)
        # quiet NaNs have the top fraction bit set
        return Decoded("qnan" if frac >> (L.M - 1) else "snan", sign, None)
    if L.kind == "fn" and efield == top and frac == (1 << L.M) - 1:
        return Decoded("qnan", sign, None)
    if L.kind == "fnuz" and sign == 1 and efield == 0 and frac == 0:
        return Decoded("qnan", sign, None)
    if L.kind == "fnu":
        if efield == top and frac == (1 << L.M) - 1:
            return Decoded("qnan", 0, None)
        return Decoded("finite", 0, (1 + Fraction(frac, 1 << L.M)) * Fraction(2) ** (efield - L.bias))
    if efield == 0:
        if frac == 0:
            return Decoded("zero", sign, Fraction(0))
        mag = Fraction(frac, 1 << L.M) * Fraction(2) ** L.emin        # subnormal
    else:
        mag = (1 + Fraction(frac, 1 << L.M)) * Fraction(2) ** (efield - L.bias)
    return Decoded("finite", sign, -mag if sign else mag)


# --------------------------------------------------------------------------
# Rounding
# --------------------------------------------------------------------------
def _floor_log2(mag: Fraction) -> int:
    """The e with 2**e <= mag < 2**(e+1), exactly."""
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    assert Fraction(2) ** e <= mag < Fraction(2) ** (e + 1)
    return e


def _mode(rounding: str) -> str:
    r = _ALIASES.get(rounding, rounding)
    assert r in MODES, f"unknown mode {rounding!r}"
    return r


def _choose(n: int, rem: Fraction, sign: int, mode: str, sr_bits: int, sr_random) -> int:
    """Round the magnitude n + rem (0 <= rem < 1, in units of the step) to an integer."""
    if rem == 0:
        return n
    if mode == "nearest_even":
        if rem != Fraction(1, 2):
            return n + 1 if rem > Fraction(1, 2) else n
        return n + 1 if n % 2 == 1 else n
    if mode == "nearest_away":
        return n + 1 if rem >= Fraction(1, 2) else n
    if mode == "toward_zero":
        return n
    if mode == "upward":             # toward +inf: magnitude up for positives
        return n + 1 if sign == 0 else n
    if mode == "downward":           # toward -inf: magnitude up for negatives
        return n + 1 if sign == 1 else n
    if mode == "odd":                # the neighbour whose last bit is 1
        return n if n % 2 == 1 else n + 1
    if mode == "stochastic":
        assert sr_random is not None, "stochastic rounding needs sr_random"
        assert 0 <= sr_random < (1 << sr_bits)
        threshold = math.ceil(rem * (1 << sr_bits))   # ceil(frac * 2**sr_bits)
        return n + 1 if sr_random < threshold else n
    raise AssertionError(mode)


def _round_to_step(sign, mag, q_exp, mode, sr_bits, sr_random):
    """Round mag to a multiple of 2**q_exp; returns (rounded value, inexact)."""
    step = Fraction(2) ** q_exp
    scaled = mag / step
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    return _choose(n, rem, sign, mode, sr_bits, sr_random) * step, rem != 0


def _encode_finite(sign: int, v: Fraction, L: Layout) -> int:
    """Encoding of a representable magnitude v >= 0 (v <= max)."""
    if v == 0:
        assert L.kind != "fnu"
        return 0 if L.kind == "fnuz" else sign << (L.E + L.M)
    if L.kind == "fnu":
        assert sign == 0 and v >= Fraction(2) ** L.emin
        e = _floor_log2(v)
        f = v / Fraction(2) ** (e - L.M) - (1 << L.M)
        assert f.denominator == 1 and 0 <= f < (1 << L.M)
        return ((e + L.bias) << L.M) | int(f)
    if v < Fraction(2) ** L.emin:                     # subnormal: field 0
        f = v / Fraction(2) ** (L.emin - L.M)
        assert f.denominator == 1 and 0 < f < (1 << L.M)
        mag_bits = int(f)
    else:
        e = _floor_log2(v)
        f = v / Fraction(2) ** (e - L.M) - (1 << L.M)
        assert f.denominator == 1 and 0 <= f < (1 << L.M)
        mag_bits = ((e + L.bias) << L.M) | int(f)
    return (sign << (L.E + L.M)) | mag_bits


def _overflow_bits(sign: int, L: Layout, mode: str, overflow) -> int:
    """Result of an overflow: infinity (or NaN without one) or the largest finite."""
    maxb = (sign << (L.E + L.M)) | (((L.emax + L.bias) << L.M) | L.max_frac)
    if overflow == "saturate" or L.kind == "finite":
        return maxb
    to_inf = (mode in ("nearest_even", "nearest_away", "stochastic")
              or (mode == "upward" and sign == 0) or (mode == "downward" and sign == 1))
    if not to_inf:
        return maxb
    if L.kind == "ieee":
        return (sign << (L.E + L.M)) | (((1 << L.E) - 1) << L.M)
    return nan_bits(L, sign)


def round_exact(sign: int, mag: Fraction, fmt, rounding: str, *, tininess="after",
                ftz=False, overflow=None, sr_bits=32, sr_random=None):
    """Correctly round (-1)**sign * mag (mag > 0, exact) into fmt: (bits, flags)."""
    L = layout(fmt)
    mode = _mode(rounding)
    mag = Fraction(mag)
    assert mag > 0 and sign in (0, 1)
    assert tininess in ("after", "before")
    if overflow == "nan":
        assert L.kind != "ieee", "overflow='nan' is for formats without infinity"
    e = _floor_log2(mag)
    if L.kind == "fnu":
        if sign == 1:
            return nan_bits(L), INVALID
        # no subnormal grid: M fraction bits below the leading bit at every exponent
        v, inexact = _round_to_step(sign, mag, e - L.M, mode, sr_bits, sr_random)
        if v > max_value(L):
            return _overflow_bits(sign, L, mode, overflow), OVERFLOW | INEXACT
        if v < Fraction(2) ** L.emin:
            return _encode_finite(0, Fraction(2) ** L.emin, L), UNDERFLOW | INEXACT
        flags = INEXACT if inexact else 0
        # rounded up to the smallest value 2**emin from below: tiny before rounding
        # (after rounding it is not: the one tininess rule of every format)
        if inexact and mag < Fraction(2) ** L.emin and (tininess == "before"
                                                        or mode == "stochastic"):
            flags |= UNDERFLOW
        return _encode_finite(0, v, L), flags
    # The result's quantum: M fraction bits below the leading bit, but never
    # below the subnormal quantum 2**(emin - M).
    v, inexact = _round_to_step(sign, mag, max(e, L.emin) - L.M, mode, sr_bits, sr_random)
    flags = INEXACT if inexact else 0
    # Overflow: the rounded value (exponent range unbounded above) exceeds max.
    if v > max_value(L):
        return _overflow_bits(sign, L, mode, overflow), OVERFLOW | INEXACT
    # Tininess: before = |x| < 2**emin; after = |x| rounded to p bits with an
    # unbounded exponent range is < 2**emin.
    two_emin = Fraction(2) ** L.emin
    if tininess == "before" or mode == "stochastic":
        tiny = mag < two_emin
    else:
        v_unb, _ = _round_to_step(sign, mag, e - L.M, mode, sr_bits, sr_random)
        tiny = v_unb < two_emin
    if ftz and 0 < v < two_emin:
        # flush a subnormal result to (signed) zero
        return _encode_finite(sign, Fraction(0), L), UNDERFLOW | INEXACT
    if tiny and inexact:
        flags |= UNDERFLOW
    return _encode_finite(sign, v, L), flags


def _host_sign_and_value(x):
    """(class, sign, exact Fraction magnitude, float64/32 bits or None) of x."""
    if isinstance(x, Fraction):
        return ("zero" if x == 0 else "finite"), int(x < 0), abs(x), None
    x = float(x)
    sign = int(math.copysign(1.0, x) < 0)
    if math.isnan(x):
        return "nan", sign, None, struct.unpack("<Q", struct.pack("<d", x))[0]
    if math.isinf(x):
        return "inf", sign, None, None
    if x == 0:
        return "zero", sign, Fraction(0), None
    return "finite", sign, abs(Fraction(x)), None


def round_value(x, fmt, rounding="nearest_even", *, daz=False, src=None, **policies):
    """Round a float or Fraction (zeros, infinities and NaN included) into fmt.

    ``daz``: a value below the smallest normal of the source format ``src``
    ('fp64', 'fp32', 'fp16' or a format) is read as a signed zero.
    NaN inputs give the format's default NaN (compare NaN results as 'both NaN');
    a float64 signaling NaN raises invalid. ``policies``: those of round_exact.
    """
    L = layout(fmt)
    cls, sign, mag, nbits = _host_sign_and_value(x)
    if cls == "nan":
        quiet = (nbits >> 51) & 1
        if L.kind == "finite":
            return 0, INVALID
        return nan_bits(fmt, sign), (0 if quiet else INVALID)
    if cls == "inf":
        if L.kind == "ieee":
            return (sign << (L.E + L.M)) | (((1 << L.E) - 1) << L.M), 0
        if L.kind == "finite":
            return (sign << (L.E + L.M)) | (((L.emax + L.bias) << L.M) | L.max_frac), INVALID
        if L.kind == "fnu" and sign == 1:
            return nan_bits(fmt), INVALID
        if policies.get("overflow") == "saturate":
            return (sign << (L.E + L.M)) | (((L.emax + L.bias) << L.M) | L.max_frac), 0
        return nan_bits(fmt, sign), INVALID
    if cls == "finite" and daz:
        assert src is not None, "daz needs the source format"
        if mag < Fraction(2) ** layout(src).emin:
            cls = "zero"
    if cls == "zero":
        if L.kind == "fnu":
            return nan_bits(fmt), INVALID
        return _encode_finite(sign, Fraction(0), L), 0
    return round_exact(sign, mag, fmt, rounding, **policies)


def neighbours(mag: Fraction, fmt):
    """(lower, upper): the representable magnitudes around mag > 0 with the
    format's quantum (upper may exceed max). Used for stochastic-rounding tests."""
    L = layout(fmt)
    e = _floor_log2(Fraction(mag))
    step = Fraction(2) ** (max(e, L.emin) - L.M)
    n = (Fraction(mag) / step).numerator // (Fraction(mag) / step).denominator
    return n * step, (n + 1) * step


# --------------------------------------------------------------------------
# MPFR: a second witness (IEEE formats, 5 IEEE modes)
# --------------------------------------------------------------------------
def mpfr_round(x, fmt, rounding) -> int:
    """Encoding of x rounded into an IEEE-kind format by MPFR (gmpy2).

    A context of precision p with subnormalize=True and exponent range set for
    the format; nearest_away, which MPFR lacks as a mode, is nearest_even except
    on exact ties, detected in a wide context. Zeros, infinities and NaNs are
    returned directly.
    """
    import gmpy2
    L = layout(fmt)
    assert L.kind == "ieee"
    mode = _mode(rounding)
    rmodes = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero,
              "upward": gmpy2.RoundUp, "downward": gmpy2.RoundDown}
    # MPFR writes x = m * 2**exp with 0.5 <= m < 1, so a normal 1.f * 2**e has
    # MPFR exponent e + 1; the smallest subnormal 2**(emin - M) has emin - M + 1.
    ctx = gmpy2.context(precision=L.M + 1, emin=L.emin - L.M + 1, emax=L.emax + 1,
                        subnormalize=True)
    wide = gmpy2.context(precision=4096, emin=-(1 << 20), emax=1 << 20)
    with wide:
        xw = gmpy2.mpfr(gmpy2.mpq(x.numerator, x.denominator)) if isinstance(x, Fraction) \
            else gmpy2.mpfr(float(x))

    def rnd(m):
        ctx.round = m
        with ctx:
            return +xw            # one rounding into the target context

    if mode == "nearest_away":
        lo, hi = rnd(gmpy2.RoundDown), rnd(gmpy2.RoundUp)
        with wide:
            tie = lo != hi and (lo + hi) / 2 == xw
        r = (hi if xw > 0 else lo) if tie else rnd(gmpy2.RoundToNearest)
    else:
        r = rnd(rmodes[mode])
    if gmpy2.is_nan(r):
        return nan_bits(fmt)
    sign = int(gmpy2.is_signed(r))
    if gmpy2.is_infinite(r):
        return (sign << (L.E + L.M)) | (((1 << L.E) - 1) << L.M)
    if r == 0:
        return sign << (L.E + L.M)
    return _encode_finite(sign, abs(Fraction(gmpy2.mpq(r))), L)
