"""IEEE P3109 formats and operations (docs/p3109.md).

The formats themselves (``"binary8p3se"``, ``"Binary8p4sf"``, any BinaryKpP with
K in 3..16, signed or unsigned, extended or finite) are softfloat formats like
any other: `softfloat.to_bits`, `from_bits`, `quantize`, `convert` and the
arithmetic take them, with the ``saturation=`` policy. This module adds what
only P3109 defines: exact decoding, the operations with operands and result in
different formats (one rounding, the given projection), and the block
operations.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import _validate
from ._kernels.codes import C_FINITE, C_INF, C_QNAN, C_ZERO
from ._kernels.p3109 import decode_parts_chunk
from ._parallel import run_chunks
from .formats import Format, get_format

__all__ = ["decode", "decode_parts", "p3109_format", "is_p3109"]

from .formats import p3109_format  # noqa: E402  (re-exported)


def _fmt(fmt) -> Format:
    return _validate.target_format(fmt)


def is_p3109(fmt) -> bool:
    """Whether ``fmt`` (a Format or a name) is a P3109 format."""
    return _fmt(fmt).is_p3109


def decode_parts(codes, fmt):
    """Exact integer parts of encodings of any format: ``(cls, sign, exp, sig)``
    int64 arrays of the shape of ``codes``; a finite value is
    ``(-1)**sign * sig * 2**exp``; ``cls`` is 0 zero, 1 finite, 2 infinity (sign
    in ``sign``), 3 NaN. Works for every P3109 format, those whose values leave
    float64 (e.g. binary16p1ue, up to 2**32765) included."""
    f = _fmt(fmt)
    b = _validate.as_bits(codes, f, "codes")
    src = np.ascontiguousarray(b, np.int64).reshape(-1)
    n = src.size
    cls, sign, exp, sig = (np.empty(n, np.int64) for _ in range(4))
    run_chunks(decode_parts_chunk, n, src, cls, sign, exp, sig, *f.params)
    cls[cls > C_QNAN] = C_QNAN
    return tuple(a.reshape(b.shape) for a in (cls, sign, exp, sig))


def decode(codes, fmt) -> np.ndarray:
    """Exact values of encodings as an object array of `fractions.Fraction`, with
    ``float('inf')``, ``float('-inf')`` and ``float('nan')`` for the specials (any
    format; the one exact decoding of P3109 formats beyond float64's range)."""
    cls, sign, exp, sig = decode_parts(codes, fmt)
    out = np.empty(cls.shape, object)
    flat = out.reshape(-1)
    for i, (c, s, e, m) in enumerate(zip(cls.reshape(-1).tolist(), sign.reshape(-1).tolist(),
                                         exp.reshape(-1).tolist(), sig.reshape(-1).tolist())):
        if c == C_FINITE:
            v = Fraction(m) * Fraction(2) ** e
            flat[i] = -v if s else v
        elif c == C_ZERO:
            flat[i] = Fraction(0)
        elif c == C_INF:
            flat[i] = float("-inf") if s else float("inf")
        else:
            flat[i] = float("nan")
    return out
