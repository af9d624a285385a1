"""The CPU's own floating point, reached from numba: fp16 <-> float32 conversion
instructions (F16C on x86-64), fused multiply-add, bit casts, and the MXCSR
register that can make float32 arithmetic flush subnormals.

Everything here is a small `numba.extending.intrinsic` (LLVM instructions, no
Python), so the kernels that use them stay branch-free and vectorize.

* ``f32_to_f16(x)``: float32 -> fp16 encoding (uint16 as int32), round to nearest
  even, by LLVM ``fptrunc float -> half`` + bitcast. With F16C this is
  ``vcvtps2ph`` (MXCSR rounding, which numba never changes: nearest-even); NaN
  inputs come back quieted with their top payload bits (the kernels do not rely
  on that: NaN results are recomputed by the general path).
* ``f16_to_f32(h)``: fp16 encoding -> float32 (exact), ``fpext half -> float``
  (``vcvtph2ps``).
* ``fma32``/``fma64``: ``llvm.fma``, one rounding (``vfmadd`` on this hardware).
* ``f32_bits``/``bits_f32``/``f64_bits``/``bits_f64``: bit casts.
* ``mxcsr()``: the calling thread's MXCSR (``llvm.x86.sse.stmxcsr``). Bit 6 is
  DAZ (denormal inputs read as zero), bit 15 FTZ (subnormal results flushed).
  Other libraries can set them (``torch.set_flush_denormal(True)``); with either
  set, float32 arithmetic and the F16C conversions give other results for
  subnormals, so every kernel here reads it and takes the integer path instead.

`HAVE_F16C` says whether the host CPU has F16C (without it LLVM would lower the
half conversions to library calls, which round correctly but slowly, so the
integer path is used instead). `use_hw()` is what dispatch reads: F16C present,
an x86-64 host (for MXCSR), and not disabled by ``SOFTFLOAT_HW=0`` or by
setting ``softfloat._kernels.hw.FORCE_INTEGER = True`` (the tests do, to check
the fallback).
"""
import os
import platform

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

#: set True to make every dispatch take the integer path (tests of the fallback)
FORCE_INTEGER = os.environ.get("SOFTFLOAT_HW", "1").strip() in ("0", "false", "no", "off")

MXCSR_DAZ = 1 << 6
MXCSR_FTZ = 1 << 15


def _host_f16c() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        import llvmlite.binding as llb
        feats = llb.get_host_cpu_features()
        return bool(feats.get("f16c", False)) and bool(feats.get("sse2", True))
    except Exception:  # pragma: no cover (feature query unavailable)
        return False


HAVE_F16C = _host_f16c()


def use_hw() -> bool:
    """True when the hardware kernels may be dispatched to (see the module doc)."""
    return HAVE_F16C and not FORCE_INTEGER


_f16 = ir.HalfType()
_f32 = ir.FloatType()
_f64 = ir.DoubleType()
_i16 = ir.IntType(16)
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


@intrinsic
def f32_to_f16(typingctx, x):
    """float32 -> fp16 bits (int32 in [0, 65535]), round to nearest even."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        h = builder.fptrunc(args[0], _f16)
        return builder.zext(builder.bitcast(h, _i16), _i32)

    return types.int32(types.float32), codegen


@intrinsic
def f16_to_f32(typingctx, h):
    """fp16 bits (low 16 bits of an integer) -> float32, exact."""
    if not isinstance(h, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = builder.trunc(args[0], _i16) if h.bitwidth > 16 else args[0]
        if h.bitwidth < 16:  # pragma: no cover
            v = builder.zext(args[0], _i16)
        return builder.fpext(builder.bitcast(v, _f16), _f32)

    return types.float32(h), codegen


@intrinsic
def f32_bits(typingctx, x):
    """The int32 bit pattern of a float32."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _i32)

    return types.int32(types.float32), codegen


@intrinsic
def bits_f32(typingctx, u):
    """The float32 whose bit pattern is the low 32 bits of an integer."""
    if not isinstance(u, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = args[0]
        if u.bitwidth > 32:
            v = builder.trunc(v, _i32)
        elif u.bitwidth < 32:
            v = builder.zext(v, _i32)
        return builder.bitcast(v, _f32)

    return types.float32(u), codegen


@intrinsic
def f64_bits(typingctx, x):
    """The int64 bit pattern of a float64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _i64)

    return types.int64(types.float64), codegen


@intrinsic
def bits_f64(typingctx, u):
    """The float64 whose bit pattern is an int64."""
    if not isinstance(u, types.Integer) or u.bitwidth != 64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _f64)

    return types.float64(u), codegen


def _fma_intrinsic(ty, llty):
    def impl(typingctx, a, b, c):
        if a != ty or b != ty or c != ty:
            return None

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(llty, [llty, llty, llty])
            fn = builder.module.declare_intrinsic("llvm.fma", [llty], fnty)
            return builder.call(fn, list(args))

        return ty(ty, ty, ty), codegen
    return intrinsic(impl)


fma32 = _fma_intrinsic(types.float32, _f32)
fma32.__doc__ = "a * b + c in float32 with one rounding (llvm.fma.f32)."
fma64 = _fma_intrinsic(types.float64, _f64)
fma64.__doc__ = "a * b + c in float64 with one rounding (llvm.fma.f64)."


@intrinsic
def mxcsr(typingctx):
    """The calling thread's MXCSR register (x86-64 only: llvm.x86.sse.stmxcsr)."""
    def codegen(context, builder, sig, args):
        slot = builder.alloca(_i32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.PointerType(ir.IntType(8))])
        fn = builder.module.declare_intrinsic("llvm.x86.sse.stmxcsr", (), fnty)
        builder.call(fn, [builder.bitcast(slot, ir.PointerType(ir.IntType(8)))])
        return builder.zext(builder.load(slot), _i64)

    return types.int64(), codegen


@njit(cache=True)
def fp_env_ok():
    """True when this thread's float32 arithmetic is IEEE: neither FTZ nor DAZ set."""
    return (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) == 0


def process_fp_env_ok() -> bool:
    """fp_env_ok() for the calling thread, False where it cannot be read."""
    if not HAVE_F16C:
        return False
    return bool(fp_env_ok())
