"""Implementations with known faults, for the diagnosis tests of softfloat.verification.

`model` is an fp16 add/mul written here from scratch, not from the library: the
exact float64 sum or product (exact for fp16 operands), rounded to fp16 by
NumPy's float64 -> float16 conversion (round to nearest even) and stepped with
``np.nextafter`` for the directed modes; NaN results by SoftFloat's 8086-SSE rule
(the first NaN operand, quieted; 0x7E00 for an invalid operation). Its faults
are switches: another rounding mode (per sign of the result too), flushing
subnormal results (FTZ) or operands (DAZ), the canonical NaN, saturation.
It reports no flags.

The flag faults start from the library's results and flags and change the
flags only (the diagnosis then has to keep the library's setting and name the
flag): missing inexact, underflow raised on exact subnormal results, tininess
before rounding; and occasional random wrong values.
"""
from __future__ import annotations

import numpy as np

F16_MAX = 65504.0
QUIET = np.uint16(0x0200)


def _values(x, daz):
    v = x.view(np.float16).astype(np.float64)
    if daz:
        tiny = (v != 0) & (np.abs(v) < 2.0 ** -14)
        v = np.where(tiny, np.copysign(0.0, v), v)
    return v


def _round(x, mode):
    """float64 (exact) -> fp16 encodings in ``mode``."""
    with np.errstate(all="ignore"):
        r = x.astype(np.float16)
        rv = r.astype(np.float64)
        fin = np.isfinite(x)
        if mode == "toward_zero":
            step = fin & (np.abs(rv) > np.abs(x))
            r = np.where(step, np.nextafter(r, np.float16(0)), r)
        elif mode == "upward":
            r = np.where(fin & (rv < x), np.nextafter(r, np.float16(np.inf)), r)
        elif mode == "downward":
            r = np.where(fin & (rv > x), np.nextafter(r, np.float16(-np.inf)), r)
        elif mode != "nearest_even":
            raise ValueError(mode)
    return r.astype(np.float16).view(np.uint16)


def model(op, mode="nearest_even", *, negative_mode=None, ftz=False, daz=False,
          canonical_nan=False, saturate=False, nan_order="first"):
    """An fp16 ``op`` ('add' or 'mul') with the given faults (see the module doc);
    ``negative_mode``: another mode for negative results; ``nan_order="last"``:
    of two NaN operands, b's is propagated."""
    def impl(a, b):
        va, vb = _values(a, daz), _values(b, daz)
        with np.errstate(all="ignore"):
            x = va + vb if op == "add" else va * vb
        r = _round(x, mode)
        if negative_mode is not None:
            r = np.where(x < 0, _round(x, negative_mode), r)
        if op == "add" and mode == "downward":
            # an exact zero sum of operands of opposite signs is -0 in downward
            zero = (x == 0) & ~((va == 0) & (vb == 0) & (np.signbit(va) == np.signbit(vb)))
            r = np.where(zero, np.uint16(0x8000), r)
        if ftz:
            mag = r & np.uint16(0x7FFF)
            r = np.where((mag != 0) & (mag < 0x0400), r & np.uint16(0x8000), r)
        if saturate:
            inf = (r & np.uint16(0x7FFF)) == 0x7C00
            r = np.where(inf & np.isfinite(va) & np.isfinite(vb),
                         (r & np.uint16(0x8000)) | np.uint16(0x7BFF), r)
        an = (a & np.uint16(0x7FFF)) > 0x7C00
        bn = (b & np.uint16(0x7FFF)) > 0x7C00
        rn = np.isnan(x)
        if nan_order == "last":
            nan = np.where(bn, b | QUIET, np.where(an, a | QUIET, np.uint16(0x7E00)))
        else:
            nan = np.where(an, a | QUIET, np.where(bn, b | QUIET, np.uint16(0x7E00)))
        if canonical_nan:
            nan = np.full(a.shape, 0x7E00, np.uint16)
        return np.where(rn | an | bn, nan, r).astype(np.uint16)
    return impl


# ---------------------------------------------------------------------------
# flag faults on the library's results
def library(op, fmt="fp16", mode="nearest_even", **policies):
    import softfloat as sf

    def impl(*ops):
        return getattr(sf, op)(*ops, fmt, mode, return_flags=True, **policies)
    return impl


def missing_inexact(op, fmt="fp16", mode="nearest_even"):
    base = library(op, fmt, mode)

    def impl(*ops):
        r, f = base(*ops)
        return r, f & np.uint8(0xFE)
    return impl


def underflow_on_exact_tiny(op, fmt="fp16"):
    """Underflow raised on every subnormal result, exact ones too."""
    import softfloat as sf
    base = library(op, fmt)
    f_ = sf.get_format(fmt)

    def impl(*ops):
        r, f = base(*ops)
        mag = r.astype(np.int64) & (f_.sign_mask - 1)
        tiny = (mag != 0) & (mag < (1 << f_.mbits))
        return r, np.where(tiny, f | np.uint8(2), f).astype(np.uint8)
    return impl


def random_wrong(op, fmt="fp16", every=4000, seed=5):
    """The library's results, with the last bit flipped in about one case in ``every``."""
    base = library(op, fmt)

    def impl(*ops):
        r, f = base(*ops)
        rng = np.random.default_rng([seed, int(ops[0][0]), r.size])
        hit = rng.random(r.size) < 1.0 / every
        return np.where(hit, r ^ r.dtype.type(1 << 3), r).astype(r.dtype), f
    return impl


# ---------------------------------------------------------------------------
# double rounding through a wider format
def bf16_mul_via_fp32_truncated(a, b):
    """bf16 multiply computed in float32 by NumPy (round to nearest even; the
    product of two bf16 values is exact in float32 unless it overflows or is
    tiny) and then truncated to bf16 (the top 16 bits: toward zero). A float32
    overflow gives infinity, which truncation keeps, where a bf16 multiply
    rounding toward zero gives the largest finite value."""
    x = (a.astype(np.uint32) << np.uint32(16)).view(np.float32)
    y = (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
    with np.errstate(all="ignore"):
        p = (x * y).astype(np.float32)
    return (p.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def numpy_float16(op):
    """NumPy's own float16 ``op`` (through float32 on x86: NaN + NaN gives the
    second operand's NaN, quieted; an invalid operation 0xFE00)."""
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]

    def impl(a, b):
        with np.errstate(all="ignore"):
            return fn(a.view(np.float16), b.view(np.float16)).view(np.uint16)
    return impl


# a module-level faulty implementation, for "module:function" (the command line,
# worker processes)
truncating_mul = model("mul", "toward_zero")
