"""Platforms: what a machine or a library does beyond IEEE 754, as data.

A `Platform` says, for 16-bit (and other narrow) formats:

* in which format an operation is computed (``opmath``: torch computes half and
  bfloat16 elementwise operations in float32 and rounds once; ``None`` means the
  operation is native to the format) and whether rounding a float64 goes
  through float32 first (``float64_route``);
* which NaN pattern a result gets, at each step: an operation in a format
  (``nan_result``/``nan_default``), a narrowing conversion (``nan_cast``), a
  widening one (``nan_widen``);
* how a Python scalar operand is read (``scalars``: kept in the opmath format or
  narrowed to the tensor's format first, per operation) and whether ``x / s`` is
  ``x * RN(1/s)`` (``scalar_div``);
* which compound operations use one fused multiply-add (``fused``) and in which
  form (``addcmul_form``, ``addcdiv_form``);
* what ``relu(-0)`` gives, whether ``neg``/``abs`` touch the bits only;
* how sums and means accumulate (``reduction``).

The operation code (``platform_op`` and friends) reads these fields and never
spells a NaN constant or a platform quirk of its own. Presets: ``ieee`` (the
default), ``torch_cuda``, ``torch_cpu``, ``numpy``, ``x86_sse``,
``arm_default_nan``, ``riscv``. Each field of a preset cites its evidence in
``notes``; claims marked [I] are inferences that a device run confirms (see
``validation/torch_crosscheck.py``).

NaN rules (values of the ``nan_*`` maps, keyed by format name, ``"*"`` for any):
``"propagate"`` (a NaN operand's sign and payload, quieted; a fresh NaN is
``nan_default`` or the format's default NaN), ``"canonical"`` (the format's
default NaN), ``"keep"`` (widening only: the payload shifted, not quieted, as a
bfloat16 -> float32 bit shift does), or an int (always that pattern).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from . import _validate as V
from .conversions import convert, to_bits
from .formats import FP32, Format, get_format
from .model_hook import model_for

__all__ = [
    "Platform", "Reduction", "get_platform", "platform_names", "PLATFORM_OPS",
    "platform_op", "platform_to_bits", "platform_convert", "platform_sum",
    "platform_mean", "platform_matmul",
]

# Operations `platform_op` knows, with their arity (tensors and scalars together).
PLATFORM_OPS = {
    "add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "neg": 1, "abs": 1, "relu": 1,
    "fma": 3, "addcmul": 3, "addcdiv": 3, "lerp": 3,
}
_SCALAR_OPS = ("add", "sub", "mul", "div", "add_alpha", "addcmul", "addcdiv", "lerp")
_NAN_WORDS = ("propagate", "canonical", "keep")


@dataclass(frozen=True)
class Reduction:
    """How a platform sums: ``accumulate`` format, ``order`` of the additions
    (``sequential``, ``pairwise``, or a named device order that is only bounded
    here, e.g. ``cuda_reduce``/``cpu_cascade``), and ``mean`` as ``divide``
    (sum / N) or ``reciprocal`` (sum * RN(1/N))."""
    accumulate: str | None = "fp32"
    order: str = "sequential"
    mean: str = "divide"

    def __post_init__(self):
        if self.mean not in ("divide", "reciprocal"):
            raise ValueError(f"Reduction.mean must be 'divide' or 'reciprocal', got {self.mean!r}")
        if not isinstance(self.order, str) or not self.order:
            raise ValueError(f"Reduction.order must be a non-empty string, got {self.order!r}")


def _frozen(d):
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class Platform:
    """A platform's behaviour beyond IEEE 754, as data (see the module docstring).

    Fields
    ------
    name, description : str
    opmath : str or None
        Format 16-bit operations compute in (``"fp32"`` for torch and numpy); None:
        native arithmetic in the operand format.
    float64_route : {"direct", "fp32"}
        ``fp32``: a float64 (Python float) is rounded to float32, then to the
        target format (double rounding, as torch's ``Half(float(double))``).
    nan_result, nan_default, nan_cast, nan_widen : mapping of format name -> rule
        NaN rules per step (see the module docstring).
    nan_exact : bool or frozenset of str
        Whether the NaN patterns are claimed bit-exact: True/False for every path, or
        the set of paths claimed (``"cast:fp16"`` float32 -> fp16, ``"cast64:fp16"``
        float64 -> fp16, ``"widen:bf16"``, ``"result:fp16"`` operation results,
        ``"signop:fp16"`` neg/abs/relu); see `Platform.claims_nan`. Paths left out
        are those where the pattern depends on the code path (vector body vs scalar
        tail, operand order).
    scalars : mapping of op -> {"opmath", "narrow"}
        How a Python scalar operand is read: rounded to the opmath format (kept
        float32), or to the tensor's format first. Keys: add, sub, mul, div,
        add_alpha, addcmul, addcdiv, lerp; ``"*"`` is the fallback.
    scalar_div : {"divide", "reciprocal"}
        ``reciprocal``: ``x / s`` is computed as ``x * RN(1/s)`` in opmath.
    fused : frozenset of str
        Compound ops evaluated with one fma in opmath: ``add_alpha`` (``a + alpha*b``
        as fma(alpha, b, a)), ``addcmul``, ``addcdiv``, ``lerp``.
    addcmul_form : {"value_product", "value_t1"}
        addcmul with value != 1: fma(value, t1*t2, x) or fma(value*t1, t2, x).
    addcdiv_form : {"value_quotient", "value_t1"}
        addcdiv with value != 1: x + value*(t1/t2) (fused: fma(value, t1/t2, x))
        or x + (value*t1)/t2.
    relu_negzero : {"keep", "zero"}
        relu(-0) is -0 (``x < 0 ? 0 : x``) or +0 (``max(x, 0)``).
    sign_ops : {"bits", "arith"}
        neg/abs flip/clear the sign bit (NaN payloads kept) or go through opmath.
    reduction : Reduction
    notes : tuple of str
        Evidence for each rule ([S] source, [D] vendor docs, [V] measured, [I] inferred).
    """

    name: str
    description: str = ""
    opmath: str | None = None
    float64_route: str = "direct"
    nan_result: object = field(default_factory=lambda: _frozen({"*": "propagate"}))
    nan_default: object = field(default_factory=lambda: _frozen({}))
    nan_cast: object = field(default_factory=lambda: _frozen({"*": "propagate"}))
    nan_widen: object = field(default_factory=lambda: _frozen({"*": "propagate"}))
    nan_exact: object = True
    scalars: object = field(default_factory=lambda: _frozen({"*": "narrow"}))
    scalar_div: str = "divide"
    fused: frozenset = frozenset()
    addcmul_form: str = "value_product"
    addcdiv_form: str = "value_quotient"
    relu_negzero: str = "keep"
    sign_ops: str = "bits"
    reduction: Reduction = Reduction(accumulate=None)
    notes: tuple = ()

    def __post_init__(self):
        for name in ("nan_result", "nan_default", "nan_cast", "nan_widen", "scalars"):
            v = getattr(self, name)
            if not hasattr(v, "items"):
                raise TypeError(f"Platform.{name} must be a mapping, got {type(v).__name__}")
            object.__setattr__(self, name, _frozen(v))
        object.__setattr__(self, "fused", frozenset(self.fused))
        if not isinstance(self.nan_exact, (bool, np.bool_)):
            object.__setattr__(self, "nan_exact", frozenset(self.nan_exact))
        checks = {"float64_route": ("direct", "fp32"), "scalar_div": ("divide", "reciprocal"),
                  "addcmul_form": ("value_product", "value_t1"),
                  "addcdiv_form": ("value_quotient", "value_t1"),
                  "relu_negzero": ("keep", "zero"), "sign_ops": ("bits", "arith")}
        for k, allowed in checks.items():
            if getattr(self, k) not in allowed:
                raise ValueError(f"Platform.{k} must be one of {allowed}, got {getattr(self, k)!r}")
        bad = self.fused - {"add_alpha", "addcmul", "addcdiv", "lerp"}
        if bad:
            raise ValueError(f"Platform.fused: unknown ops {sorted(bad)}; expected a subset of "
                             f"add_alpha, addcmul, addcdiv, lerp")
        for op, rule in self.scalars.items():
            if op != "*" and op not in _SCALAR_OPS:
                raise ValueError(f"Platform.scalars: unknown op {op!r}; expected one of {_SCALAR_OPS}")
            if rule not in ("opmath", "narrow"):
                raise ValueError(f"Platform.scalars[{op!r}] must be 'opmath' or 'narrow', got {rule!r}")
        for name in ("nan_result", "nan_cast", "nan_widen"):
            for k, rule in getattr(self, name).items():
                if not (rule in _NAN_WORDS or (isinstance(rule, (int, np.integer))
                                                and not isinstance(rule, bool))):
                    raise ValueError(f"Platform.{name}[{k!r}] must be one of {_NAN_WORDS} or an "
                                     f"int NaN pattern, got {rule!r}")
        if self.opmath is not None:
            get_format(self.opmath)

    # ---- rules looked up per format ------------------------------------
    def nan_rule(self, stage: str, fmt) -> object:
        """The NaN rule of ``stage`` ('result', 'cast', 'widen') for ``fmt``."""
        table = getattr(self, "nan_" + stage)
        f = get_format(fmt)
        return table.get(f.name, table.get("*", "propagate"))

    def fresh_nan(self, fmt) -> int:
        """Pattern of a NaN made from non-NaN operands (0/0, inf-inf) under 'propagate'."""
        f = get_format(fmt)
        v = self.nan_default.get(f.name, self.nan_default.get("*"))
        if v is None:
            return f.default_nan_bits
        if v == "negative":
            return f.default_nan_bits | f.sign_mask
        return int(v)

    def claims_nan(self, path: str) -> bool:
        """Whether NaN patterns on ``path`` (e.g. ``"cast:fp16"``, ``"result:bf16"``)
        are claimed bit-exact."""
        if isinstance(self.nan_exact, (bool, np.bool_)):
            return bool(self.nan_exact)
        return path in self.nan_exact

    def scalar_rule(self, op: str) -> str:
        return self.scalars.get(op, self.scalars.get("*", "narrow"))

    def compute_format(self, fmt) -> Format:
        """The format an operation on ``fmt`` operands is computed in."""
        f = get_format(fmt)
        if self.opmath is None:
            return f
        o = get_format(self.opmath)
        return o if o.nbits > f.nbits else f

    # ---- conveniences: the functions below with this platform -----------
    def op(self, op, *operands, fmt, **params):
        return platform_op(op, *operands, fmt=fmt, platform=self, **params)

    def to_bits(self, x, fmt):
        return platform_to_bits(x, fmt, platform=self)

    def convert(self, bits, src_fmt, dst_fmt):
        return platform_convert(bits, src_fmt, dst_fmt, platform=self)

    def sum(self, bits, fmt, axis=None):
        return platform_sum(bits, fmt, axis=axis, platform=self)

    def mean(self, bits, fmt, axis=None):
        return platform_mean(bits, fmt, axis=axis, platform=self)

    def matmul(self, a, b, fmt):
        return platform_matmul(a, b, fmt, platform=self)

    def replace(self, **changes) -> "Platform":
        """A copy with fields changed (e.g. ``torch_cuda.replace(nan_result={...})``)."""
        return dataclasses.replace(self, **changes)


# --------------------------------------------------------------------------
# Presets
# --------------------------------------------------------------------------
_TORCH_FUSED = frozenset({"add_alpha", "addcmul", "addcdiv", "lerp"})

IEEE = Platform(
    "ieee", "IEEE 754 arithmetic native to each format; NaNs propagate (first NaN operand, "
    "quieted), a fresh NaN is the format's default NaN (0x7E00 fp16, 0x7FC0 bf16).",
    notes=("The library's default: every operation correctly rounded in its own format.",))

TORCH_CUDA = Platform(
    "torch_cuda",
    "torch 2.13 CUDA kernels on sm_80+ (A100, H100/H200): half/bfloat16 ops in float32, "
    "rounded once; NaN results 0x7FFF; float64 -> half through float32; Python scalars kept "
    "float32; x / s = x * RN(1/s); addcmul/addcdiv/lerp/add(alpha) fused in float32.",
    opmath="fp32", float64_route="fp32",
    nan_result={"fp32": 0x7FFFFFFF, "*": "canonical"},
    nan_cast={"fp16": 0x7FFF, "bf16": 0x7FFF, "*": "canonical"},
    nan_widen={"fp16": 0x7FFFFFFF, "bf16": "keep", "*": "canonical"},
    nan_exact=True,
    scalars={"*": "opmath"}, scalar_div="reciprocal", fused=_TORCH_FUSED,
    addcmul_form="value_product", addcdiv_form="value_quotient",
    relu_negzero="keep", sign_ops="bits",
    reduction=Reduction("fp32", "cuda_reduce", "reciprocal"),
    notes=(
        "opmath float for Half/BFloat16 [S: ATen/OpMathType.h]; one rounding per kernel [S: Loops.cuh].",
        "cvt.rn.f16.f32 / cvt.rn.bf16.f32 give 0x7FFF for any NaN [D: cuda_fp16.hpp host emulation; I on device].",
        "GPU float32 arithmetic has one NaN, 0x7FFFFFFF [I]; half->float of a NaN gives 0x7FFFFFFF [D].",
        "bfloat16 -> float is a 16-bit shift, payload kept [S].",
        "No Half(double): float64 goes double->float->half [S: c10 Half.h; V on CPU].",
        "CPU scalars are not narrowed on CUDA; read as opmath float [S: TensorIterator compute_types, Loops.cuh].",
        "x / s computes x * (1.0f / s) [S: BinaryDivTrueKernel.cu; issue #191495].",
        "addcmul/addcdiv explicit std::fma [S: DeviceAddCmulCdiv.cuh]; lerp and add(alpha) by nvcc contraction [I].",
        "neg is __hneg (sign flip), abs/relu do not touch NaN bits [I: device check].",
        "sum/mean: float accumulators in Reduce.cuh order; mean = sum * RN(1/N) [S: SharedReduceOps.h]; "
        "order modelled as bounded here.",
    ))

TORCH_CPU = Platform(
    "torch_cpu",
    "torch 2.13 CPU kernels (x86-64, AVX2/AVX512): ops in float32 rounded once; float64 -> half "
    "through float32; add/sub narrow a Python scalar to the tensor dtype, mul/div/lerp keep it "
    "float32; true division; fused lerp and addcmul; NaN patterns depend on the code path.",
    opmath="fp32", float64_route="fp32",
    nan_result={"fp32": "propagate", "*": "propagate"},
    nan_default={"fp32": 0xFFC00000, "*": "negative"},
    nan_cast={"fp16": "propagate", "bf16": 0xFFFF, "*": "propagate"},
    nan_widen={"fp16": "propagate", "bf16": "keep", "*": "propagate"},
    nan_exact=frozenset({"cast:fp16", "cast:bf16", "widen:fp16", "widen:bf16", "cast64:fp16"}),
    scalars={"add": "narrow", "sub": "narrow", "add_alpha": "narrow", "*": "opmath"},
    scalar_div="divide", fused=_TORCH_FUSED,
    addcmul_form="value_t1", addcdiv_form="value_t1",
    relu_negzero="keep", sign_ops="bits",
    reduction=Reduction("fp32", "cpu_cascade", "divide"),
    notes=(
        "float32 -> half by F16C (sign and top payload kept, quieted); float32 -> bfloat16 "
        "vectorised: every NaN 0xFFFF [V, PR #41280].",
        "x86 float32 arithmetic: first NaN operand quieted, default NaN 0xFFC00000 [V].",
        "NaN patterns differ between the vector body and the scalar tail (bf16 0xFFFF vs 0x7FC0) "
        "and with operand order: nan_exact=False [V].",
        "x + 0.1, x - 0.1, add(alpha=...) narrow the scalar to half/bf16 first; x * s, x / s, "
        "lerp(w) keep float32 [V: 200,000 random pairs, 0 mismatches].",
        "lerp fused in both branches [V]; addcmul(value) = fma(value*t1, t2, x) and "
        "addcdiv(value) = x + (value*t1)/t2 [V].",
        "relu(-0) = -0 [V].",
        "sum: cascade in float, partials across threads rounded to the dtype; mean = sum_f32 / N [S, V].",
        "sum, mean, cumsum, mm/linear (fp16, bf16; sums also fp32) are transcribed bit for bit in "
        "softfloat.torch_models (registered model; platform_sum & co. use it) [S, V: probe and "
        "validation/torch_crosscheck.py torch_models].",
    ))

NUMPY = Platform(
    "numpy",
    "numpy float16: each ufunc converts to float32, computes, rounds once; float64 -> float16 "
    "rounds directly; Python scalars are weak (NEP 50) and are rounded to float16 first.",
    opmath="fp32", float64_route="direct",
    nan_result={"*": "propagate"}, nan_default={"fp32": 0xFFC00000, "*": "negative"},
    nan_cast={"*": "propagate"}, nan_widen={"*": "propagate"}, nan_exact=False,
    scalars={"*": "narrow"}, scalar_div="divide", fused=frozenset(),
    reduction=Reduction("fp32", "pairwise", "divide"),
    notes=("npy_half ufunc loops go through float [S: numpy/_core/src/umath]; float64->half is "
           "npy_double_to_half, direct [S]; NEP 50 weak Python scalars [D].",
           "NaN: x86 host float rules; float->half keeps payload without quieting [S], so "
           "nan_exact=False.",
           "float16 sum: pairwise in float16 itself, not modelled bit-exactly here."))

X86_SSE = Platform(
    "x86_sse",
    "x86 SSE/AVX (and AVX512-FP16 for half): native arithmetic; the first NaN operand "
    "propagates, quieted; a fresh NaN is the negative default NaN ('real indefinite').",
    nan_result={"*": "propagate"}, nan_default={"*": "negative"},
    nan_cast={"*": "propagate"}, nan_widen={"*": "propagate"},
    notes=("Intel SDM vol. 1 4.8.3.5 (QNaN floating-point indefinite); SoftFloat 8086-SSE specialization.",))

ARM_DEFAULT_NAN = Platform(
    "arm_default_nan",
    "AArch64 with FPCR.DN=1: every NaN result is the positive default NaN.",
    nan_result={"*": "canonical"}, nan_cast={"*": "canonical"}, nan_widen={"*": "canonical"},
    notes=("Arm ARM FPProcessNaN with FPCR.DN: default NaN sign 0, quiet bit set, payload 0.",))

RISCV = Platform(
    "riscv",
    "RISC-V F/D/Zfh: NaNs never propagate; every NaN result is the canonical NaN "
    "(0x7E00 fp16, 0x7FC0 bf16, 0x7FC00000 fp32).",
    nan_result={"*": "canonical"}, nan_cast={"*": "canonical"}, nan_widen={"*": "canonical"},
    notes=("RISC-V unprivileged ISA, 'NaN Generation and Propagation': canonical NaN.",))

_PRESETS = {p.name: p for p in (IEEE, TORCH_CUDA, TORCH_CPU, NUMPY, X86_SSE, ARM_DEFAULT_NAN, RISCV)}
_ALIASES = {"cuda": "torch_cuda", "torch-cuda": "torch_cuda", "cpu": "torch_cpu",
            "torch-cpu": "torch_cpu", "default": "ieee", "x86": "x86_sse", "sse": "x86_sse",
            "arm": "arm_default_nan", "arm_dn": "arm_default_nan", "risc-v": "riscv"}


def platform_names() -> list:
    """Names of the preset platforms (``platform_names``, so as not to shadow the
    module ``softfloat.platforms``)."""
    return list(_PRESETS)


def get_platform(platform=None) -> Platform:
    """The `Platform` named by ``platform`` (a Platform, a preset name or alias, or None
    for ``ieee``)."""
    if platform is None:
        return IEEE
    if isinstance(platform, Platform):
        return platform
    if not isinstance(platform, str):
        raise TypeError(f"expected a softfloat.Platform or a platform name, got "
                        f"{type(platform).__name__}")
    key = platform.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _PRESETS:
        raise ValueError(f"unknown platform {platform!r}; expected one of {platform_names()} "
                         f"or a softfloat.Platform")
    return _PRESETS[key]


# --------------------------------------------------------------------------
# NaN helpers (numpy on encodings)
# --------------------------------------------------------------------------
def _isnan(bits: np.ndarray, f: Format) -> np.ndarray:
    return f.is_nan_bits(bits.astype(np.int64))


def _policy(rule, f: Format, plat: Platform):
    """A foundation nan= policy for a rule, and the fresh-NaN pattern to patch in
    (None when the foundation's own default is what the platform wants)."""
    if rule == "canonical":
        return "canonical", None
    if rule == "propagate" or rule == "keep":
        fresh = plat.fresh_nan(f)
        return "propagate", (None if fresh == f.default_nan_bits else fresh)
    return int(rule), None


def _patch_fresh(out: np.ndarray, fresh, f: Format, *operands_nan):
    if fresh is None:
        return out
    had = np.zeros(out.shape, bool)
    for m in operands_nan:
        had |= m
    mask = _isnan(out, f) & ~had
    if mask.any():
        out = out.copy()
        out[mask] = fresh
    return out


# --------------------------------------------------------------------------
# Conversions under a platform
# --------------------------------------------------------------------------
def _narrow(bits, src: Format, dst: Format, plat: Platform) -> np.ndarray:
    """src encodings -> dst (a narrowing or same-width conversion), RNE, the cast NaN rule."""
    rule = plat.nan_rule("cast", dst)
    pol, _ = _policy(rule, dst, plat)
    return convert(bits, src, dst, "nearest_even", nan=pol, subnormals=True)


def _widen(bits, src: Format, dst: Format, plat: Platform) -> np.ndarray:
    """src encodings -> a wider dst (exact), with the widen NaN rule."""
    rule = plat.nan_rule("widen", src)
    if rule == "keep":
        out = convert(bits, src, dst, "nearest_even", nan="propagate", subnormals=True)
        nan = _isnan(bits, src)
        if nan.any() and src.kind == "ieee" and dst.kind == "ieee":
            b = bits.astype(np.int64)
            shift = dst.mbits - src.mbits
            kept = (((b >> (src.nbits - 1)) << (dst.nbits - 1)) | dst.inf_bits
                    | ((b & ((1 << src.mbits) - 1)) << shift))
            out = np.where(nan, kept.astype(dst.dtype), out)
        return out
    pol, _ = _policy(rule, dst, plat)
    return convert(bits, src, dst, "nearest_even", nan=pol, subnormals=True)


def platform_to_bits(x, fmt, platform=None) -> np.ndarray:
    """Round float values into ``fmt`` the way ``platform`` does (round to nearest even).

    float64 input follows ``platform.float64_route`` (``fp32``: through float32, a
    double rounding, as ``torch.tensor(x, dtype=torch.half)`` and ``.half()`` of a
    float64 tensor); float32 and float16 input round directly. NaNs get the
    platform's cast rule.
    """
    plat = get_platform(platform)
    a = V.as_values(x)
    f = get_format(fmt)
    src = V.HOST_FORMATS[a.dtype]
    if src.name == "fp64" and plat.float64_route == "fp32" and f.nbits < 32:
        b32 = to_bits(a, FP32, "nearest_even", nan="propagate", subnormals=True)
        return _narrow(b32, FP32, f, plat)
    if src.name == "fp64":
        pol, _ = _policy(plat.nan_rule("cast", f), f, plat)
        return to_bits(a, f, "nearest_even", nan=pol, subnormals=True)
    return platform_convert(V.int_view(a).astype(src.dtype, copy=False), src, f, plat)


def platform_convert(bits, src_fmt, dst_fmt, platform=None) -> np.ndarray:
    """Convert encodings between formats the way ``platform`` does (RNE; the widen
    NaN rule when ``dst`` is wider, the cast rule otherwise)."""
    plat = get_platform(platform)
    s, d = V.source_format(src_fmt), get_format(dst_fmt)
    b = V.as_bits(bits, s)
    if s is d:
        return b.copy()
    if d.nbits > s.nbits and d.ebits >= s.ebits and d.mbits >= s.mbits:
        return _widen(b, s, d, plat)
    return _narrow(b, s, d, plat)


# --------------------------------------------------------------------------
# Operations
# --------------------------------------------------------------------------
def _arith():
    try:
        from . import arith
    except ImportError as e:  # pragma: no cover - arith is part of the package
        raise ImportError("softfloat.arith is needed for platform operations") from e
    for name in ("add", "sub", "mul", "div", "sqrt", "fma"):
        if not hasattr(arith, name):
            raise NotImplementedError(f"softfloat.arith.{name} is not available yet")
    return arith


def _is_scalar(v) -> bool:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("bool is not a scalar operand; pass a float")
    if isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, np.ndarray):
        return not isinstance(v, np.unsignedinteger)
    return False


class _Env:
    """The formats and rules one operation runs with."""

    def __init__(self, plat: Platform, fmt: Format):
        self.plat, self.fmt = plat, fmt
        self.cf = plat.compute_format(fmt)
        self.wide = self.cf is not fmt
        self.ar = _arith()
        rule = plat.nan_rule("result", self.cf)
        self.nanpol, self.fresh = _policy(rule, self.cf, plat)

    # values in the compute format -------------------------------------
    def tensor(self, bits):
        b = V.as_bits(bits, self.fmt)
        return _widen(b, self.fmt, self.cf, self.plat) if self.wide else b

    def scalar(self, s, op):
        if isinstance(s, (int, np.integer)):
            if abs(int(s)) >= 1 << 53:
                raise ValueError(f"integer scalar {s} is not exactly a float64")
        v = np.asarray(float(s), np.float64)
        if self.plat.scalar_rule(op) == "narrow" or not self.wide:
            b = platform_to_bits(v, self.fmt, self.plat)
            return _widen(b, self.fmt, self.cf, self.plat) if self.wide else b
        return platform_to_bits(v, self.cf, self.plat)

    def const(self, value):
        return to_bits(np.asarray(value, np.float64), self.cf, "nearest_even")

    def operand(self, v, op):
        return self.scalar(v, op) if _is_scalar(v) else self.tensor(v)

    # arithmetic in the compute format ---------------------------------
    def run(self, name, *xs):
        out = getattr(self.ar, name)(*xs, self.cf, "nearest_even", nan=self.nanpol,
                                     subnormals=True)
        return _patch_fresh(out, self.fresh, self.cf, *[_isnan(x, self.cf) for x in xs])

    def neg(self, x):
        return (x ^ np.asarray(self.cf.sign_mask, self.cf.dtype)).astype(self.cf.dtype)

    def result(self, r):
        return _narrow(r, self.cf, self.fmt, self.plat) if self.wide else r


def platform_op(op, *operands, fmt, platform=None, alpha=None, value=None) -> np.ndarray:
    """What ``platform`` computes for ``op`` on ``fmt`` operands.

    Parameters
    ----------
    op : str
        ``add``, ``sub`` (``alpha=``: a + alpha*b), ``mul``, ``div``, ``sqrt``, ``neg``,
        ``abs``, ``relu``, ``fma`` (a*b + c), ``addcmul`` (x + value*t1*t2),
        ``addcdiv`` (x + value*t1/t2), ``lerp`` (x + w*(end - x)); see `PLATFORM_OPS`.
    operands
        Tensors are arrays of ``fmt`` encodings (its uint dtype); a Python/numpy
        float or int is a *scalar* operand, read by ``platform.scalars``. They
        broadcast like NumPy.
    fmt : Format or str
    platform : Platform or str, default ``"ieee"``
    alpha, value : float, optional
        torch's ``alpha`` of add/sub and ``value`` of addcmul/addcdiv.

    Returns
    -------
    ndarray of ``fmt.dtype`` encodings.

    Example: ``platform_op("div", x, 0.3, fmt="fp16", platform="torch_cuda")`` is
    ``x * RN32(1/RN32(0.3))`` rounded to half, as torch's CUDA kernel computes it.
    """
    if not isinstance(op, str) or op not in PLATFORM_OPS:
        raise ValueError(f"unknown op {op!r}; expected one of {sorted(PLATFORM_OPS)}")
    if len(operands) != PLATFORM_OPS[op]:
        raise TypeError(f"{op} takes {PLATFORM_OPS[op]} operands, got {len(operands)}")
    if alpha is not None and op not in ("add", "sub"):
        raise TypeError(f"alpha= is for add and sub, not {op}")
    if value is not None and op not in ("addcmul", "addcdiv"):
        raise TypeError(f"value= is for addcmul and addcdiv, not {op}")
    plat = get_platform(platform)
    f = get_format(fmt)
    if all(_is_scalar(o) for o in operands):
        raise TypeError(f"{op}: at least one operand must be an array of {f.name} encodings")
    env = _Env(plat, f)
    direct = _direct_policy(env, op, operands, alpha)
    if direct is not None:
        # One correctly rounded op in fmt equals the platform's opmath op + narrowing
        # (double rounding is innocuous: opmath precision >= 2p + 2, Figueroa 1995),
        # and every NaN ends as the cast pattern: skip the detour through opmath.
        fn = getattr(env.ar, op)
        xs = [V.as_bits(o, f) for o in operands]
        if op == "sub" and alpha is not None and float(alpha) == -1.0:
            fn = env.ar.add
        elif op == "add" and alpha is not None and float(alpha) == -1.0:
            fn = env.ar.sub
        return fn(*xs, f, "nearest_even", nan=direct, subnormals=True)

    if op in ("neg", "abs", "relu"):
        b = V.as_bits(operands[0], f)
        if op == "relu":
            nan = _isnan(b, f)
            neg = ((b.astype(np.int64) & f.sign_mask) != 0) & ~nan
            if plat.relu_negzero == "keep":
                neg &= (b.astype(np.int64) & (f.sign_mask - 1)) != 0
            return np.where(neg, np.zeros((), f.dtype), b).astype(f.dtype)
        if plat.sign_ops == "arith" and _isnan(b, f).any():
            # through opmath: NaNs get the result rule (sign ops never round otherwise)
            x = env.tensor(b)
            r = env.neg(x) if op == "neg" else (x & np.asarray(env.cf.sign_mask - 1, env.cf.dtype))
            r = np.where(_isnan(x, env.cf), env.run("add", x, x), r)
            return env.result(r)
        m = np.asarray(f.sign_mask, f.dtype)
        return (b ^ m) if op == "neg" else (b & np.asarray(f.sign_mask - 1, f.dtype))

    if op == "sqrt":
        return env.result(env.run("sqrt", env.tensor(operands[0])))

    if op in ("add", "sub"):
        a_, b_ = operands
        A = env.operand(a_, op)
        B = env.operand(b_, op)
        if op == "sub":
            B = env.neg(B)
        if alpha is None or float(alpha) == 1.0:
            return env.result(env.run("add", A, B))
        if float(alpha) == -1.0:
            return env.result(env.run("add", A, env.neg(B)))
        al = env.scalar(alpha, "add_alpha")
        if "add_alpha" in plat.fused:
            return env.result(env.run("fma", np.broadcast_to(al, np.shape(B)), B, A))
        return env.result(env.run("add", A, env.run("mul", al, B)))

    if op == "mul":
        return env.result(env.run("mul", env.operand(operands[0], "mul"),
                                  env.operand(operands[1], "mul")))

    if op == "div":
        a_, b_ = operands
        A = env.operand(a_, "div")
        if _is_scalar(b_) and plat.scalar_div == "reciprocal" and env.wide:
            inv = env.run("div", env.const(1.0), env.scalar(b_, "div"))
            return env.result(env.run("mul", A, inv))
        return env.result(env.run("div", A, env.operand(b_, "div")))

    if op == "fma":
        xs = [env.operand(o, "mul") for o in operands]
        return env.result(env.run("fma", *xs))

    if op in ("addcmul", "addcdiv"):
        x, t1, t2 = (env.operand(o, op) for o in operands)
        v = 1.0 if value is None else float(value)
        fused = op in plat.fused
        if op == "addcmul":
            if v == 1.0:
                if fused:
                    return env.result(env.run("fma", t1, t2, x))
                return env.result(env.run("add", x, env.run("mul", t1, t2)))
            vs = env.scalar(v, op)
            if plat.addcmul_form == "value_t1":
                p1 = env.run("mul", vs, t1)
                if fused:
                    return env.result(env.run("fma", p1, t2, x))
                return env.result(env.run("add", x, env.run("mul", p1, t2)))
            prod = env.run("mul", t1, t2)
            if fused:
                return env.result(env.run("fma", np.broadcast_to(vs, np.shape(prod)), prod, x))
            return env.result(env.run("add", x, env.run("mul", vs, prod)))
        # addcdiv
        if v == 1.0:
            return env.result(env.run("add", x, env.run("div", t1, t2)))
        vs = env.scalar(v, op)
        if plat.addcdiv_form == "value_t1":
            return env.result(env.run("add", x, env.run("div", env.run("mul", vs, t1), t2)))
        q = env.run("div", t1, t2)
        if fused:
            return env.result(env.run("fma", np.broadcast_to(vs, np.shape(q)), q, x))
        return env.result(env.run("add", x, env.run("mul", vs, q)))

    # lerp: |w| < 0.5 ? x + w*(end - x) : end - (end - x)*(1 - w)   (torch's Lerp.h)
    x_, end_, w_ = operands
    X = env.operand(x_, "lerp")
    E = env.operand(end_, "lerp")
    W = env.operand(w_, "lerp")
    X, E, W = (np.ascontiguousarray(t) for t in np.broadcast_arrays(X, E, W))
    diff = env.run("add", E, env.neg(X))
    one = np.broadcast_to(env.const(1.0), W.shape)
    omw = env.run("add", one, env.neg(W))
    wv = np.abs(_values(W, env.cf))
    small = wv < 0.5
    if "lerp" in plat.fused:
        lo = env.run("fma", W, diff, X)
        hi = env.run("fma", env.neg(diff), omw, E)
    else:
        lo = env.run("add", X, env.run("mul", W, diff))
        hi = env.run("add", E, env.neg(env.run("mul", diff, omw)))
    return env.result(np.where(small, lo, hi).astype(env.cf.dtype))


# Set to False to force every operation through the opmath detour (tests compare both).
USE_DIRECT_PATH = True


def _direct_policy(env: _Env, op, operands, alpha):
    """The nan= policy for computing ``op`` directly in the operand format, or None
    when the platform's detour through opmath could give a different result."""
    if not (USE_DIRECT_PATH and env.wide and op in ("add", "sub", "mul", "div", "sqrt")):
        return None
    if alpha is not None and abs(float(alpha)) != 1.0:
        return None
    if any(_is_scalar(o) for o in operands):
        return None
    cf, f = env.cf, env.fmt
    # opmath precision >= 2p + 2, and its range reaches p + 1 bits below fmt's
    # smallest subnormal (so that a tiny result near a midpoint of fmt is exact in opmath)
    if cf.precision < 2 * f.precision + 2 or cf.emax < f.emax \
            or cf.emin - cf.mbits > f.emin - f.mbits - f.precision - 1:
        return None
    res_rule = env.plat.nan_rule("result", env.cf)
    cast_rule = env.plat.nan_rule("cast", env.fmt)
    if res_rule == "propagate" or res_rule == "keep" or not isinstance(cast_rule, (int, np.integer)) \
            and cast_rule != "canonical":
        return None
    return "canonical" if cast_rule == "canonical" else int(cast_rule)


def _values(bits, f: Format) -> np.ndarray:
    from .conversions import from_bits
    return from_bits(bits, f)


# --------------------------------------------------------------------------
# Reductions and matmul (the platform's accumulate format; order: sequential
# or pairwise; named device orders are modelled as pairwise and only bounded)
# --------------------------------------------------------------------------
def _acc_env(plat: Platform, f: Format) -> _Env:
    acc = plat.reduction.accumulate
    p = plat if acc is None else plat.replace(opmath=acc)
    return _Env(p, f)


def _reduce_add(env: _Env, x: np.ndarray, order: str) -> np.ndarray:
    """Sum along axis 0 of compute-format encodings, in ``order``."""
    n = x.shape[0]
    if n == 0:
        return np.broadcast_to(env.const(0.0), x.shape[1:]).copy()
    if order == "pairwise":
        while x.shape[0] > 1:
            h = x.shape[0] // 2
            s = env.run("add", x[:h], x[h:2 * h])
            x = np.concatenate([s, x[2 * h:]]) if x.shape[0] % 2 else s
        # the accumulator starts at +0, as a float32 reduction's identity: -0 sums to +0
        return env.run("add", env.const(0.0), x[0])
    acc = np.broadcast_to(env.const(0.0), x.shape[1:]).copy()
    for i in range(n):
        acc = env.run("add", acc, x[i])
    return acc


def platform_sum(bits, fmt, axis=None, platform=None, order=None, **kw) -> np.ndarray:
    """Sum of ``fmt`` encodings along ``axis`` (None: all), accumulated in the
    platform's ``reduction.accumulate`` format starting from +0, in ``order``
    (default: the platform's when it is ``sequential``/``pairwise``, else
    ``pairwise`` -- a device order such as ``cuda_reduce`` is not transcribed, so
    the result is a model to bound against, bit-exact only where the accumulation
    is exact), rounded once to ``fmt``."""
    plat = get_platform(platform)
    f = get_format(fmt)
    fn = model_for(plat.name, "sum") if order is None else None
    if fn is not None and f.name in ("fp16", "bf16", "fp32"):
        return fn(bits, f, axis, **kw)
    if kw:
        raise TypeError(f"unexpected keyword(s) {sorted(kw)} for platform {plat.name!r}")
    b = V.as_bits(bits, f)
    order = order or (plat.reduction.order if plat.reduction.order in ("sequential", "pairwise")
                      else "pairwise")
    if order not in ("sequential", "pairwise"):
        raise ValueError(f"order must be 'sequential' or 'pairwise', got {order!r}")
    env = _acc_env(plat, f)
    x = env.tensor(b)
    x = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    return env.result(_reduce_add(env, np.ascontiguousarray(x), order))


def platform_mean(bits, fmt, axis=None, platform=None, order=None, **kw) -> np.ndarray:
    """Mean: `platform_sum` in the accumulate format, then ``sum / N`` or
    ``sum * RN(1/N)`` (``reduction.mean``), rounded once to ``fmt`` (or the
    platform's registered model when ``order`` is not forced)."""
    plat = get_platform(platform)
    f = get_format(fmt)
    fn = model_for(plat.name, "mean") if order is None else None
    if fn is not None and f.name in ("fp16", "bf16", "fp32"):
        return fn(bits, f, axis, **kw)
    if kw:
        raise TypeError(f"unexpected keyword(s) {sorted(kw)} for platform {plat.name!r}")
    b = V.as_bits(bits, f)
    order = order or (plat.reduction.order if plat.reduction.order in ("sequential", "pairwise")
                      else "pairwise")
    env = _acc_env(plat, f)
    x = env.tensor(b)
    x = x.reshape(-1) if axis is None else np.moveaxis(x, axis, 0)
    n = x.shape[0]
    s = _reduce_add(env, np.ascontiguousarray(x), order)
    nb = np.broadcast_to(env.const(float(n)), s.shape)
    if plat.reduction.mean == "reciprocal":
        inv = env.run("div", env.const(1.0), env.const(float(n)))
        m = env.run("mul", s, np.broadcast_to(inv, s.shape))
    else:
        m = env.run("div", s, nb)
    return env.result(m)


def platform_matmul(a, b, fmt, platform=None, order=None, **kw) -> np.ndarray:
    """``a @ b`` for 2-D arrays of ``fmt`` encodings: the platform's registered
    model (``torch_cpu``: `softfloat.torch_models.torch_cpu_matmul`, fp16/bf16,
    m, n >= 2) unless ``order="sequential"`` is forced; otherwise products and
    sums in the platform's accumulate format (fma, sequential over k), rounded
    once to ``fmt`` -- a model to bound against, not a transcription."""
    plat = get_platform(platform)
    f = get_format(fmt)
    fn = model_for(plat.name, "matmul") if order is None else None
    if (fn is not None and f.name in ("fp16", "bf16") and np.ndim(a) == 2 and np.ndim(b) == 2
            and np.shape(a)[0] >= 2 and np.shape(b)[1] >= 2):
        return fn(a, b, f, **kw)
    if kw:
        raise TypeError(f"unexpected keyword(s) {sorted(kw)} for platform {plat.name!r}")
    if order not in (None, "sequential"):
        raise ValueError(f"order must be None or 'sequential', got {order!r}")
    A, B = V.as_bits(a, f), V.as_bits(b, f)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul needs 2-D operands with matching inner dimension, got "
                         f"{A.shape} and {B.shape}")
    env = _acc_env(plat, f)
    Aw, Bw = env.tensor(A), env.tensor(B)
    m, k = A.shape
    n = B.shape[1]
    acc = np.broadcast_to(env.const(0.0), (m, n)).copy()
    for i in range(k):
        ai = np.ascontiguousarray(np.broadcast_to(Aw[:, i:i + 1], (m, n)))
        bi = np.ascontiguousarray(np.broadcast_to(Bw[i:i + 1, :], (m, n)))
        acc = env.run("fma", ai, bi, acc)
    return env.result(acc)
