"""`mma`: run a `MatrixUnit` model on encodings, any K as a chain of instructions."""
from __future__ import annotations

import numpy as np

from .. import _validate as V
from ..context import Policy, getcontext
from ..formats import FP32, FP64
from .amd import chain32, exact, fma64, two_stage
from .decode import Operands
from .flags import unit_flags
from .fused import run_fused
from .model import MatrixUnit

# The policy fields a matrix unit fixes itself (its rounding, subnormal, NaN and
# overflow rules are the instruction's); a policy may change fast_paths only.
_FIXED = ("rounding", "ftz", "daz", "tininess", "nan", "overflow", "saturation")
_DEFAULT = Policy()


def truncate_tf32(bits) -> np.ndarray:
    """tf32 encodings read from fp32 encodings the way the tensor cores do: the
    13 low fraction bits dropped (truncation; a NaN whose payload lies only in
    those bits reads as infinity)."""
    x = V.as_bits(bits, FP32, "bits")
    return (x >> np.uint32(13)).astype(np.uint32)


def _check_model(model):
    if not isinstance(model, MatrixUnit):
        raise TypeError(f"model must be a softfloat.mma.MatrixUnit (see tensor_core), got "
                        f"{type(model).__name__}")


def unit_fast_paths(model, policy) -> bool:
    """Whether a matrix-unit call takes the fast kernels: ``policy.fast_paths``
    (a `softfloat.Policy`), or the context's with ``policy=None``. The model fixes
    every other rule: a policy that changes one (rounding, ftz, daz, tininess,
    nan, overflow, saturation) is refused (ValueError), never ignored."""
    if policy is None:
        return bool(getcontext().fast_paths)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a softfloat.Policy, got {type(policy).__name__}")
    changed = [f for f in _FIXED if getattr(policy, f) != getattr(_DEFAULT, f)]
    if changed:
        raise ValueError(f"{model.arch} {model.instruction}: a matrix unit's rounding, "
                         f"subnormal, NaN and overflow rules are the instruction's; a policy "
                         f"may change fast_paths only, not {', '.join(changed)}")
    return policy.fast_paths


def _shared_fold(A, B, SA, SB):
    """How a batch is run without copying a shared operand per batch entry: "cols"
    when A (and scale_a) has no batch of its own (the batch of B becomes more
    columns of one product), "rows" when B (and scale_b) has none, else None.
    Every output is its own chain of instructions over a row of A and a column of
    B, so the fold changes no result."""
    one = lambda x: x is None or int(np.prod(x.shape[:-2], dtype=np.int64)) == 1  # noqa: E731
    if one(A) and one(SA):
        return "cols"
    if one(B) and one(SB):
        return "rows"
    return None


def mma(model, a, b, c=None, *, scale_a=None, scale_b=None, return_flags=False, policy=None):
    """D = A B + C through the instruction ``model`` (a `MatrixUnit`), K chained.

    ``a``: (..., m, K) encodings of ``model.a_fmt``; ``b``: (..., K, n) of
    ``model.b_fmt``; ``c``: encodings of ``model.c_fmt`` broadcastable to
    (..., m, n), or None (+0); leading axes broadcast. Block-scaled models also
    take ``scale_a`` (..., m, K // scale_block) and ``scale_b``
    (..., K // scale_block, n), encodings of ``model.scale_fmt`` (an fp8_e4m3
    scale is read without its sign bit, as the hardware's ue4m3).

    K is processed as ``ceil(K / model.k)`` instructions, each in steps of
    ``model.chunk`` products, the running D the next step's C (what a GEMM's main
    loop does). A K that is not a multiple of ``model.k`` is padded with zero
    products, as a GEMM pads its last K tile (block-scaled models: K must be a
    multiple of ``model.k``, ValueError otherwise). Zero terms count: they take
    the exponent ``model.e_zero``.

    Returns encodings of ``model.out_fmt`` of shape (..., m, n); with
    ``return_flags=True`` also uint8 flags per output (softfloat.flags bits):
    overflow (an infinite result from finite operands, with inexact), invalid
    (a NaN from non-NaN operands), and for outputs with finite operands inexact
    (the result is not the exact A B + C of the whole K) and underflow (inexact,
    and that exact value nonzero below the output format's smallest normal).
    A NaN operand or block scale makes a NaN output without invalid.

    ``policy``: a `softfloat.Policy` whose ``fast_paths`` chooses the fast kernels
    or their slow twins (default: the context's); the model fixes the other
    rules, and a policy that changes one is refused. A shared operand (an ``a``
    without the batch axes of ``b``, or the reverse) is not copied per batch entry.

    Kernels: `softfloat._kernels.mma.fdpa_chunk`, ``grouped_chunk`` and
    `softfloat._kernels.mma_chains.two_stage_chunk`, ``exact_chunk``,
    ``ftz_chain_chunk``, ``fma32_chunk`` (references), and the fast ones of
    `softfloat._kernels.mma_fast` and `softfloat._kernels.mma_amd` (driven by
    `softfloat.mma.fused` and `softfloat.mma.amd`).
    """
    _check_model(model)
    fast = unit_fast_paths(model, policy)
    return_flags = V.boolean(return_flags, "return_flags")
    A = V.as_bits(a, model.a_fmt, "a")
    B = V.as_bits(b, model.b_fmt, "b")
    A, B, m, K, n, batch = V.matrix_operands("mma", A, B, k="K")
    if K < 1:
        raise ValueError("mma: K must be at least 1")
    shape = batch + (m, n)
    if model.scaled:
        if scale_a is None or scale_b is None:
            raise ValueError(f"mma: {model.instruction} is block-scaled: pass scale_a and "
                             f"scale_b ({model.scale_fmt.name} encodings, one per "
                             f"{model.scale_block} elements of K)")
        if K % model.k:
            raise ValueError(f"mma: block-scaled K must be a multiple of {model.k}, got {K}")
        nsb = K // model.scale_block
        SA = V.as_bits(scale_a, model.scale_fmt, "scale_a")
        SB = V.as_bits(scale_b, model.scale_fmt, "scale_b")
        if SA.ndim < 2 or SA.shape[-2:] != (m, nsb) or SB.ndim < 2 or SB.shape[-2:] != (nsb, n):
            raise ValueError(f"mma: scale_a must be (..., {m}, {nsb}) and scale_b "
                             f"(..., {nsb}, {n}), got {SA.shape} and {SB.shape}")
        batch = np.broadcast_shapes(batch, SA.shape[:-2], SB.shape[:-2])
        shape = batch + (m, n)
    elif scale_a is not None or scale_b is not None:
        raise ValueError(f"mma: {model.instruction} takes no block scales")
    else:
        SA = SB = None
    Cb = V.as_bits(c, model.c_fmt, "c") if c is not None else None
    if Cb is not None:
        try:
            np.broadcast_to(np.empty(Cb.shape, np.uint8), shape)
        except ValueError:
            raise ValueError(f"mma: c of shape {Cb.shape} does not broadcast to {shape}") \
                from None
    fold = _shared_fold(A, B, SA, SB) if len(batch) and int(np.prod(batch)) > 1 else None
    if fold is not None:
        return _folded(model, fold, A, B, Cb, SA, SB, batch, m, n, return_flags, fast)
    return _run(model, A, B, Cb, SA, SB, batch, return_flags, fast)


