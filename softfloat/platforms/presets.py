"""Platform descriptions as data: the `Platform` and `Reduction` records, the
presets and their lookup (the interpreter that carries them out is ops.py).

A platform is what a machine or a library does beyond IEEE 754.

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

The operation code (``platform_op`` and friends, in ops.py) reads these fields
and never spells a NaN constant or a platform quirk of its own; the NaN rules are
turned into kernel policies by `Platform.nan_policy`, so every
NaN pattern, a platform's fresh NaN included, comes out of the kernels.

Presets: ``ieee`` (the default), ``torch_cuda``, ``torch_cpu``, ``numpy``,
``x86_sse``, ``arm_default_nan``, ``riscv``, registered in the ``PRESETS`` dict. Each field of a preset cites its evidence in
``notes``; claims marked [I] are inferences that a device run confirms (see
``validation/torch_crosscheck.py``).

NaN rules (values of the ``nan_*`` maps, keyed by format name, ``"*"`` for any):
``"propagate"`` (a NaN operand's sign and payload, quieted; a fresh NaN is
``nan_default`` or the format's default NaN), ``"propagate_last"`` (the same,
the last NaN operand in argument order winning), ``"canonical"`` (the format's
default NaN), ``"keep"`` (widening only: the payload shifted, not quieted, as a
bfloat16 -> float32 bit shift does), ``"ones"`` (casts only: the NaN operand's
sign with every exponent and fraction bit set, as torch's fp8 e5m2 cast gives
0x7F / 0xFF), or an int (always that pattern).

Cast rules (``casts``, keyed by the target format's name, ``"*"`` for any): how a
narrowing conversion rounds and overflows. ``"ieee"`` (the default): to nearest
even, overflow as the format's default policy (infinity, or NaN for formats
without one); ``"saturate"``: to nearest even, a finite overflow and +-inf give
the largest finite value of the sign (torch's float8_e4m3fn); ``"exponent_field"``
(e8m0 targets only): torch's float8_e8m0fnu cast, which rounds the float32
exponent field: |x| (the sign is ignored) to a power of two, to nearest with ties
upward, for normal float32 values; 0 and float32 subnormals up to 2**-127 give
2**-127 (code 0), float32 subnormals above it 2**-126 (code 1); 1.5 * 2**127 and
above, +-inf and NaN give the NaN (0xFF). A format's name is its value: a rule
keyed ``"fp8_e4m3"`` applies to a format equal to softfloat's ``fp8_e4m3``, not to a
custom format that merely carries that name (it gets the ``"*"`` rule).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..formats import Format, get_format
from ..specialize import NanRule, fresh_nan_bits

__all__ = ["Platform", "Reduction", "get_platform", "platform_names", "PLATFORM_OPS",
           "PRESETS"]

# Operations `platform_op` knows, with their arity (tensors and scalars together).
PLATFORM_OPS = {
    "add": 2, "sub": 2, "mul": 2, "div": 2, "sqrt": 1, "neg": 1, "abs": 1, "relu": 1,
    "fma": 3, "addcmul": 3, "addcdiv": 3, "lerp": 3,
}
_SCALAR_OPS = ("add", "sub", "mul", "div", "add_alpha", "addcmul", "addcdiv", "lerp")
_NAN_WORDS = ("propagate", "propagate_last", "canonical", "keep")
_CAST_NAN_WORDS = _NAN_WORDS + ("ones",)
CAST_RULES = ("ieee", "saturate", "exponent_field")


def _rule_key(f):
    """The key a format's rules are looked up under: its name when it is the
    built-in format of that name (by value), else None (the ``"*"`` rule)."""
    try:
        return f.name if get_format(f.name) == f else None
    except (TypeError, ValueError):
        return None


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
    casts: object = field(default_factory=lambda: _frozen({"*": "ieee"}))

    def __post_init__(self):
        for name in ("nan_result", "nan_default", "nan_cast", "nan_widen", "scalars", "casts"):
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
            words = _CAST_NAN_WORDS if name == "nan_cast" else _NAN_WORDS
            for k, rule in getattr(self, name).items():
                if not ((isinstance(rule, str) and rule in words)
                        or (isinstance(rule, (int, np.integer))
                            and not isinstance(rule, (bool, np.bool_)))):
                    raise ValueError(f"Platform.{name}[{k!r}] must be one of {words} or an "
                                     f"int NaN pattern, got {rule!r}")
        for k, rule in self.casts.items():
            if not (isinstance(rule, str) and rule in CAST_RULES):
                raise ValueError(f"Platform.casts[{k!r}] must be one of {CAST_RULES}, got "
                                 f"{rule!r}")
            if rule == "exponent_field" and k != "*" and get_format(k).kind != "fnu":
                raise ValueError(f"Platform.casts[{k!r}]: 'exponent_field' is for e8m0 "
                                 f"(fnu) targets")
        if self.opmath is not None:
            get_format(self.opmath)

    # ---- rules looked up per format ------------------------------------
    def nan_rule(self, stage: str, fmt) -> object:
        """The NaN rule of ``stage`` ('result', 'cast', 'widen') for ``fmt``."""
        table = getattr(self, "nan_" + stage)
        f = get_format(fmt)
        key = _rule_key(f)
        return table.get(key, table.get("*", "propagate")) if key else table.get("*", "propagate")

    def cast_rule(self, fmt) -> str:
        """How a narrowing conversion into ``fmt`` rounds (see `CAST_RULES`)."""
        f = get_format(fmt)
        key = _rule_key(f)
        rule = self.casts.get(key, self.casts.get("*", "ieee")) if key else \
            self.casts.get("*", "ieee")
        if rule == "exponent_field" and f.kind != "fnu":
            return "ieee"
        return rule

    def nan_policy(self, stage: str, fmt) -> NanRule:
        """The ``nan=`` policy under which the kernels produce what this platform
        gives at ``stage`` ('result': an operation computed in ``fmt``; 'cast': a
        conversion into ``fmt``; 'widen': a widening conversion from ``fmt``, whose
        pattern is the wider result format's business). The platform's rule is
        ``propagate`` (with its fresh NaN, ``nan_default``), ``canonical``,
        ``keep`` or an int pattern; softfloat.specialize carries it out."""
        f = get_format(fmt)
        rule = self.nan_rule(stage, f)
        if rule == "canonical":
            return NanRule("canonical")
        if rule == "ones":
            # casts only: the kernels propagate (the NaN's sign), the platform
            # interpreter (platforms.ops) then sets the payload to all ones
            return NanRule("propagate")
        if rule in ("propagate", "propagate_last", "keep"):
            # a conversion makes no fresh NaN; the pattern is kept for results only
            return NanRule(rule, None if stage != "result" else self._fresh_pattern(f))
        return NanRule("canonical", int(rule))

    def _fresh_pattern(self, f):
        v = self.nan_default.get(f.name, self.nan_default.get("*"))
        return None if v is None else (v if v == "negative" else int(v))

    def fresh_nan(self, fmt) -> int:
        """Pattern of a NaN made from non-NaN operands (0/0, inf - inf, 0 * inf;
        fma(0, inf, NaN) too) under 'propagate': the format's default NaN, or the
        platform's own (x86 SSE: the negative default NaN, 0xFE00 for fp16)."""
        f = get_format(fmt)
        return fresh_nan_bits(f, self._fresh_pattern(f))

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
    nan_cast={"fp16": 0x7FFF, "bf16": 0x7FFF, "fp8_e4m3": "propagate", "fp8_e5m2": "ones",
              "*": "canonical"},
    nan_widen={"fp16": 0x7FFFFFFF, "bf16": "keep", "*": "canonical"},
    nan_exact=True,
    casts={"fp8_e4m3": "saturate", "*": "ieee"},
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
        "x / s computes x * (1.0f / s) [S: BinaryDivTrueKernel.cu; pytorch/pytorch#191495].",
        "addcmul/addcdiv explicit std::fma [S: DeviceAddCmulCdiv.cuh]; lerp and add(alpha) by nvcc contraction [I].",
        "neg is __hneg (sign flip), abs/relu do not touch NaN bits [I: device check].",
        "sum/mean: float accumulators in Reduce.cuh order; mean = sum * RN(1/N) [S: SharedReduceOps.h]; "
        "order modelled as bounded here.",
        "float -> float8_e4m3fn / float8_e5m2: the CUDA copy kernel constructs c10's Float8 types, "
        "whose C10_HOST_DEVICE conversions are the ones measured on the CPU (torch_cpu): e4m3fn "
        "saturates finite overflow and inf to +-448, NaN 0x7F|sign; e5m2 overflows to inf, NaN "
        "0x7F|sign [S: torch/headeronly/util/Float8_e4m3fn.h, Float8_e5m2.h; I on device].",
    ))

