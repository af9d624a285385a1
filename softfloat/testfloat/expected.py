"""Expected results of TestFloat functions, from softfloat's own kernels.

Every result comes from the library: `softfloat.arith` (add ... fma, sqrt,
round_to_integral, to_int32/to_int64, from_int, the comparisons) and
`softfloat.conversions` (to_bits, convert, from_bits). What those functions do
not take directly is reduced to them here, exactly:

* ``<f>_to_ui32``: to_int64 in the same mode (every value of a format of <= 32
  bits below 2**63 rounds into int64 exactly as it rounds into any wider
  integer), then the range check [0, 2**32) (SoftFloat's roundToUI32: a
  negative result other than 0 is invalid; an invalid conversion raises invalid
  only, never inexact).
* ``<f>_to_ui64``: as ui32 below 2**63; a value in [2**63, 2**64) is an integer
  already (p <= 24 bits, so every value >= 2**24 is integral) and is read
  exactly from its float64 value; above 2**64, invalid.
* ``ui64_to_<f>``: below 2**63 from_int; above, from_int of w = u >> 1 with the
  lost bit jammed into bit 0, times 2 by `softfloat.mul` (see `_from_ui64`).
* ``<int>_to_f64`` (32-bit integers only) and ``<f>_to_f64``: exact (every
  32-bit integer and every value of a format of <= 32 bits is a float64); a
  signaling NaN is quieted with invalid.

Platform NaN rules (``Options.platform``) come from `softfloat.platforms.Platform.nan_policy`:
the policy it gives a kernel for the step, and its fresh-NaN pattern.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import arith as _ar
from .. import conversions as _conv
from ..flags import Flags
from ..formats import FP64, Format
from ..platforms import get_platform
from ..specialize import as_rule, invalid_int_bits, is_nan_bits, is_snan_bits
from .cases import operands
from .names import COMPARE, INT_TYPES, Function, bit_width, dtype_of, parse_function, token
from .options import Options, make_options

__all__ = ["expected", "generate", "Cases", "is_nan", "is_snan", "values"]

# SoftFloat 8086-SSE's results for invalid conversions to unsigned integers
# (the signed ones come from softfloat.arith.to_int32/to_int64).
_UINT_INVALID = {t: invalid_int_bits(t) for t in ("ui32", "ui64")}

# TestFloat's comparisons -> softfloat.arith's (TestFloat's le/lt signal on any NaN).
_ARITH_COMPARE = {"eq": _ar.eq, "le": _ar.le_signaling, "lt": _ar.lt_signaling,
                  "eq_signaling": _ar.eq_signaling, "le_quiet": _ar.le, "lt_quiet": _ar.lt}
_ARITH_BINARY = {"add": _ar.add, "sub": _ar.sub, "mul": _ar.mul, "div": _ar.div}


def is_nan(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """NaN encodings of ``fmt`` (FP64 included) in an array: softfloat.specialize's test."""
    return np.asarray(is_nan_bits(fmt, np.asarray(bits).astype(np.uint64)))


def is_snan(bits: np.ndarray, fmt: Format) -> np.ndarray:
    """Signaling NaNs (IEEE-kind formats only): softfloat.specialize's test."""
    return np.asarray(is_snan_bits(fmt, np.asarray(bits).astype(np.uint64)))


def values(bits: np.ndarray, fmt: Format, daz: bool = False) -> np.ndarray:
    """Exact float64 values (every value of a format of <= 32 bits is one);
    ``daz`` reads subnormals as zero of the same sign."""
    if fmt == FP64:
        v = np.asarray(bits).astype(np.uint64).view(np.float64)
        tiny_limit = 2.0 ** -1022
    else:
        v = _conv.from_bits(np.asarray(bits).astype(fmt.dtype), fmt)
        tiny_limit = fmt.smallest_normal
    if daz:
        tiny = (v != 0) & (np.abs(v) < tiny_limit)
        v = np.where(tiny, np.copysign(0.0, v), v)
    return v


