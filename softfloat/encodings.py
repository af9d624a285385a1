"""Encodings made readable: `fields` splits one encoding into sign, exponent and
fraction with its class and value; `explain` writes one line per encoding, for
a reader (a test's counterexample such as ``(31744, 64512)`` in fp16 is
``+inf`` and ``-inf``)::

    >>> print(explain([0x3C00, 31744, 1], "fp16"))
    0x3c00 fp16  0 01111 0000000000  normal     +1.0 x 2^0 = 1.0
    0x7c00 fp16  0 11111 0000000000  infinity   +inf
    0x0001 fp16  0 00000 0000000001  subnormal  +0.0009765625 x 2^-14 = 5.960464477539063e-08
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _validate as V
from .conversions import from_bits
from .formats import get_format

__all__ = ["Fields", "fields", "explain"]


class Fields(NamedTuple):
    """One encoding taken apart (`fields`)."""
    bits: int            # the encoding
    fmt: str             # the format's name
    sign: int            # the sign bit (0 for formats without one)
    exponent: int        # the exponent field
    fraction: int        # the fraction (trailing significand) field
    kind: str            # zero, subnormal, normal, infinity, nan
    value: float         # the value (float64, exact for every format's finite values)

    def __str__(self):
        f = get_format(self.fmt)
        width = (f.nbits + 3) // 4
        b = format(self.bits, f"0{f.nbits}b")
        s = int(f.has_sign)
        parts = ([b[0]] if s else []) + [b[s:s + f.ebits]] + ([b[s + f.ebits:]] if f.mbits
                                                              else [])
        head = f"{self.bits:#0{2 + width}x} {f.name}  {' '.join(parts)}  {self.kind:<9}  "
        sg = "-" if self.sign else "+"
        if self.kind == "nan":
            if f.kind == "ieee":
                quiet = self.fraction >> (f.mbits - 1) & 1
                payload = self.fraction & ((1 << (f.mbits - 1)) - 1)
                return head + f"{sg}NaN ({'quiet' if quiet else 'signaling'}, payload " \
                              f"{payload:#x})"
            return head + "NaN"
        if self.kind == "infinity":
            return head + f"{sg}inf"
        if self.kind == "zero":
            return head + f"{sg}0.0"
        sub = self.kind == "subnormal"
        e = (f.emin if sub else self.exponent - f.bias)
        m = (0 if sub else 1) + self.fraction / (1 << f.mbits)
        return head + f"{sg}{m!r} x 2^{e} = {self.value!r}"


def _encodings(bits, f) -> np.ndarray:
    """Encodings of ``f`` from an int, a sequence of ints or an integer array of
    any integer dtype (each value checked to be an encoding)."""
    if isinstance(bits, np.integer) and not isinstance(bits, np.bool_):
        bits = int(bits)
    if isinstance(bits, (list, tuple)) or (isinstance(bits, np.ndarray)
                                           and bits.dtype.kind in "iu"):
        a = np.asarray(bits)
        if a.size == 0:
            return np.zeros(a.shape, f.dtype)
        if a.dtype.kind not in "iu":
            raise TypeError(f"bits: expected integer encodings of {f.name}, got {a.dtype} "
                            f"(use softfloat.to_bits to round values)")
        if a.size and (int(a.min()) < 0 or int(a.max()) >= 1 << f.nbits):
            raise ValueError(f"bits: values out of range for {f.name} encodings "
                             f"(0..{(1 << f.nbits) - 1:#x})")
        bits = a.astype(f.dtype)
    return V.as_bits(bits, f, "bits")


def fields(bits, fmt) -> Fields:
    """The fields, class and value of one encoding ``bits`` (an int or a 0-d
    array) of ``fmt``."""
    f = get_format(fmt)
    a = _encodings(bits, f)
    if a.size != 1:
        raise ValueError(f"fields takes one encoding, got {a.size}; explain() takes many")
    x = int(a.reshape(-1)[0])
    s = int(f.has_sign)
    sign = (x >> (f.ebits + f.mbits)) & 1 if s else 0
    exp = (x >> f.mbits) & ((1 << f.ebits) - 1)
    frac = x & ((1 << f.mbits) - 1)
    with np.errstate(all="ignore"):
        v = float(from_bits(np.asarray(x, f.dtype), f))
    if np.isnan(v):
        kind = "nan"
    elif np.isinf(v):
        kind = "infinity"
    elif v == 0:
        kind = "zero"
    elif exp == 0 and f.kind != "fnu":
        kind = "subnormal"
    else:
        kind = "normal"
    return Fields(x, f.name, sign, exp, frac, kind, v)


def explain(bits, fmt) -> str:
    """One line per encoding in ``bits`` (an int, a sequence or an array of
    encodings of ``fmt``): hex, the sign, exponent and fraction fields, the class
    and the value as significand x 2^exponent. ``print(sf.explain(...))``."""
    f = get_format(fmt)
    a = _encodings(bits, f)
    if a.size == 0:
        raise ValueError("explain: no encodings given")
    return "\n".join(str(fields(int(x), f)) for x in a.reshape(-1))
