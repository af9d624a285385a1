"""fp8 and fp4 training recipes: the GEMM operands of a linear layer quantized by
`softfloat.mx`, the products summed in fp32 (or by a Hopper fp8 accumulation model
of `softfloat.mx_gemm`), everything else (master weights, elementwise ops, the
loss, the optimizer) in fp32. ``nn.Precision(recipe=...)`` selects one:

``"fp8_current"`` / ``"fp8_delayed"`` (Transformer Engine's per-tensor scaling)
    Forward operands (activations x, weights W) as e4m3, the output gradient dy
    as e5m2 (TE's HYBRID format), each tensor with one fp32 scale s: codes =
    round(v * s) saturating (`softfloat.mx.quantize_per_tensor`), values =
    code / s. Current scaling: s = fp8_max / amax(|v|) / 2**margin from this very
    tensor. Delayed scaling (`softfloat.mx.DelayedScaling`): s from the amax
    history of the *earlier* steps of the same tensor (the largest amax of the
    last ``amax_history_len`` steps, ``amax_algo="max"``); the first step uses
    s = 1. TE's defaults, used here: ``amax_history_len=1024``, ``margin=0``,
    ``amax_compute_algo="max"``. x and W are quantized once in the forward pass
    and reused (transposed) by the backward GEMMs, as TE does.
``"mxfp8"``
    OCP MX block scaling, blocks of 32 along the reduction axis of each GEMM with
    E8M0 scales (`softfloat.mx.quantize`, ``scale_rule="floor"``): e4m3 forward
    (``mxfp8_e4m3``), e5m2 for dy (``mxfp8_e5m2``). Each GEMM quantizes its own
    operands along its own reduction axis (the backward GEMMs reduce over other
    axes than the forward one: W is requantized column-wise from the fp32 master
    value, x along the batch axis), as TE's MXFP8 recipe keeps row- and
    column-wise copies.
``"nvfp4"``
    NVFP4 (e2m1 elements, blocks of 16 with e4m3 scales, an fp32 per-tensor scale
    ts = amax / (448 * 6), `softfloat.mx.nvfp4_tensor_scale`) for every GEMM
    operand, along each GEMM's reduction axis; dy is rounded to nearest even or,
    with ``grad_rounding="stochastic"``, stochastically (NVIDIA's NVFP4 recipe
    rounds gradients stochastically).

The GEMM. With ``fp8_gemm="fp32"`` (default) the products are summed in fp32 by
a float32 BLAS product (the bounded ``order="blas"`` model of
`softfloat.accumulate`) on the *unscaled* element values and the result is
multiplied by alpha = (1/s_a) * (1/s_b) in float32, as cuBLAS's alpha. Products
are exact in fp32: per-tensor, the operands are e4m3/e5m2 values (at most 4
significant bits each, so products have at most 8; magnitudes between 2**-25
(e4m3's 2**-9 times e5m2's 2**-16) and 57344 * 448 < 2**26, inside fp32's normal
range). MXFP8: the operands are element values times E8M0 powers of two; the
products are exact unless they fall below fp32's normal range (2**-126), which
needs block scales below about 2**-55 on both sides. NVFP4: the operands are
e2m1 values times e4m3 block scales (at most 2 + 4 = 6 significant bits, products
at most 12; magnitudes from 2**-10 to 6 * 448), so the products are exact, and
alpha = ts_a * ts_b. With ``fp8_gemm="hopper_fp8_fast"`` or
``"hopper_fp8_promote128"`` (per-tensor recipes only: Hopper has no block-scaled
MMA) the sum follows `softfloat.mx_gemm`'s model of Hopper's fp8 tensor cores
(32-product blocks into a truncated 13-bit-fraction accumulator; promotion into
an fp32 accumulator every 128 products or never).
"""
from __future__ import annotations


import numpy as np

import softfloat as sf
from softfloat import mx as _mx
from softfloat import mx_gemm as _mxg
from softfloat._kernels import mx as _K
from softfloat._parallel import MIN_PARALLEL, run_chunks

__all__ = ["RECIPES", "FP8_GEMMS", "FP8Recipe", "fp8_gemm"]

RECIPES = ("fp8_current", "fp8_delayed", "mxfp8", "nvfp4")
FP8_GEMMS = ("fp32", "hopper_fp8_fast", "hopper_fp8_promote128")
_FWD, _BWD = sf.get_format("fp8_e4m3"), sf.get_format("fp8_e5m2")
_FP16 = sf.get_format("fp16")       # holds every e4m3 and every e5m2 value exactly
# value of every 8-bit code as float32 (exact: e4m3 and e5m2 values are float32
# values), by softfloat.from_bits; NaN codes decode to NaN
with np.errstate(invalid="ignore"):
    _LUT = {f: sf.from_bits(np.arange(256, dtype=np.uint8), f).astype(np.float32)
            for f in (_FWD, _BWD)}


