"""NaN specialization, after Berkeley SoftFloat's ``specialize.h``: the one place
that owns the NaN rules.

* which encodings are NaNs (`is_nan_bits`, `is_snan_bits`) and the format's
  default NaN (`default_nan_bits`: positive, quiet, payload 0);
* NaN policies (`NanRule`, and the words ``"propagate"``/``"canonical"``/an int
  accepted wherever a ``nan=`` keyword is), turned into the two entries of the
  kernel policy tuple by `kernel_nan` (the kernels' half is
  ``softfloat/_kernels/specialize.py``, which says what each mode does);
* a platform's rules per step (`platform_nan`: the ``nan=`` value that makes the
  kernels produce what the platform produces, fresh NaN included) and its fresh
  NaN (`fresh_nan_bits`), so that no output is patched afterwards;
* results of invalid conversions to integers (`invalid_int_bits`).

Modules that need a NaN ask here; none spells a NaN pattern of its own.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NanRule", "NAN_WORDS", "default_nan_bits", "is_nan_bits", "is_snan_bits",
           "fresh_nan_bits", "platform_nan", "kernel_nan", "kernel_fresh_nan",
           "invalid_int_bits"]

# The words a nan= keyword accepts (besides an int pattern and a NanRule).
NAN_WORDS = ("propagate", "canonical")
_MODES = ("propagate", "canonical", "keep")


@dataclass(frozen=True)
class NanRule:
    """A NaN policy the kernels carry out.

    mode : {"propagate", "canonical", "keep"}
        ``propagate``: a NaN operand's sign and payload, quieted (first NaN
        operand in argument order, SoftFloat 8086-SSE). ``canonical``: every NaN
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
            if fmt.kind == "fnuz":          # a single NaN, already "negative"
                return default_nan_bits(fmt)
            return default_nan_bits(fmt) | fmt.sign_mask
        b = int(p)
        if not (0 <= b < (1 << fmt.nbits) and bool(is_nan_bits(fmt, b))):
            raise ValueError(f"nan pattern {b:#x} is not a NaN encoding of {fmt.name}")
        return b


# --------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------
def default_nan_bits(fmt) -> int:
    """The format's own default NaN: positive, quiet, payload 0 (0x7E00 fp16,
    0x7FC0 bf16, 0x7F e4m3 (fn), 0x80 fnuz, 0xFF e8m0 (fnu)). ``finite`` formats
    (OCP fp4/fp6) have no NaN: 0, the +0 that a NaN result becomes there."""
    if fmt.kind == "ieee":
        return (((1 << fmt.ebits) - 1) << fmt.mbits) | (1 << (fmt.mbits - 1))
    if fmt.kind in ("fn", "fnu"):
        return (1 << (fmt.ebits + fmt.mbits)) - 1
    if fmt.kind == "finite":
        return 0
    return fmt.sign_mask


def is_nan_bits(fmt, bits):
    """True where ``bits`` (an int or an integer array of encodings of ``fmt``, in
    range; any integer dtype) encodes a NaN."""
    if fmt.kind == "fnuz":
        return bits == fmt.sign_mask
    if fmt.kind == "finite":                # OCP fp4/fp6: no NaN
        return np.zeros(np.shape(bits), bool) if np.ndim(bits) else False
    if fmt.kind == "fnu":                   # e8m0: all ones
        return bits == fmt.sign_mask - 1
    mag = bits & (fmt.sign_mask - 1)
    if fmt.kind == "fn":
        return mag == fmt.sign_mask - 1
    return mag > (((1 << fmt.ebits) - 1) << fmt.mbits)


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
    raise ValueError(f"unknown NaN policy {nan!r}; expected 'propagate', 'canonical', "
                     f"an int NaN encoding or a softfloat.specialize.NanRule")


def kernel_nan(nan, fmt) -> tuple:
    """(P_NAN mode code, P_NANBITS pattern) of the kernel policy tuple for a
    ``nan=`` value and the result format."""
    from ._kernels.codes import NAN_CANONICAL, NAN_KEEP, NAN_PROPAGATE
    r = as_rule(nan)
    code = {"propagate": NAN_PROPAGATE, "canonical": NAN_CANONICAL, "keep": NAN_KEEP}[r.mode]
    return code, r.bits(fmt)


def kernel_fresh_nan(pol) -> int:
    """The fresh NaN (an invalid operation without a NaN operand) of a kernel
    policy tuple, for code outside the kernels that makes one (a native fast
    path's inf - inf)."""
    from ._kernels.codes import P_NANBITS
    return int(pol[P_NANBITS])


# --------------------------------------------------------------------------
# Platforms
# --------------------------------------------------------------------------
def platform_nan(platform, stage: str, fmt) -> NanRule:
    """The ``nan=`` policy under which the kernels produce what ``platform`` gives
    at ``stage`` ('result': an operation computed in ``fmt``; 'cast': a
    conversion into ``fmt``; 'widen': a widening conversion from ``fmt`` -- the
    pattern is then the wider result format's business, see `platforms`).

    The platform's rule (``Platform.nan_result`` etc.) is ``propagate`` (with the
    platform's fresh NaN, ``Platform.nan_default``), ``canonical``, ``keep`` or
    an int pattern."""
    from .formats import get_format
    from .platforms import get_platform
    plat = get_platform(platform)
    f = get_format(fmt)
    rule = plat.nan_rule(stage, f)
    if rule == "canonical":
        return NanRule("canonical")
    if rule == "ones":
        # casts only: the kernels propagate (the NaN's sign), the platform
        # interpreter (platforms.ops) then sets the payload to all ones
        return NanRule("propagate")
    if rule in ("propagate", "keep"):
        # a conversion makes no fresh NaN; the pattern is kept for results only
        return NanRule(rule, None if stage != "result" else _fresh_pattern(plat, f))
    return NanRule("canonical", int(rule))


def _fresh_pattern(plat, f):
    v = plat.nan_default.get(f.name, plat.nan_default.get("*"))
    return None if v is None else (v if v == "negative" else int(v))


def fresh_nan_bits(fmt, platform=None) -> int:
    """The NaN that ``platform`` (default: ``ieee``) makes from non-NaN operands
    (0/0, inf - inf, 0 * inf; fma(0, inf, NaN) too) in ``fmt`` under its
    propagating rule: the format's default NaN, or the platform's own (x86 SSE:
    the negative default NaN, 0xFE00 for fp16)."""
    from .formats import get_format
    from .platforms import get_platform
    f = get_format(fmt)
    return NanRule("propagate", _fresh_pattern(get_platform(platform), f)).bits(f)


def invalid_int_bits(itype: str) -> int:
    """Bits of the result of an invalid conversion (NaN, infinity, out of range)
    to the integer type ``itype`` (``i32``, ``ui32``, ``i64``, ``ui64``), SoftFloat
    8086-SSE / x86: the signed minimum ("integer indefinite"), all ones unsigned.
    The kernels' signed case is `_kernels.specialize.invalid_int`."""
    table = {"i32": 1 << 31, "ui32": (1 << 32) - 1, "i64": 1 << 63, "ui64": (1 << 64) - 1}
    if itype not in table:
        raise ValueError(f"unknown integer type {itype!r}; expected one of {sorted(table)}")
    return table[itype]
