"""Per-tensor fp8 scaling, as Transformer Engine does it: one float32 scale for a
whole tensor, chosen from its largest magnitude (current scaling, `fp8_scale`) or
from an amax history of earlier steps (delayed scaling, `DelayedScaling`), and the
tensor quantized with it (`quantize_per_tensor`: codes = round(x * scale) into an
fp8 format, one rounding of the exact product, saturating) and read back
(`dequantize_per_tensor`). Block-scaled formats (MX, NVFP4) are softfloat.mx's,
which also offers these names (``softfloat.mx.quantize_per_tensor``, the path the
docs use); the kernel is `_kernels.fp8_scaling.scale_cast_chunk`.
"""
from __future__ import annotations

import math

import numpy as np

from . import _validate as V
from ._kernels import fp8_scaling as K
from ._kernels.mx_scale import sig_exp
from ._parallel import run_chunks
from .context import kernel_policy, random_key, resolve
from .conversions import from_bits
from .formats import get_format
from .rounding import Rounding

__all__ = ["fp8_scale", "quantize_per_tensor", "dequantize_per_tensor", "DelayedScaling"]


def _real(v, name: str) -> float:
    """A real number given as an int or a float (Python or NumPy, or a 0-d float or
    int array); bools, strings and everything else refused with a TypeError."""
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "fiu":
        v = v[()]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                              np.floating)):
        raise TypeError(f"{name}: expected a real number (int or float), got "
                        f"{type(v).__name__} {v!r}")
    try:
        return float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _positive_f32(v, name: str) -> float:
    """A positive finite float32 value (checked, not rounded)."""
    t = _real(v, name)
    if not (math.isfinite(t) and t > 0) or float(np.float32(t)) != t:
        raise ValueError(f"{name}: expected a positive finite float32 value, got {v!r}")
    return t


def _margin(margin) -> float:
    m = _real(margin, "margin")
    if not math.isfinite(m):
        raise ValueError(f"margin: expected a finite number, got {margin!r}")
    return m


def fp8_scale(amax, fmt="fp8_e4m3", margin=0, previous=1.0):
    """Transformer Engine's scale: (max_fp8 / amax) / 2**margin computed in
    float32; the previous scale where amax is 0 or not finite, or where the
    scale would be infinite or zero (TE ``_default_sf_compute``). Returns a float
    (a float32 value). The quotient max_fp8 / amax is rounded once to float32 from
    the exact amax: for a float32 amax that is TE's float32 division, and a float64
    amax beyond float32's range (up to about 1e300) still gives its (small) scale.
    ``amax``, ``margin`` (finite) and ``previous`` (a positive float32) are
    checked: a string or a bool is a TypeError, never read as a number."""
    f = get_format(fmt)
    a = _real(amax, "amax")
    m = _margin(margin)
    prev = _positive_f32(previous, "previous")
    if not (a > 0 and math.isfinite(a)):
        return prev
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        # one rounding of the float64 quotient to float32 is the correctly rounded
        # float32 quotient (53 >= 2 * 24 + 2), as float32's own division
        q = np.float32(f.max / a) if a > 2.0 ** -1000 else np.float32(np.inf)
        sf = q / np.float32(np.power(np.float64(2.0), m))
    if not (np.isfinite(sf) and sf > 0):
        return prev
    return float(sf)


def quantize_per_tensor(x, fmt="fp8_e4m3", *, scale=None, margin=0, rounding="nearest_even",
                        seed=None):
    """Per-tensor scaling: codes = round(x * scale) into ``fmt`` (one rounding of
    the exact product, saturating at the largest finite value, as TE's cast).
    ``scale=None``: current scaling, `fp8_scale` of amax(|x|). Returns
    ``(codes, scale)``; the values are ``dequantize_per_tensor(codes, scale, fmt)``
    = codes' values / scale."""
    a = V.as_values(x)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    f = get_format(fmt)
    if scale is None:
        fin = a[np.isfinite(a)]
        scale = fp8_scale(float(np.max(np.abs(fin))) if fin.size else 0.0, f, margin)
    elif _margin(margin) != 0:
        raise ValueError("margin is used to compute the scale: give scale= or margin=, "
                         "not both")
    s = _positive_f32(scale, "scale")
    se, ssig = sig_exp(s)
    res = resolve(rounding, overflow="saturate", seed=seed)
    pol = kernel_policy(res, f)
    key = random_key(res.seed) if res.rounding == Rounding.STOCHASTIC else 0
    hE, hM, hb, _ = V.HOST_FORMATS[a.dtype].params
    src = V.flat(V.int_view(np.ascontiguousarray(a)))
    out = np.empty(src.size, f.dtype)
    run_chunks(K.scale_cast_chunk, src.size, src, hE, hM, hb, se, ssig, out, *f.params, pol,
               key, f.default_nan_bits)
    return out.reshape(a.shape), s


def dequantize_per_tensor(codes, scale, fmt="fp8_e4m3"):
    """Values of per-tensor scaled codes: value(code) / scale (float64; one
    rounding of the quotient to float64, exact when scale is a power of two)."""
    f = get_format(fmt)
    s = _positive_f32(scale, "scale")
    return from_bits(V.as_bits(codes, f, "codes"), f) / s


class DelayedScaling:
    """Transformer Engine's delayed scaling for one tensor: the scale used at a step
    comes from the amax history of earlier steps; each call records this step's
    amax. ``algo="max"`` (TE default) takes the largest amax in the history,
    ``"most_recent"`` the last one. ``history_len`` as TE's amax_history_len.
    The first step uses scale 1.0 (TE's initial scale)."""

    def __init__(self, fmt="fp8_e4m3", *, margin=0, history_len=1024, algo="max"):
        self.fmt = get_format(fmt)
        if algo not in ("max", "most_recent"):
            raise ValueError(f"algo: expected 'max' or 'most_recent', got {algo!r}")
        if (not isinstance(history_len, (int, np.integer))
                or isinstance(history_len, (bool, np.bool_)) or history_len < 1):
            raise ValueError(f"history_len: expected a positive int, got {history_len!r}")
        _margin(margin)
        history_len = int(history_len)
        self.margin, self.history_len, self.algo = margin, history_len, algo
        self.amax_history: list = []
        self.scale = 1.0

    def quantize(self, x, *, rounding="nearest_even", seed=None):
        """Quantize with the current scale, then update history and scale.
        Returns (codes, scale used)."""
        a = V.as_values(x)
        codes, s = quantize_per_tensor(a, self.fmt, scale=self.scale, rounding=rounding,
                                       seed=seed)
        fin = np.abs(a[np.isfinite(a)])
        self.amax_history.append(float(fin.max()) if fin.size else 0.0)
        self.amax_history = self.amax_history[-self.history_len:]
        amax = max(self.amax_history) if self.algo == "max" else self.amax_history[-1]
        self.scale = fp8_scale(amax, self.fmt, self.margin, previous=self.scale)
        return codes, s
