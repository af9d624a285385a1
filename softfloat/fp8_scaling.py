"""Per-tensor fp8 scaling, as Transformer Engine does it: one float32 scale for a
whole tensor, chosen from its largest magnitude (current scaling, `fp8_scale`) or
from an amax history of earlier steps (delayed scaling, `DelayedScaling`), and the
tensor quantized with it (`quantize_per_tensor`: codes = round(x * scale) into an
fp8 format, one rounding of the exact product, saturating) and read back
(`dequantize_per_tensor`). Block-scaled formats (MX, NVFP4) are softfloat.mx's,
which also offers these names (``softfloat.mx.quantize_per_tensor``, the path the
docs use); the kernel is `_kernels.fp8_scaling.scale_cast_chunk`.

What a GEMM multiplies, in one pass: `quantize_per_tensor_values` (and
`DelayedScaling.quantize_values`) give the codes' values (``round(x * scale)``,
before the division by the scale that cuBLAS applies as alpha) as float32, with
the tensor's `amax` on request; for finite float32 tensors into fp8 e4m3 / e5m2
to nearest even by `_kernels.fp8_scaling.scale_values_chunk` (the product in
float64, exact, then the MX kernels' element rounding), whose slow twin is
`quantize_per_tensor` + `softfloat.from_bits` (tests/test_fp8_scaling_values.py).

    >>> import numpy as np
    >>> from softfloat import fp8_scaling as fs
    >>> x = np.float32([0.5, -3.0, 1e-3, 7.0])
    >>> fs.amax(x)
    7.0
    >>> vals, s = fs.quantize_per_tensor_values(x, "fp8_e4m3")
    >>> s, vals.tolist()
    (64.0, [32.0, -192.0, 0.0625, 448.0])
"""
from __future__ import annotations

import math

import numpy as np

from . import _validate as V
from ._kernels import fp8_scaling as K
from ._kernels.hw import flushes
from ._kernels.mx_elem import f32_exact
from ._kernels.mx_scale import amax_chunk, sig_exp
from ._parallel import run_chunks, run_chunks_each
from .context import kernel_policy, random_key, resolve
from .conversions import from_bits
from .formats import FP8_E4M3, FP8_E5M2, get_format
from .rounding import Rounding

__all__ = ["fp8_scale", "quantize_per_tensor", "dequantize_per_tensor", "DelayedScaling",
           "amax", "quantize_per_tensor_values"]


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


# a format's largest value as a float, by its fields (E, M, bias, kind)
_FMAX: dict = {}


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
    fmax = _FMAX.get(f.params)
    if fmax is None:
        fmax = _FMAX[f.params] = float(f.max)         # (Format.max is an exact Fraction)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        # one rounding of the float64 quotient to float32 is the correctly rounded
        # float32 quotient (53 >= 2 * 24 + 2), as float32's own division
        q = np.float32(fmax / a) if a > 2.0 ** -1000 else np.float32(np.inf)
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


_INF32 = 0x7F800000


def _amax_bits32(flat):
    """The largest float32 magnitude of a C-contiguous float32 vector as its bits
    (above 0x7F800000: a NaN is present; equal: an infinity), one pass."""
    return max(int(r) for _, r in run_chunks_each(amax_chunk, flat.size, flat))


_F32 = np.dtype(np.float32)


def _bits_value(b: int) -> float:
    """The float32 whose bits are b, as a float."""
    return float(np.uint32(b).view(np.float32))


def amax(x) -> float:
    """The largest magnitude of ``x``: ``max(|x|)`` over every element, a NaN if
    any element is a NaN (as ``numpy.max(numpy.abs(x))``), 0.0 for an empty array.
    float32 input in one pass over its bits; float16/float64 by NumPy. Returns a
    float (a value of x's dtype)."""
    a = x if (x.__class__ is np.ndarray and x.dtype == _F32) else V.as_values(x)
    if a.size == 0:
        return 0.0
    if a.dtype == _F32:
        flat = a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1)
        return _bits_value(_amax_bits32(flat))
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(a)))


# the element formats of the fast values kernel: (params, element tuple as
# `_kernels.mx_elem.element` takes it: M, emin, largest magnitude encoding, sign bit
# position, is MXINT8, largest value)
_FAST_ELEMS = {f.params: (f.mbits, 1 - f.bias, f.max_bits, f.ebits + f.mbits, False,
                          float(f.max)) for f in (FP8_E4M3, FP8_E5M2)}


