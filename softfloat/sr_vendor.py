"""Vendor stochastic-rounding conversions, modelled as their instructions define
them: each function takes the instruction's operands (packed where the
instruction packs) and returns what the instruction writes.

Every one rounds by add-and-truncate: random bits added below the kept bits,
the sum truncated, so a carry out of the discarded field rounds the magnitude
up. In this library's terms that is ``to_bits(..., "stochastic_add",
random_bits=R, random_nbits=N)`` (softfloat.stochastic, docs/stochastic.md):
R's top bit sits just below the last bit a normal result in the value's binade
keeps, i.e. R is added to the low bits of a normal source. A subnormal source
whose format shares the target's exponent range (f32 -> bf16, fp16 -> BF8)
discards exactly N bits, where R lands: stochastic_a there. Where a
document gives fewer random bits than the normal result discards, where the
bits go is a choice the documents leave open; ``align`` names it ("top": R
just below the kept bits, stochastic_add with N = the random bits; "bottom": R
added to the source's lowest bits, stochastic_add with N = the discarded width
and R < 2**bits) and docs/stochastic.md lists these points as to confirm on
silicon (`softfloat.verification.stochastic` tells them apart from a device's results).

Sources (public documents; section names as they print them):

* NVIDIA: PTX ISA (8.7 and later), "Data Movement and Conversion Instructions:
  cvt": the ``.rs`` rounding modifier, the ``rbits`` operand ("two 16-bit values
  are provided from rbits ..."), the packing in its Semantics block, and
  ``.satfinite`` (sm_100a, sm_103a).
* AMD: "AMD Instinct MI300 (CDNA3) Instruction Set Architecture", VOP3
  V_CVT_SR_FP8_F32 / V_CVT_SR_BF8_F32 (SRC1 the stochastic-rounding seed, OPSEL
  the destination byte); "AMD Instinct CDNA4 Instruction Set Architecture",
  V_CVT_SCALEF32_SR_FP8_F32 / _BF8_F32 and V_CVT_SCALEF32_SR_PK_FP4_F32 (an f32
  scale that divides the source, the seed operand).
* Intel: "Intel AVX10.2 Architecture Specification", VCVTBIASPH2BF8[S] and
  VCVTBIASPH2HF8[S] (a bias byte per element added to the FP16 bits, then
  truncation; the S forms saturate).
"""
from __future__ import annotations

import numpy as np

from .conversions import convert, to_bits
from .formats import get_format

__all__ = ["ptx_cvt_rs_f16x2_f32", "ptx_cvt_rs_bf16x2_f32", "ptx_cvt_rs_f8x4_f32",
           "ptx_cvt_rs_e2m1x4_f32", "amd_v_cvt_sr_fp8_f32", "amd_v_cvt_scalef32_sr_fp8_f32",
           "amd_v_cvt_scalef32_sr_pk_fp4_f32", "intel_vcvtbiasph2bf8", "intel_vcvtbiasph2hf8"]


def _f32(x, name):
    a = np.asarray(x)
    if a.dtype != np.float32:
        raise TypeError(f"{name}: expected float32 values (an .f32 register), got {a.dtype}")
    return a


def _u(x, name, dtype):
    a = np.asarray(x)
    if a.dtype.kind != "u" or a.dtype.itemsize > np.dtype(dtype).itemsize:
        raise TypeError(f"{name}: expected unsigned integers of at most {np.dtype(dtype)}, got "
                        f"{a.dtype}")
    return a.astype(dtype)


def _sr(x, fmt, R, N, sat, align, dbits):
    """One lane: stochastic_add with N random bits, or with the discarded width
    ``dbits`` and R at the bottom (align="bottom")."""
    if align == "bottom":
        N = max(N, dbits)
    elif align != "top":
        raise ValueError(f"align must be 'top' or 'bottom', got {align!r}")
    return to_bits(x, fmt, "stochastic_add", random_bits=R, random_nbits=N,
                   overflow="saturate" if sat else None)


def _max_code(fmt):
    return get_format(fmt).max_bits


def _satfinite_specials(x, out, fmt, nan_code):
    """.satfinite: +-inf inputs give +-MAX_NORM; NaN inputs give nan_code."""
    f = get_format(fmt)
    mx = _max_code(f)
    out = np.where(np.isinf(x), np.where(x < 0, mx | f.sign_mask, mx), out)
    return np.where(np.isnan(x), nan_code, out).astype(f.dtype)


