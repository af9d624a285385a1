"""TestFloat-compatible test vectors: generation (``gen``) and checking (``ver``).

Berkeley TestFloat's workflow, for every format softfloat simulates::

    python -m softfloat testfloat gen f16_add -rminMag > cases.txt     # operands, result, flags
    my_device < cases.txt > results.txt                                # same lines, its results
    python -m softfloat testfloat ver f16_add -rminMag < results.txt   # report every difference

Lines are TestFloat's: the operands, then the result, then the flags, in upper-case
hex separated by single spaces (a 16-bit value as 4 digits, an 8-bit one as 2, a
32-bit integer as 8, a Boolean as ``0``/``1``, the flags as 2 digits with
SoftFloat's bits: inexact 1, underflow 2, overflow 4, infinite 8, invalid 16).

Function names are TestFloat's where it has the function (``f16_add``,
``f16_mulAdd``, ``f16_sqrt``, ``f32_to_f16``, ``f16_to_i32``, ``f16_le``,
``f16_eq_signaling``, ``f16_roundToInt``, ...) and the same scheme for what it
lacks: ``bf16_add``, ``bf16_mulAdd``, ``f8e4m3_mul``, ``f32_to_bf16``,
``bf16_to_f8e5m2``, ``tf32_add``, ``e5m3_add`` (custom format). Type tokens:
f16, bf16, f32, tf32, f8e4m3 (OCP, fn), f8e5m2, f8e4m3fnuz, f8e5m2fnuz,
``e<E>m<M>[fn|fnuz]``; f64 as a conversion source/target; i32 ui32 i64 ui64.

Python API: `parse_function`, `operands`, `expected`, `generate`, `format_lines`,
`parse_lines`, `verify` (returns a `Report`), `write_vectors`, `main`.
See docs/testfloat.md.
"""
from __future__ import annotations

import dataclasses
import json
import re
import sys
import time
from collections import Counter
from typing import Iterator, NamedTuple

import numpy as np

from . import conversions as _conv
from ._testfloat_cases import INT_TYPES, CaseStream, FloatPatterns, IntPatterns
from .flags import Flags
from .formats import FP64, Format, get_format
from .rounding import Rounding, get_rounding

__all__ = ["Function", "Options", "Cases", "Report", "CLASSES", "parse_function",
           "function_names", "minimum_cases", "operands", "expected", "generate",
           "format_lines", "parse_lines", "verify", "verify_stream", "write_vectors",
           "flag_letters", "main"]

# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------
_TOKENS = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "tf32": "tf32",
           "f8e4m3": "fp8_e4m3", "f8e5m2": "fp8_e5m2", "f8e4m3fnuz": "fp8_e4m3fnuz",
           "f8e5m2fnuz": "fp8_e5m2fnuz", "f4e2m1": "fp4_e2m1", "f6e2m3": "fp6_e2m3",
           "f6e3m2": "fp6_e3m2", "e8m0": "e8m0"}
_TOKEN_OF = {v: k for k, v in _TOKENS.items()}

_BINARY = ("add", "sub", "mul", "div")
_COMPARE = ("eq", "le", "lt", "eq_signaling", "le_quiet", "lt_quiet")
_UNARY = ("sqrt", "roundToInt")

# TestFloat's rounding options -> our modes.
_ROUND_OPTS = {"rnear_even": "nearest_even", "rneareven": "nearest_even",
               "rnearest_even": "nearest_even", "rnear_maxmag": "nearest_away",
               "rnear_maxMag": "nearest_away", "rnearmaxmag": "nearest_away",
               "rnearest_maxmag": "nearest_away", "rnearest_maxMag": "nearest_away",
               "rminmag": "toward_zero", "rminMag": "toward_zero", "rmin": "downward",
               "rmax": "upward", "rodd": "odd"}
_ROUND_NAME = {Rounding.NEAREST_EVEN: "near_even", Rounding.NEAREST_AWAY: "near_maxMag",
               Rounding.TOWARD_ZERO: "minMag", Rounding.DOWNWARD: "min",
               Rounding.UPWARD: "max", Rounding.ODD: "odd"}


def _type_of(tok: str):
    """A type token -> Format (fp64 included) or an integer type name."""
    if tok in INT_TYPES:
        return tok
    if tok == "f64":
        return FP64
    if tok in _TOKENS:
        return get_format(_TOKENS[tok])
    m = re.fullmatch(r"e(\d+)m(\d+)(fn|fnuz)?", tok)
    if m:
        return get_format(tok)
    raise ValueError(f"unknown type {tok!r} in a function name; expected one of "
                     f"{sorted(_TOKENS) + ['f64', 'e<E>m<M>[fn|fnuz]'] + sorted(INT_TYPES)}")


def _token(t) -> str:
    if isinstance(t, str):
        return t
    if t is FP64:
        return "f64"
    if t.name in _TOKEN_OF:
        return _TOKEN_OF[t.name]
    return t.name


@dataclasses.dataclass(frozen=True)
class Function:
    """One testable function. ``op`` is one of add sub mul div rem sqrt mulAdd
    roundToInt eq le lt eq_signaling le_quiet lt_quiet convert to_int from_int;
    ``args`` the operand types (Format or integer type name), ``result`` a
    Format, an integer type name or ``"bool"``."""
    name: str
    op: str
    args: tuple
    result: object

    @property
    def nops(self) -> int:
        return len(self.args)

    @property
    def rounds(self) -> bool:
        return self.op not in _COMPARE and self.op != "rem"


def parse_function(name: str) -> Function:
    """The `Function` a TestFloat-style name denotes (``"f16_add"``, ``"f32_to_bf16"``)."""
    if isinstance(name, Function):
        return name
    if not isinstance(name, str):
        raise TypeError(f"expected a function name such as 'f16_add', got {type(name).__name__}")
    m = re.fullmatch(r"([a-z0-9]+)_to_([a-z0-9]+)", name)
    if m:
        a, z = _type_of(m.group(1)), _type_of(m.group(2))
        if isinstance(a, str) and isinstance(z, str):
            raise ValueError(f"{name}: integer-to-integer conversions are not floating point")
        if isinstance(a, str):
            if z is FP64 and INT_TYPES[a][0] == 64:
                raise ValueError(f"{name}: 64-bit integers to f64 are not supported")
            return Function(name, "from_int", (a,), z)
        if isinstance(z, str):
            if a is FP64:
                raise ValueError(f"{name}: f64 is supported as a conversion source/target "
                                 f"between float formats only")
            return Function(name, "to_int", (a,), z)
        if a is FP64 and z is FP64:
            raise ValueError(f"{name}: converting f64 to itself is not a test")
        return Function(name, "convert", (a,), z)
    m = re.fullmatch(r"([a-z0-9]+)_(\w+)", name)
    if m:
        t = _type_of(m.group(1))
        op = m.group(2)
        if isinstance(t, str) or t is FP64:
            raise ValueError(f"{name}: arithmetic is simulated for formats of at most 32 "
                             f"bits, not {m.group(1)}")
        if op in _BINARY or op == "rem":
            return Function(name, op, (t, t), t)
        if op == "mulAdd":
            return Function(name, op, (t, t, t), t)
        if op in _UNARY:
            return Function(name, op, (t,), t)
        if op in _COMPARE:
            return Function(name, op, (t, t), "bool")
        raise ValueError(f"{name}: unknown operation {op!r}; expected one of "
                         f"{list(_BINARY) + ['mulAdd'] + list(_UNARY) + list(_COMPARE)} "
                         f"or <type>_to_<type>")
    raise ValueError(f"unknown function {name!r}; expected a TestFloat-style name such as "
                     f"'f16_add', 'bf16_mulAdd' or 'f32_to_f16'")


