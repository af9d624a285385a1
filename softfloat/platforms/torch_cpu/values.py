"""The roundings the torch CPU models apply to float values: to float32 after each
step (float64 carriers of float32 values: the float64 result of one addition or
product of float32 numbers, rounded to float32, is the float32 result), to the
tensor's dtype when a result is stored (`_round_out`, torch's cast on store, and
`_store`, its ``out = dtype(float(out) + acc)``), and the flush of float32
subnormals that oneDNN's bfloat16 dot product applies (`_flush32`)."""
from __future__ import annotations

import numpy as np

from ...conversions import from_bits, to_bits


def _f32(a):
    return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)


def _round_out(v, f):
    """float32 values (float64) -> encodings of the output format f (one rounding)."""
    return to_bits(np.asarray(v, np.float64), f)


def _store(out_bits, acc, f):
    """CastStoreAccumulate: out = dtype(float(out) + acc)."""
    cur = from_bits(out_bits, f)
    return _round_out(_f32(cur + acc), f)


def _flush32(v):
    """Float32 subnormals to zero (the avx512_bf16 dot product flushes them)."""
    tiny = np.float64(2.0 ** -126)
    return np.where(np.abs(v) < tiny, 0.0 * np.sign(v), v)