def _relu(x, out, fmt, nan_code):
    f = get_format(fmt)
    neg = (out & f.sign_mask) != 0
    return np.where(np.isnan(x), nan_code, np.where(neg, 0, out)).astype(f.dtype)


# ---------------------------------------------------------------------------
# NVIDIA PTX cvt.rs (PTX ISA, cvt: rbits, .rs, .satfinite; sm_100a/sm_103a)
# ---------------------------------------------------------------------------
def _ptx_pair(a, b, rbits, fmt, nbits, satfinite, relu):
    a, b = _f32(a, "a"), _f32(b, "b")
    r = _u(rbits, "rbits", np.uint32)
    a, b, r = np.broadcast_arrays(a, b, r)
    mask = (1 << nbits) - 1
    nan = 0x7FFF                     # the canonical NaN of .f16 and .bf16 results
    outs = []
    for x, rr in ((a, (r >> 16) & mask), (b, r & mask)):
        o = _sr(x, fmt, rr.astype(np.uint32), nbits, satfinite, "top", 0)
        if fmt == "bf16":
            # an f32 subnormal keeps bf16's exponent range: the 16 random bits are
            # added to exactly the 16 bits it discards (stochastic_a, N = 16)
            sub = np.abs(x) < np.float32(2.0**-126)
            if sub.any():
                o = np.where(sub, to_bits(x, fmt, "stochastic_a", random_bits=rr.astype(np.uint32),
                                          random_nbits=16), o)
        o = np.where(np.isnan(x), nan, o).astype(np.uint16)
        if satfinite:
            o = _satfinite_specials(x, o, fmt, nan)
        if relu:
            o = _relu(x, o, fmt, nan)
        outs.append(o.astype(np.uint32))
    return (outs[0] << 16) | outs[1]


def ptx_cvt_rs_f16x2_f32(a, b, rbits, *, satfinite=False, relu=False):
    """``cvt.rs{.relu}{.satfinite}.f16x2.f32 d, a, b, rbits``: d[31:16] = a,
    d[15:0] = b as f16; a rounds with rbits[28:16] (the 13 LSBs of the upper
    half), b with rbits[12:0] (PTX ISA, cvt: rbits). 13 bits are exactly what an
    f32 -> f16 normal result discards. Returns uint32."""
    return _ptx_pair(a, b, rbits, "fp16", 13, satfinite, relu)


def ptx_cvt_rs_bf16x2_f32(a, b, rbits, *, satfinite=False, relu=False):
    """``cvt.rs{.relu}{.satfinite}.bf16x2.f32 d, a, b, rbits``: a rounds with
    rbits[31:16], b with rbits[15:0] (PTX ISA, cvt: rbits). Returns uint32."""
    return _ptx_pair(a, b, rbits, "bf16", 16, satfinite, relu)


_PTX_X4 = {"e4m3": ("fp8_e4m3", 0x7F), "e5m2": ("fp8_e5m2", 0x7F),
           "e2m3": ("fp6_e2m3", None), "e3m2": ("fp6_e3m2", None)}


def ptx_cvt_rs_f8x4_f32(a, b, e, f, rbits, dtype, *, relu=False, align="top"):
    """``cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4}.f32 d, {a, b, e, f},
    rbits``: d[31:24] = a, d[23:16] = b, d[15:8] = e, d[7:0] = f (the 6-bit types
    with 2 zero MSBs). a and b round with rbits[31:16], e and f with rbits[15:0]
    (PTX ISA, cvt: rbits: the same 16 bits serve two results). .satfinite is
    mandatory: overflow and +-inf give +-MAX_NORM; NaN gives the NaN (fp8) or
    +MAX_NORM (fp6, which has no NaN). A normal result discards 20 or 21 f32 bits
    and rbits gives 16: ``align`` (module doc). Returns uint32."""
    if dtype not in _PTX_X4:
        raise ValueError(f"dtype must be one of {list(_PTX_X4)}, got {dtype!r}")
    fmt, nan = _PTX_X4[dtype]
    fm = get_format(fmt)
    if nan is None:
        nan = _max_code(fm)
    xs = [_f32(v, n) for v, n in ((a, "a"), (b, "b"), (e, "e"), (f, "f"))]
    r = _u(rbits, "rbits", np.uint32)
    *xs, r = np.broadcast_arrays(*xs, r)
    hi, lo = (r >> 16) & 0xFFFF, r & 0xFFFF
    d = np.zeros(r.shape, np.uint32)
    for k, (x, rr) in enumerate(zip(xs, (hi, hi, lo, lo))):
        o = _sr(x, fmt, rr.astype(np.uint32), 16, True, align, 23 - fm.params[1])
        o = _satfinite_specials(x, o, fmt, nan)
        if relu:
            o = _relu(x, o, fmt, nan)
        d |= o.astype(np.uint32) << (24 - 8 * k)
    return d


