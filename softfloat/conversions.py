"""Correctly rounded conversions: values -> encodings, encodings -> values,
format -> format. Each rounds once, directly from the source (float64 never
goes through float32)."""
from __future__ import annotations

import numpy as np

from . import _validate
from . import stochastic as _sr
from ._kernels import convert_hw
from ._kernels import hw
from ._kernels.codes import NAN_KEEP, OVF_IEEE, P_DAZ, P_FTZ, P_NAN, P_OVF, P_TINB
from ._kernels import quantize as _qk
from ._kernels.convert import (FAST_SPECS, NE_SPECS, convert_chunk, fast_chunk,
                               to_float64_chunk)
from ._parallel import run_chunks
from .context import random_key, resolve
from .flags import Flags
from .formats import FP32, FP64, Format
from .rounding import Rounding

__all__ = ["to_bits", "from_bits", "quantize", "convert"]

_HOST_FLOAT = {8: np.float64, 4: np.float32, 2: np.float16}


_FP16_PARAMS = (5, 10, 15, 0)
_BF16_PARAMS = (8, 7, 127, 0)


def _hw_kernel(src_fmt: Format, dst: Format, res, return_flags, pol):
    """The hardware-pace kernel of `softfloat._kernels.convert_hw` for this
    conversion, or None: float32/float64 -> fp16/bf16, deterministic modes, no
    per-element flags (the OR that goes into the context's sticky flags is
    computed), default policies (no ftz/daz, IEEE overflow, tininess after
    rounding; the NaN policy is the general kernel's, which recomputes NaN
    elements)."""
    if (return_flags or not res.fast_paths or res.rounding == Rounding.STOCHASTIC
            or pol[P_FTZ] or pol[P_DAZ] or pol[P_OVF] != OVF_IEEE or pol[P_TINB]):
        return None
    d = dst.params
    s = src_fmt.params
    if s not in (FP32.params, FP64.params):
        return None
    f32 = s == FP32.params
    if d == _FP16_PARAMS and hw.use_hw():
        if not hw.HAVE_F16C_AVX:
            return None
        return convert_hw.fp16_rne_chunk if res.rounding == Rounding.NEAREST_EVEN else convert_hw.fp16_chunk
    if d == _BF16_PARAMS:
        if f32:
            return convert_hw.f32_bf16_chunk
        if hw.use_hw():
            return convert_hw.f64_bf16_chunk
    return None


def _p3109_via_float32(src, src_fmt: Format, dst: Format, res, pol):
    """fp16/bf16 encodings as float32 bit patterns (exact: every value is a
    float32) for a signed P3109 target whose exponent range starts below the
    source's normal range (binary8p3se from fp16), where the branch-free kernel
    needs a source that covers it; or None. Not with DAZ (subnormal sources must
    stay subnormal), NAN_KEEP, or a signaling NaN among the sources (its flag)."""
    if not (res.fast_paths and dst.kind in ("p3109se", "p3109sf") and dst.mbits >= 1
            and src_fmt.params in (_FP16_PARAMS, _BF16_PARAMS) and dst.bias > src_fmt.bias
            and not pol[P_DAZ] and pol[P_NAN] != NAN_KEEP
            and res.rounding != Rounding.STOCHASTIC):
        return None
    E, M = src_fmt.ebits, src_fmt.mbits
    if src_fmt.params == _BF16_PARAMS:
        wide = src.astype(np.uint32) << np.uint32(16)
    else:
        wide = src.astype(np.uint16, copy=False).view(np.float16).astype(np.float32).view(
            np.uint32)
    nan = np.isnan(wide.view(np.float32))
    if nan.any():                                       # the sources' NaNs only
        mag = src[nan].astype(np.uint32) & ((1 << (E + M)) - 1)
        if np.any((mag >> (M - 1)) & 1 == 0):
            return None                                 # a signaling NaN: its flag
    return wide


