"""Hypothesis strategies for simulated formats (import it yourself:
``from softfloat import strategies``; ``import softfloat`` does not load
hypothesis).

hypothesis has ``floats(width=16)`` but nothing for bfloat16, fp8 or custom
formats, and nothing that draws encodings (NaN payloads, signaling NaNs, both
zeros). These strategies do, for every `softfloat.Format`:

``encodings(fmt, ...)``
    encodings (numpy scalars of ``fmt.dtype``), optionally bounded by value;
``values(fmt, ...)``
    float64 values exactly representable in ``fmt`` (same options);
``arrays(fmt, shape, ...)``
    numpy arrays of encodings (after `hypothesis.extra.numpy.arrays`);
``midpoints(fmt, ...)``
    float64 values exactly halfway between two neighbouring values of ``fmt``
    (and the rounding boundary above the largest finite value), for rounding
    tests.

With ``boundary_bias=True`` (the default) about half of the draws come from a
list of values where bugs live, as hypothesis.extra.numpy does for its dtypes:
both zeros, the smallest and largest subnormals, the smallest normal, binade
edges (2**e and the value below it), 1 and its neighbours, the largest finite
value, both infinities, quiet and signaling NaNs of both signs (where the format
has them). Shrinking goes towards +0, then small magnitudes.

Example::

    from hypothesis import given
    import softfloat as sf
    from softfloat import strategies as sfst

    @given(sfst.encodings("bf16", allow_nan=False), sfst.encodings("bf16", allow_nan=False))
    def test_add_commutes(a, b):
        assert sf.add(a, b, "bf16") == sf.add(b, a, "bf16")
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from ._extras import require

require("hypothesis", "softfloat.strategies")
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from . import _validate
from .formats import Format, get_format
from .specialize import is_nan_bits

__all__ = ["encodings", "values", "arrays", "midpoints"]


# ---------------------------------------------------------------------------
# argument checks
def _fmt(fmt) -> Format:
    if not isinstance(fmt, (Format, str)):
        raise TypeError(f"fmt must be a softfloat.Format or a format name, got "
                        f"{type(fmt).__name__}")
    return get_format(fmt)


def _bool(name, v, none_ok=False):
    return _validate.optional_boolean(v, name) if none_ok else _validate.boolean(v, name)


def _bound(name, v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating,
                                                                np.integer)):
        raise TypeError(f"{name} must be a real number or None, got {type(v).__name__}")
    if isinstance(v, float) and math.isnan(v):
        raise ValueError(f"{name} must not be NaN")
    return v


# ---------------------------------------------------------------------------
# encodings as ordered magnitudes
def _value(fmt: Format, bits: int):
    """Exact value of an encoding: Fraction, +-inf (float) or None for NaN."""
    E, M = fmt.ebits, fmt.mbits
    sign = (bits >> (E + M)) & 1
    mag = bits & (fmt.sign_mask - 1)
    if _is_nan(fmt, bits):
        return None
    if fmt.kind == "ieee" and mag == fmt.inf_bits:
        return -math.inf if sign else math.inf
    v = fmt._value_of(mag)
    return -v if sign else v


def _is_nan(fmt: Format, bits: int) -> bool:
    return bool(is_nan_bits(fmt, bits))


def _first_mag_at_least(fmt: Format, x: Fraction) -> int:
    """Smallest finite magnitude encoding whose value is >= x >= 0 (max_bits+1 if none)."""
    lo, hi = 0, fmt.max_bits + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if fmt._value_of(mid) >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _last_mag_at_most(fmt: Format, x: Fraction) -> int:
    """Largest finite magnitude encoding whose value is <= x (-1 if none)."""
    return _first_mag_at_least(fmt, x + Fraction(1, 1 << 400)) - 1 if x >= 0 else -1


def _finite_intervals(fmt: Format, lo, hi, allow_subnormal):
    """Encoding intervals (inclusive) of finite values in [lo, hi], positive
    first (towards larger magnitudes), then negative."""
    maxm = fmt.max_bits
    out = []
    sub_end = (1 << fmt.mbits) - 1         # largest subnormal magnitude

    def mag_range(a, b):                   # magnitudes [a, b] minus subnormals
        if a > b:
            return []
        if allow_subnormal or fmt.kind == "fnu":   # fnu (e8m0): no subnormals, no zero
            return [(a, b)]
        parts = []
        if a == 0:
            parts.append((0, 0))
        a2 = max(a, sub_end + 1)
        if a2 <= b:
            parts.append((a2, b))
        return parts
    flo = Fraction(lo) if lo is not None and math.isfinite(lo) else None
    fhi = Fraction(hi) if hi is not None and math.isfinite(hi) else None
    if lo is not None and lo == math.inf:
        return out
    if hi is not None and hi == -math.inf:
        return out
    # positive values (including +0): magnitudes [a, b]
    a = 0 if flo is None or flo <= 0 else _first_mag_at_least(fmt, flo)
    b = maxm if fhi is None else min(maxm, _last_mag_at_most(fmt, fhi))
    if fhi is not None and fhi < 0:
        b = -1
    for x, y in mag_range(a, b):
        out.append((x, y))
    # negative values (including -0 where it exists)
    if not fmt.has_sign:
        return out
    if fmt.has_negative_zero:
        na = 0
    else:
        na = 1
    # magnitudes m with -value(m) in [lo, hi]: value(m) in [-hi, -lo]
    a = na if fhi is None or fhi >= 0 else max(na, _first_mag_at_least(fmt, -fhi))
    b = maxm if flo is None else (min(maxm, _last_mag_at_most(fmt, -flo)) if flo <= 0 else -1)
    sm = fmt.sign_mask
    for x, y in mag_range(a, b):
        out.append((sm | x, sm | y))
    return out


def _boundary_list(fmt: Format):
    """Encodings where bugs live (unfiltered)."""
    sm, M = fmt.sign_mask, fmt.mbits
    bias = fmt.bias
    mags = {0, 1, 2, (1 << M) - 1, 1 << M, (1 << M) + 1, fmt.max_bits, fmt.max_bits - 1}
    one = bias << M                                   # 1.0
    if 0 < one <= fmt.max_bits:
        mags |= {one - 1, one, one + 1}
    for ef in range(1, (fmt.max_bits >> M) + 1, max(1, (fmt.max_bits >> M) // 8)):
        mags |= {ef << M, (ef << M) - 1, (ef << M) | ((1 << M) - 1)}
    mags = {m for m in mags if 0 <= m <= fmt.max_bits}
    out = sorted(mags) + sorted((sm | m) for m in mags
                                if fmt.has_sign and (m or fmt.has_negative_zero))
    if fmt.kind == "ieee":
        inf = fmt.inf_bits
        q = inf | (1 << (M - 1))
        out += [inf, sm | inf, q, sm | q, q | 1, inf | 1, sm | inf | 1,
                inf | ((1 << (M - 1)) - 1) if M > 1 else inf | 1, inf | ((1 << M) - 1)]
    elif fmt.kind == "fn":
        out += [fmt.sign_mask - 1, sm | (fmt.sign_mask - 1)]
    elif fmt.kind == "fnu":
        out += [fmt.sign_mask - 1]
    elif fmt.kind == "fnuz":
        out += [sm]
    seen, res = set(), []
    for b in out:
        if b not in seen:
            seen.add(b)
            res.append(b)
    return res


def _encoding_strategy(fmt, allow_nan, allow_infinity, allow_subnormal, min_value, max_value,
                       boundary_bias, as_value):
    f = _fmt(fmt)
    allow_subnormal = _bool("allow_subnormal", allow_subnormal)
    boundary_bias = _bool("boundary_bias", boundary_bias)
    lo = _bound("min_value", min_value)
    hi = _bound("max_value", max_value)
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min_value={lo!r} is larger than max_value={hi!r}")
    bounded = lo is not None or hi is not None
    allow_nan = _bool("allow_nan", allow_nan, none_ok=True)
    if allow_nan and bounded:
        raise ValueError("allow_nan=True cannot be combined with min_value/max_value "
                         "(NaN lies in no range)")
    if allow_nan and not f.has_nan:
        raise ValueError(f"{f.name} has no NaN; pass allow_nan=False")
    allow_nan = (not bounded and f.has_nan) if allow_nan is None else allow_nan
    allow_infinity = _bool("allow_infinity", allow_infinity, none_ok=True)
    if allow_infinity is None:
        allow_infinity = f.has_inf and (hi is None or hi == math.inf or
                                        lo is None or lo == -math.inf)
    elif allow_infinity and not f.has_inf:
        raise ValueError(f"{f.name} has no infinity; pass allow_infinity=False")
    elif allow_infinity and bounded and not (
            (hi is None or hi == math.inf) or (lo is not None and lo == -math.inf)):
        raise ValueError("allow_infinity=True but the bounds exclude both infinities")
    finite_lo = None if lo is None or lo == -math.inf else lo
    finite_hi = None if hi is None or hi == math.inf else hi
    intervals = _finite_intervals(f, finite_lo, finite_hi, allow_subnormal)
    if f.has_inf and allow_infinity:
        if hi is None or hi == math.inf:
            intervals.append((f.inf_bits, f.inf_bits))
        if lo is None or lo == -math.inf:
            intervals.append((f.sign_mask | f.inf_bits, f.sign_mask | f.inf_bits))
    if allow_nan:
        if f.kind == "ieee":
            intervals.append((f.inf_bits + 1, f.sign_mask - 1))
            intervals.append((f.sign_mask | (f.inf_bits + 1), (f.sign_mask << 1) - 1))
        elif f.kind == "fn":
            intervals.append((f.sign_mask - 1, f.sign_mask - 1))
            intervals.append(((f.sign_mask << 1) - 1, (f.sign_mask << 1) - 1))
        elif f.kind == "fnu":
            intervals.append((f.sign_mask - 1, f.sign_mask - 1))
        else:
            intervals.append((f.sign_mask, f.sign_mask))
    if not intervals:
        raise ValueError(f"no encoding of {f.name} satisfies these arguments")
    strat = st.one_of(*[st.integers(a, b) for a, b in intervals])
    if boundary_bias:
        def ok(bits):
            return any(a <= bits <= b for a, b in intervals)
        special = [b for b in _boundary_list(f) if ok(b)]
        if special:
            strat = st.one_of(strat, st.sampled_from(special))
    if as_value:
        return strat.map(lambda b: _as_float(f, b))
    return strat.map(f.dtype.type)


def _as_float(f: Format, bits: int) -> float:
    v = _value(f, bits)
    if v is None:
        sign = (bits >> (f.ebits + f.mbits)) & 1
        return -math.nan if sign else math.nan
    if v == 0:
        return -0.0 if (bits >> (f.ebits + f.mbits)) & 1 else 0.0
    return float(v)


# ---------------------------------------------------------------------------
# public strategies
def encodings(fmt, *, allow_nan=None, allow_infinity=None, allow_subnormal=True,
              min_value=None, max_value=None, boundary_bias=True):
    """Encodings of ``fmt`` (numpy scalars of ``fmt.dtype``).

    Parameters
    ----------
    fmt : Format or str
    allow_nan : bool, optional
        Draw NaN encodings (every payload, quiet and signaling, both signs).
        Default: True unless a bound is given (NaN lies in no range).
    allow_infinity : bool, optional
        Draw +-infinity (IEEE formats). Default: True where the bounds allow it.
    allow_subnormal : bool
        Draw subnormal encodings.
    min_value, max_value : real, optional
        Only encodings whose value lies in [min_value, max_value] (both zeros
        count as 0).
    boundary_bias : bool
        Mix in the boundary values listed in the module doc.
    """
    return _encoding_strategy(fmt, allow_nan, allow_infinity, allow_subnormal, min_value,
                              max_value, boundary_bias, as_value=False)


def values(fmt, *, allow_nan=None, allow_infinity=None, allow_subnormal=True,
           min_value=None, max_value=None, boundary_bias=True):
    """float64 values exactly representable in ``fmt`` (options as `encodings`).
    Both zeros are drawn; NaNs come as float NaN of the encoding's sign."""
    return _encoding_strategy(fmt, allow_nan, allow_infinity, allow_subnormal, min_value,
                              max_value, boundary_bias, as_value=True)


