"""Which kernel runs a model: `_accumulate` takes a model (from
`models.resolve_model`) and operands of shape (nb, m, K) [and (nb, K, n)] and runs the
GPU matrix-unit model (softfloat.mma), the bounded float32 BLAS model
(``order="blas"``, `_blas`), the native float32 fast path where it is provably
the exact model (`_fast`, `_fast_ok`), or the integer kernels (`reduce_program`
for Accumulator programs and Kahan, `block_fma` for BlockFMA). `_values_fast`
is the same choice for float arrays of values (``matmul_values(check=False)``).
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .. import _validate as V
from .._kernels.accum import reduce_program
from .._kernels.accum_f32 import abs_range_f32, matmul_f32_blocked, matmul_f32_seq, sum_f32_seq
from .._kernels.block_fma import block_fma
from .._kernels.mx_elem import caller_flushes as _caller_flushes
from ..context import random_key, resolve
from ..conversions import from_bits
from ..formats import FP32, Format, get_format
from ..mma import MatrixUnit, mma as _mma
from ..rounding import Rounding
from ..specialize import kernel_fresh_nan
from .models import Accumulator, BlockFMA, resolve_model
from .programs import _program


_LUTS: dict = {}


def _to_f32(bits: np.ndarray, fin: Format) -> np.ndarray:
    """float32 values of encodings (exact for formats inside binary32's range; the
    caller checks). Formats of <= 16 bits go through a table."""
    if fin.nbits <= 16:
        key = (fin.ebits, fin.mbits, fin.bias, fin.kind)
        t = _LUTS.get(key)
        if t is None:
            allb = np.arange(1 << fin.nbits, dtype=np.int64).astype(fin.dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                t = from_bits(allb, fin).astype(np.float32)
            _LUTS[key] = t
        return t[bits]
    with np.errstate(over="ignore", invalid="ignore"):
        return from_bits(bits, fin).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _f32_fits(fin: Format) -> bool:
    """Every finite value of fin is a binary32 number."""
    return (fin.max <= FP32.max and fin.emin - fin.mbits >= FP32.emin - FP32.mbits
            and fin.mbits <= 23)


@functools.lru_cache(maxsize=None)
def _products_exact(fin: Format) -> bool:
    """Every product of two finite values of fin is exact in binary32 (no overflow,
    no bits below 2**-149, at most 24 significant bits)."""
    return (_f32_fits(fin) and 2 * fin.precision <= 24 and fin.max * fin.max <= FP32.max
            and 2 * (fin.emin - fin.mbits) >= FP32.emin - FP32.mbits)


def _ulp_exp_of(vmin, fin: Format) -> int:
    """The exponent of the ulp of fin at the magnitude vmin (the smallest nonzero
    |value|; inf when there is none: 0)."""
    if not np.isfinite(vmin):
        return 0
    _, e = np.frexp(np.float64(vmin))
    return max(int(e) - 1, fin.emin) - fin.mbits


def _min_ulp_exp(vals: np.ndarray, fin: Format) -> int:
    nz = np.abs(vals[vals != 0])
    if nz.size == 0:
        return 0
    _, e = np.frexp(nz.min())
    return max(int(e) - 1, fin.emin) - fin.mbits


def _fast_ok(model, fin: Format, res, return_flags) -> bool:
    return (isinstance(model, Accumulator) and model.fmt == FP32 and not model.kahan
            and isinstance(model.order, str) and model.order in ("sequential", "blocked")
            and model.products in ("exact", "fused") and not return_flags
            and res.rounding == Rounding.NEAREST_EVEN and not res.ftz and not res.daz
            and res.overflow in (None, "ieee") and _f32_fits(fin)
            and not _caller_flushes())          # FTZ/DAZ in MXCSR: the integer path


def _fast(A3, B3, has_b, C3, fin: Format, pol, block=None):
    """The native float32 path (sequential, or blocked with ``block``), or None where
    it would not be exact."""
    nb, m, K = A3.shape
    has_c = C3 is not None
    av = _to_f32(A3, fin)
    if not np.isfinite(av).all():
        return None
    if has_b:
        bv = _to_f32(B3, fin)
        if not np.isfinite(bv).all():
            return None
        if not _products_exact(fin):
            # products exact for these values? (binary32 range and 24 bits)
            if 2 * fin.precision > 24:
                return None
            amax, bmax = float(np.abs(av).max(initial=0)), float(np.abs(bv).max(initial=0))
            if (amax * bmax > FP32.max
                    or _min_ulp_exp(av, fin) + _min_ulp_exp(bv, fin) < FP32.emin - FP32.mbits):
                return None
        n = B3.shape[2]
        out = np.empty((nb, m, n), np.float32)
        Cf = from_bits(C3, FP32).astype(np.float32) if has_c else np.zeros((1, 1, 1), np.float32)
        if has_c and np.isnan(Cf).any():
            # a NaN addend decides the result's NaN (sign, payload, signaling or
            # not, the NaN policy): the general kernel's rules, not re-spelt here
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            if block is not None:
                if has_c:
                    return None
                matmul_f32_blocked(av, bv, block, out)
            else:
                matmul_f32_seq(av, bv, Cf, has_c, out)
    elif block is not None:
        return None
    elif not has_c:
        out = np.empty(nb * m, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            sum_f32_seq(av.reshape(nb * m, K), out)
        out = out.reshape(nb, m, 1)
    else:
        return None
    bits = out.view(np.uint32)
    nan = np.isnan(out)
    if nan.any():                       # only inf - inf: the policy's fresh NaN
        bits = bits.copy()
        bits[nan] = np.uint32(kernel_fresh_nan(pol))
    return bits


def _blas_check(res, return_flags):
    if return_flags:
        raise ValueError("order='blas' raises no flags (the BLAS does not report them); "
                         "use order='sequential' for flags")
    if (res.rounding != Rounding.NEAREST_EVEN or res.ftz or res.daz
            or res.overflow not in (None, "ieee")):
        raise ValueError("order='blas' is IEEE float32 arithmetic: nearest-even rounding, "
                         "no ftz/daz, IEEE overflow")


def _blas(A3, B3, has_b, C3, fin: Format, res, return_flags, pol):
    """The bounded fast model (see the module docstring): float32 BLAS."""
    _blas_check(res, return_flags)
    av = _to_f32(A3, fin)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if has_b:
            out = np.matmul(av, _to_f32(B3, fin))
        else:
            out = np.sum(av, axis=-1, dtype=np.float32, keepdims=True)
        if C3 is not None:
            out = out + from_bits(C3, FP32).astype(np.float32)
    bits = np.ascontiguousarray(out, np.float32).view(np.uint32)
    nan = np.isnan(out)
    if nan.any():
        bits = bits.copy()
        bits[nan] = np.uint32(kernel_fresh_nan(pol))
    return bits


def _accumulate(A3, B3, has_b, C3, model, fin: Format, res, return_flags, fast=True):
    """Run the model on A3 (nb, m, K) [and B3 (nb, K, n)]; returns accumulator
    encodings (nb, m, n), flags (or None) and the OR of all flags."""
    return_flags = V.boolean(return_flags, "return_flags")
    nb, m, K = A3.shape
    n = B3.shape[2] if has_b else 1
    afmt = model.fmt
    has_c = C3 is not None
    if K == 0:
        out = (np.broadcast_to(C3, (nb, m, n)).copy() if has_c
               else np.full((nb, m, n), 0, afmt.dtype))
        return out, (np.zeros((nb, m, n), np.uint8) if return_flags else None), 0
    if isinstance(model, MatrixUnit):
        if fin != model.a_fmt or fin != model.b_fmt:
            raise ValueError(f"{model.arch} {model.instruction} takes {model.a_fmt.name} x "
                             f"{model.b_fmt.name} operands, not {fin.name} (softfloat.mma.mma "
                             f"takes operands of two formats)")
        BB = B3 if has_b else np.zeros((nb, K, 1), fin.dtype)
        r = _mma(model, A3, BB, C3, return_flags=True, policy=res)
        out, flg = r
        allf = int(np.bitwise_or.reduce(flg, axis=None)) if flg.size else 0
        return out, (flg if return_flags else None), allf
    pol = res.kernel_tuple(afmt)
    if isinstance(model, Accumulator) and isinstance(model.order, str) \
            and model.order == "blas":
        if not _caller_flushes():
            return _blas(A3, B3, has_b, C3, fin, res, return_flags, pol), None, 0
        # FTZ/DAZ in the caller's MXCSR would flush the BLAS's float32 arithmetic: the
        # sequential order (one of the orders the bounded model allows) on the integer path
        _blas_check(res, return_flags)
        model = dataclasses.replace(model, order="sequential")
    if fast and res.fast_paths and _fast_ok(model, fin, res, return_flags):
        bits = _fast(A3, B3, has_b, C3, fin, pol,
                     model.block if model.order == "blocked" else None)
        if bits is not None:
            return bits, None, 0
    # One array type for every format (uint32, C-contiguous, writable: a read-only
    # view of the caller's fp32 or tf32 encodings would be another type) keeps the
    # number of compiled specialisations of the kernels at one.
    flg = np.zeros((nb, m, n) if return_flags else (1, 1, 1), np.uint8)
    out = np.empty((nb, m, n), np.uint32)
    u32 = np.uint32
    A3 = np.require(A3, u32, ("C", "W"))
    Cin = np.require(C3, u32, ("C", "W")) if has_c else np.zeros((1, 1, 1), u32)
    BTin = (np.require(np.swapaxes(B3, 1, 2), u32, ("C", "W")) if has_b
            else np.zeros((1, 1, 1), u32))
    if isinstance(model, BlockFMA):
        bpol = res.replace(rounding=model.rounding).kernel_tuple(afmt)
        blk = (model.width, model.extra_bits, model.frame_bits, model.frame_emin)
        allf = block_fma(A3, BTin, Cin, has_c, out, flg, return_flags, blk, fin.params,
                         afmt.params, pol, bpol, 64)
        return out.astype(afmt.dtype), (flg if return_flags else None), allf
    prog, nslots = _program(model.order, model.block, K, has_c)
    pfmt = model.product_fmt or afmt
    ppol = res.kernel_tuple(pfmt)
    sr = res.rounding == Rounding.STOCHASTIC
    key = random_key(res.seed) if sr else 0
    allf = reduce_program(A3, BTin, has_b, Cin, has_c, out, flg, return_flags, prog, nslots,
                          fin.params, afmt.params, pol,
                          has_b and model.products == "rounded", pfmt.params, ppol,
                          bool(model.kahan), key, 64)
    return out.astype(afmt.dtype), (flg if return_flags else None), allf


def _resolve_for(model, rounding, policies):
    """The call's policy (keywords over the context, or ``policy=``), with an
    Accumulator's own rounding in place of the call's."""
    if isinstance(model, Accumulator) and model.rounding is not None:
        if policies.get("policy") is not None and rounding is None:
            return resolve(**policies).replace(rounding=model.rounding)
        return resolve(model.rounding, **policies)
    return resolve(rounding, **policies)


def _values_fast(a, b, fin: Format, acc, out_fmt, rounding, kw):
    """matmul_values(check=False) for 2-D operands and an fp32 accumulator in
    sequential, blocked or blas order, straight on float32 values (no trip through
    encodings); None where it does not apply. The sequential kernel is the same one
    the encodings path uses (`_fast`): exact products, IEEE float32 additions in k
    order (infinities and NaNs follow IEEE arithmetic, as the model does)."""
    if set(kw) - {"order", "products", "block"} or \
            kw.get("products") not in (None, "exact", "fused") or _caller_flushes():
        return None                       # (FTZ/DAZ in MXCSR: the encodings path)
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == 2
            and b.ndim == 2 and a.dtype in (np.float32, np.float64)
            and b.dtype in (np.float32, np.float64)):
        return None
    if out_fmt is not None and get_format(out_fmt) != FP32:
        return None
    model = resolve_model(acc, fin, kw.get("order", "sequential"), kw.get("block"),
                   kw.get("products"), None, False, rounding)
    if not (isinstance(model, Accumulator) and model.fmt == FP32 and isinstance(model.order, str)
            and model.order in ("sequential", "blas", "blocked")
            and model.products in ("exact", "fused")):
        return None
    res = _resolve_for(model, rounding, {})
    if (res.rounding != Rounding.NEAREST_EVEN or res.ftz or res.daz
            or res.overflow not in (None, "ieee")):
        if model.order == "blas":
            _blas_check(res, False)
        return None
    if not _f32_fits(fin) or 2 * fin.precision > 24:
        return None
    m, K = a.shape
    n = b.shape[1]
    # (blas: any strides; BLAS reads a transposed view in place, no copy)
    a32 = a.astype(np.float32, copy=False) if model.order == "blas" \
        else np.ascontiguousarray(a, np.float32)
    b32 = b.astype(np.float32, copy=False) if model.order == "blas" \
        else np.ascontiguousarray(b, np.float32)
    if model.order != "blas" and not _products_exact(fin):
        # (blas: no scan; its bound covers products that round in float32)
        # products exact for these values? (no overflow; every product's last bit at
        # or above 2**-149: the smallest ulps of a and b multiply to at least that)
        amax, amin = abs_range_f32(a32.reshape(-1))
        bmax, bmin = abs_range_f32(b32.reshape(-1))
        with np.errstate(over="ignore", invalid="ignore"):
            if not (float(amax) * float(bmax) <= FP32.max
                    and _ulp_exp_of(amin, fin) + _ulp_exp_of(bmin, fin)
                    >= FP32.emin - FP32.mbits):
                return None
    if K == 0:
        return np.zeros((m, n), np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if model.order == "blas":
            return np.matmul(a32, b32)
        out = np.empty((1, m, n), np.float32)
        if model.order == "blocked":
            matmul_f32_blocked(a32[None], b32[None], model.block, out)
        else:
            matmul_f32_seq(a32[None], b32[None], np.zeros((1, 1, 1), np.float32), False, out)
    return out[0]
