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
* ``cvt16_block(src, out, i, mode, ...)``: 16 float32 (or float64, through
  round-to-odd to float32) -> fp16 conversions at once in any deterministic
  rounding mode, with their flags: ``vcvtps2ph`` with a rounding immediate
  (needs AVX as well: `HAVE_F16C_AVX`; one 512-bit instruction where
  `HAVE_AVX512F`). The proofs are in its docstring.
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
import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import config
from .codes import RDN, RNA, RNE, RTO, RTZ, RUP

#: set True to make every dispatch take the integer path (tests of the fallback)
FORCE_INTEGER = not config.hardware()

MXCSR_DAZ = 1 << 6
MXCSR_FTZ = 1 << 15


def _host_features(*names) -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        import llvmlite.binding as llb
        feats = llb.get_host_cpu_features()
        return all(bool(feats.get(n, False)) for n in names)
    except Exception:  # pragma: no cover (feature query unavailable)
        return False


HAVE_F16C = _host_features("f16c", "sse2")
#: F16C with AVX: the 256-bit `vcvtps2ph` with a rounding immediate (`cvt16_block`)
HAVE_F16C_AVX = HAVE_F16C and _host_features("avx")
#: AVX-512F: `cvt16_block` converts its 16 lanes with one 512-bit `vcvtps2ph`
#: (SOFTFLOAT_AVX512=0 turns that off, for tests of the 256-bit form; read when a
#: kernel compiles, so use it with a fresh NUMBA_CACHE_DIR)
HAVE_AVX512F = (HAVE_F16C_AVX and _host_features("avx512f")
                and config.avx512())


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


def _as_i32(builder, v, ty):
    if ty.bitwidth > 32:
        return builder.trunc(v, _i32)
    if ty.bitwidth < 32:
        return builder.sext(v, _i32) if ty.signed else builder.zext(v, _i32)
    return v


def _i32_op(name, doc):
    def impl(typingctx, a, b):
        if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            x, y = (_as_i32(builder, v, t) for v, t in zip(args, sig.args))
            return getattr(builder, name)(x, y)

        return types.int32(a, b), codegen
    impl.__doc__ = doc
    return intrinsic(impl)


# 32-bit integer operations that stay 32-bit: numba types int32 + int32 as int64,
# which makes a vectorized loop use 64-bit lanes (half as many per instruction).
# Operands are truncated (or extended) to 32 bits; the result wraps modulo 2^32.
add32 = _i32_op("add", "a + b in int32 (wrapping).")
sub32 = _i32_op("sub", "a - b in int32 (wrapping).")
and32 = _i32_op("and_", "a & b in int32.")
or32 = _i32_op("or_", "a | b in int32.")
xor32 = _i32_op("xor", "a ^ b in int32.")
shl32 = _i32_op("shl", "a << b in int32 (b in [0, 31]).")
shr32 = _i32_op("ashr", "a >> b in int32, arithmetic (b in [0, 31]).")


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
def flushes():
    """True when this thread's MXCSR has FTZ or DAZ set (float32/float64
    subnormals flushed or read as zero): the one reading of the flush bits, for
    the kernels (a fast pass refuses) and for Python (x86-64 only)."""
    return (mxcsr() & (MXCSR_DAZ | MXCSR_FTZ)) != 0


@njit(cache=True)
def fp_env_ok():
    """True when this thread's float32 arithmetic is IEEE: neither FTZ nor DAZ set."""
    return not flushes()


def process_fp_env_ok() -> bool:
    """fp_env_ok() for the calling thread, False where it cannot be read."""
    if not HAVE_F16C:
        return False
    return bool(fp_env_ok())


# --------------------------------------------------------------------------
# 16 conversions to fp16 at once, in any deterministic mode (F16C + AVX)
# --------------------------------------------------------------------------
#: elements per `cvt16_block` call
BLOCK = 16
# softfloat's rounding codes (core.RNE ...) -> `vcvtps2ph`'s rounding immediate
# (bit 2 clear: the immediate rounds, not MXCSR.RC): 0 nearest-even, 1 down,
# 2 up, 3 toward zero; nearest-away starts from nearest-even, odd from toward zero
_IMM = {RNE: 0, RNA: 0, RTZ: 3, RUP: 2, RDN: 1, RTO: 3}
_RNA, _RTO = RNA, RTO

_i1 = ir.IntType(1)


def _vec(ty, n=BLOCK):
    return ir.VectorType(ty, n)


def _splat(builder, v, n=BLOCK):
    undef = ir.Constant(_vec(v.type, n), ir.Undefined)
    one = builder.insert_element(undef, v, ir.Constant(_i32, 0))
    return builder.shuffle_vector(one, undef, ir.Constant(_vec(_i32, n), [0] * n))