TORCH_CPU = Platform(
    "torch_cpu",
    "torch 2.13 CPU kernels (x86-64, AVX2/AVX512): ops in float32 rounded once; float64 -> half "
    "through float32; add/sub narrow a Python scalar to the tensor dtype, mul/div/lerp keep it "
    "float32; true division; fused lerp and addcmul; NaN patterns depend on the code path.",
    opmath="fp32", float64_route="fp32",
    nan_result={"fp32": "propagate", "*": "propagate"},
    nan_default={"fp32": 0xFFC00000, "*": "negative"},
    nan_cast={"fp16": "propagate", "bf16": 0xFFFF, "fp8_e5m2": "ones", "*": "propagate"},
    nan_widen={"fp16": "propagate", "bf16": "keep", "*": "propagate"},
    nan_exact=frozenset({"cast:fp16", "cast:bf16", "widen:fp16", "widen:bf16", "cast64:fp16",
                         "cast:fp8_e4m3", "cast:fp8_e5m2", "cast:fp8_e4m3fnuz",
                         "cast:fp8_e5m2fnuz", "cast:e8m0"}),
    casts={"fp8_e4m3": "saturate", "e8m0": "exponent_field", "*": "ieee"},
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
        "float32 -> float8_e4m3fn: nearest even, finite overflow and +-inf saturate to +-448, NaN "
        "0x7F/0xFF (sign kept) [V: all 2^32 float32 inputs, torch 2.13 CPU; c10 Float8_e4m3fn.h "
        "behaviour as observed]: casts['fp8_e4m3'] = 'saturate'.",
        "float32 -> float8_e5m2: nearest even, overflow to +-inf, every NaN 0x7F/0xFF (sign kept, "
        "payload all ones) [V: all 2^32; c10 Float8_e5m2.h as observed]: nan_cast['fp8_e5m2'] = "
        "'ones'.",
        "float32 -> float8_e4m3fnuz / float8_e5m2fnuz: nearest even, overflow, +-inf and NaN give "
        "the NaN 0x80, -0 gives +0 [V: all 2^32; c10 Float8_e4m3fnuz.h, Float8_e5m2fnuz.h as "
        "observed]: the 'ieee' rule of fnuz formats.",
        "float32 -> float8_e8m0fnu: the float32 exponent field rounded (sign ignored, ties up, "
        "0 and subnormals <= 2**-127 give code 0, NaN/inf and >= 1.5 * 2**127 give 0xFF) [V: all "
        "2^32; c10 Float8_e8m0fnu.h fp8e8m0fnu_from_fp32_value as observed]: casts['e8m0'] = "
        "'exponent_field'.",
        "sum, mean, cumsum, mm/linear (fp16, bf16; sums also fp32) are transcribed bit for bit in "
        "softfloat.platforms.torch_cpu (registered model; platform_sum & co. use it) [S, V: probe and "
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

# The registry: name -> Platform (a plain dict; get_platform reads it).
PRESETS = {p.name: p for p in (IEEE, TORCH_CUDA, TORCH_CPU, NUMPY, X86_SSE, ARM_DEFAULT_NAN, RISCV)}
_PRESETS = PRESETS
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
