"""Block-scaled formats: OCP Microscaling (MXFP8, MXFP6, MXFP4, MXINT8) and NVFP4:
block formats, quantize / dequantize, the NVFP4 per-tensor scale, packed fp4.
Per-tensor fp8 scaling (Transformer Engine's current and delayed scaling) lives in
softfloat.fp8_scaling; its public names are offered here too
(``softfloat.mx.quantize_per_tensor`` ..., the path README, docs, nn and the
examples use).

A block of k elements V_i shares one scale X; each element is stored as
P_i = round(V_i / X) in the element format, and decodes as X * P_i.

==============  ==========  =====  =========================  ==========
name            element     block  scale                      emax_elem
==============  ==========  =====  =========================  ==========
mxfp8_e4m3      fp8_e4m3    32     E8M0 (uint8 codes)         8
mxfp8_e5m2      fp8_e5m2    32     E8M0                       15
mxfp6_e2m3      fp6_e2m3    32     E8M0                       2
mxfp6_e3m2      fp6_e3m2    32     E8M0                       4
mxfp4           fp4_e2m1    32     E8M0                       2
mxint8          int8 * 2^-6 32     E8M0                       0
nvfp4           fp4_e2m1    16     fp8_e4m3 codes, times an   2
                                   fp32 per-tensor scale
==============  ==========  =====  =========================  ==========

Scale rules (MX; amax = max |V_i| over the block; E8M0 holds X = 2**e). The
``scale_rule`` keyword defaults to None: ``"floor"`` for the MX formats and
``"nearest"`` for NVFP4 (whose rules are ``"nearest"`` and ``"up"``, below); an MX
rule with NVFP4, or an NVFP4 rule with an MX format, raises ValueError.

``"floor"`` (OCP MX v1.0, section 6.3; the default)
    e = floor(log2(amax)) - emax_elem. Elements above the element format's
    largest value (amax may need up to 2**(emax_elem+1)) saturate to it.
``"ceil"`` (torchao CEIL)
    e = ceil(log2(amax)) - emax_elem.
``"even"`` (torchao EVEN)
    e = floor(log2(rna(amax))) - emax_elem, rna rounding amax to the element
    format's precision (mbits + 1 significant bits, 7 for MXINT8) ties away from
    zero: the exponent amax has once rounded like an element, so an amax that
    would round up into the next binade takes the larger scale.
``"rceil"`` (cuBLAS / Transformer Engine, torchao RCEIL)
    e = ceil(log2(amax / max_elem)), amax / max_elem computed with one rounding
    to nearest in the input's precision (float32 for float32 inputs, as the
    hardware does; float64 for float64), the ceil taken exactly: no element
    saturates.

Then e is clamped below to -127 (E8M0 has no smaller scale; an all-zero block gets
e = -127, as torchao and gfloat); e > 127 gives the NaN scale (0xFF), as torchao and
microxcaling. A block holding a NaN or an infinity gets the NaN scale (0xFF; the
OCP spec makes every element of a block with a NaN scale NaN; microxcaling does the
same); its element codes are 0. MXINT8 elements are two's complement integers
P_i = round(V_i / X * 64) clamped to [-127, 127] (symmetric, as microxcaling).

NVFP4 (NVIDIA): per 16 elements an e4m3 scale s = round(amax / (6 * ts)) with one
rounding, ``"nearest"`` (to nearest even, the default, as torchao/TE) or ``"up"``
(upward: no element saturates), subnormal e4m3 scales included; s saturates at
448, and a block whose s would round to 0 gets the smallest subnormal 2**-9 (torchao
instead clamps s below at 2**-6, e4m3's smallest normal: docs/mx.md); a NaN or an
infinity in the block gives the e4m3 NaN (0x7F) scale. ts is the fp32
per-tensor scale: keyword ``tensor_scale`` of both `quantize` and `dequantize`
(default 1.0, i.e. single-level scaling, as torchao with ``per_tensor_scale=None``);
`nvfp4_tensor_scale(x)` gives the usual choice amax(x) / (448 * 6) rounded to
float32. Elements P_i = round(V_i / (ts * s)), one rounding of the exact quotient.

Element rounding: every mode of softfloat (``rounding``), stochastic with ``seed``
(the random stream is indexed by the element's position in the array with the
blocked axes moved last: reproducible, independent of threads). Elements always
saturate at the element format's largest value (OCP: conversions to the element
types clamp to max normal); fp8 e5m2 elements never become infinite.

Layout: ``codes`` has the input's shape (uint8 codes of the element format; int8 for
MXINT8); ``scales`` has the input's shape with each blocked axis of length n
replaced by ceil(n / block): the last block along an axis may be partial (it holds
the remaining n % block elements; its scale is computed from them alone).
`pack_fp4` / `unpack_fp4` store two fp4 codes per byte: element 2j in the low
nibble, element 2j+1 in the high nibble (torchao's ``pack_uint4`` order).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from . import _validate as V
from ._kernels import mx as K
from ._kernels import mx_elem as KE
from ._kernels import mx_fast as KF
from ._kernels import mx_nvfp4 as KN
from ._kernels import mx_scale as KS
from ._kernels.core import K_IEEE
from ._parallel import run_chunks, run_chunks_weighted
from .context import getcontext, kernel_policy, random_key, resolve
from .conversions import from_bits
from .formats import E8M0, FP8_E4M3, Format, get_format
from .mx_blocks import blocks_and_axes, from_moved, scale_shape, tensor_scale_parts, to_3d
# re-exported on purpose: softfloat.mx.<name> is the documented public path
from .fp8_scaling import (DelayedScaling, amax, dequantize_per_tensor, fp8_scale,
                          quantize_per_tensor, quantize_per_tensor_values)
from .rounding import Rounding

__all__ = ["BlockFormat", "BLOCK_FORMATS", "block_format", "quantize", "dequantize",
           "quantize_values", "nvfp4_tensor_scale", "pack_fp4", "unpack_fp4", "SCALE_RULES",
           "fp8_scale", "quantize_per_tensor", "dequantize_per_tensor", "DelayedScaling",
           "amax", "quantize_per_tensor_values", "nvfp4_values_nearest"]

SCALE_RULES = ("floor", "ceil", "even", "rceil")
NVFP4_SCALE_RULES = ("nearest", "up")
_RULES = {"floor": KS.RULE_FLOOR, "ceil": KS.RULE_CEIL, "even": KS.RULE_EVEN,
          "rceil": KS.RULE_RCEIL, "nearest": KS.RULE_NEAREST, "up": KS.RULE_UP}


@dataclass(frozen=True)
class BlockFormat:
    """A block-scaled format: element format (None for MXINT8's int8), block size,
    scale format, and the element's largest value and its exponent."""
    name: str
    elem: Format | None
    block: int
    scale: Format
    max_elem: float
    emax_elem: int
    elem_precision: int

    def __post_init__(self):
        # Everything the kernels read is checked here and compared by value (a
        # pickled or rebuilt BlockFormat is the same format): the scale is E8M0
        # (the MX formats) or fp8 e4m3 (NVFP4) by its parameters, the element's
        # constants are those of the element format.
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"BlockFormat name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.scale, Format) or self.scale.params not in (E8M0.params,
                                                                           FP8_E4M3.params):
            raise ValueError(f"BlockFormat scale must be E8M0 (MX) or fp8 e4m3 (NVFP4), "
                             f"got {self.scale!r}")
        if (isinstance(self.block, (bool, np.bool_))
                or not isinstance(self.block, (int, np.integer)) or self.block < 1):
            raise ValueError(f"BlockFormat block must be a positive int, got {self.block!r}")
        object.__setattr__(self, "block", int(self.block))
        if self.elem is None:
            want = (127 / 64, 0, 7)                  # MXINT8
        elif isinstance(self.elem, Format):
            if self.elem.params != get_format(self.elem).params or self.elem.nbits > 8:
                raise ValueError(f"BlockFormat elem must be a format of at most 8 bits, "
                                 f"got {self.elem!r}")
            want = (self.elem.max, self.elem.emax, self.elem.precision)
        else:
            raise TypeError(f"BlockFormat elem must be a softfloat.Format or None (int8), "
                            f"got {type(self.elem).__name__}")
        if (self.max_elem, self.emax_elem, self.elem_precision) != want:
            raise ValueError(f"BlockFormat {self.name}: max_elem, emax_elem, elem_precision "
                             f"must be {want} for its element, got "
                             f"{(self.max_elem, self.emax_elem, self.elem_precision)}")

    @property
    def is_int(self) -> bool:
        return self.elem is None

    @property
    def is_nvfp4(self) -> bool:
        """True for an fp8 e4m3 scale (NVFP4's two-level scaling), by value."""
        return self.scale.params == FP8_E4M3.params

    @property
    def key(self) -> tuple:
        """What the kernels read, by value: (element params or None, block, scale params)."""
        return (None if self.elem is None else self.elem.params, self.block,
                self.scale.params)