def fp8_gemm(qa, qb, alpha, model=None):
    """``alpha * (qa @ qb)``: qa (m, k), qb (k, n) float32 arrays of exact element
    values (products exact in fp32, see the module docstring), summed in fp32 by a
    BLAS product (``model=None``) or by a `softfloat.mx_gemm.FP8GemmModel` (name or
    object) whose operands are values of e4m3 or e5m2; alpha (float32) multiplies
    the fp32 result once, rounded to nearest even. Returns float32 (m, n)."""
    if model is None:
        # softfloat's order="blas" model is this float32 BLAS product (accumulate._blas:
        # np.matmul on the float32 values; tests check equality with
        # sf.matmul_values(..., sf.FP32, acc=Accumulator(FP32, order="blas"))); called
        # directly because the fp32 *input* format takes the encodings path there
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            out = np.matmul(qa, qb)
    else:
        mdl = _mxg.fp8_gemm_model(model)
        qa, qb = np.ascontiguousarray(qa), np.ascontiguousarray(qb)
        K = qa.shape[1]
        N = mdl.promote_every or max(K, 1)
        out = np.zeros((qa.shape[0], qb.shape[1]), np.float32)
        for k0 in range(0, K, N):
            # the tensor-core step on this chunk (values of fp16 hold both fp8 formats;
            # the BlockFMA model sees only the exact products), then one IEEE binary32
            # RNE addition into the fp32 accumulator (numpy's float32 add)
            part = sf.matmul_values(qa[:, k0:k0 + N], qb[k0:k0 + N], _FP16, acc=mdl.step,
                                    check=False, out_dtype=np.float32)
            if mdl.promote_every is None:
                out = part
                break
            with np.errstate(over="ignore", invalid="ignore"):
                out = out + part
    if np.float32(alpha) == 1:
        return out        # x * 1 = x (GEMM results hold no signaling NaN): no extra pass
    with np.errstate(over="ignore", invalid="ignore"):
        out *= np.float32(alpha)      # in place: out is this function's own array
        return out


# (M, emin, largest magnitude encoding, largest value) of e4m3 and e5m2
_ELEM = {f: _mx.elem_params(_mx.block_format(n))[:3] + (float(f.max),)
         for f, n in ((_FWD, "mxfp8_e4m3"), (_BWD, "mxfp8_e5m2"))}


def _amax_bits(v):
    """The largest float32 magnitude of v as its bits (>= 0x7F800000: a NaN or an
    infinity is present), one vectorised pass (softfloat._kernels.mx.amax_chunk)."""
    flat = v.reshape(-1)
    if flat.size < MIN_PARALLEL:
        return int(_K.amax_chunk(0, flat.size, flat))
    parts = []
    run_chunks(lambda lo, hi, x: parts.append(int(_K.amax_chunk(lo, hi, x))) or 0,
               flat.size, flat)
    return max(parts)


def _scale_round(v, s, fmt):
    """The values of ``mx.quantize_per_tensor(v, fmt, scale=s)`` (float32 out) for
    finite C-contiguous float32 v, and the largest magnitude of v (its bits), in one
    pass (softfloat._kernels.mx.scale_values_chunk: v * s is exact in float64, 24 + 24
    significant bits; then the element rounding of the fast MX kernels, nearest
    even, saturating at fmt.max: the same single rounding of the exact product as
    quantize_per_tensor's). Compared bit for bit with softfloat.mx's general kernel
    in tests/test_nn_fp8.py."""
    M, emin, maxmag, maxval = _ELEM[fmt]
    flat = v.reshape(-1)
    out = np.empty(flat.size, np.float32)
    if flat.size < MIN_PARALLEL:
        am = int(_K.scale_values_chunk(0, flat.size, flat, np.float64(s), out, M, emin, maxmag,
                                       maxval))
    else:
        parts = []
        run_chunks(lambda lo, hi, *a: parts.append(int(_K.scale_values_chunk(lo, hi, *a))) or 0,
                   flat.size, flat, np.float64(s), out, M, emin, maxmag, maxval)
        am = max(parts)
    return out.reshape(v.shape), am


