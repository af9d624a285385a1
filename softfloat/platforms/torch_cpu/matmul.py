"""torch 2.13 CPU ``mm``/``matmul``/``addmm``/``linear`` of fp16 and bf16 (m, n >= 2):
which kernel a product takes (`matmul_path`, from the operands' layouts and the
size, as ``addmm_impl_cpu_`` decides, and for half from the CPU: `host_has_fp16_gemm`)
and each kernel's order: cpublas's 4-way ``sum``, the vectorised fp32-arithmetic
dot, the sequential chain, oneDNN's avx512_bf16 chains in k chunks
(`onednn_k_block`) and its avx512_fp16 half chains (`onednn_fp16_k_block`);
`matmul_claimed` says where the model is claimed bit-exact."""
from __future__ import annotations

import numpy as np

from ... import _validate as V
from ...conversions import from_bits
from ...formats import BF16, FP16, get_format
from .values import _f32, _flush32, _round_out

#: oneDNN takes bfloat16 products with m * n * k above this (torch's
#: mkldnn_gemm_min_size, 16 * 16 * 16) on CPUs with bf16 support
MKLDNN_MIN_SIZE = 16 * 16 * 16


def _ilp4_dot(A, B, C0):
    """cpublas gemm for reduced types (BlasKernel.cpp ``sum`` with 4 partial
    sums): products in float32 (exact for half and bfloat16 inputs whose products
    stay in float32's normal range), partial sum ``l % 4``, tail into partial 0,
    then p0 + p1 + p2 + p3; then ``c = dot`` or ``c = c + dot`` (bias) in float32."""
    m, k = A.shape
    n = B.shape[1]
    part = np.zeros((4, m, n))
    k4 = (k // 4) * 4
    for l in range(0, k4, 4):
        for q in range(4):
            part[q] = _f32(part[q] + _f32(A[:, l + q, None] * B[None, l + q, :]))
    p0 = part[0]
    for l in range(k4, k):
        p0 = _f32(p0 + _f32(A[:, l, None] * B[None, l, :]))
    for q in range(1, 4):
        p0 = _f32(p0 + part[q])
    if C0 is not None:
        p0 = _f32(C0 + p0)
    return p0


def _dpbf16_dot(A, B, C0, a_kmajor=False):
    """oneDNN bfloat16 GEMM on avx512_bf16 (vdpbf16ps), as the probe finds it: one
    float32 accumulator per output and k chunk (`onednn_k_block`); for each pair of
    k indices (2i, 2i+1) it adds the odd product, then the even one, each addition rounded to nearest even
    with subnormal inputs and results flushed to zero; an odd k is padded with a
    zero product. The bias (linear) is added last in float32."""
    m, k = A.shape
    n = B.shape[1]
    A = _flush32(A)
    B = _flush32(B)
    kb = onednn_k_block(k, a_kmajor)
    acc = None
    for s0 in range(0, k, kb):
        part = np.zeros((m, n))
        for l in range(s0, min(k, s0 + kb), 2):
            for q in (l + 1, l):
                if q < k:
                    part = _flush32(_f32(part + _flush32(_f32(A[:, q, None] * B[None, q, :]))))
        acc = part if acc is None else _f32(acc + part)
    if acc is None:
        acc = np.zeros((m, n))
    if C0 is not None:
        acc = _f32(C0 + acc)
    return acc


def _onednn_fp16_dot(A, B, C0, a_kmajor=False):
    """oneDNN half GEMM on CPUs with avx512_fp16 (or amx_fp16), as the probe finds
    it: per output a float32 chain from 0 adding the products (exact in float32)
    in k order, in k chunks of `onednn_fp16_k_block` whose sums are added in
    order; the bias is added last in float32. (fp16 products and their sums
    never reach float32's subnormal range, so a flush would change nothing.)"""
    k = A.shape[1]
    kb = onednn_fp16_k_block(k, a_kmajor)
    acc = None
    for s0 in range(0, k, kb):
        part = _seq_dot(A[:, s0:s0 + kb], B[s0:s0 + kb], None)
        acc = part if acc is None else _f32(acc + part)
    if C0 is not None:
        acc = _f32(C0 + acc)
    return acc


def _reduce8(v):
    """vec_reduce_all over 8 float lanes (AVX2 shuffles): lanes l + l+4, then
    + l+2, then + l+1. ``v`` (..., 8) -> (...)."""
    v = _f32(v[..., :4] + v[..., 4:])
    v = _f32(v[..., :2] + v[..., 2:])
    return _f32(v[..., 0] + v[..., 1])


def _fp16_dot(A, B, C0):
    """fp16_dot_with_fp32_arith (ReducedPrecisionFloatGemvFastPathKernel.cpp; bfloat16
    takes the same structure, as the probe shows) at x86
    AVX2 widths): 64-element iterations into 8 registers x 8 float lanes by fma
    (element e of an iteration: register e // 8, lane e % 8; products exact), the
    registers reduced r + r+4, r + r+2, r + r+1, then the lanes (`_reduce8`);
    then 16-element vectors into one 8-lane tail register (low half, then high
    half), reduced and added; then the last k % 16 products added one by one
    (exact products: the random cross-check finds no rounding of them to half)."""
    m, k = A.shape
    n = B.shape[1]
    k64 = k & ~63
    k16 = k & ~15
    R = np.zeros((m, n, 8, 8))
    for c in range(0, k64, 64):
        for e in range(64):
            R[:, :, e // 8, e % 8] = _f32(R[:, :, e // 8, e % 8]
                                          + A[:, c + e, None] * B[None, c + e, :])
    R = _f32(R[:, :, :4] + R[:, :, 4:])
    R = _f32(R[:, :, :2] + R[:, :, 2:])
    R = _f32(R[:, :, 0] + R[:, :, 1])
    acc = _reduce8(R)
    T = np.zeros((m, n, 8))
    for j in range(k64, k16, 16):
        for h in (0, 8):
            for lane in range(8):
                q = j + h + lane
                T[:, :, lane] = _f32(T[:, :, lane] + A[:, q, None] * B[None, q, :])
    acc = _f32(acc + _reduce8(T))
    for q in range(k16, k):
        acc = _f32(acc + A[:, q, None] * B[None, q, :])
    if C0 is not None:
        acc = _f32(C0 + acc)
    return acc


def _seq_dot(A, B, C0):
    """gemm_transb_ for reduced types (``a`` stored k-major): a float32 buffer per
    output that starts at the bias (+0 without one), products added in k order
    (the probe puts the bias first)."""
    m, k = A.shape
    n = B.shape[1]
    acc = np.zeros((m, n)) if C0 is None else np.array(C0, np.float64)
    for q in range(k):
        acc = _f32(acc + A[:, q, None] * B[None, q, :])
    return acc


def _transposes(a, b):
    """torch's addmm_impl_cpu_ reading of the operands' layouts for a row-major
    result (``transpose_c``): returns (transa, transb) of the cpublas call, whose
    ``a`` is torch's ``b`` and whose ``b`` is torch's ``a``. A layout that is
    neither is copied to row-major (False)."""
    m, k = a.shape
    n = b.shape[1]
    item = a.itemsize
    sa = [s // item for s in a.strides]
    sb = [s // item for s in b.strides]
    if sb[1] == 1 and sb[0] >= max(1, n):
        ta = False
    elif sb[0] == 1 and sb[1] >= max(1, k):
        ta = True
    else:
        ta = False
    if sa[1] == 1 and sa[0] >= max(1, k):
        tb = False
    elif sa[0] == 1 and sa[1] >= max(1, m):
        tb = True
    else:
        tb = False
    return ta, tb


_HOST_FEATURES = None


def _host_feature(*names) -> bool:
    """Whether this CPU has any of the LLVM features ``names``."""
    global _HOST_FEATURES
    if _HOST_FEATURES is None:
        try:
            from llvmlite import binding as llvm
            _HOST_FEATURES = dict(llvm.get_host_cpu_features())
        except Exception:                        # noqa: BLE001 (no feature list: assume none)
            _HOST_FEATURES = {}
    return any(_HOST_FEATURES.get(x, False) for x in names)


def host_has_fp16_gemm() -> bool:
    """Whether this CPU has the half-precision instructions (avx512_fp16 or
    amx_fp16) for which torch (``mkldnn_fp16_device_check``) hands half GEMMs of
    more than `MKLDNN_MIN_SIZE` multiply-adds to oneDNN."""
    return _host_feature("avx512fp16", "amx-fp16")


def host_has_amx_bf16() -> bool:
    """Whether this CPU has AMX bfloat16 tiles: oneDNN's bfloat16 GEMM then runs
    on them, in an order `torch_cpu_matmul` does not model (`matmul_claimed`)."""
    return _host_feature("amx-bf16")


def matmul_path(m: int, k: int, n: int, fmt, transa: bool = False, transb: bool = False,
                fp16_gemm: bool | None = None) -> str:
    """Which torch 2.13 CPU kernel takes an (m, k) @ (k, n) product of ``fmt``
    (``transa``/``transb`` as `_transposes` reads the layouts): ``"onednn_bf16"``
    (bfloat16, m * n * k > 4096, any layout), ``"onednn_fp16"`` (half, m * n * k >
    4096, any layout, on a CPU with avx512_fp16 or amx_fp16: ``fp16_gemm``, by
    default `host_has_fp16_gemm`), ``"dot"`` (``b`` stored k-contiguous, as
    ``linear``'s ``w.T``: the vectorised fp32-arithmetic dot product),
    ``"sequential"`` (``a`` stored k-major) or ``"ilp4"`` (both row-major or both
    transposed)."""
    f = get_format(fmt)
    if f == BF16 and m * n * k > MKLDNN_MIN_SIZE:
        return "onednn_bf16"
    if f == FP16 and m * n * k > MKLDNN_MIN_SIZE and (
            host_has_fp16_gemm() if fp16_gemm is None else fp16_gemm):
        return "onednn_fp16"
    if transa and not transb:
        return "dot"
    if transb and not transa:
        return "sequential"
    return "ilp4"


def onednn_k_block(k: int, a_kmajor: bool = False) -> int:
    """oneDNN's k chunk on the bfloat16 path, as the probe finds it on this machine:
    k <= 512 one chain; 512 < k <= 1024 chunks of 512; larger k chunks of 1024,
    or of 512 when ``a`` is stored k-major (a transposed view); each chunk is its
    own chain from 0 and the chunk sums are added in order."""
    if k <= 512:
        return max(k, 1)
    return 512 if (k <= 1024 or a_kmajor) else 1024

def onednn_fp16_k_block(k: int, a_kmajor: bool = False) -> int:
    """oneDNN's k chunk on the half path (avx512_fp16): the chunks of its bfloat16
    path (`onednn_k_block`): k <= 512 one chain, 512 < k <= 1024 chunks of 512 (a
    chain over the whole k differs from torch there), larger k chunks of 1024, or of
    512 when ``a`` is stored k-major. Claimed only where `host_probe` confirms it
    on the running CPU."""
    return onednn_k_block(k, a_kmajor)


#: the largest k for which a oneDNN path can be claimed (bfloat16 on avx512_bf16:
#: k = 8192 with ``a`` transposed and 2 threads already differs from the chunking
#: of `onednn_k_block`)
ONEDNN_MAX_K = 4096


def torch_cpu_matmul(a, b, fmt, *, bias=None):
    """torch.mm(a, b) (and ``torch.nn.functional.linear(x, w, bias)`` as
    ``a = x``, ``b = w.T`` -- pass the transposed view: the kernel depends on
    the memory layout of ``b``) of 2-D encodings of ``fmt`` (fp16 or bf16) on torch
    2.13 CPU with m, n >= 2: see `matmul_path` (the oneDNN bfloat16 path as it
    runs on avx512_bf16 without AMX tiles; the half path as this CPU takes it). ``bias``: encodings of ``fmt``
    broadcast over the rows (shape (n,)). Returns encodings of ``fmt``. Bit-exact
    where `matmul_claimed` says so; past that (bfloat16, m*n*k > 4096, k > 4096)
    the k chunking of `onednn_k_block` is extrapolated, not probed."""
    f = get_format(fmt)
    if f not in (FP16, BF16):
        raise ValueError(f"torch_cpu_matmul models fp16 and bf16, not {f!r}")
    A = V.as_bits(a, f, "a")
    B = V.as_bits(b, f, "b")
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"torch_cpu_matmul needs (m, k) and (k, n) operands, got {A.shape} "
                         f"and {B.shape}")
    m, k = A.shape
    n = B.shape[1]
    if m < 2 or n < 2:
        raise ValueError("torch_cpu_matmul covers m, n >= 2 (matrix-vector products take "
                         "torch's gemv kernels, which are not modelled)")
    Av, Bv = from_bits(A, f), from_bits(B, f)
    C0 = None
    if bias is not None:
        bb = V.as_bits(bias, f, "bias")
        if bb.shape != (n,):
            raise ValueError(f"bias must have shape ({n},), got {bb.shape}")
        C0 = np.broadcast_to(from_bits(bb, f), (m, n))
        if k == 0:
            # no products: torch returns the bias itself (a -0 bias stays -0)
            return np.ascontiguousarray(np.broadcast_to(bb, (m, n)))
    elif k == 0:
        return np.zeros((m, n), f.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        ta, tb = _transposes(A, B)
        path = matmul_path(m, k, n, f, ta, tb)
        if path == "onednn_bf16":
            acc = _dpbf16_dot(Av, Bv, C0, a_kmajor=tb)
        elif path == "onednn_fp16":
            acc = _onednn_fp16_dot(Av, Bv, C0, a_kmajor=tb)
        elif path == "dot":
            acc = _fp16_dot(Av, Bv, C0)
        elif path == "sequential":
            acc = _seq_dot(Av, Bv, C0)
        else:
            acc = _ilp4_dot(Av, Bv, C0)
    return _round_out(acc, f)
