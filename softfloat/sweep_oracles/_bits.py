"""Shared constants of the sweep oracles, float64 bit casts, and operand decoding.

Nothing here (or anywhere in `softfloat.sweep_oracles`) imports the library's
kernels: decoding, error terms, rounding, encoding and the NaN rules are written
again, differently, so that a sweep compares two independent implementations.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# op codes
OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_CONV, OP_FMA = 0, 1, 2, 3, 4, 5, 6
OPCODE = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "div": OP_DIV, "sqrt": OP_SQRT,
          "convert": OP_CONV, "fma": OP_FMA}
NARGS = {OP_ADD: 2, OP_SUB: 2, OP_MUL: 2, OP_DIV: 2, OP_SQRT: 1, OP_CONV: 1, OP_FMA: 3}
# operand classes (own numbering)
Z, FIN, INF, QNAN, SNAN = 0, 1, 2, 3, 4
# flags: SoftFloat's bit values (the public flag encoding of the library)
INEXACT, UNDERFLOW, OVERFLOW, INFINITE, INVALID = 1, 2, 4, 8, 16
# rounding codes (the public order of softfloat.rounding.Rounding)
RNE, RNA, RTZ, RUP, RDN, RTO = 0, 1, 2, 3, 4, 5
# format kinds (formats.Format.kind_code)
IEEE, FN, FNUZ, FINITE = 0, 1, 2, 3   # FINITE: no infinity, no NaN (OCP fp4/fp6)
# oracle methods
M_HOST, M_RO53 = 0, 1


@intrinsic
def f64_bits(typingctx, x):
    """The IEEE bit pattern of a float64, as int64 (LLVM bitcast)."""
    if not isinstance(x, types.Float):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.float64)
        return builder.bitcast(v, ir.IntType(64))
    return types.int64(x), codegen


@intrinsic
def bits_f64(typingctx, x):
    """The float64 whose IEEE bit pattern is the int64 ``x`` (LLVM bitcast)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.bitcast(v, ir.DoubleType())
    return types.float64(x), codegen


@intrinsic
def fma_f64(typingctx, x, y, z):
    """x * y + z with one rounding (LLVM's llvm.fma.f64: the FMA instruction where
    the CPU has one, else libm's correctly rounded fma)."""
    if not all(isinstance(t, types.Float) for t in (x, y, z)):
        return None

    def codegen(context, builder, sig, args):
        vals = [context.cast(builder, v, t, types.float64) for v, t in zip(args, sig.args)]
        fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()] * 3)
        fn = builder.module.declare_intrinsic("llvm.fma", [ir.DoubleType()], fnty)
        return builder.call(fn, vals)
    return types.float64(x, y, z), codegen


@njit(cache=True, nogil=True)
def decode_one(bits, E, M, bias, kind):
    """(class, exact float64 value) of one encoding of a format of at most 8
    exponent and 23 fraction bits: field extraction and ldexp (exact: every such
    value is a float64)."""
    bits = np.int64(bits)
    sign = (bits >> (E + M)) & 1
    ef = (bits >> M) & ((np.int64(1) << E) - 1)
    fr = bits & ((np.int64(1) << M) - 1)
    top = (np.int64(1) << E) - 1
    if kind == IEEE and ef == top:
        if fr == 0:
            return INF, (-math.inf if sign else math.inf)
        return (QNAN if (fr >> (M - 1)) & 1 else SNAN), math.nan
    if kind == FN and ef == top and fr == (np.int64(1) << M) - 1:
        return QNAN, math.nan
    if kind == FNUZ and sign == 1 and ef == 0 and fr == 0:
        return QNAN, math.nan
    if ef == 0:
        if fr == 0:
            return Z, (-0.0 if sign else 0.0)
        v = math.ldexp(float(fr), int(1 - bias - M))
    else:
        v = math.ldexp(float(fr + (np.int64(1) << M)), int(ef - bias - M))
    return FIN, (-v if sign else v)


@njit(cache=True, nogil=True)
def _fill_tables(E, M, bias, kind, cls, val):
    for i in range(cls.size):
        c, v = decode_one(i, E, M, bias, kind)
        cls[i] = c
        val[i] = v


@lru_cache(maxsize=None)
def decode_tables(E, M, bias, kind):
    """(class int8[2**n], value float64[2**n]) of every encoding of an n <= 19 bit
    format (tf32: 2**19 entries, 4.5 MB); read-only, cached per format."""
    n = 1 + E + M
    if n > 19:
        raise ValueError("decode tables are for formats of at most 19 bits")
    cls = np.empty(1 << n, np.int8)
    val = np.empty(1 << n, np.float64)
    _fill_tables(E, M, bias, kind, cls, val)
    cls.flags.writeable = False
    val.flags.writeable = False
    return cls, val


@njit(cache=True, nogil=True)
def decode_fp32(bits):
    """(class, float64 value) of a float32 bit pattern, built from its fields
    (the float64 with the same sign, exponent and fraction: exact)."""
    bits = np.int64(bits) & 0xFFFFFFFF
    sign = bits >> 31
    ef = (bits >> 23) & 0xFF
    fr = bits & 0x7FFFFF
    if ef == 0xFF:
        if fr == 0:
            return INF, (-math.inf if sign else math.inf)
        return (QNAN if fr >> 22 else SNAN), math.nan
    if ef == 0:
        # subnormal: fr * 2**-149, an exact float64 product (fr < 2**23)
        v = float(fr) * 1.401298464324817e-45
        return (Z if fr == 0 else FIN), (-v if sign else v)
    return FIN, bits_f64((sign << 63) | ((ef - 127 + 1023) << 52) | (fr << 29))