def _run_convert(src_int: np.ndarray, src_fmt: Format, dst: Format, res, return_flags,
                 shape):
    return_flags = _validate.boolean(return_flags, "return_flags")
    pol = res.kernel_tuple(dst)
    key = random_key(res.seed) if res.rounding == Rounding.STOCHASTIC else 0
    src = _validate.writable(_validate.flat(src_int))
    flg = np.empty(src.size if return_flags else 1, np.uint8)
    sE, sM, sb, sk = src_fmt.params
    dE, dM, db, dk = dst.params
    wide = _p3109_via_float32(src, src_fmt, dst, res, pol)
    if wide is not None:
        return _run_convert(wide, FP32, dst, res, return_flags, shape)
    hwk = _hw_kernel(src_fmt, dst, res, return_flags, pol)
    if hwk is not None:
        # float32/float64 -> fp16/bf16 at hardware pace (softfloat._kernels.convert_hw)
        out = np.empty(src.size, dst.dtype)
        fsrc = src.view(_HOST_FLOAT[src.dtype.itemsize])
        mode = int(res.rounding)
        th = convert_hw.thresholds(dst.params, mode)
        ksrc, kout = (src if hwk is convert_hw.f32_bf16_chunk else fsrc), out
        if hwk is convert_hw.fp16_rne_chunk or hwk is convert_hw.fp16_chunk:
            th = convert_hw.signed_thresholds(mode, *th)
            if src.size < hw.BLOCK:
                # the fp16 kernels take whole blocks: pad with zeros (exact, no flags)
                ksrc = np.zeros(hw.BLOCK, fsrc.dtype)
                ksrc[:src.size] = fsrc
                kout = np.empty(hw.BLOCK, out.dtype)
        r = run_chunks(hwk, ksrc.size, ksrc, kout, mode, *th)
        if kout is not out:
            out[:] = kout[:src.size]
        if r >= 0:
            allf = r & 255
            if r & 256:
                # NaN inputs: the general kernel decides their encodings and flags
                idx = np.flatnonzero(np.isnan(fsrc))
                s2, o2 = _validate.kernel_io(np.ascontiguousarray(src[idx]), idx.size)
                allf |= run_chunks(convert_chunk, idx.size, s2, o2, flg, False, sE, sM, sb,
                                   sk, dE, dM, db, dk, pol, key)
                out[idx] = o2
            res.flags_sink().flags |= Flags(int(allf))
            return out.reshape(shape)
        # r < 0: FTZ/DAZ set in this thread's MXCSR: the integer kernels below
    # (not for fnu targets, e8m0: no sign, no zero, no subnormals)
    # (not for unsigned P3109 targets, nor P = 1, whose parity is the exponent's)
    fast_ok = (res.fast_paths and (dk < 4 or (dst.kind in ("p3109se", "p3109sf") and dM >= 1))
               and sk == 0 and sM > dM and db <= sb
               and pol[P_NAN] != NAN_KEEP)
    ne = NE_SPECS.get((sE, sM, sb, dE, dM, db, dk)) if fast_ok and not return_flags else None
    if ne is not None:
        # float32/float64 -> fp8/fp6/fp4: nearest-even under the default policies in
        # one loop with the formats and the mode as constants (-1: another mode or
        # policy, nothing written: the kernels below)
        out = np.empty(src.size, dst.dtype)
        allf = run_chunks(ne, src.size, src, out, pol)
        if allf >= 0:
            res.flags_sink().flags |= Flags(int(allf))
            return out.reshape(shape)
    spec = FAST_SPECS.get((sE, sM, sb, dE, dM, db, dk)) if fast_ok else None
    if spec is not None:
        # a hot pair: its own kernel, native dtypes, formats as constants
        out = np.empty(src.size, dst.dtype)
        allf = run_chunks(spec, src.size, src, out, flg, return_flags, sE, sM, sb,
                          dE, dM, db, dk, pol, key)
    else:
        # Every other pair: one array signature per kernel (int64 sources, uint32
        # encodings out), so that each kernel compiles once, not once per dtype pair.
        # IEEE source whose normal range covers the target's: the branch-free,
        # vectorized kernel (identical results; see softfloat._kernels.convert).
        kern = fast_chunk if fast_ok else convert_chunk
        kargs = ((sE, sM, sb, dE, dM, db, dk, pol, key) if fast_ok
                 else (sE, sM, sb, sk, dE, dM, db, dk, pol, key))
        if src.size > _validate.BLOCK and res.rounding != Rounding.STOCHASTIC:
            # in blocks: the int64/uint32 working copies stay one block long, so the
            # peak memory is the output plus a block, not 12 bytes per element
            # (stochastic rounding indexes its random stream by position: one call)
            out = np.empty(src.size, dst.dtype)
            allf = 0
            for lo in range(0, src.size, _validate.BLOCK):
                hi = min(src.size, lo + _validate.BLOCK)
                s2, o2 = _validate.kernel_io(src[lo:hi], hi - lo)
                allf |= run_chunks(kern, hi - lo, s2, o2, flg[lo:hi] if return_flags else flg,
                                   return_flags, *kargs)
                out[lo:hi] = o2
        else:
            src, out = _validate.kernel_io(src, src.size)
            allf = run_chunks(kern, src.size, src, out, flg, return_flags, *kargs)
            out = out.astype(dst.dtype, copy=False)
    res.flags_sink().flags |= Flags(int(allf))
    out = out.reshape(shape)
    if return_flags:
        return out, flg.reshape(shape)
    return out