def _fp(name, elem, block, scale):
    f = get_format(elem)
    return BlockFormat(name, f, block, scale, f.max, f.emax, f.precision)


BLOCK_FORMATS = {
    "mxfp8_e4m3": _fp("mxfp8_e4m3", "fp8_e4m3", 32, E8M0),
    "mxfp8_e5m2": _fp("mxfp8_e5m2", "fp8_e5m2", 32, E8M0),
    "mxfp6_e2m3": _fp("mxfp6_e2m3", "fp6_e2m3", 32, E8M0),
    "mxfp6_e3m2": _fp("mxfp6_e3m2", "fp6_e3m2", 32, E8M0),
    "mxfp4": _fp("mxfp4", "fp4_e2m1", 32, E8M0),
    # int8 elements with an implicit 2**-6: largest 127/64 = 1.984375, emax 0
    "mxint8": BlockFormat("mxint8", None, 32, E8M0, 127 / 64, 0, 7),
    "nvfp4": _fp("nvfp4", "fp4_e2m1", 16, FP8_E4M3),
}
_ALIASES = {"mxfp8": "mxfp8_e4m3", "mxfp6": "mxfp6_e2m3", "mxfp4_e2m1": "mxfp4"}


def block_format(fmt) -> BlockFormat:
    """The `BlockFormat` named ``fmt`` (one of BLOCK_FORMATS) or ``fmt`` itself."""
    if isinstance(fmt, BlockFormat):
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"fmt: expected a block format name, got {type(fmt).__name__}")
    key = fmt.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in BLOCK_FORMATS:
        raise ValueError(f"unknown block format {fmt!r}; expected one of {sorted(BLOCK_FORMATS)}")
    return BLOCK_FORMATS[key]