def function_names(fmt_tokens=("f16", "bf16", "f8e4m3", "f8e5m2", "f32", "tf32")) -> list:
    """Names of the functions available for the given type tokens (a listing
    for help texts; any ``e<E>m<M>`` token works as well)."""
    out = []
    for t in fmt_tokens:
        out += [f"{t}_{op}" for op in _BINARY + ("mulAdd",) + _UNARY + _COMPARE]
        out += [f"{t}_to_{i}" for i in INT_TYPES] + [f"{i}_to_{t}" for i in INT_TYPES]
        out += [f"{t}_to_{u}" for u in fmt_tokens + ("f64",) if u != t]
        out += [f"f64_to_{t}"]
    return out


# --------------------------------------------------------------------------
# Options (the environment the expected results are computed in)
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Options:
    """How expected results are computed.

    rounding : str            TestFloat's -r* options (default nearest_even)
    tininess : 'after'|'before'
    exact : bool              raise inexact when rounding to an integer (-exact)
    nan : 'propagate'|'canonical'|int
        NaN result policy: 'propagate' is SoftFloat's 8086-SSE (first NaN operand,
        quieted); fresh NaNs are the format's default NaN (positive, e.g. 0x7E00;
        an x86 SoftFloat build writes 0xFE00: compare NaNs with -checkNaNs only
        against a matching policy).
    ftz, daz : bool            flush subnormal results / read subnormal inputs as zero
    overflow : None|'ieee'|'saturate'|'nan'
    platform : None or a name of softfloat.platforms (``x86_sse``, ``riscv``, ...)
        takes the NaN rules from that platform (operation results, casts, and the
        pattern of a fresh NaN such as 0/0) in place of ``nan``.
    """
    rounding: str = "nearest_even"
    tininess: str = "after"
    exact: bool = False
    nan: object = "propagate"
    ftz: bool = False
    daz: bool = False
    overflow: object = None
    platform: object = None

    def __post_init__(self):
        object.__setattr__(self, "rounding", get_rounding(self.rounding).label)
        if get_rounding(self.rounding) == Rounding.STOCHASTIC:
            raise ValueError("test vectors need a deterministic rounding mode, not stochastic")
        if self.tininess not in ("after", "before"):
            raise ValueError(f"tininess must be 'after' or 'before', got {self.tininess!r}")
        if self.platform is not None:
            from .platforms import get_platform
            object.__setattr__(self, "platform", get_platform(self.platform).name)

    def policies(self) -> dict:
        if self.platform is not None:
            raise ValueError("platform NaN rules are applied by expected()")
        p = dict(tininess=self.tininess, nan=self.nan, ftz=self.ftz, daz=self.daz)
        if self.overflow is not None:
            p["overflow"] = self.overflow
        return p


def _options(opts, kw) -> Options:
    if opts is None:
        return Options(**kw)
    if kw:
        return dataclasses.replace(opts, **kw)
    return opts


# --------------------------------------------------------------------------
# Expected results
# --------------------------------------------------------------------------
def _dtype_of(t) -> np.dtype:
    if isinstance(t, str):
        return np.dtype(np.uint8) if t == "bool" else (
            np.dtype(np.uint64) if INT_TYPES[t][0] == 64 else np.dtype(np.uint32))
    if t is FP64:
        return np.dtype(np.uint64)
    return t.dtype


def _arith(name: str):
    import softfloat
    f = getattr(softfloat, name, None)
    if f is None:
        raise NotImplementedError(f"softfloat.{name} is not available (arithmetic on "
                                  f"encodings, softfloat/arith.py)")
    return f


def _is_nan(bits: np.ndarray, fmt: Format) -> np.ndarray:
    b = bits.astype(np.uint64)
    if fmt is FP64:
        return (b & np.uint64((1 << 63) - 1)) > np.uint64(0x7FF << 52)
    mag = b & np.uint64(fmt.sign_mask - 1)
    if fmt.kind == "ieee":
        return mag > np.uint64(fmt.inf_bits)
    if fmt.kind in ("fn", "fnu"):
        return mag == np.uint64(fmt.sign_mask - 1)
    if fmt.kind == "finite":
        return np.zeros(b.shape, bool)
    return b == np.uint64(fmt.sign_mask)


def _is_snan(bits: np.ndarray, fmt: Format) -> np.ndarray:
    if fmt.kind != "ieee":
        return np.zeros(bits.shape, bool)
    M = fmt.mbits
    quiet = (bits.astype(np.uint64) >> np.uint64(M - 1)) & np.uint64(1)
    return _is_nan(bits, fmt) & (quiet == 0)


def _values(bits: np.ndarray, fmt: Format, daz: bool) -> np.ndarray:
    """Exact float64 values (every value of a format of <= 32 bits is one)."""
    if fmt is FP64:
        v = bits.astype(np.uint64).view(np.float64)
    else:
        v = _conv.from_bits(bits.astype(fmt.dtype), fmt)
    if daz:
        tiny = (v != 0) & (np.abs(v) < (2.0 ** (fmt.emin if fmt is not FP64 else -1022)))
        v = np.where(tiny, np.copysign(0.0, v), v)
    return v


def _round_integral(v: np.ndarray, mode: Rounding) -> np.ndarray:
    """Round exact float64 values to integral values (exact operations; ``odd``
    rounds toward zero, as TestFloat expects for integer rounding)."""
    with np.errstate(invalid="ignore"):
        if mode == Rounding.NEAREST_EVEN:
            return np.rint(v)
        if mode == Rounding.NEAREST_AWAY:
            # |v| + 0.5 is exact: v has at most 24 significant bits here.
            return np.copysign(np.floor(np.abs(v) + 0.5), v)
        if mode == Rounding.UPWARD:
            return np.ceil(v)
        if mode == Rounding.DOWNWARD:
            return np.floor(v)
        return np.trunc(v)


# SoftFloat 8086-SSE's results for invalid conversions to integers.
_INT_INVALID = {"i32": 0x80000000, "ui32": 0xFFFFFFFF, "i64": 1 << 63, "ui64": (1 << 64) - 1}


def _to_int(a, fmt, ityp, o: Options):
    """fmt -> integer, TestFloat's rules: invalid (and the 8086-SSE value) for NaN,
    infinity and out-of-range results; inexact only with ``exact``."""
    bits, signed = INT_TYPES[ityp]
    v = _values(a, fmt, o.daz)
    r = _round_integral(v, get_rounding(o.rounding))
    lo = -(2.0 ** (bits - 1)) if signed else 0.0
    hi = 2.0 ** (bits - 1) if signed else 2.0 ** bits       # exclusive
    with np.errstate(invalid="ignore"):
        ok = (r >= lo) & (r < hi)                           # False for NaN
    flags = np.where(ok, 0, Flags.INVALID).astype(np.uint8)
    if o.exact:
        flags |= np.where(ok & (r != v), Flags.INEXACT, 0).astype(np.uint8)
    rr = np.where(ok, r, 0.0)                   # exact integers in range
    big = rr >= 2.0 ** 63                        # only for ui64
    low = np.where(big, rr - 2.0 ** 63, rr).astype(np.int64).view(np.uint64)
    out = np.where(big, low + np.uint64(1 << 63), low) & np.uint64((1 << bits) - 1)
    out = np.where(ok, out, np.uint64(_INT_INVALID[ityp]))
    return out.astype(_dtype_of(ityp)), flags