def expected(function, *ops, options: Options | None = None, **opts):
    """Expected ``(result, flags)`` of ``function`` on operand arrays.

    ``ops`` are encodings (any integer dtype; each is range-checked and
    converted to its operand type's storage dtype); ``opts`` are the `Options`
    fields (rounding, tininess, exact, nan, ftz, daz, overflow, platform).
    Results are softfloat's kernels' (see the module docstring).
    """
    fn = parse_function(function)
    o = make_options(options, opts)
    arrs = _check_operands(fn, ops)
    z = fn.result
    if o.platform is None or not isinstance(z, Format) or z == FP64:
        return _expected(fn, arrs, o.replace(platform=None))
    # A platform's NaN rules for this step, fresh NaN included, as a kernel policy
    nan = get_platform(o.platform).nan_policy("cast" if fn.op == "convert" else "result", z)
    return _expected(fn, arrs, o.replace(platform=None, nan=nan))


def _check_operands(fn: Function, ops) -> list:
    if len(ops) != fn.nops:
        raise TypeError(f"{fn.name} takes {fn.nops} operand(s), got {len(ops)}")
    arrs = []
    for x, t in zip(ops, fn.args):
        x = np.asarray(x)
        if x.dtype.kind not in "ui":
            raise TypeError(f"{fn.name}: operands are integer encodings, got dtype {x.dtype}")
        width = bit_width(t)
        if x.size and (int(x.min()) < 0 or int(x.max()) >= (1 << width)):
            raise ValueError(f"{fn.name}: operand out of range for {token(t)} "
                             f"(expected 0..{(1 << width) - 1:#x})")
        arrs.append(x.astype(dtype_of(t)))
    return list(np.broadcast_arrays(*arrs))


def _expected(fn: Function, arrs, o: Options):
    t0 = fn.args[0]
    pol = o.policies()
    if fn.op in _ARITH_BINARY:
        return _ARITH_BINARY[fn.op](arrs[0], arrs[1], t0, return_flags=True, policy=pol)
    if fn.op == "rem":
        raise NotImplementedError(f"{fn.name}: the IEEE remainder is not simulated")
    if fn.op == "mulAdd":
        return _ar.fma(arrs[0], arrs[1], arrs[2], t0, return_flags=True, policy=pol)
    if fn.op == "sqrt":
        return _ar.sqrt(arrs[0], t0, return_flags=True, policy=pol)
    if fn.op == "roundToInt":
        # -rodd rounds to odd here too (jamming), as SoftFloat 3e's f16_roundToInt does.
        return _ar.round_to_integral(arrs[0], t0, exact=o.exact, return_flags=True,
                                     policy=pol)
    if fn.op in COMPARE:
        res, flg = _ARITH_COMPARE[fn.op](arrs[0], arrs[1], t0, return_flags=True, policy=pol)
        return res.astype(np.uint8), flg
    if fn.op == "to_int":
        return _to_int(arrs[0], t0, fn.result, o)
    if fn.op == "from_int":
        return _from_int(arrs[0], fn.args[0], fn.result, o)
    # float -> float
    z = fn.result
    if z == FP64:
        return _to_f64(arrs[0], t0, o)
    if t0 == FP64:
        return _conv.to_bits(arrs[0].view(np.float64), z, return_flags=True, policy=pol)
    return _conv.convert(arrs[0], t0, z, return_flags=True, policy=pol)


def _to_int(a, fmt: Format, ityp: str, o: Options):
    """fmt -> integer type (module docstring): to_int32/to_int64, with the
    unsigned ranges checked on to_int64's result."""
    kw = dict(exact=o.exact, return_flags=True, policy=o.policy)
    if ityp == "i32":
        res, flg = _ar.to_int32(a, fmt, **kw)
        return res.view(np.uint32), flg
    res, flg = _ar.to_int64(a, fmt, **kw)
    if ityp == "i64":
        return res.view(np.uint64), flg
    nb = INT_TYPES[ityp][0]
    ok = ((flg & Flags.INVALID) == 0) & (res >= 0)
    if nb < 64:
        ok &= res < np.int64(1 << nb)
    out = np.where(ok, res.view(np.uint64), np.uint64(_UINT_INVALID[ityp]))
    flags = np.where(ok, flg, np.uint8(Flags.INVALID)).astype(np.uint8)
    if nb == 64:
        # [2**63, 2**64): integral already (exact in float64 and in uint64), no flags.
        v = values(a, fmt, o.daz)
        with np.errstate(invalid="ignore"):
            big = (v >= 2.0 ** 63) & (v < 2.0 ** 64)
        if big.any():
            out = np.where(big, np.where(big, v, 0.0).astype(np.uint64), out)
            flags = np.where(big, np.uint8(0), flags).astype(np.uint8)
    return out.astype(dtype_of(ityp)), flags