# ---------------------------------------------------------------------------
# quantize / dequantize
# ---------------------------------------------------------------------------
def _prepare(x, fmt, axis, block, scale_rule, rounding, seed, tensor_scale):
    """Checked arguments of `quantize` / `quantize_values` as a namespace."""
    bf = block_format(fmt)
    a = V.as_values(x)
    if a.ndim == 0:
        raise ValueError("x: expected an array of at least one dimension")
    if a.dtype == np.float16:
        a = a.astype(np.float32)          # exact: float16 values are float32 values
    (br, bc), axes = blocks_and_axes(a.ndim, block, axis, bf)
    nv = bf.is_nvfp4
    if scale_rule is None:
        scale_rule = "nearest" if nv else "floor"
    allowed = NVFP4_SCALE_RULES if nv else SCALE_RULES
    if scale_rule not in allowed:
        hint = (" (the MX rules floor/ceil/even/rceil choose a power-of-two E8M0 scale; "
                "NVFP4's e4m3 scale is amax / (6 * tensor_scale) rounded to nearest or up)"
                if nv else "")
        raise ValueError(f"scale_rule: expected one of {allowed} for {bf.name}, got "
                         f"{scale_rule!r}{hint}")
    if tensor_scale is not None and not nv:
        raise ValueError(f"tensor_scale is for nvfp4 only (got it with {bf.name})")
    ts_exp, ts_sig, _ = tensor_scale_parts(tensor_scale)
    res = resolve(rounding, overflow="saturate", seed=seed)
    sr = res.rounding == Rounding.STOCHASTIC
    key = random_key(res.seed) if sr else 0
    maxe_exp, maxe_sig = _static(bf)[0]
    s_up = int(scale_rule == "up")
    # the fast kernels: float32 input, 1-D blocks, no flush to zero, exact NVFP4
    # quotients unless stochastic (softfloat._kernels.mx_elem, "Fast paths")
    fast = (a.dtype == np.float32 and axes[0] is None and res.fast_paths and not res.ftz
            and not (nv and sr) and a.size > 0)
    sc = (1 if nv else 0, _RULES[scale_rule], bf.emax_elem, bf.elem_precision, maxe_exp,
          maxe_sig, ts_exp, ts_sig, s_up)
    return SimpleNamespace(bf=bf, a=a, br=br, bc=bc, axes=axes, nv=nv, s_up=s_up, res=res,
                           sr=sr, key=key, sc=sc, fast=fast)


