"""NaN specialization, after Berkeley SoftFloat's ``specialize.h``: the one place
that owns the NaN rules.

* which encodings are NaNs (`is_nan_bits`, `is_snan_bits`) and the format's
  default NaN (`default_nan_bits`: positive, quiet, payload 0);
* NaN policies (`NanRule`, and the words ``"propagate"``/``"canonical"``/an int
  accepted wherever a ``nan=`` keyword is), turned into the two entries of the
  kernel policy tuple by `kernel_nan` (the kernels' half is
  ``softfloat/_kernels/specialize.py``, which says what each mode does);
* the fresh NaN of a pattern (`fresh_nan_bits`);
* results of invalid conversions to integers (`invalid_int_bits`).

Which encodings are NaNs is a fact of the format (`Format.is_nan_bits`,
`Format.default_nan_bits`; the functions here take the format first, as the
rest of this module does). This module never looks a platform up: as in
SoftFloat, the platform chooses its specialization. A `Platform` states its
rules as data and turns them into a `NanRule` per step
(`softfloat.platforms.Platform.nan_policy`), which the kernels carry out, so
no output is patched afterwards.

Modules that need a NaN ask here; none spells a NaN pattern of its own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._kernels.codes import (NAN_CANONICAL, NAN_KEEP, NAN_PROPAGATE, NAN_PROPAGATE_LAST,
                             P_NANBITS)
from .formats import Format, get_format

__all__ = ["NanRule", "NAN_WORDS", "default_nan_bits", "is_nan_bits", "is_snan_bits",
           "fresh_nan_bits", "kernel_nan", "kernel_fresh_nan",
           "invalid_int_bits", "describe_nan", "all_ones_nan_bits"]

# The words a nan= keyword accepts (besides an int pattern and a NanRule).
NAN_WORDS = ("propagate", "propagate_last", "canonical")
_MODES = ("propagate", "propagate_last", "canonical", "keep")


@dataclass(frozen=True)
class NanRule:
    """A NaN policy the kernels carry out.

    mode : {"propagate", "propagate_last", "canonical", "keep"}
        ``propagate``: a NaN operand's sign and payload, quieted (first NaN
        operand in argument order, SoftFloat 8086-SSE). ``propagate_last``: the
        same with the last NaN operand in argument order (b before a, c before b
        before a): NaN + NaN gives the second operand's NaN, as NumPy's float16
        arithmetic on x86 does through float32. ``canonical``: every NaN
        result is ``pattern``. ``keep``: as propagate, not quieted (a widening
        bit shift; a payload that would vanish is quieted).
    pattern : int, "negative" or None
        The fresh NaN (propagate/keep: what an invalid operation without a NaN
        operand gives) or every NaN (canonical). None: the format's default NaN;
        ``"negative"``: the default NaN with the sign set (x86's "real
        indefinite", 0xFE00 for fp16).
    """
    mode: str = "propagate"
    pattern: object = None

    def __post_init__(self):
        if self.mode not in _MODES:
            raise ValueError(f"NanRule.mode must be one of {_MODES}, got {self.mode!r}")
        p = self.pattern
        if not (p is None or p == "negative"
                or (isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)))):
            raise ValueError(f"NanRule.pattern must be None, 'negative' or an int NaN "
                             f"encoding, got {p!r}")

    def bits(self, fmt) -> int:
        """The pattern for ``fmt`` (validated: a NaN encoding of fmt)."""
        p = self.pattern
        if p is None:
            return default_nan_bits(fmt)
        if p == "negative":
            if fmt.kind in ("fnuz", "fnu", "finite"):   # no sign to set on the NaN
                return default_nan_bits(fmt)
            return default_nan_bits(fmt) | fmt.sign_mask
        b = int(p)
        if not (0 <= b < (1 << fmt.nbits) and bool(is_nan_bits(fmt, b))):
            raise ValueError(f"nan pattern {b:#x} is not a NaN encoding of {fmt.name}")
        return b


# --------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------
def default_nan_bits(fmt: Format) -> int:
    """The format's own default NaN (`Format.default_nan_bits`): positive, quiet,
    payload 0; 0 (+0) for ``finite`` formats, which have no NaN."""
    return fmt.default_nan_bits


def is_nan_bits(fmt: Format, bits):
    """True where ``bits`` (an int or an integer array of encodings of ``fmt``, in
    range; any integer dtype) encodes a NaN (`Format.is_nan_bits`)."""
    return fmt.is_nan_bits(bits)


def is_snan_bits(fmt, bits):
    """True where ``bits`` encodes a signaling NaN (IEEE formats: quiet bit clear;
    fn/fnuz NaNs are quiet)."""
    nan = is_nan_bits(fmt, bits)
    if fmt.kind != "ieee":
        return nan & False
    return nan & (((bits >> (fmt.mbits - 1)) & 1) == 0)


# --------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------
def as_rule(nan) -> NanRule:
    """A ``nan=`` value (``"propagate"``, ``"canonical"``, an int pattern or a
    NanRule) as a NanRule. Raises ValueError for anything else."""
    if isinstance(nan, NanRule):
        return nan
    if isinstance(nan, str) and nan in NAN_WORDS:
        return NanRule(nan)
    if isinstance(nan, (int, np.integer)) and not isinstance(nan, (bool, np.bool_)):
        return NanRule("canonical", int(nan))
    raise ValueError(f"unknown NaN policy {nan!r}; expected 'propagate', 'propagate_last', "
                     f"'canonical', an int NaN encoding or a softfloat.specialize.NanRule")


def kernel_nan(nan, fmt) -> tuple:
    """(P_NAN mode code, P_NANBITS pattern) of the kernel policy tuple for a
    ``nan=`` value and the result format."""
    r = as_rule(nan)
    code = {"propagate": NAN_PROPAGATE, "propagate_last": NAN_PROPAGATE_LAST,
            "canonical": NAN_CANONICAL, "keep": NAN_KEEP}[r.mode]
    return code, r.bits(fmt)


def kernel_fresh_nan(pol) -> int:
    """The fresh NaN (an invalid operation without a NaN operand) of a kernel
    policy tuple, for code outside the kernels that makes one (a native fast
    path's inf - inf)."""
    return int(pol[P_NANBITS])


def fresh_nan_bits(fmt: Format, pattern=None) -> int:
    """The NaN made from non-NaN operands (0/0, inf - inf, 0 * inf; fma(0, inf,
    NaN) too) in ``fmt`` under a propagating rule whose fresh pattern is
    ``pattern`` (None: the format's default NaN; ``"negative"``: x86's, 0xFE00 for
    fp16; an int). A platform's is `softfloat.platforms.Platform.fresh_nan`."""
    return NanRule("propagate", pattern).bits(get_format(fmt))


def describe_nan(nan, fmt) -> str:
    """A ``nan=`` value in words for ``fmt``: which NaN a result gets.

    >>> describe_nan("propagate_last", "fp16")
    'the last NaN operand in argument order (b before a), quieted; an invalid operation gives 0x7e00'
    """
    r = as_rule(nan)
    f = get_format(fmt)
    w = max(1, (f.nbits + 3) // 4)
    pat = f"{r.bits(f):#0{w + 2}x}"
    if not f.has_nan:
        return f"{f.name} has no NaN"
    if r.mode == "canonical":
        return f"every NaN result is {pat}"
    head = {"propagate": "the first NaN operand in argument order (a before b)",
            "propagate_last": "the last NaN operand in argument order (b before a)",
            "keep": "the NaN operand, not quieted"}[r.mode]
    quiet = ", quieted" if r.mode != "keep" else ""
    return f"{head}{quiet}; an invalid operation gives {pat}"


def all_ones_nan_bits(fmt: Format) -> int:
    """The NaN with every bit set but the sign (0x7FFF fp16, 0x7FFFFFFF fp32,
    0x7FFFFFFFFFFFFFFF fp64): the one NaN the GPU matrix units write (MMA-Sim's
    canonical NaN; `softfloat.mma` makes every NaN result this pattern, and the
    kernels ask `_kernels.specialize.all_ones_nan` for the same one)."""
    f = get_format(fmt) if not isinstance(fmt, Format) else fmt
    if f.kind != "ieee":
        raise ValueError(f"all_ones_nan_bits is for IEEE formats, not {f.name}")
    return f.sign_mask - 1


def invalid_int_bits(itype: str) -> int:
    """Bits of the result of an invalid conversion (NaN, infinity, out of range)
    to the integer type ``itype`` (``i32``, ``ui32``, ``i64``, ``ui64``), SoftFloat
    8086-SSE / x86: the signed minimum ("integer indefinite"), all ones unsigned.
    The kernels' signed case is `_kernels.specialize.invalid_int`."""
    table = {"i32": 1 << 31, "ui32": (1 << 32) - 1, "i64": 1 << 63, "ui64": (1 << 64) - 1}
    if itype not in table:
        raise ValueError(f"unknown integer type {itype!r}; expected one of {sorted(table)}")
    return table[itype]
