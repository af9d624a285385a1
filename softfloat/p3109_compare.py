"""IEEE P3109 operations without rounding (part of `softfloat.p3109`, which
offers every name here): extrema, comparisons, predicates, neighbours and the
formats' special values, on the codes of one P3109 format.
"""
from __future__ import annotations

import numpy as np

from . import _validate
from ._validate import target_format as _fmt

__all__ = [
    "minimum", "maximum", "minimum_number", "maximum_number", "minimum_magnitude",
    "maximum_magnitude", "minimum_magnitude_number", "maximum_magnitude_number",
    "minimum_finite", "maximum_finite", "compare_less", "compare_less_equal", "compare_equal",
    "compare_greater", "compare_greater_equal", "is_zero", "is_one", "is_nan", "is_infinite",
    "is_finite", "is_sign_minus", "is_normal", "is_subnormal", "next_greater_than",
    "next_less_than", "max_finite_of", "min_finite_of", "min_positive_of", "min_normal_of",
    "max_subnormal_of"]


def _codes(x, fx, name="x"):
    f = _fmt(fx)
    if not f.is_p3109:
        raise ValueError(f"{name}: expected a P3109 format, got {f.name}")
    return f, _validate.as_bits(x, f, name).astype(np.int64)


def _key(c, f):
    """Order key of codes (finite and infinite values, in value order); NaN apart."""
    K, P, signed, ext = f.p3109_params
    if not signed:
        return c
    h = 1 << (K - 1)
    return np.where(c > h, h - c, c)       # negative codes: -(magnitude)


def _isnan(c, f):
    return c == f.default_nan_bits


def _isinf(c, f):
    K, P, signed, ext = f.p3109_params
    if not ext:
        return np.zeros(np.shape(c), bool)
    return (c == f.inf_bits) | ((c == (1 << K) - 1) if signed else False)


def _pair(x, y, fmt):
    f, a = _codes(x, fmt, "x")
    _, b = _codes(y, f, "y")
    a, b = np.broadcast_arrays(a, b)
    return f, a, b


def _pick(f, a, b, take_a):
    return np.where(take_a, a, b).astype(f.dtype)


def _minmax(x, y, fmt, want_min, magnitude, number):
    f, a, b = _pair(x, y, fmt)
    na, nb = _isnan(a, f), _isnan(b, f)
    ka, kb = _key(a, f), _key(b, f)
    if magnitude:
        ma, mb = np.abs(ka), np.abs(kb)
        # |x| = |y|: the minimum takes the more negative, the maximum the more positive
        take_a = np.where(ma == mb, (ka <= kb) if want_min else (ka >= kb),
                          (ma < mb) if want_min else (ma > mb))
    else:
        take_a = (ka <= kb) if want_min else (ka >= kb)
    r = _pick(f, a, b, take_a)
    nan = np.asarray(f.default_nan_bits, f.dtype)
    if number:
        r = np.where(na & ~nb, b, np.where(nb & ~na, a, np.where(na & nb, nan, r)))
    else:
        r = np.where(na | nb, nan, r)
    return r.astype(f.dtype)


def minimum(x, y, fmt):
    """Minimum<f, f, f>: NaN if either operand is NaN, else the lesser."""
    return _minmax(x, y, fmt, True, False, False)


def maximum(x, y, fmt):
    """Maximum<f, f, f>: NaN if either operand is NaN, else the greater."""
    return _minmax(x, y, fmt, False, False, False)


def minimum_number(x, y, fmt):
    """MinimumNumber: the number when one operand is NaN."""
    return _minmax(x, y, fmt, True, False, True)


def maximum_number(x, y, fmt):
    """MaximumNumber: the number when one operand is NaN."""
    return _minmax(x, y, fmt, False, False, True)


def minimum_magnitude(x, y, fmt):
    """MinimumMagnitude: the operand of lesser magnitude (equal: the lesser); NaN wins."""
    return _minmax(x, y, fmt, True, True, False)


def maximum_magnitude(x, y, fmt):
    """MaximumMagnitude: the operand of greater magnitude (equal: the greater); NaN wins."""
    return _minmax(x, y, fmt, False, True, False)


def minimum_magnitude_number(x, y, fmt):
    """MinimumMagnitudeNumber: as minimum_magnitude, the number when one is NaN."""
    return _minmax(x, y, fmt, True, True, True)


def maximum_magnitude_number(x, y, fmt):
    """MaximumMagnitudeNumber: as maximum_magnitude, the number when one is NaN."""
    return _minmax(x, y, fmt, False, True, True)


def _finite_minmax(x, y, fmt, want_min):
    f, a, b = _pair(x, y, fmt)
    rank = [np.where(_isnan(c, f), 0, np.where(_isinf(c, f), 1, 2)) for c in (a, b)]
    both = minimum(a.astype(f.dtype), b.astype(f.dtype), f) if want_min else \
        maximum(a.astype(f.dtype), b.astype(f.dtype), f)
    return np.where(rank[0] > rank[1], a, np.where(rank[1] > rank[0], b, both)).astype(f.dtype)


