"""The values API: `sum_values`, `dot_values` and `matmul_values` on float arrays
whose entries are values of the input format. The entries are checked to be
exactly representable (`_exact_bits`) and turned into encodings for the
encodings API (softfloat/accumulate/bits.py), whose result comes back as float
values of the output format; ``matmul_values(check=False)`` runs straight on
float32 values where `dispatch._values_fast` applies.
"""
from __future__ import annotations

import numpy as np

from .. import _validate as V
from ..conversions import from_bits, to_bits
from ..formats import FP32, Format, get_format
from .bits import dot, matmul, sum
from .dispatch import _f32_fits, _values_fast
from .models import resolve_model

__all__ = ["sum_values", "dot_values", "matmul_values"]


def _exact_bits(x, fin: Format, name: str) -> np.ndarray:
    v = V.as_values(x, name)
    bits = to_bits(v, fin, "nearest_even")
    back = from_bits(bits, fin)
    v64 = v.astype(np.float64)
    same = (back == v64) | (np.isnan(back) & np.isnan(v64))
    if not np.all(same):
        bad = v64[~same].ravel()[0]
        raise ValueError(f"{name}: {bad!r} is not exactly representable in {fin.name}; "
                         f"round it first (softfloat.quantize(x, {fin.name!r}))")
    # signed zeros: to_bits keeps the sign
    return bits


def _values_out(r, fmt_out, return_flags):
    if return_flags:
        return from_bits(r[0], fmt_out), r[1]
    return from_bits(r, fmt_out)


def _out_format(acc, fin, out_fmt, kw):
    if out_fmt is not None:
        return get_format(out_fmt)
    m = resolve_model(acc, fin, kw.get("order", "sequential"), kw.get("block"), kw.get("products"),
               kw.get("product_fmt"), kw.get("kahan", False), kw.get("rounding"))
    return m.fmt


def _check_matmul_shapes(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ValueError(f"matmul: shapes {sa} and {sb} do not align (k = {ka} vs {kb})")


def matmul_values(a, b, fmt, *, acc=None, out_fmt=None, rounding=None, check=True,
                  out_dtype=np.float64, **kw):
    """`matmul` on float arrays whose entries are values of ``fmt``; returns the
    values of the result (``out_dtype``: float64, or float32 where the output
    format fits in it).

    ``check=True`` (default): every entry is verified to be exactly representable in
    ``fmt`` (ValueError otherwise). ``check=False`` is the validated-values entry
    point for callers that construct their operands as values of ``fmt`` (nn's
    activations and weights, rounded once when they were made): the entries are not
    scanned again (entries that are not values of ``fmt`` give unspecified, but
    memory-safe, results); shapes are always checked. With ``check=False``, 2-D
    operands and an fp32 accumulator in sequential, blocked or blas order run straight on
    float32 values (the same kernels as the encodings path)."""
    fin = V.target_format(fmt)
    if out_dtype not in (np.float64, np.float32):
        raise ValueError(f"out_dtype must be numpy.float64 or numpy.float32, got {out_dtype!r}")
    if not isinstance(check, (bool, np.bool_)):
        raise TypeError(f"check must be True or False, got {check!r}")
    _check_matmul_shapes(a, b)
    if not check:
        r = _values_fast(a, b, fin, acc, out_fmt, rounding, kw)
        if r is not None:
            return r.astype(out_dtype, copy=False)
        A = to_bits(V.as_values(a, "a"), fin, "nearest_even")
        B = to_bits(V.as_values(b, "b"), fin, "nearest_even")
    else:
        A, B = _exact_bits(a, fin, "a"), _exact_bits(b, fin, "b")
    r = matmul(A, B, fin, acc=acc, out_fmt=out_fmt, rounding=rounding, **kw)
    ofmt = _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding))
    if out_dtype == np.float32 and not (ofmt == FP32 or _f32_fits(ofmt)):
        raise ValueError(f"out_dtype float32 cannot hold the values of {ofmt.name}")
    r = _values_out(r, ofmt, kw.get("return_flags", False))
    if isinstance(r, tuple):
        return r[0].astype(out_dtype, copy=False), r[1]
    return r.astype(out_dtype, copy=False)


def dot_values(a, b, fmt, *, acc=None, out_fmt=None, rounding=None, **kw):
    """`dot` on exactly representable float values; float64 out."""
    fin = V.target_format(fmt)
    r = dot(_exact_bits(a, fin, "a"), _exact_bits(b, fin, "b"), fin, acc=acc,
            out_fmt=out_fmt, rounding=rounding, **kw)
    return _values_out(r, _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding)),
                       kw.get("return_flags", False))


def sum_values(x, fmt, axis=-1, *, acc=None, out_fmt=None, rounding=None, **kw):
    """`sum` on exactly representable float values; float64 out."""
    fin = V.target_format(fmt)
    r = sum(_exact_bits(x, fin, "x"), fin, axis, acc=acc, out_fmt=out_fmt,
            rounding=rounding, **kw)
    return _values_out(r, _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding)),
                       kw.get("return_flags", False))