def _general(p):
    """The general kernel (`_kernels.mx.quantize_chunk`): every case."""
    bf, a, axes, br, bc, res = p.bf, p.a, p.axes, p.br, p.bc, p.res
    if bf.is_int:
        fmt = (8, 30, -29, K_IEEE)           # the integer pseudo format (see the kernel)
        pol = kernel_policy(res, get_format("fp32"))
        elem = K.ELEM_INT8
    else:
        fmt = bf.elem.params
        pol = kernel_policy(res, bf.elem)
        elem = K.ELEM_FLOAT
    spol = kernel_policy(resolve("upward" if p.s_up else "nearest_even", overflow="saturate"),
                         FP8_E4M3)
    a3, moved_shape = to_3d(a, axes)
    B, R, C = a3.shape
    nblocks = B * (-(-R // br)) * (-(-C // bc))
    hE, hM, hb, _ = V.HOST_FORMATS[a.dtype].params
    xb = V.int_view(a3).reshape(-1)
    codes = np.empty(a3.size, np.uint8)
    scales = np.empty(nblocks, np.uint8)
    if a3.size:
        run_chunks(K.quantize_chunk, nblocks, xb, B, R, C, br, bc, (hE, hM, hb),
                   a.dtype == np.float32, codes, scales, elem, fmt, pol, p.key, p.sc, spol)
    codes = from_moved(codes, moved_shape, axes)
    scales = from_moved(scales, scale_shape(moved_shape, axes, br, bc), axes)
    return np.ascontiguousarray(codes), np.ascontiguousarray(scales)


def elem_params(bf):
    """The element format as the fast kernels take it (`_kernels.mx_elem.element`): (M,
    emin, largest magnitude encoding, sign bit position, is MXINT8, largest value);
    MXINT8 is the "format" of multiples of 2**-6 below 2: M = 6, emin = 0, largest
    magnitude 127, sign bit 8."""
    if bf.is_int:
        return 6, 0, 127, 8, True, float(bf.max_elem)
    E, M, bias, kind = bf.elem.params
    return M, 1 - bias, bf.elem.max_bits, E + M, False, float(bf.max_elem)


_STATIC: dict = {}
# the modes of NVFP4's threshold kernel (the numbers of `_kernels.mx_nvfp4.nv_fast_chunk`)
_NV_THR = {int(Rounding.NEAREST_EVEN): 0, int(Rounding.NEAREST_AWAY): 1,
           int(Rounding.TOWARD_ZERO): 2}
# the output a fast kernel call does not write (never read or written there)
_DUMMY_U8 = np.empty(1, np.uint8)
_DUMMY_F32 = np.empty(1, np.float32)


def _static(bf):
    """(`_kernels.mx_scale.sig_exp` of max_elem, `elem_params`) of a block format, computed once."""
    r = _STATIC.get(bf.key)
    if r is None:
        r = _STATIC[bf.key] = (KS.sig_exp(bf.max_elem), elem_params(bf))
    return r


def _nv_thr_mode(p):
    """NVFP4's threshold kernel's mode number (0 nearest_even, 1 nearest_away, 2
    toward_zero, as `_kernels.mx_nvfp4.nv_fast_chunk`), or -1 where the fast path takes the
    division kernel (other modes, other element formats)."""
    if not p.nv or _static(p.bf)[1][:3] != (1, 0, 7):
        return -1
    return _NV_THR.get(int(p.res.rounding), -1)


def _fast(p, want_vals):
    """The fast kernels on float32 x viewed as (B, L, T) around the blocked axis (no
    copy of a C-contiguous x). Returns (codes or values, scales), or None when the
    thread's MXCSR flushes subnormals (the caller then takes the general kernel)."""
    bf, a, ax, bl = p.bf, np.ascontiguousarray(p.a), p.axes[1], p.bc
    shape = a.shape
    B = math.prod(shape[:ax])
    L = shape[ax]
    T = math.prod(shape[ax + 1:])
    nL = -(-L // bl)
    ef = _static(bf)[1]
    sshape = shape[:ax] + (nL,) + shape[ax + 1:]
    nvm = _nv_thr_mode(p)
    if nvm >= 0:
        # NVFP4 in nearest_even, nearest_away, toward_zero: by thresholds, no division
        # (softfloat._kernels.mx_nvfp4, "NVFP4 elements by thresholds")
        r = _nv_fast(a.reshape(B, L, T), bl, want_vals, nvm, p)
        if r is None:
            return None
        return r[0].reshape(shape), r[1].reshape(sshape)
    flat = a.reshape(-1)
    n = flat.size
    codes = _DUMMY_U8 if want_vals else np.empty(n, np.uint8)
    vals = np.empty(n, np.float32) if want_vals else _DUMMY_F32
    scales = np.empty(B * nL * T, np.uint8)
    kern = KF.quantize_fast_rows_chunk if T == 1 else KF.quantize_fast_chunk
    args = (flat, B, L, T, bl, codes, vals, scales, want_vals, ef, int(p.res.rounding), p.sr,
            p.res.sr_bits, p.key, p.sc)
    r = run_chunks_weighted(kern, B * nL, bl * T, *args)
    if r < 0:
        return None
    out = vals.reshape(shape) if want_vals else codes.reshape(shape)
    return out, scales.reshape(sshape)


def _nv_fast(x3, bl, want_vals, nvm, p):
    """`_kernels.mx_nvfp4.nv_fast_chunk` on C-contiguous float32 x3 (B, L, T), blocks of bl
    along axis 1: (values or codes (B, L, T), scale codes (B, ceil(L / bl), T)) as
    C-contiguous arrays, or None when MXCSR flushes subnormals. Shapes the kernel runs
    slowly go through a transposed copy (the results are the same element for element:
    the blocks, and so the scales and codes, do not depend on the layout): rows shorter
    than a block (one partial block each; T == 1, e.g. a (512, 10) array along axis 1)
    become the columns of the transpose, and fewer than 16 columns (e.g. (512, 10) along
    axis 0) become its rows; the per-row / per-column-row costs of the kernel would
    dominate there."""
    B, L, T = x3.shape
    nL = -(-L // bl)
    if T == 1 and L < bl and B >= 16:
        o, s = _nv_fast(np.ascontiguousarray(x3.reshape(B, L).T).reshape(1, L, B), bl,
                        want_vals, nvm, p) or (None, None)
        if o is None:
            return None
        return (np.ascontiguousarray(o.reshape(L, B).T).reshape(B, L, 1),
                s.reshape(B, 1, 1))
    if 1 < T < 16 and L >= bl:
        o, s = _nv_fast(np.ascontiguousarray(x3.transpose(0, 2, 1)).reshape(B * T, L, 1), bl,
                        want_vals, nvm, p) or (None, None)
        if o is None:
            return None
        return (np.ascontiguousarray(o.reshape(B, T, L).transpose(0, 2, 1)),
                np.ascontiguousarray(s.reshape(B, T, nL).transpose(0, 2, 1)))
    flat = x3.reshape(-1)
    n = flat.size
    codes = _DUMMY_U8 if want_vals else np.empty(n, np.uint8)
    vals = np.empty(n, np.float32) if want_vals else _DUMMY_F32
    scales = np.empty(B * nL * T, np.uint8)
    args = (flat, B, L, T, bl, codes, vals, scales, want_vals, nvm, p.sc)
    r = run_chunks_weighted(KN.nv_fast_chunk, B * nL, bl * T, *args)
    if r < 0:
        return None
    out = vals if want_vals else codes
    return out.reshape(B, L, T), scales.reshape(B, nL, T)


def quantize(x, fmt, *, axis=-1, block=None, scale_rule=None, rounding="nearest_even", seed=None,
             tensor_scale=None):
    """Quantize ``x`` into a block-scaled format: ``(codes, scales)``.

    Parameters
    ----------
    x : array_like of float32 or float64 (float16 is accepted and read exactly)
        Any shape with at least one dimension.
    fmt : str or BlockFormat
        ``"mxfp8_e4m3"``, ``"mxfp8_e5m2"``, ``"mxfp6_e2m3"``, ``"mxfp6_e3m2"``,
        ``"mxfp4"``, ``"mxint8"`` or ``"nvfp4"``.
    axis : int, or a pair of ints for 2-D blocks
        The blocked axis (default -1); for ``block=(br, bc)`` the two axes
        (default (-2, -1)), blocks of br along the first and bc along the second.
    block : int or (int, int), optional
        Block size override (default 32 for MX, 16 for NVFP4): 1-D blocks
        (1x32, 1x16, 1x128, ...) or 2-D blocks ((16, 16), (128, 128), ...).
    scale_rule : str or None
        None (the default) means ``"floor"`` (OCP MX v1.0) for the MX formats and
        ``"nearest"`` for ``"nvfp4"``. MX formats take ``"floor"``, ``"ceil"``,
        ``"even"`` or ``"rceil"``; ``"nvfp4"`` takes ``"nearest"`` or ``"up"``
        (its e4m3 scale is not a power of two, so the MX rules have no meaning
        there: ``scale_rule="floor"`` with ``"nvfp4"`` raises ValueError, as does
        ``"nearest"`` with an MX format). See the module docstring for the formulas.
    rounding : str
        Element rounding mode (softfloat.ROUNDING_MODES), stochastic included.
    seed : int or numpy Generator, optional
        Random source for stochastic rounding.
    tensor_scale : float, optional
        NVFP4 only: the fp32 per-tensor scale ts (default 1.0).

    Returns
    -------
    codes : ndarray, the shape of x (uint8; int8 for MXINT8)
    scales : ndarray of uint8 (E8M0 codes; e4m3 codes for NVFP4), the shape of x
        with each blocked axis of length n replaced by ceil(n / block).
    """
    p = _prepare(x, fmt, axis, block, scale_rule, rounding, seed, tensor_scale)
    r = _fast(p, False) if p.fast else None
    codes, scales = r if r is not None else _general(p)
    if p.bf.is_int:
        codes = codes.view(np.int8)
    return codes, scales


def quantize_values(x, fmt, *, axis=-1, block=None, scale_rule=None, rounding="nearest_even",
                    seed=None, tensor_scale=None):
    """The values of the quantized elements, in one pass: float32 ``X * P`` for each
    element code P and its block scale X, i.e. ``dequantize(*quantize(x, fmt, ...),
    fmt, axis=axis, block=block)`` (same arguments as `quantize`) cast to float32,
    which is exact: X * P is a float32 value for every MX format (P has at most 4
    significant bits, X = 2**e with e >= -127, so the smallest nonzero value is at
    least 2**-127 * 2**-16 >= 2**-149) and for NVFP4 without the per-tensor scale;
    the one exception is a value at or beyond 2**128 (an element rounded up past a
    block amax near float32's largest value, possible with the ceil, even and
    rceil rules or a directed rounding), which becomes +-inf as numpy's cast makes it.
    For NVFP4 the per-tensor scale (``tensor_scale``) is used to choose the block
    scales but is **not** applied to the values (apply it after the GEMM, as cuBLAS's
    alpha does: P * s * ts need not be a float32). A block with a NaN scale (a NaN
    or an infinity in the block) gives NaNs. Fast for float32 input with 1-D blocks;
    otherwise by `quantize` and `dequantize`."""
    p = _prepare(x, fmt, axis, block, scale_rule, rounding, seed, tensor_scale)
    r = _fast(p, True) if p.fast else None
    if r is not None:
        return r[0]
    codes, scales = _general(p)
    if p.bf.is_int:
        codes = codes.view(np.int8)
    # by the bits, not numpy's cast: under FTZ in the caller's MXCSR the cast would
    # flush float32 subnormal values
    return KE.f32_exact(dequantize(codes, scales, p.bf, axis=axis, block=block))


_LUTS: dict = {}


def _luts(bf: BlockFormat):
    """(element value per code, scale value per code) as float64 tables."""
    key = bf.key                           # by value: two formats of one name differ
    if key not in _LUTS:
        codes = np.arange(256, dtype=np.uint8)
        if bf.is_int:
            lut = codes.view(np.int8).astype(np.float64) / 64.0
        else:
            n = 1 << bf.elem.nbits
            lut = np.full(256, np.nan)
            lut[:n] = from_bits(codes[:n], bf.elem)
        svals = from_bits(codes, bf.scale)
        _LUTS[key] = (lut, svals)
    return _LUTS[key]


def dequantize(codes, scales, fmt, *, axis=-1, block=None, tensor_scale=None):
    """Values X * P_i (float64, exact) of ``codes`` and ``scales`` from `quantize`
    (same ``fmt``, ``axis`` and ``block``). A NaN scale makes its whole block NaN.
    NVFP4: ``tensor_scale`` is the fp32 per-tensor scale used to quantize (default 1.0).
    """
    bf = block_format(fmt)
    c = np.asarray(codes)
    s = np.asarray(scales)
    want = np.int8 if bf.is_int else np.uint8
    if c.dtype != want:
        raise TypeError(f"codes: expected {np.dtype(want)} codes of {bf.name}, got {c.dtype}")
    if s.dtype != np.uint8:
        raise TypeError(f"scales: expected uint8 scale codes, got {s.dtype}")
    if c.ndim == 0:
        raise ValueError("codes: expected an array of at least one dimension")
    if not bf.is_int and c.size and int(c.max()) >= 1 << bf.elem.nbits:
        raise ValueError(f"codes: values out of range for {bf.elem.name} "
                         f"(expected 0..{(1 << bf.elem.nbits) - 1})")
    nv = bf.is_nvfp4
    if tensor_scale is not None and not nv:
        raise ValueError(f"tensor_scale is for nvfp4 only (got it with {bf.name})")
    _, _, ts = tensor_scale_parts(tensor_scale)
    (br, bc), axes = blocks_and_axes(c.ndim, block, axis, bf)
    c3, moved_shape = to_3d(c.view(np.uint8), axes)
    sshape = scale_shape(moved_shape, axes, br, bc)
    s_moved = np.moveaxis(s, axes[1], -1) if axes[0] is None else \
        np.moveaxis(s, axes, (-2, -1))
    if s_moved.shape != sshape:
        raise ValueError(f"scales: expected shape {from_moved(np.empty(sshape), sshape, axes).shape}"
                         f" for codes of shape {c.shape} with block {(br, bc) if axes[0] is not None else bc}"
                         f", got {s.shape}")
    B, R, C = c3.shape
    lut, svals = _luts(bf)
    if nv:
        svals = svals * ts                   # exact: 4-bit times 24-bit significands
    out = np.empty(c3.size, np.float64)
    nblocks = int(np.prod(sshape)) if sshape else 1
    if c3.size:
        run_chunks(K.dequantize_chunk, nblocks, c3.reshape(-1),
                   np.ascontiguousarray(s_moved).reshape(-1), B, R, C, br, bc, lut, svals, out)
    return np.ascontiguousarray(from_moved(out, moved_shape, axes))


def nvfp4_tensor_scale(x) -> float:
    """The usual NVFP4 per-tensor scale: amax(|x|) / (448 * 6) rounded to float32
    (torchao ``per_tensor_amax_to_scale``); 1.0 for an all-zero x.

    Below float32's normal range (amax < 448 * 6 * 2**-126, e.g. an all-subnormal
    tensor) the quotient is rounded up instead, to the next float32 (at least
    2**-149, never 0): there float32's spacing is coarse, and a scale rounded down
    would put amax / scale above 448 * 6, saturating the largest block scale.
    ValueError when x holds a NaN or an infinity, or when amax / (448 * 6) is
    beyond float32's range (a float64 x above about 9.1e41): no fp32 scale holds it."""
    a = V.as_values(x)
    if a.dtype == np.float32 and a.size:
        # one vectorised pass over the bits (float32 magnitudes order like their bits)
        a = np.ascontiguousarray(a).reshape(-1)
        amax = float(np.uint32(KS.amax_chunk(0, a.size, a)).view(np.float32))
    else:
        amax = float(np.max(np.abs(a))) if a.size else 0.0
    if not math.isfinite(amax):
        raise ValueError("x: the per-tensor scale needs finite values")
    if amax == 0:
        return 1.0
    q = amax / (448.0 * 6.0)
    with np.errstate(over="ignore"):
        t = np.float32(q)
    if np.isinf(t):
        raise ValueError(f"x: amax {amax!r} / (448 * 6) is beyond float32's range: no fp32 "
                         f"per-tensor scale can hold it")
    if t < np.float32(2.0 ** -126) and float(t) < q:
        t = np.nextafter(t, np.float32(np.inf))    # subnormal range: round up (see above)
    return float(t)


_NV_STATIC: dict = {}


def nvfp4_values_nearest(x, axis, tensor_scale=None):
    """``(quantize_values(x, "nvfp4", axis=axis, tensor_scale=ts), ts)`` with ts =
    ``tensor_scale``, or `nvfp4_tensor_scale` of x when None: NVFP4 values (s * P,
    without ts) with nearest-even elements and the default (nearest) scale rule, for
    nn's per-GEMM quantization. The same results as those two calls (checked in
    tests/test_nvfp4_fast.py); for a 2-D float32 ndarray under a context whose fast
    paths are on and that keeps subnormals, the argument handling is cut short (the
    calls' fixed cost, about 10 microseconds each, was a tenth of nn's NVFP4 epoch);
    anything else goes through `quantize_values` itself. ``axis``: 0, 1 or -1."""
    ctx = getcontext()
    ftz = ctx.ftz if ctx.ftz is not None else not ctx.subnormals
    if not (type(x) is np.ndarray and x.dtype == np.float32 and x.ndim == 2 and x.size
            and ctx.fast_paths and not ftz and axis in (0, 1, -1)):
        ts = nvfp4_tensor_scale(x) if tensor_scale is None else tensor_scale
        return quantize_values(x, "nvfp4", axis=axis, tensor_scale=ts), ts
    a = np.ascontiguousarray(x)
    ts = nvfp4_tensor_scale(a) if tensor_scale is None else tensor_scale
    # the kernel's scale arguments for this ts, checked and cached (plain floats only)
    st = _NV_STATIC.get(ts) if type(ts) is float else None
    if st is None:
        ts_exp, ts_sig, _ = tensor_scale_parts(ts)    # checks ts
        bf = BLOCK_FORMATS["nvfp4"]
        maxe_exp, maxe_sig = _static(bf)[0]
        # as `_prepare` makes it for the nearest scale rule
        st = SimpleNamespace(sc=(1, _RULES["nearest"], bf.emax_elem, bf.elem_precision,
                                 maxe_exp, maxe_sig, ts_exp, ts_sig, 0))
        if type(ts) is float:
            if len(_NV_STATIC) > 4096:
                _NV_STATIC.clear()
            _NV_STATIC[ts] = st
    R, C = a.shape
    x3 = a.reshape(1, R, C) if axis == 0 else a.reshape(R, C, 1)
    r = _nv_fast(x3, 16, True, 0, st)
    if r is None:                                # MXCSR flushes subnormals
        return quantize_values(x, "nvfp4", axis=axis, tensor_scale=ts), ts
    return r[0].reshape(R, C), ts


# ---------------------------------------------------------------------------
# packed fp4
# ---------------------------------------------------------------------------
def pack_fp4(codes, axis=-1):
    """Two fp4 codes per byte along ``axis``: element 2j in the low nibble, 2j+1 in
    the high nibble (torchao's order). An odd length is padded with a 0 code."""
    c = np.asarray(codes)
    if c.dtype != np.uint8:
        raise TypeError(f"codes: expected uint8 fp4 codes, got {c.dtype}")
    if c.size and int(c.max()) > 15:
        raise ValueError("codes: fp4 codes are 0..15")
    c = np.moveaxis(c, axis, -1)
    if c.shape[-1] % 2:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), np.uint8)], axis=-1)
    p = (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(np.moveaxis(p, -1, axis))


def unpack_fp4(packed, n=None, axis=-1):
    """Inverse of `pack_fp4`: ``n`` codes along ``axis`` (default 2 per byte)."""
    p = np.asarray(packed)
    if p.dtype != np.uint8:
        raise TypeError(f"packed: expected uint8, got {p.dtype}")
    p = np.moveaxis(p, axis, -1)
    out = np.empty(p.shape[:-1] + (2 * p.shape[-1],), np.uint8)
    out[..., 0::2] = p & 0xF
    out[..., 1::2] = p >> 4
    if n is not None:
        if not 0 <= n <= out.shape[-1] or out.shape[-1] - n > 1:
            raise ValueError(f"n={n} does not fit {p.shape[-1]} packed bytes")
        out = out[..., :n]
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))