def ptx_cvt_rs_e2m1x4_f32(a, b, e, f, rbits, *, relu=False, align="top"):
    """``cvt.rs{.relu}.satfinite.e2m1x4.f32 d, {a, b, e, f}, rbits``: d[15:12] = a,
    d[11:8] = b, d[7:4] = e, d[3:0] = f; "upper 8-bits from both 16-bits half of
    rbits are used for operands a, b" and the lower bytes for e, f: here a takes
    rbits[31:24], b rbits[15:8], e rbits[23:16], f rbits[7:0] (the order within
    each pair: to confirm). NaN gives +MAX_NORM (e2m1 has no NaN). Returns uint16."""
    xs = [_f32(v, n) for v, n in ((a, "a"), (b, "b"), (e, "e"), (f, "f"))]
    r = _u(rbits, "rbits", np.uint32)
    *xs, r = np.broadcast_arrays(*xs, r)
    rs = ((r >> 24) & 0xFF, (r >> 8) & 0xFF, (r >> 16) & 0xFF, r & 0xFF)
    nan = _max_code("fp4_e2m1")
    d = np.zeros(r.shape, np.uint16)
    for k, (x, rr) in enumerate(zip(xs, rs)):
        o = _sr(x, "fp4_e2m1", rr.astype(np.uint32), 8, True, align, 22)
        o = _satfinite_specials(x, o, "fp4_e2m1", nan)
        if relu:
            o = _relu(x, o, "fp4_e2m1", nan)
        d |= (o.astype(np.uint16) << (12 - 4 * k)).astype(np.uint16)
    return d


# ---------------------------------------------------------------------------
# AMD CDNA3 / CDNA4
# ---------------------------------------------------------------------------
_AMD3 = {"fp8": "fp8_e4m3fnuz", "bf8": "fp8_e5m2fnuz"}
_AMD4 = {"fp8": "fp8_e4m3", "bf8": "fp8_e5m2"}


def _byte_insert(old, code, byte_sel):
    if not 0 <= byte_sel <= 3:
        raise ValueError(f"byte_sel (OPSEL) must be 0..3, got {byte_sel}")
    old = _u(old, "old", np.uint32).astype(np.uint32)
    sh = np.uint32(8 * byte_sel)
    return (old & ~(np.uint32(0xFF) << sh)) | (code.astype(np.uint32) << sh)


def amd_v_cvt_sr_fp8_f32(src0, seed, *, dtype="fp8", old=np.uint32(0), byte_sel=0, clamp=True):
    """CDNA3 ``V_CVT_SR_FP8_F32`` / ``V_CVT_SR_BF8_F32 vdst, src0, src1``: src0
    (f32) rounded into FP8 (E4M3 FNUZ) or BF8 (E5M2 FNUZ, MI300's formats) with
    the seed src1 as the random bits, written into byte ``byte_sel`` of ``old``
    (OPSEL). The random integer is the seed's low bits, as many as a normal
    result discards (20 for FP8, 21 for BF8), added there: stochastic_add with N
    = that width (to confirm on silicon). ``clamp``: overflow saturates (the
    clamp bit); off, it gives the NaN. Returns the uint32 register."""
    if dtype not in _AMD3:
        raise ValueError(f"dtype must be 'fp8' or 'bf8', got {dtype!r}")
    fmt = get_format(_AMD3[dtype])
    x = _f32(src0, "src0")
    s = _u(seed, "seed", np.uint32)
    x, s = np.broadcast_arrays(x, s)
    d = 23 - fmt.params[1]
    code = to_bits(x, fmt, "stochastic_add", random_bits=(s & ((1 << d) - 1)).astype(np.uint32),
                   random_nbits=d, overflow="saturate" if clamp else None)
    return _byte_insert(old, code, byte_sel)


def _scaled(src, scale):
    """src / scale for the CDNA4 scaled conversions; the scale must be a power of
    two (its exponent: exact), the only case modelled here."""
    sc = _f32(scale, "scale").astype(np.float64)
    m, _ = np.frexp(sc)
    if np.any((m != 0.5) | ~np.isfinite(sc)):
        raise ValueError("scale: only finite powers of two are modelled (the division is then "
                         "exact); see docs/stochastic.md")
    return src.astype(np.float64) / sc