def to_bits(x, fmt, rounding=None, *, subnormals=None, ftz=None, daz=None, overflow=None,
            tininess=None, nan=None, sr_bits=None, seed=None, rng=None, return_flags=False,
            saturation=None, policy=None, random_bits=None, random_nbits=None):
    """Round float values into ``fmt`` and return the encodings.

    Parameters
    ----------
    x : array_like of float64, float32 or float16
        Any shape; Python floats and lists are read as float64. Integer, bool,
        complex and object inputs raise TypeError.
    fmt : Format or str
        Target format (``"fp16"``, ``"bf16"``, ``"fp8_e4m3"``, ...).
    rounding : str, optional
        Rounding mode (default: the context's, ``nearest_even``).
    subnormals, ftz, daz, overflow, tininess, nan, sr_bits
        Policies; see `softfloat.Context`. None reads the current context.
    seed, rng
        Random source for ``stochastic`` rounding (an int, or a numpy Generator).
    policy : softfloat.Policy, optional
        All the policies as one value, in place of the keywords (not with them).
    random_bits, random_nbits
        Stochastic rounding with explicit random bits (unsigned integers < 2**N,
        broadcast with x; N): with ``"stochastic"`` or a scheme
        (``"stochastic_a"``, ``_b``, ``_c``, ``"stochastic_add"``); see
        softfloat.stochastic and docs/stochastic.md.
    return_flags : bool
        Also return the per-element IEEE flags (uint8, SoftFloat's bit values).

    Returns
    -------
    bits : ndarray of fmt.dtype, the shape of x
    flags : ndarray of uint8 (only with ``return_flags=True``)

    Wraps the kernel `softfloat._kernels.convert.convert_array`.
    """
    if _sr.wanted(rounding, random_bits, random_nbits):
        return _sr.to_bits(x, fmt, rounding, random_bits=random_bits, random_nbits=random_nbits,
                           return_flags=return_flags, subnormals=subnormals, ftz=ftz, daz=daz,
                           overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits,
                           seed=seed, rng=rng, policy=policy, saturation=saturation)
    a = _validate.as_values(x)
    dst = _validate.target_format(fmt)
    res = resolve(rounding, policy=policy, subnormals=subnormals, ftz=ftz, daz=daz,
                  overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits, seed=seed,
                  rng=rng, saturation=saturation)
    return _to_bits(a, dst, res, return_flags)


def _to_bits(a, dst: Format, res, return_flags):
    """`to_bits` of validated values ``a`` into the parsed format ``dst`` under
    the call's policy ``res``."""
    return _run_convert(_validate.int_view(a), _validate.HOST_FORMATS[a.dtype], dst, res,
                        return_flags, a.shape)


def from_bits(bits, fmt) -> np.ndarray:
    """Exact float64 values of encodings of ``fmt`` (NaN payloads kept, left-aligned).

    Wraps `softfloat._kernels.convert.to_float64_array`.
    """
    f = _validate.target_format(fmt)
    return _from_bits(_validate.as_bits(bits, f), f)


def _check_float64(f: Format):
    if not f.fits_float64:
        raise ValueError(f"{f.name} has values beyond float64 (2**{f.min_exponent} to below "
                         f"2**{f.emax + 1}): from_bits/quantize cannot give them exactly; use "
                         f"softfloat.p3109.decode (exact Fractions) or decode_parts")


