"""fp8 and fp4 training recipes: the GEMM operands of a linear layer quantized by
`softfloat.mx`, the products summed in fp32 (or by a Hopper fp8 accumulation model
of `softfloat.mx_gemm`), everything else (master weights, elementwise ops, the
loss, the optimizer) in fp32. ``nn.Precision(recipe=...)`` selects one:

``"fp8_current"`` / ``"fp8_delayed"`` (Transformer Engine's per-tensor scaling)
    Forward operands (activations x, weights W) as e4m3, the output gradient dy
    as e5m2 (TE's HYBRID format), each tensor with one fp32 scale s: codes =
    round(v * s) saturating (`softfloat.fp8_scaling.quantize_per_tensor`), values =
    code / s. Current scaling: s = fp8_max / amax(|v|) / 2**margin from this very
    tensor. Delayed scaling (`softfloat.fp8_scaling.DelayedScaling`): s from the amax
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
(MMA-Sim's wgmma on `softfloat.mma`: 32 products aligned with 13 fraction bits,
each chunk truncated to e8m13; promotion into an fp32 accumulator every 128
products or never). ``Precision(accumulate=<arch or tensor_core model>)`` runs
the GEMMs on that matrix unit instead: per-tensor recipes on its fp8
instructions chained along K (forward e4m3 x e4m3, backward e5m2 x e4m3 and
e4m3 x e5m2), MXFP8/NVFP4 on the block-scaled MMA of Blackwell / RTX Blackwell
(`softfloat.mx_gemm.mx_matmul` on the operands' codes and scales, quantized by
`softfloat.mx.quantize`; NVFP4's tensor scales as alpha).

Non-finite and tiny tensors: a NaN or an infinity in an NVFP4 operand leaves no
per-tensor scale; the operand is then NaN throughout (a GPU's NaN amax makes
every scale NaN), so the GEMM's result is NaN and the loss scaler skips the step
(``found_inf``), as for the other recipes. An all-subnormal operand gets a tensor
scale rounded up (`softfloat.mx.nvfp4_tensor_scale`); alpha = ts_a * ts_b in
fp32 may then underflow, as it would on the GPU.
"""
from __future__ import annotations

import contextlib

import numpy as np

import softfloat as sf
from softfloat import fp8_scaling as _scaling
from softfloat import mx as _mx
from softfloat import mx_gemm as _mxg

__all__ = ["RECIPES", "FP8_GEMMS", "FP8Recipe", "fp8_gemm"]

RECIPES = ("fp8_current", "fp8_delayed", "mxfp8", "nvfp4")
FP8_GEMMS = ("fp32", "hopper_fp8_fast", "hopper_fp8_promote128")
_FWD, _BWD = sf.get_format("fp8_e4m3"), sf.get_format("fp8_e5m2")
# formats that hold the GEMM operands' values: every e4m3, e5m2 and NVFP4 value (an
# e2m1 value times an e4m3 scale: at most 6 significant bits, 2**-10 to 2688) is an
# fp16 value; MXFP8's (an element value times a power of two from E8M0) are bf16
# values unless a block's largest magnitude lies below about 2**-117 (its values
# then fall below bf16's subnormals: the blas model reads no operand's format, and
# its bound covers products that round in float32)
_FP16, _BF16 = sf.FP16, sf.BF16


_NO_CHANGE = contextlib.nullcontext()
# the fp32 GEMM of the recipes: softfloat's bounded order="blas" model (a float32
# BLAS product)
_BLAS = sf.Accumulator(sf.FP32, "nearest_even", "blas")