def _from_int(a, ityp: str, z, o: Options):
    """integer type -> fmt (module docstring)."""
    nb, signed = INT_TYPES[ityp]
    if z == FP64:                       # 32-bit integers only (parse_function): exact
        x = a.view(np.int32) if signed else a
        v = x.astype(np.float64)
        return v.view(np.uint64).copy(), np.zeros(v.shape, np.uint8)
    kw = dict(return_flags=True, policy=o.policy)
    if ityp == "i32":
        return _ar.from_int(a.view(np.int32), z, **kw)
    if ityp in ("i64", "ui32"):
        return _ar.from_int(a.view(np.int64) if ityp == "i64" else a.astype(np.int64),
                            z, **kw)
    return _from_ui64(a, z, o, kw)


def _from_ui64(u, z: Format, o: Options, kw):
    """ui64 -> fmt. Below 2**63: from_int. From 2**63 on: w = (u >> 1) | (u & 1)
    (the lost bit jammed into bit 0) fits int64, and RN(u) = 2 * RN(w) in every
    mode with an unbounded exponent: u = 2w exactly when bit 0 of u is 0;
    otherwise u and 2w lie strictly inside the same interval between adjacent
    (p + 1)-bit numbers (p <= 24 << 62), on the same side of its midpoint, and
    both are inexact, so every mode and the inexact flag agree. Then
    mul(RN(w), 2) is exact unless 2 * RN(w) exceeds the format's range, where it
    overflows exactly as RN(u) would (same mode, same policy; w >= 2**62 is far
    from the subnormal range). If RN(w) overflows already, so does RN(u), and
    the flags (overflow, inexact) are the same; they are OR-ed."""
    u = np.asarray(u, np.uint64)
    big = u >= np.uint64(1 << 63)
    w = np.where(big, (u >> np.uint64(1)) | (u & np.uint64(1)), u).view(np.int64)
    res, flg = _ar.from_int(w, z, **kw)
    if big.any():
        two = _conv.to_bits(2.0, z, "nearest_even")   # exact in every format
        r2, f2 = _ar.mul(res, two, z, return_flags=True, policy=o.policy.replace(daz=False))
        res = np.where(big, r2, res)
        flg = np.where(big, flg | f2, flg).astype(np.uint8)
    return res, flg


def _to_f64(a, fmt: Format, o: Options):
    """Exact widening to float64 (from_bits keeps NaN payloads left-aligned); a
    signaling NaN raises invalid and is quieted (not under a ``keep`` rule);
    ``canonical`` rules give their float64 pattern (softfloat.specialize)."""
    rule = as_rule(o.nan)
    v = values(a, fmt, o.daz).view(np.uint64).copy()
    snan = is_snan(a, fmt)
    if rule.mode != "keep":
        v = np.where(snan, v | np.uint64(1 << 51), v)
    if rule.mode == "canonical":
        v = np.where(is_nan(a, fmt), np.uint64(rule.bits(FP64)), v)
    return v, np.where(snan, Flags.INVALID, 0).astype(np.uint8)


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------
class Cases(NamedTuple):
    """One chunk of test cases: ``start`` is the index of the first case."""
    start: int
    operands: tuple
    result: np.ndarray
    flags: np.ndarray


def generate(function, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
             chunk=1 << 20, options: Options | None = None, **opts):
    """Test cases with their expected results, chunk by chunk (`Cases`), never
    holding more than ``chunk`` cases. Arguments as in `operands`; ``opts`` are
    the `Options` fields."""
    fn = parse_function(function)
    o = make_options(options, opts)
    for start, ops in operands(fn, level=level, n=n, seed=seed, exhaustive=exhaustive,
                               offset=offset, chunk=chunk):
        res, flg = expected(fn, *ops, options=o)
        yield Cases(start, ops, np.asarray(res), np.asarray(flg, np.uint8))
