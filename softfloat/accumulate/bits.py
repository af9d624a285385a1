"""The encodings API: `sum`, `dot` and `matmul` of encodings of a format under an
accumulation model. Each validates its operands and keywords, builds the model
(`models.resolve_model`), brings the operands to shape (nb, m, K) [and (nb, K, n)],
runs `dispatch._accumulate` and converts the accumulator's encodings to
``out_fmt`` (`_finish`), OR-ing the flags into the context's sticky flags.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _validate as V
from ..context import Policy
from ..conversions import convert, to_bits
from ..flags import Flags
from ..formats import Format, get_format
from ..mma import MatrixUnit
from .dispatch import _accumulate, _resolve_for
from .models import BlockFMA, resolve_model

__all__ = ["sum", "dot", "matmul"]


def _finish(out, flg, allf, afmt: Format, out_fmt, out_rounding, res, policies, shape,
            return_flags):
    ctx = res.flags_sink()
    if allf:
        ctx.flags |= Flags(int(allf))
    ofmt = afmt if out_fmt is None else get_format(out_fmt)
    if ofmt != afmt:
        if policies.get("policy") is not None:
            # the caller's policy value; out_rounding (if given) in place of its rounding
            p = policies["policy"]
            r = convert(out, afmt, ofmt, return_flags=return_flags,
                        policy=p if out_rounding is None else p.replace(rounding=out_rounding))
        else:
            r = convert(out, afmt, ofmt, out_rounding, return_flags=return_flags, **policies)
        if return_flags:
            out, f2 = r
            flg = flg | f2
        else:
            out = r
    out = out.reshape(shape)
    if return_flags:
        return out, flg.reshape(shape)
    return out


_POLICY_KEYS = ("subnormals", "ftz", "daz", "overflow", "tininess", "nan", "sr_bits", "seed",
                "rng", "policy")


def _split_policies(policies):
    bad = set(policies) - set(_POLICY_KEYS)
    if bad:
        raise TypeError(f"unexpected keyword(s) {sorted(bad)}; policies are {_POLICY_KEYS}")
    return policies


def _unit_policy(model, policies, res):
    """The policy a matrix unit runs under: ``policy=`` as given (`softfloat.mma`
    refuses one that changes the unit's rules), else the context's fast_paths
    only. The unit fixes its rounding, subnormal, NaN and overflow rules: a
    policy keyword given with it is refused, never ignored."""
    given = sorted(k for k, v in policies.items() if v is not None and k != "policy")
    if given:
        raise ValueError(f"{model.arch} {model.instruction}: a matrix unit's rounding, "
                         f"subnormal, NaN and overflow rules are the instruction's; do not "
                         f"pass {', '.join(g + '=' for g in given)} (out_fmt= and "
                         f"out_rounding= round its result afterwards)")
    if policies.get("policy") is not None:
        return res
    return Policy(fast_paths=res.fast_paths, context=res.context)


def matmul(a, b, fmt, *, acc=None, order="sequential", block=None, products=None,
           product_fmt=None, kahan=False, out_fmt=None, rounding=None, out_rounding=None,
           c=None, return_flags=False, **policies):
    """Matrix product of encodings of ``fmt`` with an explicit accumulation model.

    ``a`` (..., m, k) and ``b`` (..., k, n) as in `numpy.matmul` (1-D operands
    promoted and the added axis removed; leading axes broadcast). See the module
    docstring for ``acc``, ``order``, ``block``, ``products``, ``kahan``; ``rounding``
    is the accumulator's rounding (default: the context's), ``out_fmt`` and
    ``out_rounding`` the final conversion (default: keep the accumulator's format).
    ``c``: initial accumulator (encodings of the accumulator's format).

    Wraps `softfloat._kernels.accum.reduce_program` / `block_fma.block_fma` /
    `accum_f32.matmul_f32_seq` (the float32 fast path).
    """
    policies = _split_policies(policies)
    fin = V.target_format(fmt)
    A = V.as_bits(a, fin, "a")
    B = V.as_bits(b, fin, "b")
    va, vb = A.ndim == 1, B.ndim == 1
    A, B, m, K, n, batch = V.matrix_operands("matmul", A, B, vectors=True)
    nbt = int(np.prod(batch, dtype=np.int64))
    A3 = np.ascontiguousarray(np.broadcast_to(A, batch + (m, K))).reshape(nbt, m, K)
    B3 = np.ascontiguousarray(np.broadcast_to(B, batch + (K, n))).reshape(nbt, K, n)
    model = resolve_model(acc, fin, order, block, products, product_fmt, kahan, rounding)
    res = _resolve_for(model, rounding, policies)
    if isinstance(model, MatrixUnit):
        res = _unit_policy(model, policies, res)
    shape = batch + (m, n)
    C3 = None
    if c is not None:
        Cb = V.as_bits(c, model.c_fmt if isinstance(model, MatrixUnit) else model.fmt, "c")
        C3 = np.ascontiguousarray(np.broadcast_to(Cb, shape)).reshape(nbt, m, n)
    out, flg, allf = _accumulate(A3, B3, True, C3, model, fin, res, return_flags)
    final = batch + ((m,) if not va else ()) + ((n,) if not vb else ())
    return _finish(out, flg, allf, model.fmt, out_fmt, out_rounding, res, policies, final,
                   return_flags)


def dot(a, b, fmt, *, acc=None, order="sequential", block=None, products=None,
        product_fmt=None, kahan=False, out_fmt=None, rounding=None, out_rounding=None,
        return_flags=False, **policies):
    """Inner product of two 1-D arrays of encodings of ``fmt`` (a 0-d array out);
    the model's keywords as in `matmul`."""
    fin = V.target_format(fmt)
    A = V.as_bits(a, fin, "a")
    B = V.as_bits(b, fin, "b")
    if A.ndim != 1 or B.ndim != 1 or A.shape != B.shape:
        raise ValueError(f"dot: expected two 1-D arrays of the same length, got shapes "
                         f"{A.shape} and {B.shape}")
    return matmul(A, B, fin, acc=acc, order=order, block=block, products=products,
                  product_fmt=product_fmt, kahan=kahan, out_fmt=out_fmt, rounding=rounding,
                  out_rounding=out_rounding, return_flags=return_flags, **policies)


def sum(x, fmt, axis=-1, *, acc=None, order="sequential", block=None, kahan=False,
        out_fmt=None, rounding=None, out_rounding=None, return_flags=False, **policies):
    """Sum encodings of ``fmt`` along ``axis`` (an int, or None for all elements)
    with an explicit accumulation model (see the module docstring; a `BlockFMA`
    model sums the terms as products with 1)."""
    policies = _split_policies(policies)
    fin = V.target_format(fmt)
    X = V.as_bits(x, fin, "x")
    if axis is None:
        X = X.reshape(1, X.size)
        shape = ()
    else:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"axis must be an int or None, got {axis!r}")
        if X.ndim == 0:
            raise ValueError("sum: a 0-d array has no axis; use axis=None")
        ax = operator.index(axis)
        if not -X.ndim <= ax < X.ndim:
            raise ValueError(f"axis {ax} is out of bounds for an array of dimension {X.ndim}")
        X = np.moveaxis(X, ax, -1)
        shape = X.shape[:-1]
        X = X.reshape(int(np.prod(shape, dtype=np.int64)), X.shape[-1])
    model = resolve_model(acc, fin, order, block, None, None, kahan, rounding)
    res = _resolve_for(model, rounding, policies)
    if isinstance(model, MatrixUnit):
        res = _unit_policy(model, policies, res)
    A3 = np.ascontiguousarray(X)[None]
    if isinstance(model, (BlockFMA, MatrixUnit)):
        one = to_bits(np.ones(A3.shape[2:], np.float64), fin)
        B3 = np.ascontiguousarray(one.reshape(1, -1, 1))
        out, flg, allf = _accumulate(A3, B3, True, None, model, fin, res, return_flags)
    else:
        out, flg, allf = _accumulate(A3, None, False, None, model, fin, res, return_flags)
    return _finish(out, flg, allf, model.fmt, out_fmt, out_rounding, res, policies, shape,
                   return_flags)