def minimum_finite(x, y, fmt):
    """MinimumFinite: a finite operand wins over an infinite or NaN one (an
    infinite one over NaN); otherwise as minimum."""
    return _finite_minmax(x, y, fmt, True)


def maximum_finite(x, y, fmt):
    """MaximumFinite: a finite operand wins over an infinite or NaN one (an
    infinite one over NaN); otherwise as maximum."""
    return _finite_minmax(x, y, fmt, False)


def _compare(x, y, fmt, op):
    f, a, b = _pair(x, y, fmt)
    ok = ~(_isnan(a, f) | _isnan(b, f))
    return ok & op(_key(a, f), _key(b, f))


def compare_less(x, y, fmt):
    """CompareLess: x < y; False with a NaN operand."""
    return _compare(x, y, fmt, np.less)


def compare_less_equal(x, y, fmt):
    return _compare(x, y, fmt, np.less_equal)


def compare_equal(x, y, fmt):
    """CompareEqual: False with a NaN operand (NaN == NaN is False)."""
    return _compare(x, y, fmt, np.equal)


def compare_greater(x, y, fmt):
    return _compare(x, y, fmt, np.greater)


def compare_greater_equal(x, y, fmt):
    return _compare(x, y, fmt, np.greater_equal)


def is_zero(x, fmt):
    f, c = _codes(x, fmt)
    return c == 0


def is_one(x, fmt):
    f, c = _codes(x, fmt)
    return c == f.p3109_one_bits


def is_nan(x, fmt):
    f, c = _codes(x, fmt)
    return _isnan(c, f)


def is_infinite(x, fmt):
    f, c = _codes(x, fmt)
    return _isinf(c, f)


def is_finite(x, fmt):
    f, c = _codes(x, fmt)
    return ~(_isnan(c, f) | _isinf(c, f))


def is_sign_minus(x, fmt):
    """True for negative values (never for NaN, zero or an unsigned format)."""
    f, c = _codes(x, fmt)
    return (_key(c, f) < 0) & ~_isnan(c, f)


def _mag(c, f):
    return np.abs(_key(c, f))


def is_normal(x, fmt):
    """Finite, nonzero and |x| >= MinNormalOf (P = 1: every nonzero finite value)."""
    f, c = _codes(x, fmt)
    fin = ~(_isnan(c, f) | _isinf(c, f))
    return fin & (_mag(c, f) >= (1 << f.mbits))


def is_subnormal(x, fmt):
    """Finite, nonzero and not normal."""
    f, c = _codes(x, fmt)
    fin = ~(_isnan(c, f) | _isinf(c, f))
    m = _mag(c, f)
    return fin & (m > 0) & (m < (1 << f.mbits))


def _from_key(k, f):
    K, P, signed, ext = f.p3109_params
    return np.where(k < 0, (1 << (K - 1)) - k, k) if signed else k


def _next(x, fmt, up):
    f, c = _codes(x, fmt)
    K, P, signed, ext = f.p3109_params
    k = _key(c, f)
    top = f.inf_bits if ext else f.max_bits             # key of the top of the order
    low = -top if signed else 0
    nk = k + (1 if up else -1)
    nan = f.default_nan_bits
    bad = _isnan(c, f) | (nk > top) | (nk < low)
    return np.where(bad, nan, _from_key(np.clip(nk, low, top), f)).astype(f.dtype)


def next_greater_than(x, fmt):
    """NextGreaterThan: the next code up in value order; from the largest finite
    value Inf (extended) or NaN (finite); from Inf NaN; NaN gives NaN."""
    return _next(x, fmt, True)


def next_less_than(x, fmt):
    """NextLessThan: the next code down; from 0 in an unsigned format NaN; from
    -Inf, or from the least finite value of a finite format, NaN."""
    return _next(x, fmt, False)


def max_finite_of(fmt):
    """MaxFiniteOf: the code of the largest finite value."""
    return _fmt(fmt).dtype.type(_fmt(fmt).max_bits)


def min_finite_of(fmt):
    """MinFiniteOf: -MaxFiniteOf (signed) or 0 (unsigned)."""
    f = _fmt(fmt)
    return f.dtype.type((f.sign_mask | f.max_bits) if f.has_sign else 0)


def min_positive_of(fmt):
    return _fmt(fmt).dtype.type(1)


def min_normal_of(fmt):
    f = _fmt(fmt)
    return f.dtype.type(1 << f.mbits)


def max_subnormal_of(fmt):
    """MaxSubnormalOf: the largest subnormal, NaN where there is none (P = 1)."""
    f = _fmt(fmt)
    return f.dtype.type(f.default_nan_bits if f.mbits == 0 else (1 << f.mbits) - 1)