def fp8_gemm(qa, qb, alpha, model=None, fmts=None, values=_FP16):
    """``alpha * (qa @ qb)``: qa (m, k), qb (k, n) float32 arrays of exact element
    values (products exact in fp32, see the module docstring), summed in fp32 by
    `softfloat.matmul_values` with the ``order="blas"`` accumulator (``model=None``;
    the operands are values of the format ``values``: fp16 for e4m3/e5m2 and NVFP4
    operands, bf16 for MXFP8's) or by a `softfloat.mx_gemm.FP8GemmModel` (name or
    object: a matrix unit chained along K, promoted or not) whose operands are
    values of ``fmts`` = (a's format, b's format) (default e4m3, e4m3); alpha
    (float32) multiplies the fp32 result once, rounded to nearest even. Returns
    float32 (m, n)."""
    if model is None:
        # matmul_values' validated-values entry point (check=False: the operands were
        # made as values of that format); the blas model is a float32 BLAS product
        out = sf.matmul_values(qa, qb, values, acc=_BLAS, check=False, out_dtype=np.float32)
    else:
        fa, fb = fmts if fmts is not None else (_FWD, _FWD)
        # the values are values of fa / fb (exact encodings), then the matrix unit
        # (softfloat.mx_gemm.fp8_matmul: softfloat.mma's instructions chained along K,
        # each interval's partial sum added into fp32 when the model promotes)
        with np.errstate(invalid="ignore"):
            A = sf.to_bits(np.ascontiguousarray(qa), fa)
            B = sf.to_bits(np.ascontiguousarray(qb), fb)
        out = _mxg.fp8_matmul(A, B, fa, fmt_b=fb, model=model).astype(np.float32)
    if np.float32(alpha) == 1:
        return out        # x * 1 = x (GEMM results hold no signaling NaN): no extra pass
    with np.errstate(over="ignore", invalid="ignore"):
        out *= np.float32(alpha)      # in place: out is this function's own array
        return out


def _finite(v):
    """Whether every value of v is finite (`softfloat.fp8_scaling.amax`: one pass;
    a NaN or an infinity shows in it)."""
    return bool(_scaling.amax(v) < np.inf)