def _bitlen(m: np.ndarray) -> np.ndarray:
    n = np.zeros(m.shape, np.int64)
    x = m.copy()
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << s)
        n += np.where(big, s, 0)
        x = np.where(big, x >> np.uint64(s), x)
    return n + (m > 0)


def _from_int(a, ityp, z, o: Options):
    """integer -> format with one rounding: the magnitude is cut to 53 bits with
    the rest jammed into bit 0 (round to odd, exact in float64), and p + 2 <= 53
    bits make the final rounding of to_bits correct in every mode."""
    bits, signed = INT_TYPES[ityp]
    u = a.astype(np.uint64)
    neg = np.zeros(u.shape, bool)
    if signed:
        neg = (u >> np.uint64(bits - 1)) & np.uint64(1) == 1
        u = np.where(neg, (~u + np.uint64(1)) & np.uint64((1 << bits) - 1), u)
    sh = np.maximum(_bitlen(u) - 53, 0).astype(np.uint64)
    top = u >> sh
    sticky = (u & ((np.uint64(1) << sh) - np.uint64(1))) != 0
    top = top | sticky.astype(np.uint64)
    v = np.ldexp(top.astype(np.float64), sh.astype(np.int64))
    v = np.where(neg, -v, v)
    if z is FP64:                        # exact for 32-bit integers (checked by the caller)
        return v.view(np.uint64).copy(), np.zeros(v.shape, np.uint8)
    r, f = _conv.to_bits(v, z, o.rounding, return_flags=True, **o.policies())
    return r, f


def _round_to_int(a, fmt, o: Options):
    v = _values(a, fmt, o.daz)
    r = _round_integral(v, get_rounding(o.rounding))
    nan = _is_nan(a, fmt)
    flags = np.where(_is_snan(a, fmt), Flags.INVALID, 0).astype(np.uint8)
    if o.exact:
        with np.errstate(invalid="ignore"):
            flags |= np.where(~nan & (r != v), Flags.INEXACT, 0).astype(np.uint8)
    out = _conv.to_bits(r, fmt, "toward_zero", **o.policies())   # exact but for NaN
    return out, flags


def _compare(a, b, fmt, op, o: Options):
    x, y = _values(a, fmt, o.daz), _values(b, fmt, o.daz)
    na, nb = _is_nan(a, fmt), _is_nan(b, fmt)
    sa, sb = _is_snan(a, fmt), _is_snan(b, fmt)
    base = op.split("_")[0]
    with np.errstate(invalid="ignore"):
        r = {"eq": x == y, "le": x <= y, "lt": x < y}[base]
    signaling = op in ("le", "lt", "eq_signaling")
    inv = (na | nb) if signaling else (sa | sb)
    return r.astype(np.uint8), np.where(inv, Flags.INVALID, 0).astype(np.uint8)


def _f_to_f64(a, fmt, o: Options):
    """Exact widening to float64; a signaling NaN is quieted with invalid."""
    v = _values(a, fmt, o.daz).view(np.uint64).copy()
    snan = _is_snan(a, fmt)
    v = np.where(snan, v | np.uint64(1 << 51), v)
    if o.nan != "propagate":
        nanpat = 0x7FF8 << 48 if o.nan == "canonical" else int(o.nan)
        v = np.where(_is_nan(a, fmt), np.uint64(nanpat), v)
    return v, np.where(snan, Flags.INVALID, 0).astype(np.uint8)


def expected(function, *ops, options: Options | None = None, fallback=False, **opts):
    """Expected ``(result, flags)`` of ``function`` on operand arrays.

    ``ops`` are encodings (any unsigned dtype wide enough; they are converted to
    each operand type's storage dtype after a range check); ``opts`` are the
    `Options` fields (rounding, tininess, exact, nan, ftz, daz, overflow, platform).
    Everything runs on softfloat's kernels (softfloat.add, ..., fma, sqrt,
    round_to_integral, to_int32/64, from_int, the comparisons, convert, to_bits)
    but for what those do not cover (conversions to unsigned integers, from
    ui64): those, and with ``fallback=True`` all of roundToInt, comparisons and
    integer conversions, are computed here from exact float64 values (every
    value of a format of <= 32 bits is a float64; floor/ceil/rint are exact) with
    one final rounding by to_bits.
    """
    fn = parse_function(function)
    o = _options(options, opts)
    if o.platform is None or not isinstance(fn.result, Format) or fn.result is FP64:
        return _expected(fn, ops, dataclasses.replace(o, platform=None), fallback)
    # A platform's NaN rules: its policy for this step, then its fresh-NaN pattern.
    from .platforms import get_platform
    plat = get_platform(o.platform)
    z = fn.result
    rule = plat.nan_rule("cast" if fn.op == "convert" else "result", z)
    nan = "propagate" if rule in ("propagate", "keep") else rule
    res, flg = _expected(fn, ops, dataclasses.replace(o, platform=None, nan=nan), fallback)
    fresh = plat.fresh_nan(z)
    if nan == "propagate" and fresh != z.default_nan_bits:
        any_nan = np.zeros(np.shape(res), bool)
        for x, t in zip(ops, fn.args):
            if isinstance(t, Format):
                any_nan |= np.broadcast_to(_is_nan(np.asarray(x), t), any_nan.shape)
        res = np.where(_is_nan(res, z) & ~any_nan, z.dtype.type(fresh), res)
    return res, flg


def _expected(fn: Function, ops, o: Options, fallback: bool):
    if len(ops) != fn.nops:
        raise TypeError(f"{fn.name} takes {fn.nops} operand(s), got {len(ops)}")
    arrs = []
    for x, t in zip(ops, fn.args):
        x = np.asarray(x)
        if x.dtype.kind not in "ui":
            raise TypeError(f"{fn.name}: operands are integer encodings, got dtype {x.dtype}")
        width = t.nbits if not isinstance(t, str) else INT_TYPES[t][0]
        if x.size and (int(x.min()) < 0 or int(x.max()) >= (1 << width)):
            raise ValueError(f"{fn.name}: operand out of range for {_token(t)} "
                             f"(expected 0..{(1 << width) - 1:#x})")
        arrs.append(x.astype(_dtype_of(t)))
    arrs = np.broadcast_arrays(*arrs)
    t0 = fn.args[0]
    pol = o.policies()
    r = o.rounding
    if fn.op in ("add", "sub", "mul", "div"):
        return _arith(fn.op)(arrs[0], arrs[1], t0, r, return_flags=True, **pol)
    if fn.op == "rem":
        raise NotImplementedError(f"{fn.name}: the IEEE remainder is not simulated")
    if fn.op == "mulAdd":
        return _arith("fma")(arrs[0], arrs[1], arrs[2], t0, r, return_flags=True, **pol)
    if fn.op == "sqrt":
        return _arith("sqrt")(arrs[0], t0, r, return_flags=True, **pol)
    if fallback:
        return _fallback(fn, arrs, o)
    # TestFloat rounds to integers with -rodd as with -rminMag.
    ri = "toward_zero" if get_rounding(r) == Rounding.ODD else r
    if fn.op == "roundToInt":
        res, flg = _arith("round_to_integral")(arrs[0], t0, ri, exact=o.exact,
                                               return_flags=True, daz=o.daz, nan=o.nan)
        return res, flg
    if fn.op in _COMPARE:
        name = _ARITH_COMPARE[fn.op]
        res, flg = _arith(name)(arrs[0], arrs[1], t0, return_flags=True, daz=o.daz)
        return res.astype(np.uint8), flg
    if fn.op == "to_int" and fn.result in ("i32", "i64"):
        f = _arith("to_int32" if fn.result == "i32" else "to_int64")
        res, flg = f(arrs[0], t0, ri, exact=o.exact, return_flags=True, daz=o.daz)
        return res.view(_dtype_of(fn.result)), flg
    if fn.op == "from_int" and fn.result is not FP64 and fn.args[0] != "ui64":
        x = arrs[0].astype(np.int64)
        if fn.args[0] in ("i32", "i64"):
            x = arrs[0].view(np.int32 if fn.args[0] == "i32" else np.int64).astype(np.int64)
        pol2 = {k: v for k, v in pol.items() if k in ("ftz", "overflow", "tininess")}
        return _arith("from_int")(x, fn.result, r, return_flags=True, **pol2)
    return _fallback(fn, arrs, o)


