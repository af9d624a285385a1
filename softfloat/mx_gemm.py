"""GEMM models for fp8 and block-scaled inputs.

Presets (`FP8_GEMM_PRESETS`), each a `BlockFMA` tensor-core step plus a promotion
rule; every parameter names its public source, and what is assumed is said:

``"hopper_fp8_fast"``
    Hopper (H100/H800) fp8 WGMMA with "fast accumulation" (no promotion), as cuBLAS's
    ``CUBLASLT_MATMUL_DESC_FAST_ACCUM``. The tensor-core step is
    ``BlockFMA(width=32, extra_bits=-10, fmt="fp32", rounding="toward_zero")``:
    32 products per block (Khattak & Mikaitis 2025, arXiv:2512.07004, their H100
    fp8 model), products aligned to the largest exponent of the block and the
    running sum and truncated to 23 - 10 = 13 fraction bits, i.e. an accumulator
    of 1 sign, 8 exponent and 13 mantissa bits with truncation, as the
    SageAttention2 authors measured (reported in DeepGEMM's issue tracker) and
    consistent with DeepSeek-V3's "about 14 bits" (technical report, section
    3.3.2, counting the leading bit). Assumed: that the block result is kept in
    binary32 truncated (the Khattak-Mikaitis model), and K ordered sequentially.
``"hopper_fp8_promote128"``
    The same tensor-core step over chunks of 128 products (DeepSeek-V3 section
    3.3.2: partial sums copied to fp32 CUDA-core registers every 128 elements,
    4 WGMMAs), each chunk's result added into an fp32 accumulator with an IEEE
    binary32 addition rounded to nearest even (CUDA-core FADD/FFMA). With
    per-block scales (DeepSeek-V3's 1x128 activations, 128x128 weights) the chunk
    result is first multiplied by scale_a * scale_b (binary32, nearest even).
``"hopper_fp8_promote<N>"``
    Any other interval N (a multiple of nothing in particular; N = 32, 64, ...).

Block-scaled MMA (`mx_matmul`; Blackwell ``mxf8f6f4`` / ``mxf4nvf4`` style):
for each K block j, the block's exact dot product of element values
sum_i P_a,i P_b,i is scaled by X_a,j * X_b,j (powers of two for MX, exact; NVFP4:
products of e4m3 scales, exact too) and rounded once into fp32 (nearest even),
then the blocks are added into an fp32 accumulator in K order, each addition
rounded to nearest even; NVFP4's per-tensor scales enter at the end as cuBLAS's
alpha = ts_a * ts_b (binary32). Assumed (no public bit-level description exists):
the block dot is exact and rounded once, and the accumulation is IEEE binary32 RNE.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from .accumulate import BlockFMA, matmul
from .arith import add, mul
from .conversions import from_bits, to_bits
from .formats import get_format
from . import mx as _mx

__all__ = ["FP8GemmModel", "FP8_GEMM_PRESETS", "fp8_gemm_model", "fp8_matmul", "mx_matmul"]

#: the Hopper fp8 tensor-core step (see the module docstring for the sources)
HOPPER_FP8_BLOCK = BlockFMA(32, -10, "fp32", "toward_zero")


@dataclass(frozen=True)
class FP8GemmModel:
    """A tensor-core step (`BlockFMA`) and a promotion interval: every
    ``promote_every`` products the tensor-core partial sum is added into an fp32
    accumulator (binary32, nearest even); ``None``: never (fast accumulation)."""
    step: BlockFMA = HOPPER_FP8_BLOCK
    promote_every: int | None = 128

    def __post_init__(self):
        if not isinstance(self.step, BlockFMA):
            raise TypeError("FP8GemmModel.step must be a BlockFMA")
        p = self.promote_every
        if p is not None and (not isinstance(p, (int, np.integer)) or isinstance(p, bool)
                              or p < 1):
            raise ValueError(f"promote_every must be a positive int or None, got {p!r}")


FP8_GEMM_PRESETS = {
    "hopper_fp8_fast": FP8GemmModel(HOPPER_FP8_BLOCK, None),
    "hopper_fp8_promote128": FP8GemmModel(HOPPER_FP8_BLOCK, 128),
}


def fp8_gemm_model(model) -> FP8GemmModel:
    """A preset name (``"hopper_fp8_fast"``, ``"hopper_fp8_promote128"``,
    ``"hopper_fp8_promote<N>"``) or an `FP8GemmModel`."""
    if isinstance(model, FP8GemmModel):
        return model
    if not isinstance(model, str):
        raise TypeError(f"model: expected a preset name or an FP8GemmModel, got "
                        f"{type(model).__name__}")
    key = model.strip().lower()
    if key in FP8_GEMM_PRESETS:
        return FP8_GEMM_PRESETS[key]
    m = re.fullmatch(r"hopper_fp8_promote(\d+)", key)
    if m and int(m.group(1)) > 0:
        return FP8GemmModel(HOPPER_FP8_BLOCK, int(m.group(1)))
    raise ValueError(f"unknown fp8 GEMM model {model!r}; expected one of "
                     f"{sorted(FP8_GEMM_PRESETS)} or 'hopper_fp8_promote<N>'")


def fp8_matmul(a, b, fmt="fp8_e4m3", *, model="hopper_fp8_promote128", scale_a=None,
               scale_b=None):
    """``a`` (m, k) @ ``b`` (k, n) on fp8 encodings under an fp8 GEMM model;
    returns float64 values of the fp32 result (m, n).

    ``scale_a`` (m, ceil(k/N)) and ``scale_b`` (ceil(k/N), n) (float32 values,
    optional, N = the model's promotion interval): per-chunk scales multiplied
    into each promoted partial sum, as DeepSeek-V3's fine-grained scaling
    (1x128 activation tiles; for 128x128 weight blocks repeat each block's scale
    over its 128 columns). Without promotion, scales are not accepted.
    """
    mdl = fp8_gemm_model(model)
    f = get_format(fmt)
    A = V.as_bits(a, f, "a")
    B = V.as_bits(b, f, "b")
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"fp8_matmul: expected a (m, k) and b (k, n), got {A.shape} and {B.shape}")
    m, K = A.shape
    n = B.shape[1]
    N = mdl.promote_every or K
    if (scale_a is None) != (scale_b is None):
        raise ValueError("give both scale_a and scale_b, or neither")
    if scale_a is not None and mdl.promote_every is None:
        raise ValueError("per-chunk scales need a model with promotion")
    nch = max(1, -(-K // N))
    if scale_a is not None:
        sa = np.asarray(scale_a, np.float32) if np.asarray(scale_a).dtype == np.float32 else None
        sb = np.asarray(scale_b, np.float32) if np.asarray(scale_b).dtype == np.float32 else None
        if sa is None or sb is None:
            raise TypeError("scale_a and scale_b must be float32 arrays")
        if sa.shape != (m, nch) or sb.shape != (nch, n):
            raise ValueError(f"scales: expected shapes {(m, nch)} and {(nch, n)}, got "
                             f"{sa.shape} and {sb.shape}")
    acc = to_bits(np.zeros((m, n), np.float32), "fp32")
    for j in range(nch):
        k0, k1 = j * N, min(K, (j + 1) * N)
        part = matmul(A[:, k0:k1], B[k0:k1, :], f, acc=mdl.step)
        if mdl.promote_every is None:
            return from_bits(part, "fp32")
        if scale_a is not None:
            s = to_bits(sa[:, j:j + 1].astype(np.float64) * sb[j:j + 1, :], "fp32")  # exact product, one rounding
            part = mul(part, s, "fp32", "nearest_even")
        acc = add(acc, part, "fp32", "nearest_even")
    return from_bits(acc, "fp32")


_EXACT_F64 = {"mxfp8_e4m3", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxint8", "nvfp4"}


def mx_matmul(a_codes, a_scales, b_codes, b_scales, fmt, *, tensor_scale_a=None,
              tensor_scale_b=None):
    """Block-scaled MMA: ``a`` (m, k) blocked along k (axis -1), ``b`` (k, n)
    blocked along k (axis 0), as `softfloat.mx.quantize` returns them; float64
    values of the fp32 result (see the module docstring for the model).

    The block dot products are computed exactly in float64: true for every
    element format but fp8 e5m2, whose products span more than 53 bits
    (mxfp8_e5m2 raises NotImplementedError).
    """
    bf = _mx.block_format(fmt)
    if bf.name not in _EXACT_F64:
        raise NotImplementedError(f"{bf.name}: block dot products are not exact in float64")
    kb = bf.block
    A = _mx.dequantize(a_codes, np.ones_like(a_scales) * np.uint8(127 if bf.scale.name == "e8m0"
                                                                  else 0x38),
                       bf, axis=-1)
    Bv = _mx.dequantize(b_codes, np.ones_like(b_scales) * np.uint8(127 if bf.scale.name == "e8m0"
                                                                   else 0x38), bf, axis=0)
    if A.ndim != 2 or Bv.ndim != 2 or A.shape[1] != Bv.shape[0]:
        raise ValueError(f"mx_matmul: expected (m, k) and (k, n) codes, got {A.shape}, {Bv.shape}")
    Sa = from_bits(np.asarray(a_scales), bf.scale)
    Sb = from_bits(np.asarray(b_scales), bf.scale)
    m, K = A.shape
    n = Bv.shape[1]
    acc = np.zeros((m, n), np.float32)
    for j in range(-(-K // kb)):
        k0, k1 = j * kb, min(K, (j + 1) * kb)
        # exact: products and their partial sums are multiples of the smallest
        # product and below 2**53 times it (<= 41 bits for e4m3, fewer for the rest)
        blk = A[:, k0:k1] @ Bv[k0:k1, :]
        scaled = blk * (Sa[:, j:j + 1] * Sb[j:j + 1, :])      # powers of two (MX): exact
        part = from_bits(to_bits(scaled, "fp32"), "fp32").astype(np.float32)
        acc = (acc + part).astype(np.float32)                  # IEEE binary32 RNE addition
    if tensor_scale_a is not None or tensor_scale_b is not None:
        # NVFP4's per-tensor scales: the epilogue's alpha = ts_a * ts_b (binary32),
        # then acc * alpha rounded to binary32, as cuBLAS applies alpha
        alpha = np.float32(np.float32(tensor_scale_a or 1.0) * np.float32(tensor_scale_b or 1.0))
        acc = (acc * alpha).astype(np.float32)
    return acc.astype(np.float64)