class FP8Recipe:
    """The state of one recipe in a `nn.Precision` (delayed-scaling histories, the
    stochastic-rounding stream). See the module docstring for the recipes."""

    def __init__(self, recipe, *, fp8_gemm="fp32", amax_history_len=1024, amax_margin=0,
                 amax_algo="max", grad_rounding="nearest_even", seed=0, unit=None):
        if recipe not in RECIPES:
            raise ValueError(f"recipe must be one of {RECIPES}, got {recipe!r}")
        per_tensor = recipe in ("fp8_current", "fp8_delayed")
        if isinstance(fp8_gemm, str) and fp8_gemm.strip().lower() == "fp32":
            model = None
        else:
            try:
                model = _mxg.fp8_gemm_model(fp8_gemm)
            except (TypeError, ValueError) as ex:
                raise ValueError(f"fp8_gemm must be one of {FP8_GEMMS}, 'hopper_fp8_promote<N>' "
                                 f"or a softfloat.mx_gemm.FP8GemmModel, got {fp8_gemm!r} "
                                 f"({ex})") from None
        if model is not None and not per_tensor:
            raise ValueError(f"fp8_gemm={fp8_gemm!r} models Hopper's per-tensor fp8 GEMM; "
                             f"recipe {recipe!r} needs fp8_gemm='fp32' (a block-scaled "
                             f"matrix unit: accumulate='blackwell' or 'rtx_blackwell')")
        if unit is not None and model is not None:
            raise ValueError("give the recipe's matrix unit once: accumulate=<arch> (the unit "
                             "chained along K) or fp8_gemm=<model> (a unit and a promotion "
                             "interval), not both")
        self.unit = unit
        if unit is not None and per_tensor:
            model = _mxg.FP8GemmModel(unit, None)          # validates the unit
        elif unit is not None:
            # block-scaled MMA on that architecture (validated on first use as well)
            arch = unit if isinstance(unit, str) else getattr(unit, "arch", None)
            if arch is None or _mma_arch(arch) not in ("blackwell", "rtx_blackwell"):
                raise ValueError(f"recipe {recipe!r} needs a block-scaled matrix unit "
                                 f"(accumulate='blackwell' or 'rtx_blackwell', or such a "
                                 f"softfloat.tensor_core model), got {unit!r}")
        try:
            g = sf.get_rounding(grad_rounding)
        except ValueError:
            g = None
        if g not in (sf.Rounding.NEAREST_EVEN, sf.Rounding.STOCHASTIC):
            raise ValueError(f"grad_rounding must be 'nearest_even' or 'stochastic', got "
                             f"{grad_rounding!r}")
        sr_grads = g == sf.Rounding.STOCHASTIC
        if sr_grads and recipe != "nvfp4":
            raise ValueError("grad_rounding='stochastic' is an option of recipe='nvfp4'")
        if not isinstance(amax_history_len, int) or amax_history_len < 1:
            raise ValueError(f"amax_history_len must be a positive int, got {amax_history_len!r}")
        if amax_algo not in ("max", "most_recent"):
            raise ValueError(f"amax_algo must be 'max' or 'most_recent', got {amax_algo!r}")
        self.recipe, self.gemm = recipe, fp8_gemm
        self.model = model
        self.history_len, self.margin, self.algo = amax_history_len, amax_margin, amax_algo
        self.grad_rounding = g.label
        self._sr_grads = sr_grads          # stochastic rounding of the dy operands
        self.rng = np.random.default_rng(seed)
        self._gemm_values = _BF16 if recipe == "mxfp8" else _FP16    # (fp8_gemm's values=)
        self.delayed: dict = {}          # (site, role) -> softfloat.fp8_scaling.DelayedScaling
        #: False: every quantization by softfloat.mx's general kernels (the slow twin
        #: of the one-pass quantizers; tests compare whole training runs)
        self.fast = True

    # ---- quantizers ------------------------------------------------------
    def per_tensor(self, v, role, site, fast=None):
        """(element values as float32, 1/scale as float32) of a per-tensor scaled
        tensor; role "x", "w" (e4m3) or "dy" (e5m2). The values of
        `softfloat.fp8_scaling.quantize_per_tensor_values` (current scaling) or
        `DelayedScaling.quantize_values` (delayed): one pass for finite float32
        tensors; ``fast=False``: with softfloat's fast kernels off (the general
        kernel of `quantize_per_tensor`, then the codes' values)."""
        fmt = _BWD if role == "dy" else _FWD
        fast = self.fast if fast is None else fast
        v = np.asarray(v)
        # fast=False: softfloat's fast kernels off for this call (the general kernel)
        with (sf.localcontext(fast_paths=False) if not fast else _NO_CHANGE):
            if self.recipe == "fp8_delayed":
                key = (site, role)
                ds = self.delayed.get(key)
                if ds is None:
                    ds = self.delayed[key] = _scaling.DelayedScaling(
                        fmt, margin=self.margin, history_len=self.history_len,
                        algo=self.algo)
                vals, s, am = ds.quantize_values(v, return_amax=True)
            else:
                vals, s, am = _scaling.quantize_per_tensor_values(v, fmt, margin=self.margin,
                                                                  return_amax=True)
        if not am < np.inf:
            inf = np.isinf(v)
            if inf.any():
                # an infinite element is not saturated into the tensor: the GPU's cast
                # of inf * scale gives inf (e5m2) or NaN (e4m3: no infinity), so the
                # GEMM's result is not finite and the loss scaler skips the step
                # (found_inf), as for a NaN
                vals = np.where(inf, v if fmt.has_inf else np.float32(np.nan), vals) \
                    .astype(np.float32)
        return vals, np.float32(1.0) / np.float32(s)         # TE's scale_inv (fp32)

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
        if self.recipe == "nvfp4":
            # a NaN or an infinity leaves no per-tensor scale (amax is not finite): the
            # operand becomes NaN throughout, as a NaN amax makes every scale NaN on a
            # GPU, so the GEMM's result is NaN and the loss scaler skips the step
            # (found_inf), as with the other recipes; a NaN ts from the forward pass
            # marks the same operand in the backward GEMMs
            if ts is None and not _finite(v):
                ts = float("nan")
            if ts is not None and ts != ts:
                return np.full(v.shape, np.nan, np.float32), np.float32(np.nan)
        if fast and self.recipe == "nvfp4" and not (role == "dy" and self._sr_grads):
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
            sr = role == "dy" and self._sr_grads
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
            out = fp8_gemm(qa, qb, ia * ib, self.model, (_FWD, _FWD))
            return out, (qa, ia, qb, ib, site)
        if self.unit is not None:
            return self._unit_forward(a, b, site)
        qa, ta = self.blocked(a, "x", -1)
        qb, tb = self.blocked(b, "w", 0)
        out = fp8_gemm(qa, qb, np.float32(np.float32(ta) * np.float32(tb)),
                       values=self._gemm_values)
        return out, (a, b, site, ta, tb)

    def backward(self, g, ctx, need_a, need_b):
        """Gradients (da, db) of the forward GEMM from dy = g (fp32 (m, n)); None
        for the ones not needed."""
        da = db = None
        if self.recipe in ("fp8_current", "fp8_delayed"):
            qa, ia, qb, ib, site = ctx
            qg, ig = self.per_tensor(g, "dy", site)
            if need_a:
                da = fp8_gemm(qg, qb.T, ig * ib, self.model, (_BWD, _FWD))
            if need_b:
                db = fp8_gemm(qa.T, qg, ia * ig, self.model, (_FWD, _BWD))
            return da, db
        if self.unit is not None:
            return self._unit_backward(g, ctx, need_a, need_b)
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
            da = fp8_gemm(qg, qb.T, np.float32(np.float32(tg) * np.float32(tb)),
                         values=self._gemm_values)
        if need_b:       # x^T (k, m) @ dy (m, n): reduce over m
            qa, ta = self.blocked(a, "x", 0, ts=ta)
            qg, tg = self.blocked(g, "dy", 0, ts=tg)
            db = fp8_gemm(qa.T, qg, np.float32(np.float32(ta) * np.float32(tg)),
                         values=self._gemm_values)
        return da, db

    # ---- block-scaled recipes on a matrix unit (accumulate=<arch>) -------
    def _codes(self, v, role, axis, ts=None):
        """(codes, scales, block format, ts) of a block-scaled operand, blocks along
        ``axis`` (softfloat.mx.quantize; NVFP4: ts the per-tensor scale, NaN for a
        tensor with a NaN or an infinity, whose codes are then None)."""
        v = np.asarray(v)
        if self.recipe == "mxfp8":
            fmt = "mxfp8_e5m2" if role == "dy" else "mxfp8_e4m3"
            c, s = _mx.quantize(v, fmt, axis=axis)
            return c, s, fmt, None
        if ts is None:
            ts = _mx.nvfp4_tensor_scale(v) if _finite(v) else float("nan")
        if ts != ts:
            return None, None, "nvfp4", ts
        sr = role == "dy" and self._sr_grads
        c, s = _mx.quantize(v, "nvfp4", axis=axis, tensor_scale=ts,
                            rounding="stochastic" if sr else "nearest_even",
                            seed=self.rng if sr else None)
        return c, s, "nvfp4", ts

    def _unit_gemm(self, qa, qb):
        """One block-scaled GEMM on the recipe's matrix unit (softfloat.mx_gemm.mx_matmul):
        qa = (codes (m, k), scales, fmt, ts) blocked along k, qb = (codes (k, n), ...)."""
        ca, sa, fa, ta = qa
        cb, sb, fb, tb = qb
        if ca is None or cb is None:                      # a non-finite NVFP4 operand
            return None
        u = self.unit
        kw = dict(arch=u) if isinstance(u, str) else dict(arch=u.arch, instruction=u.instruction)
        if fa == "nvfp4":
            kw.update(tensor_scale_a=np.float32(ta), tensor_scale_b=np.float32(tb))
        return _mxg.mx_matmul(ca, sa, cb, sb, fa, fmt_b=fb, **kw).astype(np.float32)

    def _unit_forward(self, a, b, site):
        qa = self._codes(a, "x", -1)
        qb = self._codes(b, "w", 0)
        out = self._unit_gemm(qa, qb)
        if out is None:
            out = np.full((a.shape[0], b.shape[1]), np.nan, np.float32)
        return out, (a, b, site, qa[3], qb[3])

    def _unit_backward(self, g, ctx, need_a, need_b):
        a, b, site, ta, tb = ctx
        da = db = None
        tg = None
        if need_a:       # dy (m, n) @ W^T (n, k): reduce over n
            qg = self._codes(g, "dy", -1)
            tg = qg[3]
            cw, sw, fw, tw = self._codes(b, "w", 1, ts=tb)
            qw = (None if cw is None else cw.T, None if sw is None else sw.T, fw, tw)
            da = self._unit_gemm(qg, qw)
            if da is None:
                da = np.full((g.shape[0], b.shape[0]), np.nan, np.float32)
        if need_b:       # x^T (k, m) @ dy (m, n): reduce over m
            cx, sx, fx, tx = self._codes(a, "x", 0, ts=ta)
            qx = (None if cx is None else cx.T, None if sx is None else sx.T, fx, tx)
            qg = self._codes(g, "dy", 0, ts=tg)
            db = self._unit_gemm(qx, qg)
            if db is None:
                db = np.full((a.shape[1], g.shape[1]), np.nan, np.float32)
        return da, db


def _mma_arch(arch):
    from softfloat.mma import canonical_arch
    return canonical_arch(arch)
