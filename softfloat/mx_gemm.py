"""GEMM models for fp8 and block-scaled inputs, on the validated matrix-unit models
of `softfloat.mma`.

fp8 GEMMs (`fp8_matmul`, `FP8_GEMM_PRESETS`): a matrix unit (an architecture or
GPU name, resolved for the operand formats by ``softfloat.tensor_core(arch, fmt,
"fp32")``, or a `softfloat.mma.MatrixUnit`) chained along K, and a promotion rule.

``"hopper_fp8_fast"``
    Hopper (H100/H800/H200) fp8 ``wgmma`` with "fast accumulation" (no promotion),
    as cuBLAS's ``CUBLASLT_MATMUL_DESC_FAST_ACCUM``: the whole K on the tensor core,
    instruction after instruction (``m64nNk32.f32.e4m3.e4m3`` and its e5m2 / mixed
    variants), C carried from one to the next. Each instruction is MMA-Sim's
    Hopper fp8 model (arXiv:2511.10909; ``mmasim`` 2.1.1, ``nv_ptx/sim.py``
    ``WGMMA``, validated bit for bit on an H800/H100 by its authors): the 32
    products and c aligned to the largest exponent with F = 13 fraction bits,
    truncated, summed exactly, and the chunk result truncated to an fp32 with 13
    fraction bits (``RZ-E8M13``). That is the "about 14 bits" of DeepSeek-V3
    (arXiv:2412.19437, section 3.3.2) and the 1 + 8 + 13-bit truncating
    accumulator the SageAttention2 authors measured.
``"hopper_fp8_promote128"``
    DeepSeek-V3's fix (section 3.3.2): the partial sum of each interval of 128
    products (4 WGMMAs of k = 32) is taken out of the tensor core (each interval
    starts from c = +0) and added into an fp32 accumulator on the CUDA cores, an
    IEEE binary32 addition rounded to nearest even (FADD). With per-block scales
    (DeepSeek-V3's 1x128 activation tiles, 128x128 weight blocks) the partial sum
    is first multiplied by RN(scale_a * scale_b) (binary32, nearest even).
    Assumed (not stated by the sources): a separate multiply and add (not one
    FFMA), and the intervals added in K order.
``"hopper_fp8_promote<N>"``
    Any other interval: N a multiple of the instruction's k (32).
``FP8GemmModel(unit, promote_every)``
    Any other matrix unit: ``FP8GemmModel("ada", None)`` (Ada ``mma`` fp8, F = 13,
    RZ-E8M13), ``FP8GemmModel("blackwell", 128)`` (``tcgen05.mma kind::f8f6f4``,
    F = 25, truncation into fp32), or a generic `softfloat.BlockFMA` (run by
    `softfloat.matmul`).

A K that is not a multiple of the instruction's k is padded with zeros, as a GEMM
kernel's zero-filled tail tile (a zero product takes the instruction's zero
exponent, -133: it changes nothing while some term is at least 2**-133).

Block-scaled MMA (`mx_matmul`): ``arch="blackwell"`` (``tcgen05.mma``) or
``"rtx_blackwell"`` (``mma.sync`` block-scale), with ``instruction=None`` (the one
a dense GEMM issues: ``kind::mxf8f6f4.block32`` for MXFP8/6, ``kind::mxf4.block32``
for MXFP4, ``kind::mxf4nvf4.block16 ... ue4m3`` for NVFP4) or an instruction string
(`softfloat.mma.INSTRUCTIONS`). The hardware's scaled sums (MMA-Sim 2.1.1,
``MMA_ST_FDPA`` / ``MMA_GST_FDPA``): k = 32 kinds multiply every product by its two
block scales and fuse the 32 scaled products and c with F = 25 fraction bits,
truncated into fp32 (RZ); the k = 64 fp4 kinds sum groups of 16 products exactly,
scale each group sum, and fuse the 4 terms and c with F = 35, truncated into fp32.
Instructions chain along K. NVFP4's per-tensor scales enter at the end as cuBLAS's
alpha = RN(ts_a * ts_b), then RN(acc * alpha) (binary32).

``arch="ideal"`` keeps an idealised model (no hardware has it): each block's exact
dot product, times both scales, rounded once into fp32 (nearest even), the blocks
added into an fp32 accumulator in K order (RNE). It is the only model for MXINT8
(no matrix unit takes int8 MX operands) and refuses MXFP8 e5m2 (its exact block
dot products do not fit float64).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from .accumulate import BlockFMA, matmul
from .arith import add, mul
from .conversions import from_bits, to_bits
from .formats import Format, get_format
from . import mx as _mx

__all__ = ["FP8GemmModel", "FP8_GEMM_PRESETS", "fp8_gemm_model", "fp8_matmul", "mx_matmul",
           "MX_ARCHS"]

#: architectures with block-scaled MMA (and "ideal": the idealised model)
MX_ARCHS = ("blackwell", "rtx_blackwell", "ideal")

# PTX type names of the NVIDIA operand formats (instruction strings)
_PTX = {"fp8_e4m3": "e4m3", "fp8_e5m2": "e5m2", "fp6_e2m3": "e2m3", "fp6_e3m2": "e3m2",
        "fp4_e2m1": "e2m1", "fp16": "f16", "bf16": "bf16", "tf32": "tf32"}


def _mma():
    from . import mma as _m
    return _m


def _is_unit(x) -> bool:
    return isinstance(x, _mma().MatrixUnit)


def _with_operands(unit, fa: Format, fb: Format):
    """The instruction of ``unit``'s family and shape on its architecture that takes
    fa x fb operands (the same instruction when its types already are those)."""
    if unit.a_fmt == fa and unit.b_fmt == fb:
        return unit
    q = unit.instruction.split(".")
    pa, pb = _PTX.get(unit.a_fmt.name), _PTX.get(unit.b_fmt.name)
    i = next((i for i in range(1, len(q) - 1) if q[i] == pa and q[i + 1] == pb), None)
    if i is None or fa.name not in _PTX or fb.name not in _PTX:
        raise ValueError(f"{unit.arch} {unit.instruction}: no variant of it takes "
                         f"{fa.name} x {fb.name} operands")
    q[i], q[i + 1] = _PTX[fa.name], _PTX[fb.name]
    try:
        return _mma().tensor_core(unit.arch, instruction=".".join(q))
    except ValueError:
        raise ValueError(f"{unit.arch} has no {'.'.join(q)} instruction: the {unit.instruction} "
                         f"family does not take {fa.name} x {fb.name} operands") from None


@dataclass(frozen=True)
class FP8GemmModel:
    """A matrix unit and a promotion interval: every ``promote_every`` products the
    tensor-core partial sum is added into an fp32 accumulator (binary32, nearest
    even); ``None``: never (the whole K chained on the matrix unit).

    ``unit``: an architecture or GPU name (``"hopper"``, ``"h100"``, ``"ada"``,
    ``"blackwell"``, ...: the dense-GEMM instruction of `softfloat.tensor_core` for
    the operands' formats, fp32 output), a `softfloat.mma.MatrixUnit` with fp32
    output (other operand formats of the same instruction family are derived from
    it), or a `softfloat.BlockFMA` (a generic user-built model)."""
    unit: object = "hopper"
    promote_every: int | None = 128

    def __post_init__(self):
        u = self.unit
        if isinstance(u, str):
            _mma().canonical_arch(u)                # ValueError listing the names
        elif _is_unit(u):
            if u.out_fmt.name != "fp32" or u.scale_fmt is not None:
                raise ValueError(f"FP8GemmModel.unit: expected an unscaled matrix unit with fp32 "
                                 f"output, got {u.instruction} on {u.arch}")
        elif not isinstance(u, BlockFMA):
            raise TypeError(f"FP8GemmModel.unit must be an architecture name, a MatrixUnit or a "
                            f"BlockFMA, got {type(u).__name__}")
        p = self.promote_every
        if p is not None and (not isinstance(p, (int, np.integer)) or isinstance(p, bool)
                              or p < 1):
            raise ValueError(f"promote_every must be a positive int or None, got {p!r}")
        if p is not None and not isinstance(u, BlockFMA):
            k = self.resolve(get_format("fp8_e4m3"), get_format("fp8_e4m3")).k \
                if isinstance(u, str) else u.k
            if p % k:
                raise ValueError(f"promote_every={p} must be a multiple of the instruction's "
                                 f"k ({k}): the partial sum leaves the tensor core between "
                                 f"instructions")

    def resolve(self, fa, fb=None):
        """The model for fa x fb operands: a MatrixUnit (or the BlockFMA as given)."""
        fa = get_format(fa)
        fb = fa if fb is None else get_format(fb)
        u = self.unit
        if isinstance(u, BlockFMA):
            return u
        if isinstance(u, str):
            base = _mma().tensor_core(u, fa, "fp32")
        else:
            base = u
        return _with_operands(base, fa, fb)


FP8_GEMM_PRESETS = {
    "hopper_fp8_fast": FP8GemmModel("hopper", None),
    "hopper_fp8_promote128": FP8GemmModel("hopper", 128),
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
        return FP8GemmModel("hopper", int(m.group(1)))
    raise ValueError(f"unknown fp8 GEMM model {model!r}; expected one of "
                     f"{sorted(FP8_GEMM_PRESETS)} or 'hopper_fp8_promote<N>' (N a multiple "
                     f"of 32)")


def _pad_k(X, axis, Kp):
    """X with zeros appended along ``axis`` up to length Kp."""
    K = X.shape[axis]
    if K == Kp:
        return X
    pad = [(0, 0)] * X.ndim
    pad[axis] = (0, Kp - K)
    return np.pad(X, pad)


def fp8_matmul(a, b, fmt="fp8_e4m3", *, fmt_b=None, model="hopper_fp8_promote128",
               scale_a=None, scale_b=None):
    """``a`` (m, k) @ ``b`` (k, n) on fp8 encodings (``a`` of ``fmt``, ``b`` of
    ``fmt_b``, default ``fmt``) under an fp8 GEMM model (see the module docstring);
    returns float64 values of the fp32 result (m, n). k = 0 gives zeros.

    ``scale_a`` (m, ceil(k/N)) and ``scale_b`` (ceil(k/N), n) (float32 values,
    optional, N = the model's promotion interval): per-interval scales multiplied
    into each promoted partial sum, as DeepSeek-V3's fine-grained scaling
    (1x128 activation tiles; for 128x128 weight blocks repeat each block's scale
    over its 128 columns). Without promotion, scales are not accepted.
    """
    mdl = fp8_gemm_model(model)
    fa = get_format(fmt)
    fb = fa if fmt_b is None else get_format(fmt_b)
    A = V.as_bits(a, fa, "a")
    B = V.as_bits(b, fb, "b")
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"fp8_matmul: expected a (m, k) and b (k, n), got {A.shape} and {B.shape}")
    m, K = A.shape
    n = B.shape[1]
    unit = mdl.resolve(fa, fb)
    N = mdl.promote_every
    if (scale_a is None) != (scale_b is None):
        raise ValueError("give both scale_a and scale_b, or neither")
    if scale_a is not None and N is None:
        raise ValueError("per-chunk scales need a model with promotion")
    L = N if N is not None else max(K, 1)
    nch = max(1, -(-K // L))
    if scale_a is not None:
        sa, sb = np.asarray(scale_a), np.asarray(scale_b)
        if sa.dtype != np.float32 or sb.dtype != np.float32:
            raise TypeError(f"scale_a and scale_b must be float32 arrays, got {sa.dtype} and "
                            f"{sb.dtype}")
        if sa.shape != (m, nch) or sb.shape != (nch, n):
            raise ValueError(f"scales: expected shapes {(m, nch)} and {(nch, n)}, got "
                             f"{sa.shape} and {sb.shape}")
    if K == 0 or m == 0 or n == 0:
        return np.zeros((m, n))                 # an empty sum: +0 (numpy's a @ b)
    if isinstance(unit, BlockFMA):
        if fa != fb:
            raise ValueError("a BlockFMA model takes one operand format (fmt_b = fmt)")
        parts = [matmul(A[:, k0:k0 + L], B[k0:k0 + L, :], fa, acc=unit)
                 for k0 in range(0, K, L)]
    else:
        kk = unit.k
        if N is None:
            L = -(-K // kk) * kk                # the whole (padded) K, one chain
        Kp = nch * L
        Ap = _pad_k(A, 1, Kp)
        Bp = _pad_k(B, 0, Kp)
        # every interval in one batched call: (nch, m, L) @ (nch, L, n), each from c = +0
        A3 = np.ascontiguousarray(Ap.reshape(m, nch, L).transpose(1, 0, 2))
        B3 = np.ascontiguousarray(Bp.reshape(nch, L, n))
        parts = list(_mma().mma(unit, A3, B3))
    if N is None:
        return from_bits(parts[0], "fp32")
    acc = to_bits(np.zeros((m, n), np.float32), "fp32")
    for j, part in enumerate(parts):
        if scale_a is not None:
            s = to_bits(sa[:, j:j + 1].astype(np.float64) * sb[j:j + 1, :], "fp32")  # exact product, one rounding
            part = mul(part, s, "fp32", "nearest_even")
        acc = add(acc, part, "fp32", "nearest_even")
    return from_bits(acc, "fp32")


# ---------------------------------------------------------------------------
# block-scaled MMA
# ---------------------------------------------------------------------------
_EXACT_F64 = {"mxfp8_e4m3", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxint8", "nvfp4"}


def _tensor_scale_arg(ts, name):
    """A per-tensor scale as given (None, or a finite float32 value >= 0): 0.0 is
    used as 0.0 (the result is then zero), never read as "absent"."""
    if ts is None:
        return None
    if isinstance(ts, np.ndarray) and ts.ndim == 0:
        ts = ts[()]
    if isinstance(ts, (bool, np.bool_)) or not isinstance(
            ts, (float, int, np.floating, np.integer)):
        raise TypeError(f"{name}: expected a float (an fp32 value), got {type(ts).__name__} "
                        f"{ts!r}")
    t = float(ts)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"{name}: expected a finite float32 value >= 0, got {ts!r}")
    if float(np.float32(t)) != t:
        raise ValueError(f"{name}: {ts!r} is not a float32 value (the per-tensor scale is "
                         f"fp32: round it with np.float32 first)")
    return np.float32(t)


def _mx_unit(bf, arch, instruction, fb_elem):
    """The block-scaled matrix unit for block format bf on arch (fb_elem: b's element
    format when it differs from a's)."""
    M = _mma()
    if instruction is None:
        unit = M.tensor_core(arch, bf.name, "fp32")
    else:
        unit = M.tensor_core(arch, instruction=instruction)
    if unit.scale_fmt is None:
        raise ValueError(f"{unit.instruction} on {unit.arch} is not a block-scaled instruction")
    fe = bf.elem
    if unit.a_fmt != fe or unit.scale_fmt != bf.scale or unit.scale_block != bf.block:
        raise ValueError(f"{unit.instruction} on {unit.arch} takes {unit.a_fmt.name} elements in "
                         f"blocks of {unit.scale_block} with {unit.scale_fmt.name} scales, not "
                         f"{bf.name} ({fe.name}, blocks of {bf.block}, {bf.scale.name} scales)")
    if fb_elem is not None and fb_elem != unit.b_fmt:
        unit = _with_operands(unit, fe, fb_elem)
    return unit


def mx_matmul(a_codes, a_scales, b_codes, b_scales, fmt, *, fmt_b=None, arch="blackwell",
              instruction=None, tensor_scale_a=None, tensor_scale_b=None):
    """Block-scaled MMA: ``a`` (m, k) blocked along k (axis -1), ``b`` (k, n)
    blocked along k (axis 0), as `softfloat.mx.quantize` returns them (one code per
    element); ``fmt_b``: b's block format when it differs (MXFP8/6/4 mixes on the
    ``mxf8f6f4`` kinds); float64 values of the fp32 result (m, n).

    ``arch``: ``"blackwell"`` (default), ``"rtx_blackwell"`` or a GPU name of either
    (the hardware's scaled sums, `softfloat.mma`), or ``"ideal"`` (exact block dots,
    see the module docstring); ``instruction``: an instruction string, None for
    the dense-GEMM one. ``tensor_scale_a`` / ``tensor_scale_b``: NVFP4's fp32
    per-tensor scales (finite float32 values >= 0, used as given: 0.0 gives
    zeros), applied as alpha = RN(ts_a * ts_b) to the result; NVFP4 only.
    """
    bf = _mx.block_format(fmt)
    bfb = bf if fmt_b is None else _mx.block_format(fmt_b)
    nv = bf.name == "nvfp4"
    tsa = _tensor_scale_arg(tensor_scale_a, "tensor_scale_a")
    tsb = _tensor_scale_arg(tensor_scale_b, "tensor_scale_b")
    if (tsa is not None or tsb is not None) and not nv:
        raise ValueError(f"tensor_scale_a/tensor_scale_b are NVFP4's per-tensor scales; "
                         f"{bf.name} has none")
    if bfb.block != bf.block or bfb.scale != bf.scale:
        raise ValueError(f"fmt {bf.name} and fmt_b {bfb.name} must share block size and scale "
                         f"format")
    if not isinstance(arch, str):
        raise TypeError(f"arch: expected a str, got {type(arch).__name__}")
    ideal = arch.strip().lower() == "ideal"
    if ideal and bfb is not bf:
        raise ValueError("arch='ideal' takes one block format (fmt_b = fmt)")
    A = np.asarray(a_codes)
    Bc = np.asarray(b_codes)
    Sa = np.asarray(a_scales)
    Sb = np.asarray(b_scales)
    if A.ndim != 2 or Bc.ndim != 2 or A.shape[1] != Bc.shape[0]:
        raise ValueError(f"mx_matmul: expected (m, k) and (k, n) codes, got {A.shape}, {Bc.shape}")
    m, K = A.shape
    n = Bc.shape[1]
    kb = bf.block
    nb = -(-K // kb)
    if Sa.shape != (m, nb) or Sb.shape != (nb, n):
        raise ValueError(f"mx_matmul: expected scales of shapes {(m, nb)} and {(nb, n)} (blocks "
                         f"of {kb} along k), got {Sa.shape} and {Sb.shape}")
    if K == 0 or m == 0 or n == 0:
        acc = np.zeros((m, n), np.float32)
    elif ideal:
        acc = _mx_ideal(A, Sa, Bc, Sb, bf)
    else:
        if bf.is_int or bfb.is_int:
            raise ValueError("mxint8: no matrix unit takes int8 MX operands; use arch='ideal'")
        unit = _mx_unit(bf, arch, instruction, None if bfb is bf else bfb.elem)
        kk = unit.k
        Kp = -(-K // kk) * kk
        one = to_bits(np.float64(1.0), bf.scale)          # the padding blocks' scale
        A = V.as_bits(A, bf.elem, "a_codes")
        Bc = V.as_bits(Bc, bfb.elem, "b_codes")
        Ap, Bp = _pad_k(A, 1, Kp), _pad_k(Bc, 0, Kp)
        nbp = Kp // kb
        Sap = np.concatenate([Sa, np.full((m, nbp - nb), one, Sa.dtype)], axis=1) \
            if nbp > nb else Sa
        Sbp = np.concatenate([Sb, np.full((nbp - nb, n), one, Sb.dtype)], axis=0) \
            if nbp > nb else Sb
        bits = _mma().mma(unit, Ap, Bp, scale_a=Sap, scale_b=Sbp)
        acc = from_bits(bits, "fp32").astype(np.float32)
    if tsa is not None or tsb is not None:
        # NVFP4's per-tensor scales: the epilogue's alpha = ts_a * ts_b (binary32),
        # then acc * alpha rounded to binary32, as cuBLAS applies alpha
        one32 = np.float32(1.0)
        alpha = np.float32((one32 if tsa is None else tsa) * (one32 if tsb is None else tsb))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            acc = (acc * alpha).astype(np.float32)
    return acc.astype(np.float64)


def _mx_ideal(A, Sa, Bc, Sb, bf):
    """The idealised model: exact block dots, each rounded once into fp32 (RNE),
    added in K order in fp32 (RNE)."""
    if bf.name not in _EXACT_F64:
        raise NotImplementedError(f"{bf.name}: block dot products are not exact in float64 "
                                  f"(arch='ideal'); the hardware models take it")
    kb = bf.block
    one = 127 if bf.scale.name == "e8m0" else 0x38
    Av = _mx.dequantize(A, np.full(Sa.shape, one, np.uint8), bf, axis=-1)
    Bv = _mx.dequantize(Bc, np.full(Sb.shape, one, np.uint8), bf, axis=0)
    SA = from_bits(Sa, bf.scale)
    SB = from_bits(Sb, bf.scale)
    m, K = Av.shape
    n = Bv.shape[1]
    acc = np.zeros((m, n), np.float32)
    for j in range(-(-K // kb)):
        k0, k1 = j * kb, min(K, (j + 1) * kb)
        # exact: products and their partial sums are multiples of the smallest
        # product and below 2**53 times it (<= 41 bits for e4m3, fewer for the rest)
        blk = Av[:, k0:k1] @ Bv[k0:k1, :]
        scaled = blk * (SA[:, j:j + 1] * SB[j:j + 1, :])      # powers of two (MX): exact
        part = from_bits(to_bits(scaled, "fp32"), "fp32").astype(np.float32)
        acc = (acc + part).astype(np.float32)                  # IEEE binary32 RNE addition
    return acc