# TestFloat's comparisons -> softfloat.arith's (TestFloat's le/lt signal on any NaN).
_ARITH_COMPARE = {"eq": "eq", "le": "le_signaling", "lt": "lt_signaling",
                  "eq_signaling": "eq_signaling", "le_quiet": "le", "lt_quiet": "lt"}


def _fallback(fn: Function, arrs, o: Options):
    """The functions computed here from exact float64 values (see `expected`)."""
    t0 = fn.args[0]
    r = o.rounding
    pol = o.policies()
    if fn.op == "roundToInt":
        return _round_to_int(arrs[0], t0, o)
    if fn.op in _COMPARE:
        return _compare(arrs[0], arrs[1], t0, fn.op, o)
    if fn.op == "to_int":
        return _to_int(arrs[0], t0, fn.result, o)
    if fn.op == "from_int":
        return _from_int(arrs[0], t0, fn.result, o)
    # float -> float
    z = fn.result
    if z is FP64:
        return _f_to_f64(arrs[0], t0, o)
    if t0 is FP64:
        return _conv.to_bits(arrs[0].view(np.float64), z, r, return_flags=True, **pol)
    return _conv.convert(arrs[0], t0, z, r, return_flags=True, **pol)


# --------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------
class Cases(NamedTuple):
    """One chunk of test cases: ``start`` is the index of the first case."""
    start: int
    operands: tuple
    result: np.ndarray
    flags: np.ndarray


def _patterns(t):
    return IntPatterns(t) if isinstance(t, str) else FloatPatterns(t)


def _stream(fn: Function, level, seed, exhaustive) -> CaseStream:
    return CaseStream([_patterns(t) for t in fn.args], level=level, seed=seed,
                      exhaustive=exhaustive)


def minimum_cases(function, level=1) -> int:
    """TestFloat's minimum (and default) number of cases for a function and level."""
    return _stream(parse_function(function), level, 1, False).total


def operands(function, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
             chunk=1 << 20) -> Iterator[tuple]:
    """Operand arrays in chunks (each a tuple of arrays in the operand types'
    dtypes); ``n`` cases from case ``offset`` (default: TestFloat's minimum for
    the level, or the whole space with ``exhaustive``)."""
    fn = parse_function(function)
    s = _stream(fn, level, seed, exhaustive)
    if n is None:
        n = s.total - offset if exhaustive else s.total
    if not exhaustive and n < s.total:
        raise ValueError(f"-n {n}: too few cases; the minimum for {fn.name} at level "
                         f"{level} is {s.total}")
    if exhaustive and offset + n > s.total:
        raise ValueError(f"exhaustive space of {fn.name} has {s.total} cases; "
                         f"offset {offset} + n {n} is beyond it")
    if chunk < 1:
        raise ValueError("chunk must be positive")
    pos, end = offset, offset + n
    while pos < end:
        hi = min(end, pos + chunk)
        ops = s.chunk(pos, hi)
        yield pos, tuple(o.astype(_dtype_of(t)) for o, t in zip(ops, fn.args))
        pos = hi


def generate(function, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
             chunk=1 << 20, options: Options | None = None, **opts) -> Iterator[Cases]:
    """Test cases with their expected results, chunk by chunk (`Cases`), never
    holding more than ``chunk`` cases. Arguments as in `operands`; ``opts`` are
    the `Options` fields."""
    fn = parse_function(function)
    o = _options(options, opts)
    for start, ops in operands(fn, level=level, n=n, seed=seed, exhaustive=exhaustive,
                               offset=offset, chunk=chunk):
        res, flg = expected(fn, *ops, options=o)
        yield Cases(start, ops, np.asarray(res), np.asarray(flg, np.uint8))


# --------------------------------------------------------------------------
# Line format
# --------------------------------------------------------------------------
_HEX = np.frombuffer(b"0123456789ABCDEF", np.uint8)


def _width(t) -> int:
    """Hex digits TestFloat writes for a value of this type (1 for a Boolean)."""
    if t == "bool":
        return 1
    if isinstance(t, str):
        return INT_TYPES[t][0] // 4
    return 16 if t is FP64 else (t.nbits + 3) // 4


def _columns(fn: Function) -> list:
    return list(fn.args) + [fn.result, "flags"]


def _col_width(t) -> int:
    return 2 if t == "flags" else _width(t)


def format_lines(function, operands, result=None, flags=None) -> bytes:
    """TestFloat lines (bytes) for arrays of cases: operands, then result and
    flags (omit both to write operands only, as ``testfloat_gen <type>`` does).
    Vectorized: no per-line Python."""
    fn = parse_function(function)
    cols = list(operands)
    types = list(fn.args)
    if result is not None:
        cols += [np.asarray(result), np.asarray(flags)]
        types += [fn.result, "flags"]
    n = np.asarray(cols[0]).size
    widths = [_col_width(t) for t in types]
    W = sum(widths) + len(widths)
    out = np.empty((n, W), np.uint8)
    pos = 0
    for c, w in zip(cols, widths):
        x = np.asarray(c).reshape(-1)
        # the top (w % 4 or 4) digits first, then groups of 4, from lookup tables
        k = w % 4 or 4
        shift = 4 * (w - k)
        if shift == 0 and x.dtype.kind == "u" and x.dtype.itemsize <= 2:
            out[:, pos:pos + k] = _hex_table(k)[x]
            pos += k
        else:
            x = x.astype(np.uint64)
            while True:
                part = (x >> np.uint64(shift)) & np.uint64((1 << 4 * k) - 1)
                out[:, pos:pos + k] = _hex_table(k)[part.astype(np.intp)]
                pos += k
                if not shift:
                    break
                shift -= 16
                k = 4
        out[:, pos] = 32
        pos += 1
    out[:, -1] = 10
    return out.tobytes()


_TABLES = {}


def _hex_table(k: int) -> np.ndarray:
    """Upper-case hex digits of 0 .. 16**k - 1 as a (16**k, k) uint8 table."""
    if k not in _TABLES:
        v = np.arange(16 ** k, dtype=np.int64)
        sh = np.arange(k - 1, -1, -1) * 4
        _TABLES[k] = _HEX[(v[:, None] >> sh) & 15]
    return _TABLES[k]