def _values_fast(a, f, s, res):
    """(values float32, amax bits) of round(a * s) into f by the fast kernel, or
    None where it does not apply (not float32 e4m3/e5m2 nearest even with fast
    paths, FTZ/DAZ in the thread's MXCSR) or the tensor is not finite."""
    ef = _FAST_ELEMS.get(f.params)
    if (ef is None or a.dtype != np.float32 or not res.fast_paths
            or res.rounding != Rounding.NEAREST_EVEN or a.size == 0 or flushes()):
        return None
    flat = np.ascontiguousarray(a).reshape(-1)
    out = np.empty(flat.size, np.float32)
    s64 = np.float64(s)
    am = max(int(r) for _, r in run_chunks_each(K.scale_values_chunk, flat.size, flat,
                                                  s64, out, ef))
    if am >= _INF32:
        return None                  # an infinity or a NaN: the general kernel's rules
    return out.reshape(a.shape), am


def _values_of(codes, f):
    """float32 values of codes of a format inside float32 (exact, by the bits where
    the thread's MXCSR would flush numpy's cast)."""
    return f32_exact(from_bits(codes, f))


def quantize_per_tensor_values(x, fmt="fp8_e4m3", *, scale=None, margin=0,
                               rounding="nearest_even", seed=None, return_amax=False):
    """The values of `quantize_per_tensor`'s codes: ``round(x * scale)`` into
    ``fmt`` (saturating, one rounding of the exact product), as float32, not
    divided by the scale (what a GEMM multiplies; the scale's inverse is cuBLAS's
    alpha). ``fmt`` must have only float32 values (fp8, fp6, fp4, fp16, bf16 ...).
    Returns ``(values, scale)``, with ``return_amax=True`` ``(values, scale,
    amax)``: `amax` of x (a NaN or an infinity shows there). The same values as
    ``from_bits(quantize_per_tensor(x, fmt, ...)[0], fmt)``; finite float32 input
    into fp8 e4m3/e5m2 to nearest even in one pass (module docstring)."""
    a = x if (x.__class__ is np.ndarray and x.dtype == _F32) else V.as_values(x)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    f = get_format(fmt)
    if not f.fits_float32:
        raise ValueError(f"quantize_per_tensor_values: {f.name} has values beyond float32; "
                         f"use quantize_per_tensor and dequantize_per_tensor")
    am = None
    if scale is None:
        am = amax(a)
        if not math.isfinite(am):
            return _values_slow(a, f, None, margin, rounding, seed, am, return_amax)
        s = fp8_scale(am, f, margin)              # a positive float32 value
    elif _margin(margin) != 0:
        raise ValueError("margin is used to compute the scale: give scale= or margin=, "
                         "not both")
    else:
        s = _positive_f32(scale, "scale")
    r = _values_fast(a, f, s, resolve(rounding, seed=seed))
    if r is None:
        return _values_slow(a, f, s, 0, rounding, seed, am, return_amax)
    vals, bits = r
    return (vals, s, _bits_value(bits)) if return_amax else (vals, s)


def _values_slow(a, f, scale, margin, rounding, seed, am, return_amax):
    codes, s = quantize_per_tensor(a, f, scale=scale, margin=margin, rounding=rounding,
                                   seed=seed)
    vals = _values_of(codes, f)
    if not return_amax:
        return vals, s
    return vals, s, (amax(a) if am is None else am)


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
        self._record(float(fin.max()) if fin.size else 0.0)
        return codes, s

    def quantize_values(self, x, *, rounding="nearest_even", seed=None, return_amax=False):
        """`quantize` with the codes' values out (float32, as
        `quantize_per_tensor_values`: not divided by the scale), the same history
        and scale updates. Returns ``(values, scale used)``, with
        ``return_amax=True`` also `amax` of x (NaN or infinity included)."""
        a = x if (x.__class__ is np.ndarray and x.dtype == _F32) else V.as_values(x)
        if a.dtype == np.float16:
            a = a.astype(np.float32)
        if not self.fmt.fits_float32:
            raise ValueError(f"quantize_values: {self.fmt.name} has values beyond float32")
        s = self.scale
        r = _values_fast(a, self.fmt, s, resolve(rounding, seed=seed))
        if r is None:
            codes, s = self.quantize(a, rounding=rounding, seed=seed)
            vals = _values_of(codes, self.fmt)
            return (vals, s, amax(a)) if return_amax else (vals, s)
        vals, bits = r
        am = _bits_value(bits)          # finite: the amax of the finite values
        self._record(am)
        return (vals, s, am) if return_amax else (vals, s)

    def _record(self, amax_finite: float):
        """This step's amax (of the finite values) into the history, and the next
        step's scale from it."""
        self.amax_history.append(amax_finite)
        self.amax_history = self.amax_history[-self.history_len:]
        h = max(self.amax_history) if self.algo == "max" else self.amax_history[-1]
        self.scale = fp8_scale(h, self.fmt, self.margin, previous=self.scale)