class FP8Recipe:
    """The state of one recipe in a `nn.Precision` (delayed-scaling histories, the
    stochastic-rounding stream). See the module docstring for the recipes."""

    def __init__(self, recipe, *, fp8_gemm="fp32", amax_history_len=1024, amax_margin=0,
                 amax_algo="max", grad_rounding="nearest_even", seed=0):
        if recipe not in RECIPES:
            raise ValueError(f"recipe must be one of {RECIPES}, got {recipe!r}")
        if fp8_gemm not in FP8_GEMMS:
            raise ValueError(f"fp8_gemm must be one of {FP8_GEMMS}, got {fp8_gemm!r}")
        if fp8_gemm != "fp32" and recipe not in ("fp8_current", "fp8_delayed"):
            raise ValueError(f"fp8_gemm={fp8_gemm!r} models Hopper's per-tensor fp8 GEMM; "
                             f"recipe {recipe!r} needs fp8_gemm='fp32'")
        if grad_rounding not in ("nearest_even", "stochastic"):
            raise ValueError(f"grad_rounding must be 'nearest_even' or 'stochastic', got "
                             f"{grad_rounding!r}")
        if grad_rounding == "stochastic" and recipe != "nvfp4":
            raise ValueError("grad_rounding='stochastic' is an option of recipe='nvfp4'")
        if not isinstance(amax_history_len, int) or amax_history_len < 1:
            raise ValueError(f"amax_history_len must be a positive int, got {amax_history_len!r}")
        if amax_algo not in ("max", "most_recent"):
            raise ValueError(f"amax_algo must be 'max' or 'most_recent', got {amax_algo!r}")
        self.recipe, self.gemm = recipe, fp8_gemm
        self.model = None if fp8_gemm == "fp32" else fp8_gemm
        self.history_len, self.margin, self.algo = amax_history_len, amax_margin, amax_algo
        self.grad_rounding = grad_rounding
        self.rng = np.random.default_rng(seed)
        self.delayed: dict = {}          # (site, role) -> softfloat.mx.DelayedScaling
        #: False: every quantization by softfloat.mx's general kernels (the slow twin
        #: of the one-pass quantizers; tests compare whole training runs)
        self.fast = True

    # ---- quantizers ------------------------------------------------------
    def per_tensor(self, v, role, site, fast=None):
        """(element values as float32, 1/scale as float32) of a per-tensor scaled
        tensor; role "x", "w" (e4m3) or "dy" (e5m2). ``fast=False``: by
        `softfloat.mx` itself with its fast kernels off (`DelayedScaling.quantize` /
        `quantize_per_tensor`, then the codes' values); ``fast=True`` (finite
        float32 input): `_scale_round`, compared with it bit for bit in tests."""
        fmt = _BWD if role == "dy" else _FWD
        fast = self.fast if fast is None else fast
        v = np.asarray(v)
        ds = None
        if self.recipe == "fp8_delayed":
            key = (site, role)
            ds = self.delayed.get(key)
            if ds is None:
                ds = self.delayed[key] = _mx.DelayedScaling(
                    fmt, margin=self.margin, history_len=self.history_len, algo=self.algo)
        if fast and v.dtype == np.float32 and v.size:
            v = np.ascontiguousarray(v)
            if ds is not None:
                s = ds.scale                      # this step's scale: known beforehand
                vals, am = _scale_round(v, s, fmt)
            else:
                am = _amax_bits(v)
                s = _mx.fp8_scale(float(np.uint32(am).view(np.float32)), fmt, self.margin) \
                    if am < 0x7F800000 else None
                vals = _scale_round(v, s, fmt)[0] if s is not None else None
            if am < 0x7F800000:                   # finite: the fast values stand
                if ds is not None:
                    # DelayedScaling.quantize's bookkeeping: the history (amax of the
                    # finite values: all of them here) and the next scale
                    ds.amax_history.append(float(np.uint32(am).view(np.float32)))
                    ds.amax_history = ds.amax_history[-ds.history_len:]
                    h = max(ds.amax_history) if ds.algo == "max" else ds.amax_history[-1]
                    ds.scale = _mx.fp8_scale(h, ds.fmt, ds.margin, previous=ds.scale)
                return vals, np.float32(1.0) / np.float32(s)     # TE's scale_inv (fp32)
        with sf.localcontext(fast_paths=fast):
            if ds is not None:
                codes, s = ds.quantize(v)
            else:
                codes, s = _mx.quantize_per_tensor(v, fmt, margin=self.margin)
        vals = _LUT[fmt][codes]               # = sf.from_bits(codes, fmt), exact in float32
        return vals, np.float32(1.0) / np.float32(s)

    def blocked(self, v, role, axis, fast=None, ts=None):
        """(values as float32, alpha) of a block-scaled operand, blocks along ``axis``
        (its GEMM's reduction axis). MXFP8: the values X * P (exact powers of two
        times element values), alpha 1. NVFP4: X * P without the per-tensor scale ts,
        alpha = ts (applied after the GEMM, as cuBLAS's alpha). Both by
        `softfloat.mx.quantize_values` (one pass, values out; its fast kernels are
        compared with the general ones in tests); ``fast=False``: softfloat.mx's
        quantize + dequantize with its fast kernels off. ``ts``: NVFP4's per-tensor
        scale of this very tensor when already known (`softfloat.mx.nvfp4_tensor_scale`
        of v; the forward pass's, reused by the backward GEMMs)."""
        v = np.asarray(v)
        fast = self.fast if fast is None else fast
        if fast and self.recipe == "nvfp4" and not (role == "dy" and
                                                     self.grad_rounding == "stochastic"):
            # nearest-even NVFP4: quantize_values (and the tensor scale) with the
            # argument handling cut short (softfloat.mx.nvfp4_values_nearest)
            return _mx.nvfp4_values_nearest(v, axis, ts)
        if self.recipe == "mxfp8":
            fmt = "mxfp8_e5m2" if role == "dy" else "mxfp8_e4m3"
            kw = {}
            alpha = 1.0
        else:
            fmt = "nvfp4"
            if ts is None:
                ts = _mx.nvfp4_tensor_scale(v)
            sr = role == "dy" and self.grad_rounding == "stochastic"
            kw = dict(tensor_scale=ts, rounding="stochastic" if sr else "nearest_even",
                      seed=self.rng if sr else None)
            alpha = ts
        if fast:
            return _mx.quantize_values(v, fmt, axis=axis, **kw), alpha
        with sf.localcontext(fast_paths=False):
            codes, scales = _mx.quantize(v, fmt, axis=axis, **kw)
            return _mx.dequantize(codes, scales, fmt, axis=axis).astype(np.float32), alpha

    # ---- the linear layer's three GEMMs ---------------------------------
    def forward(self, a, b, site):
        """a (m, k) @ b (k, n) of fp32 values; returns (out, ctx for `backward`)."""
        if self.recipe in ("fp8_current", "fp8_delayed"):
            qa, ia = self.per_tensor(a, "x", site)
            qb, ib = self.per_tensor(b, "w", site)
            out = fp8_gemm(qa, qb, ia * ib, self.model)
            return out, (qa, ia, qb, ib, site)
        qa, ta = self.blocked(a, "x", -1)
        qb, tb = self.blocked(b, "w", 0)
        out = fp8_gemm(qa, qb, np.float32(np.float32(ta) * np.float32(tb)))
        return out, (a, b, site, ta, tb)

    def backward(self, g, ctx, need_a, need_b):
        """Gradients (da, db) of the forward GEMM from dy = g (fp32 (m, n)); None
        for the ones not needed."""
        da = db = None
        if self.recipe in ("fp8_current", "fp8_delayed"):
            qa, ia, qb, ib, site = ctx
            qg, ig = self.per_tensor(g, "dy", site)
            if need_a:
                da = fp8_gemm(qg, qb.T, ig * ib, self.model)
            if need_b:
                db = fp8_gemm(qa.T, qg, ia * ig, self.model)
            return da, db
        a, b, site, ta, tb = ctx     # NVFP4: x's and W's tensor scales, from the forward
        tg = None                    # dy's, from its first quantization
        # The transposed operands are quantized in place along the other axis and then
        # viewed transposed (no copies): W^T (n, k) blocked along its axis 0 is W (k, n)
        # blocked along axis 1, transposed; x^T (k, m) blocked along its last axis is
        # x (m, k) blocked along axis 0, transposed (same blocks, same values; for
        # stochastic rounding the same element indices, the blocked axis moved last).
        if need_a:       # dy (m, n) @ W^T (n, k): reduce over n
            qg, tg = self.blocked(g, "dy", -1)
            qb, tb = self.blocked(b, "w", 1, ts=tb)
            da = fp8_gemm(qg, qb.T, np.float32(np.float32(tg) * np.float32(tb)))
        if need_b:       # x^T (k, m) @ dy (m, n): reduce over m
            qa, ta = self.blocked(a, "x", 0, ts=ta)
            qg, tg = self.blocked(g, "dy", 0, ts=tg)
            db = fp8_gemm(qa.T, qg, np.float32(np.float32(ta) * np.float32(tg)))
        return da, db