def _from_bits(b, f: Format) -> np.ndarray:
    """`from_bits` of validated encodings ``b`` of the parsed format ``f``."""
    _check_float64(f)
    src = _validate.writable(_validate.flat(b))
    if src.dtype != np.uint16:          # one signature beside the hot uint16 one
        src = src.astype(np.uint32)
    out = np.empty(src.size, np.int64)
    run_chunks(to_float64_chunk, src.size, src, out, *f.params)
    return out.view(np.float64).reshape(b.shape)


def quantize(x, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
             daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None,
             rng=None, saturation=None, policy=None, random_bits=None, random_nbits=None,
             out_dtype=None):
    """Round float values to the nearest values of ``fmt`` (by ``rounding``) and
    return them as float64: ``from_bits(to_bits(x, fmt, ...), fmt)``.

    The policies (and ``policy=``, ``random_bits=``, ``random_nbits=``) are those
    of `to_bits`. ``out_dtype``: ``numpy.float64`` (default) or ``numpy.float32``
    (for formats whose values are all float32 values, ``fmt.fits_float32``; the
    same values, exactly).

    Fast path (value to value, one pass, sticky flags included): float32 or
    float64 input, nearest-even rounding, no FTZ/DAZ, IEEE overflow, an IEEE-style
    format that fits in float32 (fp16, bf16, fp8 e5m2, ...), ``return_flags``
    off, ``fast_paths`` on; NaN elements take the general path (the NaN rule).
    Its slow twin is the general path above (tests/test_quantize_fast.py).
    """
    od = _quantize_out_dtype(out_dtype, fmt)
    if _sr.wanted(rounding, random_bits, random_nbits):
        r = _sr.to_bits(x, fmt, rounding, random_bits=random_bits, random_nbits=random_nbits,
                        return_flags=return_flags, subnormals=subnormals, ftz=ftz, daz=daz,
                        overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits,
                        seed=seed, rng=rng, policy=policy, saturation=saturation)
        f = _validate.target_format(fmt)
        if return_flags:
            return _quantize_cast(_from_bits(r[0], f), od), r[1]
        return _quantize_cast(_from_bits(r, f), od)
    a = x if (x.__class__ is np.ndarray and x.dtype in _QUANTIZE_FAST_DTYPES) \
        else _validate.as_values(x)
    f = fmt if fmt.__class__ is Format else _validate.target_format(fmt)
    res = resolve(rounding, policy=policy, subnormals=subnormals, ftz=ftz, daz=daz,
                  overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits,
                  seed=seed, rng=rng, saturation=saturation)
    if not return_flags:
        spec = _quantize_fast_spec(a.dtype, f, res)
        if spec is not None:
            out = _quantize_fast(a, f, res, od, spec)
            if out is not None:
                return out
    r = _to_bits(a, f, res, return_flags)
    if return_flags:
        return _quantize_cast(_from_bits(r[0], f), od), r[1]
    return _quantize_cast(_from_bits(r, f), od)


def _quantize_out_dtype(out_dtype, fmt):
    """quantize's ``out_dtype``: float64 (None) or float32 (a format inside float32)."""
    if out_dtype is None or out_dtype is np.float64:
        return np.float64
    if out_dtype is np.float32 and fmt.__class__ is Format and fmt.fits_float32:
        return np.float32
    try:
        od = np.dtype(out_dtype)
    except TypeError:
        od = None
    if od not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"quantize: out_dtype must be numpy.float64 or numpy.float32, got "
                        f"{out_dtype!r}")
    if od == np.float32:
        f = _validate.target_format(fmt)
        if not f.fits_float32:
            raise ValueError(f"quantize: out_dtype=float32 needs a format whose values are "
                             f"all float32 values; {f.name} has not (use float64)")
        return np.float32
    return np.float64


def _quantize_cast(v, od):
    """float64 values of a format inside float32 as ``od`` (float32: exactly, by the
    bits where the thread's MXCSR would flush numpy's cast)."""
    if od is np.float64:
        return v
    from ._kernels.mx_elem import f32_exact
    return f32_exact(v)


# native float32 / float64: taken as they are (as_values would return them unchanged)
_QUANTIZE_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# (id(format), dtype, tininess before) -> (format, kernel arguments or None); the
# format is kept, so that its id stays its own
_QSPECS: dict = {}


