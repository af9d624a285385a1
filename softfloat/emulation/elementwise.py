"""Elementwise arithmetic and casts as torch CUDA computes them, through the
library's ``torch_cuda`` platform (softfloat.platforms): 16-bit operands read
into float32 (opmath), one operation, one rounding back; Python scalars kept
float32; ``x / s`` as ``x * RN32(1/s)``; add(alpha), addcmul, addcdiv, lerp fused;
the platform's NaN patterns and fp8 cast rules.

Each handler returns ``(result tensor, claim, model)`` or None when it has no
model for the operands (the mode then runs the op natively and counts it)."""
from __future__ import annotations

import numbers

import numpy as np
import torch

from ..specialize import all_ones_nan_bits
from ..platforms import get_platform, platform_convert, platform_op
from .encode import FORMATS, fmt_of, from_bits, to_bits

CUDA = get_platform("torch_cuda")
_FP32_NAN = torch.tensor(all_ones_nan_bits("fp32"), dtype=torch.int32).view(torch.float32)

ONE_ROUNDING = "torch_cuda: float32 opmath, rounded once"


# --------------------------------------------------------------------------
# casts
# --------------------------------------------------------------------------
def cast_bits(bits: np.ndarray, src: str, dst: str) -> np.ndarray:
    """``src`` encodings -> ``dst`` as torch CUDA converts: c10's conversions go
    through float32 (a 16-bit or fp8 source widened exactly, then one rounding
    into ``dst`` under the platform's cast rule and NaN pattern)."""
    if src == dst:
        return bits.copy()
    if src != "fp32" and dst != "fp32":
        bits = platform_convert(bits, src, "fp32", CUDA)
        src = "fp32"
    return platform_convert(bits, src, dst, CUDA)


def cast(t: torch.Tensor, dtype) -> torch.Tensor | None:
    """``t.to(dtype)`` as torch CUDA computes it, or None where there is no model
    (integer or float64 targets, complex sources)."""
    if dtype not in FORMATS:
        return None
    if t.dtype == torch.float64:
        # double -> float is one IEEE rounding on every machine; c10 narrows
        # doubles through float32
        t = t.to(torch.float32)
    if t.dtype not in FORMATS:
        return None
    return from_bits(cast_bits(to_bits(t), fmt_of(t.dtype), fmt_of(dtype)),
                     dtype).reshape(t.shape)


def canonical_nan32(r: torch.Tensor) -> torch.Tensor:
    """float32 results with every NaN the GPU's 0x7FFFFFFF (the platform's rule)."""
    nan = r.isnan()
    return torch.where(nan, _FP32_NAN, r) if bool(nan.any()) else r


# --------------------------------------------------------------------------
# operands
# --------------------------------------------------------------------------
def _scalar(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, numbers.Real):
        return v
    return None


def operands(values, rt):
    """The operands of an op whose result type is ``rt``: arrays of ``rt``
    encodings (wider or narrower tensors converted exactly / as torch does) or
    Python scalars. A 0-dim tensor of another float dtype is a CPU scalar (its
    value, kept in float32 as torch CUDA reads a CPU scalar). None when an
    operand has no model (complex, float64 tensors)."""
    fmt = fmt_of(rt)
    out = []
    for v in values:
        s = _scalar(v)
        if s is not None:
            out.append(s)
            continue
        if not isinstance(v, torch.Tensor):
            return None
        if v.dtype == rt:
            out.append(to_bits(v))
        elif v.dim() == 0 and (v.dtype.is_floating_point or not v.dtype.is_complex):
            out.append(v.item() if v.dtype != torch.bool else int(v.item()))
        elif v.dtype in FORMATS:
            out.append(cast_bits(to_bits(v), fmt_of(v.dtype), fmt))
        elif not v.dtype.is_floating_point and not v.dtype.is_complex:
            c = v.to(rt)      # integers and bools: torch's own conversion
            out.append(to_bits(c))
        else:
            return None
    return out


def _result(bits, rt, shape, out_dtype):
    r = from_bits(bits, rt).reshape(shape)
    if out_dtype is not None and out_dtype != rt:
        r = cast(r, out_dtype)
    return r