def _const(ty, v):
    return ir.Constant(_vec(ty), [v] * BLOCK)


def _lanes(builder, v, start, n):
    return builder.shuffle_vector(v, v, ir.Constant(_vec(_i32, n), list(range(start, start + n))))


def _mask_bits(builder, m):
    """<16 x i1> -> i64 holding the 16 lane bits."""
    return builder.zext(builder.bitcast(m, ir.IntType(BLOCK)), _i64)


def _fabs(builder, v):
    name = "llvm.fabs.v%df%d" % (v.type.count, 64 if v.type.element == _f64 else 32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v.type, [v.type]), name)
    return builder.call(fn, [v])


def _emit_rto32(builder, xd, set_last=False):
    """<16 x double> (no FTZ/DAZ) -> <16 x float> RTO32(x): the vector form of
    `convert_hw._rto32` (its proof): y = RN32(x); of y and the encoding next to it
    toward x, the odd one. Returns (y, y'): y' = y, or with ``set_last`` y with
    the last significand bit of every finite lane set (`cvt16_block`'s
    nearest-away)."""
    y = builder.fptrunc(xd, _vec(_f32))
    yb = builder.bitcast(y, _vec(_i32))
    ay = _fabs(builder, builder.fpext(y, _vec(_f64)))
    ax = _fabs(builder, xd)
    lt = builder.fcmp_ordered("<", ay, ax)
    gt = builder.fcmp_ordered(">", ay, ax)
    even = builder.icmp_unsigned("==", builder.and_(yb, _const(_i32, 1)), _const(_i32, 0))
    yb = builder.add(yb, builder.zext(builder.and_(lt, even), _vec(_i32)))
    yb = builder.sub(yb, builder.zext(builder.and_(gt, even), _vec(_i32)))
    y = builder.bitcast(yb, _vec(_f32))
    if not set_last:
        return y, y
    fin = builder.fcmp_ordered("<", ax, _const(_f64, float("inf")))
    return y, builder.bitcast(builder.or_(yb, builder.zext(fin, _vec(_i32))), _vec(_f32))


