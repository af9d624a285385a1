"""Reductions and the other ops torch CUDA computes in float32 and rounds once.

The CUDA reduction order (Reduce.cuh's launch-dependent tree) is not known
without a GPU, so sums and means are a stated model: float32 accumulation from
+0 in pairwise order (`softfloat.platforms.platform_sum` under ``torch_cuda``),
a mean as ``sum * RN32(1/N)`` as torch CUDA's MeanOps does, one rounding to the
output dtype. Softmax, layer norm, the losses and the transcendental functions
of 16-bit tensors run as `opmath`: the op in float32 on the CPU on the exactly
widened operands, each floating output rounded once to its dtype -- CUDA's
structure, with the CPU's float32 order and libm inside (labelled modelled)."""
from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_map

from ..platforms import platform_mean, platform_sum
from .elementwise import CUDA, cast
from .encode import FORMATS, fmt_of, from_bits, to_bits

SUM_MODEL = "float32 accumulation, pairwise order (CUDA's tree not transcribed), rounded once"
MEAN_MODEL = "float32 pairwise sum * RN32(1/N), rounded once"
OPMATH_MODEL = "float32 opmath on the CPU (its order and libm), rounded once"
_16 = (torch.float16, torch.bfloat16)


def _dims(x, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    if isinstance(dim, int):
        dim = [dim]
    return sorted({d % max(x.dim(), 1) for d in dim})


def sum_mean(what, x, dim=None, keepdim=False, dtype=None, out_dtype=None):
    """sum / mean of ``x`` over ``dim`` (torch's arguments), or None."""
    dt = dtype or x.dtype
    if x.dtype not in FORMATS or dt not in (torch.float32, torch.float16, torch.bfloat16):
        return None
    if x.dtype != dt:
        x = cast(x, dt)                    # exact widening (or torch's cast)
    dims = _dims(x, dim)
    keep = [d for d in range(x.dim()) if d not in dims]
    kept_shape = [x.shape[d] for d in keep]
    n = 1
    for d in dims:
        n *= x.shape[d]
    if x.dim() == 0:
        y = x.reshape(1, 1)
    else:
        y = x.permute(*keep, *dims).reshape(-1, n) if keep else x.reshape(1, n)
    fn = platform_sum if what == "sum" else platform_mean
    if n == 0:
        return None                           # torch's own empty-reduction rules
    r = fn(to_bits(y), fmt_of(dt), axis=1, platform=CUDA)
    out = from_bits(r, dt)
    shape = [1 if d in dims else x.shape[d] for d in range(x.dim())] if keepdim else kept_shape
    out = out.reshape(shape)
    if out_dtype is not None and out_dtype != dt:
        out = cast(out, out_dtype)
    return out, "modelled", SUM_MODEL if what == "sum" else MEAN_MODEL


def _meta(v):
    if isinstance(v, torch.Tensor):
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    return v


def opmath(func, args, kwargs):
    """``func`` on 16-bit operands computed in float32, each floating output
    rounded once to the dtype torch gives it; None when no operand is 16-bit."""
    flat, _ = tree_flatten((args, kwargs))
    if not any(isinstance(t, torch.Tensor) and t.dtype in _16 for t in flat):
        return None
    if any(isinstance(t, torch.Tensor) and t.dtype.is_floating_point and t.dtype not in FORMATS
           for t in flat):
        return None
    try:
        m = func(*tree_map(_meta, args), **tree_map(_meta, kwargs))
    except Exception:           # no meta kernel: the dtypes are read from the result
        m = None
    wide = lambda v: cast(v, torch.float32) if isinstance(v, torch.Tensor) and v.dtype in _16 else v
    r = func(*tree_map(wide, args), **tree_map(wide, kwargs))
    outs, spec = tree_flatten(r)
    metas = tree_flatten(m)[0] if m is not None else [None] * len(outs)
    if len(metas) != len(outs):
        return None
    first = next(t.dtype for t in flat if isinstance(t, torch.Tensor) and t.dtype in _16)
    fixed = []
    for o, mo in zip(outs, metas):
        if isinstance(o, torch.Tensor) and o.dtype == torch.float32:
            want = mo.dtype if isinstance(mo, torch.Tensor) else first
            o = cast(o, want) if want != torch.float32 else o
        fixed.append(o)
    return spec.unflatten(fixed) if hasattr(spec, "unflatten") else \
        torch.utils._pytree.tree_unflatten(fixed, spec), "modelled", OPMATH_MODEL