def _shape(*vals):
    return torch.broadcast_shapes(*[tuple(v.shape) for v in vals if isinstance(v, torch.Tensor)])


# --------------------------------------------------------------------------
# arithmetic
# --------------------------------------------------------------------------
def binary(op, a, b, alpha=None, out_dtype=None):
    """add/sub/mul/div of tensors and scalars (``alpha``: a + alpha*b)."""
    rt = torch.result_type(a, b)
    if rt not in FORMATS or rt in (torch.float8_e4m3fn, torch.float8_e5m2):
        return None
    shape = _shape(a, b)
    xs = operands((a, b), rt)
    if xs is None:
        return None
    al = None if alpha is None or float(alpha) == 1.0 else float(alpha)
    scalar = any(not isinstance(x, np.ndarray) for x in xs)
    if all(not isinstance(x, np.ndarray) for x in xs):
        return None
    fmt = fmt_of(rt)
    if fmt == "fp32" and not scalar and al is None:
        # IEEE float32: the same on every machine; only the NaN pattern is the GPU's
        A, B = (from_bits(x, rt) for x in xs)
        r = canonical_nan32(getattr(torch, op)(A, B))
        return _result(to_bits(r), rt, shape, out_dtype), "proof", "IEEE float32 (NaN 0x7FFFFFFF)"
    if op == "div" and fmt == "fp32" and not isinstance(xs[1], np.ndarray):
        # x / s on CUDA: x * RN32(1 / float(s)), also in float32
        inv = np.float32(1.0) / np.float32(xs[1])
        r = platform_op("mul", xs[0], float(inv), fmt=fmt, platform=CUDA)
        return _result(r, rt, shape, out_dtype), "modelled", "torch_cuda: x * RN32(1/s)"
    r = platform_op(op, *xs, fmt=fmt, platform=CUDA, alpha=al)
    if scalar or al is not None:
        return _result(r, rt, shape, out_dtype), "modelled", \
            ONE_ROUNDING + (" (scalar kept float32)" if scalar else " (fma with alpha)")
    return _result(r, rt, shape, out_dtype), "proof", ONE_ROUNDING + " (correctly rounded)"


def unary(op, x, out_dtype=None):
    """neg, abs, relu, sqrt through the platform."""
    if x.dtype not in FORMATS:
        return None
    r = platform_op(op, to_bits(x), fmt=fmt_of(x.dtype), platform=CUDA)
    claim = "proof" if op == "sqrt" else "exact"
    model = {"sqrt": ONE_ROUNDING + " (correctly rounded)", "relu": "torch_cuda: x < 0 ? 0 : x",
             "neg": "torch_cuda: sign bit flipped", "abs": "torch_cuda: sign bit cleared"}[op]
    return _result(r, x.dtype, x.shape, out_dtype), claim, model


def ternary(op, x, t1, t2, value=None, out_dtype=None):
    """addcmul / addcdiv (``value``) and lerp (t2 = weight), fused in float32."""
    rt = torch.result_type(x, t1)
    if isinstance(t2, torch.Tensor):
        rt = torch.promote_types(rt, t2.dtype) if t2.dim() else rt
    if rt not in FORMATS or rt in (torch.float8_e4m3fn, torch.float8_e5m2):
        return None
    xs = operands((x, t1, t2), rt)
    if xs is None:
        return None
    shape = _shape(x, t1, t2)
    v = None if value is None or float(value) == 1.0 else float(value)
    r = platform_op(op, *xs, fmt=fmt_of(rt), platform=CUDA, value=v)
    return _result(r, rt, shape, out_dtype), "modelled", "torch_cuda: one float32 fma, rounded once"


def pow_scalar(x, e, out_dtype=None):
    """x ** e: torch CUDA computes x*x for e == 2 and sqrt for e == 0.5 (exact
    by proof); other exponents go through `opmath`."""
    if x.dtype not in FORMATS or x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return None
    if not isinstance(e, numbers.Real) or isinstance(e, bool):
        return None
    if float(e) == 2.0:
        return binary("mul", x, x, out_dtype=out_dtype)
    if float(e) == 0.5:
        return unary("sqrt", x, out_dtype)
    if float(e) == 1.0:
        return x.clone(), "exact", "copy"
    return None