def _quantize_fast_spec(dtype, f: Format, res):
    """The fast kernel's arguments for this call (kernel, float32 input, M, emin,
    emax, tiny bits), or None (see `quantize`)."""
    if (not res.fast_paths or res.rounding != Rounding.NEAREST_EVEN or res.ftz or res.daz
            or res.overflow not in (None, "ieee")):
        return None
    tb = res.tininess == "before"
    key = (id(f), dtype, tb)
    hit = _QSPECS.get(key)
    if hit is not None and hit[0] is f:
        return hit[1]
    spec = None
    if (f.kind == "ieee" and f.fits_float32 and dtype in _QUANTIZE_FAST_DTYPES
            and (dtype == np.float64 or f.emin >= -126)):
        # tininess threshold: before rounding 2**emin, after rounding
        # 2**emin - 2**(emin - p - 1); as the smallest input value at or above it
        T = 2.0 ** f.emin if tb else 2.0 ** f.emin - 2.0 ** (f.emin - f.mbits - 2)
        host = dtype.type
        t = host(T)
        if float(t) < T:
            t = np.nextafter(t, host(np.inf))
        is32 = dtype == np.float32
        tiny = int(np.array(t, host).view(np.int32 if is32 else np.int64))
        kern = _qk.round_f32_chunk if is32 else _qk.round_f64_chunk
        spec = (kern, is32, int(f.mbits), int(f.emin), int(f.emax), np.int64(tiny))
    if len(_QSPECS) >= 256:
        _QSPECS.clear()
    _QSPECS[key] = (f, spec)
    return spec


def _quantize_fast(a, f: Format, res, od, spec):
    """`quantize`'s fast path (softfloat._kernels.quantize), or None where the
    thread's MXCSR flushes subnormals (the general path then)."""
    kern, is32, M, emin, emax, tiny = spec
    src = a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1)
    # float32 input: the kernel writes float32 (a float64 result is cast after it)
    widen = is32 and od is np.float64
    out = np.empty(src.size, np.float32 if (is32 or od is np.float32) else np.float64)
    r = run_chunks(kern, src.size, src, out, M, emin, emax, tiny)
    if r < 0:
        return None
    if r & _qk.NAN_SEEN:
        # NaN inputs: the general path decides their values and flags (the NaN rule)
        idx = np.flatnonzero(np.isnan(src))
        out[idx] = _from_bits(_to_bits(src[idx], f, res, False), f)
    new = r & 255
    if new:
        sink = res.flags_sink()
        old = sink.flags
        if int.__or__(new, old) != old:          # (already raised: nothing to write)
            sink.flags = old | Flags(new)
    if widen:
        out = out.astype(np.float64)    # float32 values: exact (MXCSR checked by the kernel)
    return out.reshape(a.shape)


def convert(bits, src_fmt, dst_fmt, rounding=None, *, subnormals=None, ftz=None, daz=None,
            overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
            return_flags=False, saturation=None, policy=None, random_bits=None,
            random_nbits=None):
    """Convert encodings of ``src_fmt`` into ``dst_fmt`` with one rounding.

    Policies as in `to_bits`; ``daz`` applies to the source operands.
    """
    if _sr.wanted(rounding, random_bits, random_nbits):
        return _sr.convert(bits, src_fmt, dst_fmt, rounding, random_bits=random_bits,
                           random_nbits=random_nbits, return_flags=return_flags,
                           subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow,
                           tininess=tininess, nan=nan, sr_bits=sr_bits, seed=seed, rng=rng,
                           policy=policy, saturation=saturation)
    s = _validate.source_format(src_fmt)
    if s == FP64:
        raise ValueError("convert takes encodings of a simulated format; for float64 "
                         "values use softfloat.to_bits")
    d = _validate.target_format(dst_fmt)
    b = _validate.as_bits(bits, s, "bits")
    res = resolve(rounding, policy=policy, subnormals=subnormals, ftz=ftz, daz=daz,
                  overflow=overflow, tininess=tininess, nan=nan, sr_bits=sr_bits, seed=seed,
                  rng=rng, saturation=saturation)
    return _run_convert(b, s, d, res, return_flags, b.shape)