@intrinsic
def cvt16_block(typingctx, src, out, i, mode, po, no, pt, nt):
    """Convert src[i:i+16] (float32, or float64 through RTO32) to fp16 into
    out[i:i+16] (uint16) in rounding ``mode`` (a literal softfloat rounding code,
    0-5: nearest-even, nearest-away, toward zero, upward, downward, odd); returns
    the lanes' flag masks packed in an int64: inexact in bits 0-15, tiny and
    inexact 16-31, overflow 32-47, NaN input 48-63 (NaN lanes raise nothing else;
    their output is arbitrary).

    Expects C-contiguous 1-d arrays with i + 16 <= len (no bounds check; any
    alignment), the calling thread's MXCSR without FTZ/DAZ, and signed float32
    thresholds (see `convert_hw.signed_thresholds`): an inexact finite x
    overflows iff x >= po or x <= no and is tiny iff nt < x < pt.

    * h = `vcvtps2ph` with the mode's rounding immediate (one 512-bit
      instruction with AVX-512F, else two 8-lane halves in the 256-bit AVX
      form): nearest-even, toward zero, upward, downward directly.
    * back = the float32 value of h (exact); inexact = back != x, ordered (false
      for NaN): a conversion is exact iff its result equals x.
    * odd: the truncation with its last bit set when inexact (the definition).
    * nearest-away from float32, from the nearest-even h: they differ only on an exact tie
      that went toward zero, |back| < |x| and |x| - |back| = half the fp16
      spacing above |back|; the result is then the neighbour away from zero,
      magnitude + 1 (same sign bit). Test: x - back == copysign(half, x).
      x - back is exact in float32: back = 0 gives x, and a nonzero back is at
      least one spacing, so |x| lies within [|back|/2, 2|back|] (Sterbenz); back
      has x's sign, so it equals +-(|x| - |back|), with x's sign exactly when
      |back| < |x|. Half the spacing above a finite |back| is 2^(E - 127 - 11)
      for back's float32 exponent field E when back is an fp16 normal (E >=
      113), 2^-25 below: the float32 encoding max(E, 113) - 11 << 23. (back =
      inf, from x >= 65520, gives d = -inf or NaN: no tie, and infinity is the
      nearest-away result there too.)
    * nearest-away from float64: h = nearest-even of y' = y = RTO32(x) with
      its last bit set (x finite; y' = y for infinities). Every fp16 midpoint
      (65520 included) is an odd multiple of 2^-25 or coarser, so as a float32
      its last bit is 0 and the next fp16 value is 2^12 float32 ulps or more
      away. If RTO32 was inexact, y is odd already (y' = y), so no midpoint,
      and nearest-away of x = nearest-away of y (round to odd with 24 >= 11 +
      2 bits, then any rounding: see `convert_hw`) = nearest-even of y. If y =
      x and |x| is a midpoint, |y'| = |x| + 1 ulp lies just above it, so
      nearest-even takes the neighbour away from zero (the tie rule);
      otherwise no midpoint m has |x| < m <= |y'| (|y'| > |x| only when |y'| =
      |x| + 1 ulp has last bit 1, unlike m), so x and y' round alike. (y = 0
      gives 2^-149: 0 again, no DAZ; y = FLT_MAX for |x| beyond it: odd.)
    * flags: every overflow is inexact (the thresholds lie beyond the largest
      finite fp16, so such an x is no fp16 value) and an infinite x converts
      exactly, so masking the threshold tests with inexact also excludes
      infinities and NaNs."""
    if not (isinstance(mode, types.IntegerLiteral) and mode.literal_value in _IMM
            and isinstance(src, types.Array) and src.dtype in (types.float32, types.float64)
            and isinstance(out, types.Array) and out.dtype == types.uint16
            and isinstance(i, types.Integer)
            and all(t == types.float32 for t in (po, no, pt, nt))):
        return None
    rm = mode.literal_value
    is64 = src.dtype == types.float64

    def codegen(context, builder, sig, args):
        sa = context.make_array(sig.args[0])(context, builder, args[0])
        oa = context.make_array(sig.args[1])(context, builder, args[1])
        ps = builder.gep(sa.data, [args[2]])
        pd = builder.gep(oa.data, [args[2]])
        if is64:
            x, xc = _emit_rto32(builder,
                                builder.load(builder.bitcast(ps, _vec(_f64).as_pointer()),
                                             align=1), set_last=rm == _RNA)
        else:
            x = xc = builder.load(builder.bitcast(ps, _vec(_f32).as_pointer()), align=1)
        imm = ir.Constant(_i32, _IMM[rm])
        if HAVE_AVX512F:
            fnty = ir.FunctionType(_vec(_i16), [_vec(_f32), _i32, _vec(_i16), _i16])
            fn = cgutils.get_or_insert_function(builder.module, fnty,
                                                "llvm.x86.avx512.mask.vcvtps2ph.512")
            h = builder.call(fn, [xc, imm, _const(_i16, 0), ir.Constant(_i16, -1)])
        else:
            fnty = ir.FunctionType(_vec(_i16, 8), [_vec(_f32, 8), _i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.vcvtps2ph.256")
            lo = builder.call(fn, [_lanes(builder, xc, 0, 8), imm])
            hi = builder.call(fn, [_lanes(builder, xc, 8, 8), imm])
            h = builder.shuffle_vector(lo, hi, ir.Constant(_vec(_i32), list(range(BLOCK))))
        back = builder.fpext(builder.bitcast(h, _vec(_f16)), _vec(_f32))
        inx = builder.fcmp_ordered("!=", back, x)
        if rm == _RTO:
            h = builder.or_(h, builder.zext(inx, _vec(_i16)))
        elif rm == _RNA and not is64:
            bb = builder.bitcast(back, _vec(_i32))
            e = builder.and_(bb, _const(_i32, 0x7F800000))
            e = builder.select(builder.icmp_signed("<", e, _const(_i32, 113 << 23)),
                               _const(_i32, 113 << 23), e)
            half = builder.sub(e, _const(_i32, 11 << 23))
            sx = builder.and_(builder.bitcast(x, _vec(_i32)), _const(_i32, -0x80000000))
            half = builder.bitcast(builder.or_(half, sx), _vec(_f32))
            tie = builder.fcmp_ordered("==", builder.fsub(x, back), half)
            h = builder.add(h, builder.zext(tie, _vec(_i16)))
        builder.store(h, builder.bitcast(pd, _vec(_i16).as_pointer()), align=1)
        vpo, vno, vpt, vnt = (_splat(builder, a) for a in args[4:8])
        ovf = builder.and_(inx, builder.or_(builder.fcmp_ordered(">=", x, vpo),
                                            builder.fcmp_ordered("<=", x, vno)))
        unf = builder.and_(inx, builder.and_(builder.fcmp_ordered("<", x, vpt),
                                             builder.fcmp_ordered(">", x, vnt)))
        nan = builder.fcmp_unordered("uno", x, x)
        r = _mask_bits(builder, inx)
        for m, sh in ((unf, 16), (ovf, 32), (nan, 48)):
            r = builder.or_(r, builder.shl(_mask_bits(builder, m), ir.Constant(_i64, sh)))
        return r

    return types.int64(src, out, i, mode, po, no, pt, nt), codegen
