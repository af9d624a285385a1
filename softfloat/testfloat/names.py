"""TestFloat function names and type tokens: ``f16_add``, ``f32_to_bf16``, ``ui64_to_f16``.

A name is ``<type>_<op>`` or ``<type>_to_<type>``; type tokens are TestFloat's
(f16, bf16, f32, tf32, f8e4m3, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f64 as a
conversion source/target, i32 ui32 i64 ui64) and ``e<E>m<M>[fn|fnuz]`` for a
custom format. `parse_function` turns a name into a `Function`; every other
module of the package works on Functions.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..formats import FP64, get_format

__all__ = ["Function", "parse_function", "function_names", "INT_TYPES"]

# Integer operand types: name -> (bits, signed).
INT_TYPES = {"i32": (32, True), "ui32": (32, False), "i64": (64, True), "ui64": (64, False)}

TOKENS = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "tf32": "tf32",
           "f8e4m3": "fp8_e4m3", "f8e5m2": "fp8_e5m2", "f8e4m3fnuz": "fp8_e4m3fnuz",
           "f8e5m2fnuz": "fp8_e5m2fnuz", "f4e2m1": "fp4_e2m1", "f6e2m3": "fp6_e2m3",
           "f6e3m2": "fp6_e3m2", "e8m0": "e8m0"}
TOKEN_OF = {v: k for k, v in TOKENS.items()}

BINARY = ("add", "sub", "mul", "div")
COMPARE = ("eq", "le", "lt", "eq_signaling", "le_quiet", "lt_quiet")
UNARY = ("sqrt", "roundToInt")


def type_of(tok: str):
    """A type token -> Format (fp64 included) or an integer type name."""
    if tok in INT_TYPES:
        return tok
    if tok == "f64":
        return FP64
    if tok in TOKENS:
        return get_format(TOKENS[tok])
    m = re.fullmatch(r"e(\d+)m(\d+)(fn|fnuz)?", tok)
    if m:
        return get_format(tok)
    if re.fullmatch(r"binary\d+p\d+[su][ef]", tok):       # P3109 formats (binary8p3se)
        return get_format(tok)
    raise ValueError(f"unknown type token {tok!r}; expected one of "
                     f"{sorted(TOKENS) + ['f64', 'e<E>m<M>[fn|fnuz]', 'binary<K>p<P><s|u><e|f>'] + sorted(INT_TYPES)}")


def token(t) -> str:
    if isinstance(t, str):
        return t
    if t == FP64:
        return "f64"
    if t.name in TOKEN_OF:
        return TOKEN_OF[t.name]
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
        return self.op not in COMPARE and self.op != "rem"


def parse_function(name: str) -> Function:
    """The `Function` a TestFloat-style name denotes (``"f16_add"``, ``"f32_to_bf16"``)."""
    if isinstance(name, Function):
        return name
    if not isinstance(name, str):
        raise TypeError(f"expected a function name such as 'f16_add', got {type(name).__name__}")
    m = re.fullmatch(r"([a-z0-9]+)_to_([a-z0-9]+)", name)
    if m:
        a, z = type_of(m.group(1)), type_of(m.group(2))
        if isinstance(a, str) and isinstance(z, str):
            raise ValueError(f"{name}: integer-to-integer conversions are not floating point")
        if isinstance(a, str):
            if z == FP64 and INT_TYPES[a][0] == 64:
                raise ValueError(f"{name}: 64-bit integers to f64 are not supported")
            return Function(name, "from_int", (a,), z)
        if isinstance(z, str):
            if a == FP64:
                raise ValueError(f"{name}: f64 is supported as a conversion source/target "
                                 f"between float formats only")
            return Function(name, "to_int", (a,), z)
        if a == FP64 and z == FP64:
            raise ValueError(f"{name}: converting f64 to itself is not a test")
        return Function(name, "convert", (a,), z)
    m = re.fullmatch(r"([a-z0-9]+)_(\w+)", name)
    if m:
        t = type_of(m.group(1))
        op = m.group(2)
        if isinstance(t, str) or t == FP64:
            raise ValueError(f"{name}: arithmetic is simulated for formats of at most 32 "
                             f"bits, not {m.group(1)}")
        if op in BINARY or op == "rem":
            return Function(name, op, (t, t), t)
        if op == "mulAdd":
            return Function(name, op, (t, t, t), t)
        if op in UNARY:
            return Function(name, op, (t,), t)
        if op in COMPARE:
            return Function(name, op, (t, t), "bool")
        raise ValueError(f"{name}: unknown operation {op!r}; expected one of "
                         f"{list(BINARY) + ['mulAdd'] + list(UNARY) + list(COMPARE)} "
                         f"or <type>_to_<type>")
    raise ValueError(f"unknown function {name!r}; expected a TestFloat-style name such as "
                     f"'f16_add', 'bf16_mulAdd' or 'f32_to_f16'")


def function_names(fmt_tokens=("f16", "bf16", "f8e4m3", "f8e5m2", "f32", "tf32")) -> list:
    """Names of the functions available for the given type tokens (a listing
    for help texts; any ``e<E>m<M>`` token works as well). An unknown token, an
    integer type or f64 raises ValueError: nothing is listed that does not exist."""
    if isinstance(fmt_tokens, str):
        fmt_tokens = (fmt_tokens,)
    fmt_tokens = tuple(fmt_tokens)
    for t in fmt_tokens:
        if not isinstance(t, str):
            raise TypeError(f"expected type tokens such as 'f16', got {type(t).__name__}")
        k = type_of(t)
        if isinstance(k, str) or k == FP64:
            raise ValueError(f"{t!r}: list takes float format tokens (f16, bf16, f32, tf32, "
                             f"f8e4m3, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, e<E>m<M>[fn|fnuz])")
    out = []
    for t in fmt_tokens:
        out += [f"{t}_{op}" for op in BINARY + ("mulAdd",) + UNARY + COMPARE]
        out += [f"{t}_to_{i}" for i in INT_TYPES] + [f"{i}_to_{t}" for i in INT_TYPES]
        out += [f"{t}_to_{u}" for u in fmt_tokens + ("f64",) if u != t]
        out += [f"f64_to_{t}"]
    return out


def dtype_of(t) -> np.dtype:
    """Storage dtype of a value of type ``t`` (Format, integer type name or "bool")."""
    if isinstance(t, str):
        return np.dtype(np.uint8) if t == "bool" else (
            np.dtype(np.uint64) if INT_TYPES[t][0] == 64 else np.dtype(np.uint32))
    if t == FP64:
        return np.dtype(np.uint64)
    return t.dtype


def bit_width(t) -> int:
    """Bits of a value of type ``t`` (1 for a Boolean, 8 for the flags column)."""
    if t == "flags":
        return 8
    if t == "bool":
        return 1
    if isinstance(t, str):
        return INT_TYPES[t][0]
    return 64 if t == FP64 else t.nbits


def hex_width(t) -> int:
    """Hex digits TestFloat writes for a value of this type (1 for a Boolean, 2 for flags)."""
    if t == "flags":
        return 2
    if t == "bool":
        return 1
    return (bit_width(t) + 3) // 4