def _folded(model, fold, A, B, Cb, SA, SB, batch, m, n, return_flags, fast):
    """`mma` of a batch whose A (fold "cols") or B (fold "rows") is shared: one
    product with the batch of the other operand laid side by side (as columns of
    B, or rows of A), then the result put back in the batch's shape."""
    nb = int(np.prod(batch, dtype=np.int64))
    K = A.shape[-1]
    shape = batch + (m, n)
    C = None if Cb is None else np.broadcast_to(Cb, shape).reshape(nb, m, n)
    if fold == "cols":
        A2 = A.reshape(m, K)
        B2 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nb, K, n)
        B2 = np.ascontiguousarray(np.moveaxis(B2, 0, 1)).reshape(K, nb * n)
        SA2 = None if SA is None else SA.reshape(SA.shape[-2:])
        SB2 = None if SB is None else np.ascontiguousarray(np.moveaxis(
            np.broadcast_to(SB, batch + SB.shape[-2:]).reshape(nb, -1, n), 0, 1)).reshape(
            -1, nb * n)
        C2 = None if C is None else np.ascontiguousarray(np.moveaxis(C, 0, 1)).reshape(m, nb * n)
        r = _run(model, A2, B2, C2, SA2, SB2, (), return_flags, fast)
        back = lambda x: np.ascontiguousarray(np.moveaxis(  # noqa: E731
            x.reshape(m, nb, n), 1, 0)).reshape(shape)
    else:
        A2 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nb * m, K)
        B2 = B.reshape(K, n)
        SA2 = None if SA is None else np.broadcast_to(SA, batch + SA.shape[-2:]).reshape(
            nb * m, -1)
        SB2 = None if SB is None else SB.reshape(SB.shape[-2:])
        C2 = None if C is None else C.reshape(nb * m, n)
        r = _run(model, A2, B2, C2, SA2, SB2, (), return_flags, fast)
        back = lambda x: x.reshape(shape)  # noqa: E731
    if return_flags:
        return back(r[0]), back(r[1])
    return back(r)


def _run(model, A, B, Cb, SA, SB, batch, return_flags, fast):
    """`mma` on validated operands: A (..., m, K), B (..., K, n), c (None or
    broadcastable to batch + (m, n)), the block scales (or None), the batch."""
    ops = Operands(model, A, B, Cb, batch)
    alg = model.algorithm
    if alg in ("fdpa", "grouped"):
        out = np.empty(ops.nout, np.uint32)
        run_fused(model, ops, SA, SB, out, fast)
        res = out.astype(model.out_fmt.dtype, copy=False)
    elif alg in ("two_stage", "two_stage_pairs"):
        res = two_stage(model, ops, fast)
    elif alg == "exact":
        res = exact(model, ops, fast)
    elif alg == "fma" and model.a_fmt == FP64:
        res = fma64(model, ops, fast)
    else:
        res = chain32(model, ops, fast)
    res = res.reshape(batch + (ops.m, ops.n))
    if not return_flags:
        return res
    scales = None
    if model.scaled:
        nbt, m, n, nsb = ops.nbt, ops.m, ops.n, SA.shape[-1]
        scales = (np.broadcast_to(SA, batch + SA.shape[-2:]).reshape(nbt, m, nsb),
                  np.broadcast_to(SB, batch + SB.shape[-2:]).reshape(nbt, nsb, n))
    return res, unit_flags(model, res, ops.A3, ops.BT3, ops.C3 if ops.has_c else None, batch,
                           ops.m, ops.n, scales)


__all__ = ["mma", "truncate_tf32", "unit_fast_paths"]
