"""The GEMM family (mm, addmm, bmm, baddbmm, _scaled_mm) through the
cuBLAS-level models of `softfloat.cublas.gemm`: the device's dense-GEMM
instruction chained along K, cuBLASLt's split of K, its float32 epilogue
(alpha, beta, bias), rounding to the output dtype. Operands are read as
contiguous copies of their encodings, whatever their strides."""
from __future__ import annotations

import torch

from .encode import FORMATS, fmt_of, from_bits, to_bits

GEMMS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_mm")
_DT = (torch.float32, torch.float16, torch.bfloat16)
_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def _cublas():
    try:
        from .. import cublas
    except ImportError:
        return None
    return cublas if hasattr(cublas, "gemm") else None


def _f32(t):
    return None if t is None else t.detach().to(torch.float32).contiguous().numpy()


def _num(v, default):
    v = default if v is None else v
    return float(v.item() if isinstance(v, torch.Tensor) else v)


def run(device, name, func, args, kwargs):
    """(result, claim, model) for one GEMM op, or None (no model: native)."""
    cb = _cublas()
    if cb is None:
        return None
    a = dict(zip([x.name for x in func._schema.arguments], args))
    a.update(kwargs)
    if name == "_scaled_mm":
        return _scaled(cb, device, a)
    x, y = (a["self"], a["mat2"]) if name in ("mm", "bmm") else (a["mat1"], a["mat2"]) \
        if name == "addmm" else (a["batch1"], a["batch2"])
    if x.dtype != y.dtype or x.dtype not in _DT or a.get("out") is not None \
            or x.numel() == 0 or y.numel() == 0:
        return None
    fmt = fmt_of(x.dtype)
    kw = dict(device=device.name, a_fmt=fmt, out_fmt=fmt, splitk=device.splitk,
              allow_tf32=fmt == "fp32" and device.tf32(), return_info=True)
    if name in ("addmm", "baddbmm"):
        inp = a["self"]
        if inp.dtype != x.dtype:
            return None
        alpha, beta = _num(a.get("alpha"), 1.0), _num(a.get("beta"), 1.0)
        kw.update(alpha=alpha, beta=beta)
        if name == "addmm" and beta == 1.0 and inp.dim() == 1 and inp.shape[0] == y.shape[-1]:
            # a bias row: cuBLASLt's bias epilogue (torch's gemm_and_bias path)
            kw.update(bias=to_bits(inp), bias_fmt=fmt, beta=0.0)
        elif beta != 0.0:
            shape = tuple(x.shape[:-1]) + (y.shape[-1],)
            kw.update(c=to_bits(inp.expand(shape)), c_fmt=fmt)
    out, info = cb.gemm(to_bits(x), to_bits(y), **kw)
    shape = tuple(x.shape[:-1]) + (y.shape[-1],)
    return from_bits(out, x.dtype).reshape(shape), info.claim, _describe(info)


def _scaled(cb, device, a):
    x, y = a["self"], a["mat2"]
    if x.dtype not in _FP8 or y.dtype not in _FP8:
        return None
    if x.dim() != 2 or y.dim() != 2 or any(d % 16 for d in (x.shape[1], *y.shape)):
        raise RuntimeError(f"torch._scaled_mm on the GPU takes 2-D operands, k and n "
                           f"multiples of 16; got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.stride(1) != 1 or y.stride(0) != 1:
        raise RuntimeError("torch._scaled_mm on the GPU takes a row-major first operand and a "
                           "column-major second one (e.g. w.t() of a row-major w)")
    od = a.get("out_dtype") or x.dtype
    if od not in FORMATS or a.get("scale_result") is not None or a.get("out") is not None:
        return None
    bias = a.get("bias")
    kw = dict(device=device.name, out_fmt=fmt_of(od), a_fmt=fmt_of(x.dtype),
              b_fmt=fmt_of(y.dtype), fast_accum=bool(a.get("use_fast_accum", False)),
              splitk=device.splitk, return_info=True)
    if bias is not None:
        kw.update(bias=to_bits(bias), bias_fmt=fmt_of(bias.dtype))
    out, info = cb.scaled_mm(to_bits(x), to_bits(y), _f32(a["scale_a"]), _f32(a["scale_b"]),
                             **kw)
    return from_bits(out, od).reshape(x.shape[0], y.shape[1]), info.claim, _describe(info)


def _describe(info) -> str:
    s, order = info.splitk if isinstance(info.splitk, tuple) else (info.splitk, "")
    split = f"split-K {s} {order} ({info.split_source})" if s and s != 1 else \
        f"S=1 ({info.split_source})"
    v = f"; {info.validated_by}" if getattr(info, "validated_by", "") else ""
    return f"cublas.gemm: {info.instruction}, {split}{v}"