_HEXVAL = np.full(256, -1, np.int64)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEXVAL[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEXVAL[_c] = 10 + _i


def _parse_fixed(buf: bytes, ncols: int):
    """Fast path: every line has the same length and the same token columns."""
    a = np.frombuffer(buf, np.uint8)
    if a.size == 0:
        return None
    if a[-1] != 10:
        a = np.concatenate([a, np.array([10], np.uint8)])
    nl = np.flatnonzero(a == 10)
    L = int(nl[0]) + 1
    n = nl.size
    if n * L != a.size or not np.all(nl == np.arange(L - 1, n * L, L)):
        return None
    m = a.reshape(n, L)[:, :L - 1]
    if m.shape[1] and np.all(m[:, -1] == 13):
        m = m[:, :-1]
    sp = m == 32
    colsp = sp[0]
    if not np.array_equal(sp, np.broadcast_to(colsp, sp.shape)):
        return None
    # token spans: maximal runs of non-space columns
    spans, start = [], None
    for j, s in enumerate(colsp.tolist() + [True]):
        if not s and start is None:
            start = j
        elif s and start is not None:
            spans.append((start, j))
            start = None
    if len(spans) != ncols or any(e - s > 16 for s, e in spans):
        return None
    out = []
    for s, e in spans:
        d = _HEXVAL[m[:, s:e]]
        if (d < 0).any():
            return None
        v = np.zeros(n, np.uint64)
        for j in range(e - s):
            v = (v << np.uint64(4)) | d[:, j].astype(np.uint64)
        out.append(v)
    return out


def parse_lines(function, data) -> tuple:
    """Parse TestFloat lines (bytes or str): returns ``(operands, result, flags)``
    as arrays in the operand/result types' dtypes. Blank lines are skipped; a
    malformed line raises ValueError naming its number."""
    fn = parse_function(function)
    if isinstance(data, str):
        data = data.encode()
    types = _columns(fn)
    ncols = len(types)
    cols = _parse_fixed(data, ncols)
    if cols is None:
        vals = []
        for no, line in enumerate(data.splitlines(), 1):
            toks = line.split()
            if not toks:
                continue
            if len(toks) != ncols:
                raise ValueError(f"line {no}: expected {ncols} hex fields for {fn.name} "
                                 f"(operands, result, flags), got {len(toks)}: {line[:80]!r}")
            try:
                vals.append([int(t, 16) for t in toks])
            except ValueError:
                raise ValueError(f"line {no}: not hexadecimal: {line[:80]!r}") from None
        arr = np.array(vals, dtype=object).reshape(-1, ncols)
        cols = [np.array([int(v) for v in arr[:, j]], np.uint64) if arr.size
                else np.zeros(0, np.uint64) for j in range(ncols)]
    out = []
    for c, t in zip(cols, types):
        width = 8 if t == "flags" else (1 if t == "bool" else
                                        (INT_TYPES[t][0] if isinstance(t, str) else t.nbits))
        if c.size and width < 64 and int(c.max()) >= (1 << width):
            bad = int(np.flatnonzero(c >= np.uint64(1 << width))[0]) + 1
            raise ValueError(f"case {bad}: value {int(c[bad - 1]):#x} out of range for "
                             f"{'flags' if t == 'flags' else _token(t)}")
        out.append(c.astype(np.uint8 if t == "flags" else _dtype_of(t)))
    return tuple(out[:-2]), out[-2], out[-1]


# --------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------
_FLAG_LETTERS = ((Flags.INVALID, "v"), (Flags.INFINITE, "i"), (Flags.OVERFLOW, "o"),
                 (Flags.UNDERFLOW, "u"), (Flags.INEXACT, "x"))

#: Mismatch classes, most specific first (see `verify`).
CLASSES = {
    "flags_only": "the result is right, the flags differ",
    "nan_payload": "both NaN, different NaN encodings (only with -checkNaNs)",
    "nan_vs_number": "a NaN where a number was expected, or a number for a NaN",
    "signed_zero": "zero of the wrong sign",
    "flush_to_zero": "a subnormal result flushed to zero (FTZ)",
    "subnormal_input_flushed": "subnormal operands read as zero (DAZ)",
    "tie_rule": "a tie rounded by the other nearest rule (ties-to-even vs ties-away)",
    "rounding_mode": "the result of another rounding mode",
    "tininess": "underflow flag of the other tininess rule",
    "saturation": "largest finite value where infinity (or NaN) was expected, or back",
    "one_ulp": "one unit in the last place off (adjacent encodings)",
    "invalid_int": "an integer conversion's invalid result has another value",
    "wrong_value": "a different value, none of the above",
}


def flag_letters(f: int) -> str:
    """TestFloat's 5-character flags notation (``v i o u x``, ``.`` for clear)."""
    return "".join(c if int(f) & b else "." for b, c in _FLAG_LETTERS)


def _flag_list(f: int) -> list:
    return [b.name.lower() for b, _ in _FLAG_LETTERS if int(f) & b]


def _testfloat_repr(bits: int, t) -> str:
    """TestFloat's decomposed notation: sign, exponent field, '.', fraction."""
    if t == "bool":
        return str(int(bits))
    if isinstance(t, str):
        return f"{int(bits):0{_width(t)}X}"
    E, M = t.ebits, t.mbits
    s = "-" if (int(bits) >> (E + M)) & 1 else "+"
    e = (int(bits) >> M) & ((1 << E) - 1)
    f = int(bits) & ((1 << M) - 1)
    return f"{s}{e:0{(E + 3) // 4}X}.{f:0{(M + 3) // 4}X}"


def _value_repr(bits: int, t) -> str:
    if t == "bool":
        return "true" if int(bits) else "false"
    if isinstance(t, str):
        nb, signed = INT_TYPES[t]
        v = int(bits)
        return str(v - (1 << nb) if signed and v >> (nb - 1) else v)
    b = np.array([bits], np.uint64)
    if _is_nan(b, t)[0]:
        kind = "sNaN" if _is_snan(b, t)[0] else "NaN"
        sign = "-" if (int(bits) >> (t.nbits - 1 if t is not FP64 else 63)) & 1 else ""
        return f"{sign}{kind}"
    return repr(float(_values(b, t, False)[0]))


def _ordinal(bits: np.ndarray, t) -> np.ndarray:
    """Monotone integer of an encoding (adjacent values differ by 1; -0 == +0)."""
    b = bits.astype(np.int64)
    nb = 64 if t is FP64 else t.nbits
    sign = (b >> (nb - 1)) & 1
    mag = b & ((1 << (nb - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def _is_zero(bits, t):
    nb = 64 if t is FP64 else t.nbits
    return (bits.astype(np.uint64) & np.uint64((1 << (nb - 1)) - 1)) == 0


@dataclasses.dataclass
class Report:
    """The outcome of `verify`: counts, classes and the first ``errors`` mismatches.

    ``counts`` maps each class (`CLASSES`) to its number of mismatches;
    ``flag_counts`` counts flag differences (``"underflow missing"``, ...);
    ``records`` are dicts with the case number (1-based line), operands, expected
    and got (hex, value, TestFloat notation, flags), the flag difference, the
    class and a detail sentence.
    """
    function: str
    options: dict
    cases: int = 0
    mismatches: int = 0
    counts: Counter = dataclasses.field(default_factory=Counter)
    flag_counts: Counter = dataclasses.field(default_factory=Counter)
    records: list = dataclasses.field(default_factory=list)
    errors: int = 20
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def merge(self, other: "Report") -> "Report":
        self.cases += other.cases
        self.mismatches += other.mismatches
        self.counts.update(other.counts)
        self.flag_counts.update(other.flag_counts)
        room = (self.errors - len(self.records)) if self.errors else len(other.records)
        self.records += other.records[:max(room, 0)]
        self.seconds += other.seconds
        return self

    def to_dict(self) -> dict:
        return {"function": self.function, "options": self.options, "cases": self.cases,
                "mismatches": self.mismatches, "ok": self.ok,
                "classes": dict(self.counts.most_common()),
                "flag_differences": dict(self.flag_counts.most_common()),
                "records": self.records, "seconds": round(self.seconds, 3)}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def format_text(self) -> str:
        lines = []
        for r in self.records:
            ops = "  ".join(f"{o['testfloat']}" for o in r["operands"])
            lines.append(f"{ops}  => {r['got']['testfloat']} {r['got']['flag_letters']}"
                         f"  expected: {r['expected']['testfloat']} "
                         f"{r['expected']['flag_letters']}")
            opv = ", ".join(f"{o['hex']} ({o['value']})" for o in r["operands"])
            lines.append(f"\tcase {r['case']}: {self.function}({opv})")
            for k in ("expected", "got"):
                v = r[k]
                lines.append(f"\t  {k:8s} {v['hex']} ({v['value']})  flags "
                             f"{v['flag_letters']} {v['flags']}")
            fd = r["flag_difference"]
            extra = ""
            if fd["missing"] or fd["extra"]:
                extra = (f"; flags missing: {', '.join(fd['missing']) or '-'}, extra: "
                         f"{', '.join(fd['extra']) or '-'}")
            lines.append(f"\t  class    {r['class']}: {r['detail']}{extra}")
        lines.append(f"{self.function}: {self.cases} cases, {self.mismatches} mismatches"
                     + ("" if self.ok else
                        " (" + ", ".join(f"{k} {v}" for k, v in self.counts.most_common()) + ")"))
        if self.flag_counts:
            lines.append("flag differences: " + ", ".join(
                f"{k} {v}" for k, v in self.flag_counts.most_common()))
        if self.errors and self.mismatches > len(self.records):
            lines.append(f"(first {len(self.records)} mismatches shown; -errors 0 shows all)")
        return "\n".join(lines) + "\n"


def _alt(fn, ops, o: Options, **change):
    """Expected results under changed options, or None where they do not apply."""
    try:
        return expected(fn, *ops, options=dataclasses.replace(o, **change))
    except (ValueError, NotImplementedError, TypeError):
        return None


def _classify(fn: Function, ops, er, ef, gr, gf, o: Options, check_nans: bool):
    """(class, detail) for each mismatching case (arrays hold mismatches only)."""
    n = er.size
    cls = np.array(["wrong_value"] * n, dtype=object)
    det = np.array([""] * n, dtype=object)
    done = np.zeros(n, bool)
    z = fn.result

    def mark(mask, c, d):
        m = mask & ~done
        cls[m] = c
        det[m] = d
        done[m] = True

    if isinstance(z, Format):
        en, gn = _is_nan(er, z), _is_nan(gr, z)
        same = (er == gr) | (en & gn & (not check_nans))
    else:
        same = er == gr
    # 1. Right value, wrong flags (with a named cause where one fits).
    if same.any():
        for tn in ("before", "after"):
            if tn != o.tininess:
                alt = _alt(fn, ops, o, tininess=tn)
                if alt is not None:
                    m = same & (np.asarray(alt[1]) == gf)
                    mark(m, "tininess", f"flags are those of tininess detected {tn} rounding")
        mark(same, "flags_only", "the result is right, the flags differ")
    if isinstance(z, Format):
        mark(en & gn, "nan_payload", "both NaN, different encodings")
        mark(en & ~gn, "nan_vs_number", "a number delivered where NaN was expected")
        mark(gn & ~en, "nan_vs_number", "a NaN delivered where a number was expected")
        ez, gz = _is_zero(er, z), _is_zero(gr, z)
        mark(ez & gz, "signed_zero", "zero of the wrong sign")
    # 2. The result of another policy: each candidate is first matched on result
    #    and flags, then on the result alone.
    cands = []
    if isinstance(z, Format):
        cands += [(dict(ftz=True), "flush_to_zero", "subnormal result flushed to zero"),
                  (dict(daz=True), "subnormal_input_flushed",
                   "the result of reading subnormal operands as zero (DAZ)")]
    mode = get_rounding(o.rounding)
    if fn.rounds:
        if mode in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY):
            r = Rounding.NEAREST_AWAY if mode == Rounding.NEAREST_EVEN else Rounding.NEAREST_EVEN
            cands.append((dict(rounding=r.label), "tie_rule",
                          "a tie rounded " + ("away from zero" if r == Rounding.NEAREST_AWAY
                                              else "to even")))
        for r in (Rounding.NEAREST_EVEN, Rounding.NEAREST_AWAY, Rounding.TOWARD_ZERO,
                  Rounding.UPWARD, Rounding.DOWNWARD, Rounding.ODD):
            if r != mode:
                cands.append((dict(rounding=r.label), "rounding_mode",
                              f"the result of rounding {r.label} (-r{_ROUND_NAME[r]})"))
    if isinstance(z, Format):
        if z.kind == "ieee" or z is FP64:
            cands += [(dict(overflow="saturate"), "saturation",
                       "largest finite value where infinity was expected (saturation)"),
                      (dict(overflow="ieee"), "saturation",
                       "infinity where the largest finite value was expected")]
        else:
            cands.append((dict(overflow="saturate"), "saturation",
                          "largest finite value where NaN was expected (saturation)"))
    alts = [(_alt(fn, ops, o, **ch), c, d) for ch, c, d in cands]
    for strict in (True, False):
        for alt, c, d in alts:
            if alt is not None:
                m = np.asarray(alt[0]) == gr
                if strict:
                    m &= np.asarray(alt[1]) == gf
                mark(m, c, d)
    if isinstance(z, Format):
        tiny = (~ez) & ((er.astype(np.uint64) & np.uint64((1 << (z.nbits - 1)) - 1))
                        < np.uint64(1 << z.mbits)) if z is not FP64 else np.zeros(n, bool)
        mark(tiny & gz, "flush_to_zero", "subnormal result flushed to zero")
        near = (np.abs(_ordinal(er, z) - _ordinal(gr, z)) == 1) & ~en & ~gn
        mark(near, "one_ulp", "one ulp off")
    elif isinstance(z, str) and z != "bool":
        if (ef & Flags.INVALID).any():
            mark((ef & Flags.INVALID) != 0, "invalid_int",
                 "invalid conversion: another integer value")
        d = er.astype(np.int64) - gr.astype(np.int64)
        mark(np.abs(d) == 1, "one_ulp", "off by one")
    return cls, det


def _int_lenient(fn, er, ef, gr, gf):
    """TestFloat's leniency without -checkInvInts: for an invalid conversion to
    an integer any of the type's sentinel values (largest positive, most
    negative, or zero/largest for unsigned) is accepted."""
    nb, signed = INT_TYPES[fn.result]
    g = gr.astype(np.uint64)
    if signed:
        sentinel = (g == np.uint64((1 << (nb - 1)) - 1)) | (g == np.uint64(1 << (nb - 1)))
    else:
        sentinel = (g == np.uint64((1 << nb) - 1)) | (g == 0)
    return (ef == Flags.INVALID) & (gf == Flags.INVALID) & sentinel


def verify(function, *ops, result, flags=None, options: Options | None = None,
           check_nans=False, check_inv_ints=False, errors=20, start=0, **opts) -> Report:
    """Check a device's results against softfloat's.

    ``ops`` are operand arrays, ``result``/``flags`` the device's results and
    flags (arrays of the same length; ``flags=None`` for a device that cannot
    report them: only results are compared). NaN results match any NaN unless
    ``check_nans``; an invalid integer conversion matches any of TestFloat's
    accepted values unless ``check_inv_ints``. Every mismatch is classified
    (`CLASSES`); the first ``errors`` (0: all) are kept as records. ``start``
    numbers the cases (records say ``case = start + index + 1``, the line).
    """
    t0 = time.perf_counter()
    fn = parse_function(function)
    o = _options(options, opts)
    er, ef = expected(fn, *ops, options=o)
    er = np.asarray(er).reshape(-1)
    ef = np.asarray(ef, np.uint8).reshape(-1)
    gr = np.asarray(result).reshape(-1).astype(er.dtype)
    check_flags = flags is not None
    gf = np.asarray(flags).reshape(-1).astype(np.uint8) if check_flags else ef.copy()
    if gr.size != er.size or gf.size != er.size:
        raise ValueError(f"{fn.name}: {er.size} cases but {gr.size} results and "
                         f"{gf.size} flags")
    ops = [np.broadcast_to(np.asarray(x), er.shape).reshape(-1) for x in ops]
    z = fn.result
    same = er == gr
    if isinstance(z, Format) and not check_nans:
        same |= _is_nan(er, z) & _is_nan(gr, z)
    bad = ~same | (ef != gf)
    if fn.op == "to_int" and not check_inv_ints:
        bad &= ~_int_lenient(fn, er, ef, gr, gf)
    rep = Report(fn.name, dict(dataclasses.asdict(o), check_nans=check_nans,
                               check_inv_ints=check_inv_ints, check_flags=check_flags),
                 cases=int(er.size),
                 errors=errors)
    idx = np.flatnonzero(bad)
    rep.mismatches = int(idx.size)
    if idx.size:
        sub = [x[idx] for x in ops]
        cls, det = _classify(fn, sub, er[idx], ef[idx], gr[idx], gf[idx], o, check_nans)
        rep.counts.update(cls.tolist())
        missing = ef[idx] & ~gf[idx]
        extra = gf[idx] & ~ef[idx]
        for b, _ in _FLAG_LETTERS:
            nm = int(np.count_nonzero(missing & b))
            nx = int(np.count_nonzero(extra & b))
            if nm:
                rep.flag_counts[f"{b.name.lower()} missing"] += nm
            if nx:
                rep.flag_counts[f"{b.name.lower()} extra"] += nx
        keep = idx.size if not errors else min(errors, idx.size)
        for j in range(keep):
            i = int(idx[j])
            rep.records.append({
                "case": start + i + 1,
                "operands": [{"hex": f"{int(x[i]):0{_width(t)}X}",
                              "value": _value_repr(int(x[i]), t),
                              "testfloat": _testfloat_repr(int(x[i]), t)}
                             for x, t in zip(ops, fn.args)],
                "expected": _side(int(er[i]), int(ef[i]), z),
                "got": _side(int(gr[i]), int(gf[i]), z),
                "flag_difference": {"missing": _flag_list(int(missing[j])),
                                    "extra": _flag_list(int(extra[j]))},
                "class": str(cls[j]), "detail": str(det[j])})
    rep.seconds = time.perf_counter() - t0
    return rep


def _side(bits: int, flags: int, t) -> dict:
    return {"hex": f"{bits:0{_width(t)}X}", "value": _value_repr(bits, t),
            "testfloat": _testfloat_repr(bits, t), "flags": f"{flags:02X}",
            "flag_letters": flag_letters(flags)}


# --------------------------------------------------------------------------
# Streams
# --------------------------------------------------------------------------
def write_vectors(function, file, *, level=1, n=None, seed=1, exhaustive=False, offset=0,
                  chunk=1 << 20, operands_only=False, prefix=None,
                  options: Options | None = None, **opts) -> int:
    """Write TestFloat lines for ``function`` to a binary file object, chunk by
    chunk; returns the number of lines written (arguments as in `generate`)."""
    fn = parse_function(function)
    if prefix is not None:
        file.write(prefix.encode() + b"\n")
    count = 0
    if operands_only:
        for _, ops in operands(fn, level=level, n=n, seed=seed, exhaustive=exhaustive,
                               offset=offset, chunk=chunk):
            file.write(format_lines(fn, ops))
            count += ops[0].size
        return count
    for c in generate(fn, level=level, n=n, seed=seed, exhaustive=exhaustive, offset=offset,
                      chunk=chunk, options=options, **opts):
        file.write(format_lines(fn, c.operands, c.result, c.flags))
        count += c.result.size
    return count


def verify_stream(function, file, *, chunk_lines=1 << 20, errors=20, check_nans=False,
                  check_inv_ints=False, options: Options | None = None, **opts) -> Report:
    """`verify` over TestFloat lines read from a binary file object, chunk by chunk."""
    fn = parse_function(function)
    o = _options(options, opts)
    total = None
    start = 0
    while True:
        lines = file.readlines(chunk_lines * 24)
        if not lines:
            break
        ops, res, flg = parse_lines(fn, b"".join(lines))
        rep = verify(fn, *ops, result=res, flags=flg, options=o, check_nans=check_nans,
                     check_inv_ints=check_inv_ints, errors=errors, start=start)
        start += res.size
        total = rep if total is None else total.merge(rep)
    if total is None:
        total = Report(fn.name, dict(dataclasses.asdict(o), check_nans=check_nans,
                                     check_inv_ints=check_inv_ints), errors=errors)
    return total


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------
_USAGE = """\
usage: python -m softfloat testfloat gen [<option>...] <function> | <type> [<num>]
       python -m softfloat testfloat ver [<option>...] <function>   < results
       python -m softfloat testfloat list [<type>...]

gen writes TestFloat lines (operands, expected result, flags; hex) to stdout;
ver reads lines (operands, the device's result and flags) from stdin (or -input
FILE), recomputes and reports each mismatch, with a summary by class.
Exit status: 0 all cases agree, 1 mismatches found, 2 usage or input error.

options (TestFloat's spelling; * = default):
  -help                 this message
  -seed <num>           random seed (* 1)                              [gen]
  -level <1|2>          testing level (* 1); -level1, -level2          [gen]
  -n <num>              number of cases (at least the level's minimum)  [gen]
  -forever              cases indefinitely (level 2)                   [gen]
  -prefix <text>        write <text> as the first line                 [gen]
  -rnear_even*  -rnear_maxMag  -rminMag  -rmin  -rmax  -rodd
  -tininessafter*  -tininessbefore
  -notexact*  -exact    inexact flag when rounding to an integer
  -errors <num>         report at most <num> mismatches (* 20; 0 = all) [ver]
  -checkNaNs            NaN results must match bit for bit             [ver]
  -checkInvInts         invalid integer results must match exactly    [ver]
ours:
  -exhaustive           every operand combination (spaces of <= 2^32)  [gen]
  -offset <num>         start at case <num> (shards of a stream)       [gen]
  -nan <propagate|canonical|0xHEX>   NaN result policy (* propagate: 8086-SSE)
  -platform <name>      NaN rules of a softfloat platform (x86_sse, riscv, ...)
  -ftz / -daz           flush subnormal results / read subnormal inputs as zero
  -overflow <ieee|saturate|nan>      overflow policy (* format default)
  -chunk <num>          cases per chunk (* 1048576)
  -json <file>          write a JSON report                            [ver]
  -input <file>         read results from <file> instead of stdin      [ver]
  -quiet                summary only                                   [ver]

functions: <float>_{add,sub,mul,div,mulAdd,sqrt,roundToInt,eq,le,lt,
           eq_signaling,le_quiet,lt_quiet}, <float>_to_<float>, <float>_to_<int>,
           <int>_to_<float>
<float>: f16 bf16 f32 tf32 f8e4m3 f8e5m2 f8e4m3fnuz f8e5m2fnuz e<E>m<M>[fn|fnuz]
         (f64 as a conversion source/target)
<int>:   i32 ui32 i64 ui64
"""


class _UsageError(Exception):
    pass


def _parse_argv(argv):
    a = dict(level=1, n=None, seed=1, forever=False, prefix=None, rounding="nearest_even",
             tininess="after", exact=False, errors=20, check_nans=False, check_inv_ints=False,
             exhaustive=False, offset=0, nan="propagate", ftz=False, daz=False, overflow=None,
             platform=None,
             chunk=1 << 20, json=None, input=None, quiet=False, args=[])
    it = iter(argv)

    def value(opt):
        try:
            return next(it)
        except StopIteration:
            raise _UsageError(f"option -{opt} needs a value") from None

    def integer(opt, lo=0):
        v = value(opt)
        try:
            x = int(v, 0)
        except ValueError:
            raise _UsageError(f"-{opt} expects an integer, got {v!r}") from None
        if x < lo:
            raise _UsageError(f"-{opt} expects an integer >= {lo}, got {x}")
        return x

    for arg in it:
        if not arg.startswith("-") or arg == "-":
            a["args"].append(arg)
            continue
        opt = arg.lstrip("-")
        if opt in ("help", "h"):
            a["help"] = True
        elif opt == "seed":
            a["seed"] = integer(opt)
        elif opt == "level":
            a["level"] = integer(opt, 1)
            if a["level"] not in (1, 2):
                raise _UsageError(f"-level expects 1 or 2, got {a['level']}")
        elif opt in ("level1", "level2"):
            a["level"] = int(opt[-1])
        elif opt == "n":
            a["n"] = integer(opt, 1)
        elif opt == "forever":
            a["forever"], a["level"] = True, 2
        elif opt == "prefix":
            a["prefix"] = value(opt)
        elif opt in _ROUND_OPTS:
            a["rounding"] = _ROUND_OPTS[opt]
        elif opt in ("tininessbefore", "tininessafter"):
            a["tininess"] = opt[len("tininess"):]
        elif opt in ("exact", "notexact"):
            a["exact"] = opt == "exact"
        elif opt == "errors":
            a["errors"] = integer(opt)
        elif opt == "checkNaNs":
            a["check_nans"] = True
        elif opt == "checkInvInts":
            a["check_inv_ints"] = True
        elif opt == "exhaustive":
            a["exhaustive"] = True
        elif opt == "offset":
            a["offset"] = integer(opt)
        elif opt == "nan":
            v = value(opt)
            if v in ("propagate", "canonical"):
                a["nan"] = v
            else:
                try:
                    a["nan"] = int(v, 16)
                except ValueError:
                    raise _UsageError(f"-nan expects propagate, canonical or a hex NaN "
                                      f"encoding, got {v!r}") from None
        elif opt == "platform":
            a["platform"] = value(opt)
        elif opt in ("ftz", "daz"):
            a[opt] = True
        elif opt == "overflow":
            v = value(opt)
            if v not in ("ieee", "saturate", "nan"):
                raise _UsageError(f"-overflow expects ieee, saturate or nan, got {v!r}")
            a["overflow"] = v
        elif opt == "chunk":
            a["chunk"] = integer(opt, 1)
        elif opt == "json":
            a["json"] = value(opt)
        elif opt == "input":
            a["input"] = value(opt)
        elif opt == "quiet":
            a["quiet"] = True
        elif opt in ("precision32", "precision64", "precision80"):
            pass                                  # extF80 only: ignored, as TestFloat does
        else:
            raise _UsageError(f"unknown option {arg!r} (see -help)")
    return a


def _opts(a) -> Options:
    return Options(rounding=a["rounding"], tininess=a["tininess"], exact=a["exact"],
                   nan=a["nan"], ftz=a["ftz"], daz=a["daz"], overflow=a["overflow"],
                   platform=a["platform"])


def _gen(a, out) -> int:
    args = a["args"]
    if not args:
        raise _UsageError("gen needs a <function> or a <type> [<num>]")
    name = args[0]
    num = None
    if len(args) == 2 and args[1] in ("1", "2", "3"):
        num = int(args[1])
    elif len(args) > 1:
        raise _UsageError(f"unexpected arguments {args[1:]}")
    is_type = "_" not in name
    if is_type:
        t = _type_of(name)
        if t is FP64 and num is None:
            num = 1
        fn = Function(f"{name} {num or 1}", "type", (t,) * (num or 1), t)
        if isinstance(t, str) and (num or 1) != 1:
            raise _UsageError("integer types take one operand per line")
    else:
        fn = parse_function(name)
    n = a["n"]
    if a["forever"] and n is None:
        n = 1 << 62
    o = _opts(a)
    kw = dict(level=a["level"], n=n, seed=a["seed"], exhaustive=a["exhaustive"],
              offset=a["offset"], chunk=a["chunk"])
    if not a["exhaustive"] and n is not None:
        total = _stream(fn, a["level"], a["seed"], False).total
        if n < total:
            raise _UsageError(f"too few cases; the minimum for {name} at level "
                              f"{a['level']} is {total}")
    if is_type:
        return write_vectors(fn, out, operands_only=True, prefix=a["prefix"], **kw)
    return write_vectors(fn, out, prefix=a["prefix"], options=o, **kw)


def _ver(a) -> int:
    args = a["args"]
    if len(args) != 1:
        raise _UsageError("ver needs exactly one <function>")
    fn = parse_function(args[0])
    src = open(a["input"], "rb") if a["input"] else sys.stdin.buffer
    try:
        rep = verify_stream(fn, src, errors=a["errors"], check_nans=a["check_nans"],
                            check_inv_ints=a["check_inv_ints"], options=_opts(a))
    finally:
        if a["input"]:
            src.close()
    text = rep.format_text()
    if a["quiet"]:
        text = "".join(ln + "\n" for ln in text.splitlines()
                       if not ln.startswith("\t") and "=>" not in ln)
    sys.stdout.write(text)
    if a["json"]:
        with open(a["json"], "w") as f:
            f.write(rep.to_json(indent=1))
    return 0 if rep.ok else 1


def main(argv=None) -> int:
    """``python -m softfloat testfloat gen|ver|list ...`` (see `_USAGE`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-help", "--help", "-h", "help"):
        sys.stdout.write(_USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        a = _parse_argv(rest)
        if a.get("help"):
            sys.stdout.write(_USAGE)
            return 0
        if cmd == "gen":
            out = sys.stdout.buffer
            try:
                _gen(a, out)
                out.flush()
            except BrokenPipeError:                  # e.g. `... | head`
                try:
                    sys.stdout = None
                except Exception:
                    pass
            return 0
        if cmd == "ver":
            return _ver(a)
        if cmd == "list":
            toks = tuple(a["args"]) or ("f16", "bf16", "f8e4m3", "f8e5m2", "f32", "tf32")
            sys.stdout.write("\n".join(function_names(toks)) + "\n")
            return 0
        raise _UsageError(f"unknown subcommand {cmd!r}; expected gen, ver or list")
    except (_UsageError, ValueError, TypeError, NotImplementedError, OSError) as e:
        sys.stderr.write(f"testfloat: {e}\n")
        return 2