def amd_v_cvt_scalef32_sr_fp8_f32(src0, seed, scale, *, dtype="fp8", old=np.uint32(0),
                                  byte_sel=0):
    """CDNA4 ``V_CVT_SCALEF32_SR_FP8_F32`` / ``_BF8_F32``: src0 / scale rounded
    into OCP E4M3 / E5M2 by add-and-truncate with the seed's low bits (as
    `amd_v_cvt_sr_fp8_f32`), saturating, into byte ``byte_sel`` of ``old``."""
    if dtype not in _AMD4:
        raise ValueError(f"dtype must be 'fp8' or 'bf8', got {dtype!r}")
    fmt = get_format(_AMD4[dtype])
    x = _f32(src0, "src0")
    s = _u(seed, "seed", np.uint32)
    x, s, sc = np.broadcast_arrays(x, s, np.asarray(scale))
    v = _scaled(x, sc.astype(np.float32))
    d = 23 - fmt.params[1]
    code = to_bits(v, fmt, "stochastic_add", random_bits=(s & ((1 << d) - 1)).astype(np.uint32),
                   random_nbits=d, overflow="saturate")
    return _byte_insert(old, code, byte_sel)


def amd_v_cvt_scalef32_sr_pk_fp4_f32(src0a, src0b, seed, scale, *, old=np.uint32(0),
                                     byte_sel=0):
    """CDNA4 ``V_CVT_SCALEF32_SR_PK_FP4_F32``: two f32 (src0 pair) / scale into
    E2M1, packed in one byte (a in the low nibble, b in the high nibble) at byte
    ``byte_sel`` of ``old``; the seed's low 22 bits are the random bits of both
    (to confirm)."""
    xa, xb = _f32(src0a, "src0a"), _f32(src0b, "src0b")
    s = _u(seed, "seed", np.uint32)
    xa, xb, s, sc = np.broadcast_arrays(xa, xb, s, np.asarray(scale))
    r = (s & ((1 << 22) - 1)).astype(np.uint32)
    codes = [to_bits(_scaled(x, sc.astype(np.float32)), "fp4_e2m1", "stochastic_add",
                     random_bits=r, random_nbits=22) for x in (xa, xb)]
    return _byte_insert(old, codes[0] | (codes[1] << 4), byte_sel)


# ---------------------------------------------------------------------------
# Intel AVX10.2
# ---------------------------------------------------------------------------
def _intel(bias_src, src, fmt, nbits, shift, saturate):
    b = _u(bias_src, "bias", np.uint16)
    h = _u(src, "src", np.uint16)
    b, h = np.broadcast_arrays(b, h)
    r = ((b & 0xFF) >> shift).astype(np.uint16)
    ov = "saturate" if saturate else None
    out = convert(h, "fp16", fmt, "stochastic_add", random_bits=r, random_nbits=nbits, overflow=ov)
    if fmt == "fp8_e5m2":
        # an FP16 subnormal is a BF8 subnormal (the same exponent range): the bias
        # lands on exactly the 8 bits it discards (stochastic_a, N = 8)
        sub = (h & 0x7C00) == 0
        out = np.where(sub, convert(h, "fp16", fmt, "stochastic_a", random_bits=r,
                                    random_nbits=nbits, overflow=ov), out)
    return out.astype(np.uint8)


def intel_vcvtbiasph2bf8(bias_src, src, *, saturate=False):
    """``VCVTBIASPH2BF8[S] xmm1, xmm2, xmm3``: each FP16 element of ``src``
    (uint16 bits) plus the bias byte of the matching 16-bit element of
    ``bias_src`` (its low byte), truncated to BF8 (E5M2: the FP16 bits' top byte).
    The S form saturates overflow to the largest finite BF8. Returns uint8."""
    return _intel(bias_src, src, "fp8_e5m2", 8, 0, saturate)


def intel_vcvtbiasph2hf8(bias_src, src, *, saturate=False):
    """``VCVTBIASPH2HF8[S]``: as `intel_vcvtbiasph2bf8` into HF8 (E4M3), where a
    normal result discards 7 FP16 bits: the bias byte shifted right by one is the
    7-bit random integer (to confirm). Without S, overflow gives the NaN."""
    return _intel(bias_src, src, "fp8_e4m3", 7, 1, saturate)