def arrays(fmt, shape, *, elements=None, fill=None, unique=False, **kwargs):
    """numpy arrays of encodings of ``fmt`` (dtype ``fmt.dtype``) of ``shape`` (an
    int, a tuple or a strategy of shapes, as `hypothesis.extra.numpy.arrays`).

    ``elements``: a strategy of encodings (default ``encodings(fmt, **kwargs)``;
    kwargs are `encodings`' options and may not be combined with ``elements``).
    """
    f = _fmt(fmt)
    if elements is not None and kwargs:
        raise TypeError("give either elements= or encodings options "
                        f"({sorted(kwargs)}), not both")
    bad = set(kwargs) - {"allow_nan", "allow_infinity", "allow_subnormal", "min_value",
                         "max_value", "boundary_bias"}
    if bad:
        raise TypeError(f"arrays() got unexpected keyword arguments {sorted(bad)}")
    if elements is None:
        elements = encodings(f, **kwargs)
    elif not isinstance(elements, st.SearchStrategy):
        raise TypeError(f"elements must be a hypothesis strategy, got "
                        f"{type(elements).__name__}")
    _bool("unique", unique)
    return hnp.arrays(f.dtype, shape, elements=elements, fill=fill, unique=unique)


def midpoints(fmt, *, allow_subnormal=True, include_overflow=True, min_value=None,
              max_value=None, boundary_bias=True):
    """float64 values exactly halfway between two neighbouring finite values of
    ``fmt`` (either sign), for rounding tests: round-to-nearest must break the
    tie. ``include_overflow`` adds the rounding boundary above the largest
    finite value (65520 for fp16): halfway to the next value the exponent range
    would have. ``allow_subnormal=False`` leaves out midpoints below the
    smallest normal. Bounds as in `encodings`."""
    f = _fmt(fmt)
    allow_subnormal = _bool("allow_subnormal", allow_subnormal)
    include_overflow = _bool("include_overflow", include_overflow)
    boundary_bias = _bool("boundary_bias", boundary_bias)
    lo = _bound("min_value", min_value)
    hi = _bound("max_value", max_value)
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min_value={lo!r} is larger than max_value={hi!r}")
    M = f.mbits
    first = 0 if allow_subnormal else (1 << M)
    last = f.max_bits if include_overflow else f.max_bits - 1

    def mid(m):                     # between magnitude m and m + 1 (value of the next step)
        v = f._value_of(m)
        step = Fraction(2) ** (max(m >> M, 1) - f.bias - M)
        return v + step / 2

    # restrict m by the bounds on the midpoint's magnitude: search over m
    def in_bounds(x):
        return (lo is None or x >= lo) and (hi is None or x <= hi)

    def first_m_with_mid_at_least(x):
        a, b = first, last + 1
        while a < b:
            c = (a + b) // 2
            if mid(c) >= x:
                b = c
            else:
                a = c + 1
        return a

    def ranges(sign):
        # magnitudes m whose midpoint (with this sign) lies in the bounds
        s = -1 if sign else 1
        lo_m = None if lo is None else Fraction(lo) * s
        hi_m = None if hi is None else Fraction(hi) * s
        if sign:
            lo_m, hi_m = hi_m, lo_m
        a = first if lo_m is None else max(first, first_m_with_mid_at_least(lo_m))
        b = last if hi_m is None else min(last, first_m_with_mid_at_least(
            hi_m + Fraction(1, 1 << 400)) - 1)
        return (a, b) if a <= b else None

    parts = [(0, r) for r in [ranges(0)] if r] + [(1, r) for r in [ranges(1)] if r]
    if not parts:
        raise ValueError(f"no midpoint of {f.name} lies in [{lo}, {hi}]")

    def make(sign):
        return lambda m: float(-mid(m) if sign else mid(m))
    strat = st.one_of(*[st.integers(a, b).map(make(s)) for s, (a, b) in parts])
    if boundary_bias:
        cand = {first, first + 1, (1 << M) - 1, 1 << M, last, last - 1,
                (f.bias << M) - 1, f.bias << M}
        for ef in range(1, (f.max_bits >> M) + 1, max(1, (f.max_bits >> M) // 8)):
            cand |= {(ef << M) - 1, ef << M}
        special = sorted({v for s in (0, 1) for m in cand if first <= m <= last
                          for v in [make(s)(m)] if in_bounds(v)})
        if special:
            strat = st.one_of(strat, st.sampled_from(special))
    return strat
