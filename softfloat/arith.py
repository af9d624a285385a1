"""Arithmetic on encodings: IEEE 754 operations of any simulated format, in every
rounding mode and policy, with flags.

Every function takes unsigned integer arrays of encodings of ``fmt`` (its storage
dtype: uint8, uint16 or uint32), of any shapes that broadcast together, and
returns encodings (or bools, or integers) of the broadcast shape. With
``return_flags=True`` it also returns the per-element IEEE flags (uint8,
SoftFloat's bit values: inexact 1, underflow 2, overflow 4, infinite 8,
invalid 16). The OR of all flags raised goes into the context's sticky flags.

Policies (``rounding``, ``subnormals``, ``ftz``, ``daz``, ``overflow``,
``tininess``, ``nan``, ``sr_bits``, ``seed``, ``rng``) are those of
`softfloat.to_bits`; None reads the current `softfloat.Context`. ``daz`` reads
subnormal operands as zero; ``ftz`` flushes subnormal results to zero.

NaN results follow the ``nan`` policy: ``propagate`` returns the first NaN
operand (a, then b, then c), quieted, with its sign and payload (x86 SSE,
SoftFloat 8086-SSE), and the format's default NaN for an invalid operation
without NaN operands; ``canonical`` always the default NaN; an int, that
pattern. fma(0, inf, c) is invalid and gives the default NaN even when c is a
quiet NaN (SoftFloat). A signaling NaN operand raises invalid. Formats without
infinity (fn, fnuz) give NaN (invalid) for an infinite result, or their largest
value when overflow saturates, as conversions do; x/0 raises infinite too.

Wrapped kernels: `softfloat._kernels.arith` (binary_array, fma_array,
unary_array, compare_array, to_int_array, from_int_array).
"""
from __future__ import annotations

import numpy as np

from . import _validate, specialize
from . import stochastic as _sr
from ._kernels import arith as kernels
from ._kernels import eft
from ._kernels import hw
from ._kernels.arith_fast import binary_fast_array
from ._parallel import chunk_count, run_chunks_each
from .context import random_key, resolve
from .flags import Flags
from .rounding import Rounding

__all__ = [
    "add", "sub", "mul", "div", "fma", "sqrt",
    "neg", "abs", "copysign",
    "eq", "ne", "lt", "le", "gt", "ge", "unordered",
    "eq_signaling", "ne_signaling", "lt_signaling", "le_signaling", "gt_signaling",
    "ge_signaling",
    "minimum", "maximum", "minimum_number", "maximum_number",
    "round_to_integral", "to_int32", "to_int64", "from_int",
]


# ---------------------------------------------------------------------------
# plumbing
# ---------------------------------------------------------------------------
def _policy(fmt, rounding, policy, **keywords):
    """The format and the policy of one call, each parsed once (in this order: a
    bad format is reported before a bad policy)."""
    f = _validate.target_format(fmt)
    return f, resolve(rounding, policy=policy, **keywords)


def _setup(f, res):
    """The kernel tuple and random key of a call's policy in its format."""
    pol = res.kernel_tuple(f)
    key = random_key(res.seed) if res.rounding == Rounding.STOCHASTIC else 0
    return pol, key


def _kdtype(f):
    """The dtype the fast kernels see: encodings of 8-bit formats are widened to
    uint16, so that each compiles for two array types (uint16, uint32), not three.
    The general kernels see uint32 only (`_validate.KERNEL_BITS`): one signature each."""
    return np.dtype(np.uint16) if f.nbits <= 16 else np.dtype(np.uint32)


_kbits = _validate.kernel_bits
_operands = _validate.broadcast_operands


def _finish(out, flg, allf, res, shape, return_flags, dtype=None):
    res.flags_sink().flags |= Flags(int(allf))
    out = out.reshape(shape)
    if dtype is not None:
        out = out.astype(dtype, copy=False)
    if return_flags:
        return out, flg.reshape(shape)
    return out


def _flag_buffer(n, return_flags):
    # every operation with flags asks for this buffer first: the one check that
    # return_flags is a real boolean (a truthy string must not switch it on)
    return np.empty(n if _validate.boolean(return_flags, "return_flags") else 1, np.uint8)


_FAST_OPS = (kernels.OP_ADD, kernels.OP_SUB, kernels.OP_MUL, kernels.OP_DIV)
_EFT_OP = {kernels.OP_ADD: eft.OP_ADD, kernels.OP_SUB: eft.OP_SUB, kernels.OP_MUL: eft.OP_MUL,
           kernels.OP_DIV: eft.OP_DIV}


def _eft_ok(f, res, pol) -> bool:
    """The float32 + error-free-transformation kernels (softfloat._kernels.eft)
    apply: fp16/bf16, a deterministic mode, operands read as they are (no daz),
    fast paths on, and the host's float32 hardware usable (see hw.use_hw)."""
    return (res.fast_paths and f.params in (eft.FP16, eft.BF16)
            and res.rounding != Rounding.STOCHASTIC
            and not pol[kernels.P_DAZ] and hw.use_hw())


# slow-element list per chunk of an eft pass-1 kernel (longer lists: a scan)
_EFT_LIST = 4096


def _eft_run(kernel, args, full, out, scratch, general):
    """Pass 1 by ``kernel(lo, hi, *args, out, scratch, idx)`` over all
    elements in chunks (each lists the elements it leaves in its own idx, up to
    `_EFT_LIST`), then pass 2: those elements by ``general(subs, o2, f2)`` on the
    gathered operands ``full``. Returns the OR of the flags, or None when the
    kernel refused (FTZ/DAZ set in MXCSR: nothing written)."""
    n = out.size
    lists = np.empty((chunk_count(n), min(_EFT_LIST, n)), np.int64)
    res = run_chunks_each(kernel, n, chunk_args=lambda k, lo, hi: (*args, out, scratch,
                                                                     lists[k]))
    allf = 0
    parts = []
    for k, (lo, r) in enumerate(res):
        if r < 0:
            return None
        allf |= r & 255
        cnt = r >> 9
        if cnt > lists.shape[1]:
            hi = res[k + 1][0] if k + 1 < len(res) else n
            parts.append(lo + np.flatnonzero(scratch[lo:hi] >= 128))
        elif cnt:
            parts.append(lists[k, :cnt])
    if parts:
        idx = parts[0] if len(parts) == 1 else np.concatenate(parts)
        subs = [np.ascontiguousarray(x[idx]) for x in full]
        o2 = np.empty(idx.size, out.dtype)
        f2 = np.empty(idx.size, np.uint8)
        allf |= general(subs, o2, f2)
        out[idx] = o2
        scratch[idx] = f2
    return allf


def _blocked(fn, arrays, f, res, return_flags):
    """``fn`` (an elementwise operation on encodings of ``f``) over large operands in
    blocks of `_validate.BLOCK` elements, each written into the result: the kernels' widened
    working copies (uint32 operands and output, 12 bytes per element for 8-bit
    formats) then stay a block long, and the peak memory is about the inputs and
    the output. None (do it in one call) for small or broadcast operands and for
    stochastic rounding (its random stream is indexed by position)."""
    bs = [np.asarray(x) for x in arrays]
    if any(b.dtype != f.dtype for b in bs):
        return None                               # the one call reports the error
    shape = bs[0].shape
    n = bs[0].size
    if n <= 2 * _validate.BLOCK or any(b.shape != shape for b in bs):
        return None
    if res.rounding == Rounding.STOCHASTIC:
        return None
    if f.nbits == 16 and f.kind == "ieee" and res.fast_paths:
        return None          # 16-bit fast paths keep uint16 operands: no widening
    _validate.boolean(return_flags, "return_flags")
    flat = [_validate.flat(b) for b in bs]
    out = np.empty(n, f.dtype)
    flg = np.empty(n, np.uint8) if return_flags else None
    for lo in range(0, n, _validate.BLOCK):
        hi = min(n, lo + _validate.BLOCK)
        r = fn(*[x[lo:hi] for x in flat])
        if return_flags:
            out[lo:hi], flg[lo:hi] = r
        else:
            out[lo:hi] = r
    out = out.reshape(shape)
    return (out, flg.reshape(shape)) if return_flags else out


def _binary(op, a, b, f, res, return_flags):
    r = _blocked(lambda x, y: _binary_one(op, x, y, f, res, return_flags),
                 (a, b), f, res, return_flags)
    return r if r is not None else _binary_one(op, a, b, f, res, return_flags)


def _binary_one(op, a, b, f, res, return_flags):
    pol, key = _setup(f, res)
    use_eft = op in _FAST_OPS and _eft_ok(f, res, pol)
    # (signed P3109 formats with P >= 2 too: their normal codes are IEEE's; pass 2
    # takes every special, subnormal, zero, overflow and top-exponent element)
    fast = (op in _FAST_OPS and (f.kind == "ieee" or (f.kind in ("p3109se", "p3109sf")
                                                      and f.mbits >= 1))
            and res.rounding != Rounding.STOCHASTIC and res.fast_paths)
    kdt = _kdtype(f) if fast else _validate.KERNEL_BITS
    shape, ((fa, ma), (fb, mb)) = _operands((a, b), f, ("a", "b"), kdt)
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(n, kdt)
    flg = _flag_buffer(n, return_flags)
    if fast:
        fa = fa if ma else np.full(n, fa[0], fa.dtype)
        fb = fb if mb else np.full(n, fb[0], fb.dtype)
        scratch = flg if return_flags else np.empty(n, np.uint8)
    if use_eft:
        # fp16/bf16: float32 + error-free transformations (softfloat._kernels.eft),
        # the general kernel for the elements it leaves
        def general(subs, o2, f2):
            s0, s1 = (x.astype(_validate.KERNEL_BITS) for x in subs)
            o = np.empty(o2.size, _validate.KERNEL_BITS)
            r = kernels.binary_array(op, s0, s1, -1, -1, o, f2, True, *f.params, pol,
                                     key, _validate.CHUNK)
            o2[:] = o
            return r

        allf = _eft_run(eft.kernel(f.params, _EFT_OP[op], int(res.rounding)), (fa, fb),
                        (fa, fb), out, scratch, general)
        if allf is not None:
            return _finish(out, flg, allf, res, shape, return_flags, f.dtype)
    if fast:
        # two-pass kernel: a vectorized pass for normal operands and results, the
        # general path for the rest (softfloat._kernels.arith_fast)
        allf = binary_fast_array(op, fa, fb, out, scratch, return_flags, *f.params, pol,
                                 _validate.CHUNK)
    else:
        allf = kernels.binary_array(op, fa, fb, ma, mb, out, flg, return_flags, *f.params, pol,
                              key, _validate.CHUNK)
    return _finish(out, flg, allf, res, shape, return_flags, f.dtype)


def _compare(op, a, b, f, res, return_flags):
    pol, _ = _setup(f, res)
    shape, ((fa, ma), (fb, mb)) = _operands((a, b), f, ("a", "b"))
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(n, np.bool_)
    flg = _flag_buffer(n, return_flags)
    allf = kernels.compare_array(op, fa, fb, ma, mb, out, flg, return_flags, *f.params,
                           pol[kernels.P_DAZ], _validate.CHUNK)
    return _finish(out, flg, allf, res, shape, return_flags)


def _unary(op, a, f, res, return_flags):
    r = _blocked(lambda x: _unary_one(op, x, f, res, return_flags),
                 (a,), f, res, return_flags)
    return r if r is not None else _unary_one(op, a, f, res, return_flags)


def _unary_one(op, a, f, res, return_flags):
    pol, key = _setup(f, res)
    flg = None
    if op == kernels.OP_SQRT and _eft_ok(f, res, pol):
        x = _kbits(a, f, "a", _kdtype(f))
        src = _validate.flat(x)
        out = np.empty(src.size, x.dtype)
        flg = _flag_buffer(src.size, return_flags)
        scratch = flg if return_flags else np.empty(src.size, np.uint8)

        def general(subs, o2, f2):
            o = np.empty(o2.size, _validate.KERNEL_BITS)
            r = kernels.unary_array(op, subs[0].astype(_validate.KERNEL_BITS), o, f2, True, *f.params, pol,
                              key, _validate.CHUNK)
            o2[:] = o
            return r

        allf = _eft_run(eft.kernel(f.params, eft.OP_SQRT, int(res.rounding)), (src,), (src,),
                        out, scratch, general)
        if allf is not None:
            return _finish(out, flg, allf, res, x.shape, return_flags, f.dtype)
    x = _kbits(a, f, "a")
    src = _validate.flat(x)
    out = np.empty(src.size, _validate.KERNEL_BITS)
    if flg is None:
        flg = _flag_buffer(src.size, return_flags)
    allf = kernels.unary_array(op, src, out, flg, return_flags, *f.params, pol,
                               key, _validate.CHUNK)
    return _finish(out, flg, allf, res, x.shape, return_flags, f.dtype)


_check_bool = _validate.boolean


_POLICY_DOC = """
    Parameters
    ----------
    {args} : array_like of fmt's storage dtype (uint8/uint16/uint32)
        Encodings; shapes broadcast like NumPy.
    fmt : Format or str
    rounding : str, optional
        Rounding mode (default: the context's).
    return_flags : bool
        Also return per-element flags (uint8).
    subnormals, ftz, daz, overflow, tininess, nan, sr_bits, seed, rng
        Policies, as in `softfloat.to_bits`.
    policy : softfloat.Policy, optional
        All the policies as one value, in place of the keywords (not with them).
    random_bits, random_nbits
        Stochastic rounding with explicit random bits (broadcast with the
        operands), as in `softfloat.to_bits`; softfloat.stochastic.
"""


def _arith(name, ops, fmt, rounding, return_flags, random_bits, random_nbits, keywords):
    """One arithmetic call: stochastic rounding with explicit random bits goes to
    softfloat.stochastic; otherwise the format and the policy are parsed once
    and the operation runs (`_RUN`)."""
    if _sr.wanted(rounding, random_bits, random_nbits):
        return _sr.arith(name, ops, fmt, rounding, random_bits=random_bits,
                         random_nbits=random_nbits, return_flags=return_flags, **keywords)
    policy = keywords.pop("policy")
    f, res = _policy(fmt, rounding, policy, **keywords)
    return _RUN[name](ops, f, res, return_flags)


# ---------------------------------------------------------------------------
# + - * / fma sqrt
# ---------------------------------------------------------------------------
def add(a, b, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
        daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
        saturation=None, policy=None, random_bits=None, random_nbits=None):
    """a + b, correctly rounded. x + (-x) is +0 in every mode but downward (-0).
    Wraps `softfloat._kernels.arith.binary_array` (OP_ADD)."""
    return _arith("add", (a, b), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


def sub(a, b, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
        daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
        saturation=None, policy=None, random_bits=None, random_nbits=None):
    """a - b, correctly rounded (a NaN b is propagated with its own sign).
    Wraps `softfloat._kernels.arith.binary_array` (OP_SUB)."""
    return _arith("sub", (a, b), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


def mul(a, b, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
        daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
        saturation=None, policy=None, random_bits=None, random_nbits=None):
    """a * b, correctly rounded; 0 * inf is invalid.
    Wraps `softfloat._kernels.arith.binary_array` (OP_MUL)."""
    return _arith("mul", (a, b), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


def div(a, b, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
        daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
        saturation=None, policy=None, random_bits=None, random_nbits=None):
    """a / b, correctly rounded; x/0 raises infinite (signed infinity), 0/0 and
    inf/inf are invalid. Wraps `softfloat._kernels.arith.binary_array` (OP_DIV)."""
    return _arith("div", (a, b), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


def fma(a, b, c, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
        daz=None, overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
        saturation=None, policy=None, random_bits=None, random_nbits=None):
    """a * b + c with one rounding (the exact product and addend, jammed in 64
    bits, as SoftFloat's mulAdd). Wraps `softfloat._kernels.arith.fma_array`."""
    return _arith("fma", (a, b, c), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


def _fma_run(ops, f, res, return_flags):
    a, b, c = ops
    r = _blocked(lambda x, y, z: _fma(x, y, z, f, res, return_flags), (a, b, c), f, res,
                 return_flags) if np.size(a) > 2 * _validate.BLOCK else None
    if r is not None:
        return r
    return _fma(a, b, c, f, res, return_flags)


def _fma(a, b, c, f, res, return_flags):
    pol, key = _setup(f, res)
    use_eft = _eft_ok(f, res, pol)
    shape, ((fa, ma), (fb, mb), (fc, mc)) = _operands((a, b, c), f, ("a", "b", "c"),
                                                      _kdtype(f) if use_eft else _validate.KERNEL_BITS)
    n = int(np.prod(shape, dtype=np.int64))
    flg = _flag_buffer(n, return_flags)
    if use_eft:
        # fp16/bf16: float32 + error-free transformations (softfloat._kernels.eft),
        # the general kernel for the elements it leaves
        full = tuple(x if m else np.full(n, x[0], x.dtype) for x, m in ((fa, ma), (fb, mb),
                                                                         (fc, mc)))
        out = np.empty(n, fa.dtype)
        scratch = flg if return_flags else np.empty(n, np.uint8)

        def general(subs, o2, f2):
            s0, s1, s2 = (x.astype(_validate.KERNEL_BITS) for x in subs)
            o = np.empty(o2.size, _validate.KERNEL_BITS)
            r = kernels.fma_array(s0, s1, s2, -1, -1, -1, o, f2, True, *f.params, pol,
                                  key, _validate.CHUNK)
            o2[:] = o
            return r

        allf = _eft_run(eft.kernel(f.params, eft.OP_FMA, int(res.rounding)), full, full, out,
                        scratch, general)
        if allf is not None:
            return _finish(out, flg, allf, res, shape, return_flags, f.dtype)
        fa, fb, fc = (x.astype(_validate.KERNEL_BITS) for x in (fa, fb, fc))
    out = np.empty(n, _validate.KERNEL_BITS)
    allf = kernels.fma_array(fa, fb, fc, ma, mb, mc, out, flg, return_flags, *f.params, pol, key,
                       _validate.CHUNK)
    return _finish(out, flg, allf, res, shape, return_flags, f.dtype)


def sqrt(a, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None, daz=None,
         overflow=None, tininess=None, nan=None, sr_bits=None, seed=None, rng=None,
         saturation=None, policy=None, random_bits=None, random_nbits=None):
    """Square root, correctly rounded; sqrt(-0) = -0, sqrt(x < 0) is invalid.
    Wraps `softfloat._kernels.arith.unary_array` (OP_SQRT)."""
    return _arith("sqrt", (a,), fmt, rounding, return_flags, random_bits, random_nbits,
                  dict(subnormals=subnormals, ftz=ftz, daz=daz, overflow=overflow, tininess=tininess, nan=nan,
             sr_bits=sr_bits, seed=seed, rng=rng, saturation=saturation, policy=policy))


# what each operation runs once its format and policy are parsed
_RUN = {"add": lambda o, f, r, rf: _binary(kernels.OP_ADD, o[0], o[1], f, r, rf),
        "sub": lambda o, f, r, rf: _binary(kernels.OP_SUB, o[0], o[1], f, r, rf),
        "mul": lambda o, f, r, rf: _binary(kernels.OP_MUL, o[0], o[1], f, r, rf),
        "div": lambda o, f, r, rf: _binary(kernels.OP_DIV, o[0], o[1], f, r, rf),
        "fma": _fma_run,
        "sqrt": lambda o, f, r, rf: _unary(kernels.OP_SQRT, o[0], f, r, rf)}


for _fn, _args in ((add, "a, b"), (sub, "a, b"), (mul, "a, b"), (div, "a, b"),
                   (fma, "a, b, c"), (sqrt, "a")):
    _fn.__doc__ += _POLICY_DOC.format(args=_args)


# ---------------------------------------------------------------------------
# sign operations (bit operations: no flags, NaNs untouched)
# ---------------------------------------------------------------------------
def _fnuz_fixed(x, r, f):
    """fnuz has no -0 and its NaN is the -0 pattern: zero and NaN stay as they are
    (signed P3109 formats too)."""
    if f.kind in ("fnuz", "p3109se", "p3109sf"):
        keep = (x & (f.sign_mask - 1)) == 0
        r = np.where(keep, x, r).astype(f.dtype)
    return r


def _signop_result(r, return_flags):
    if _validate.boolean(return_flags, "return_flags"):
        return r, np.zeros(r.shape, np.uint8)
    return r


def neg(a, fmt, *, return_flags=False):
    """-a: flips the sign bit (of NaNs too; fnuz zero and NaN unchanged). No flags.
    fnu formats (e8m0) have no sign bit and only positive values: -a is their NaN."""
    f = _validate.target_format(fmt)
    x = _validate.as_bits(a, f, "a")
    if not f.has_sign:
        r = np.full(x.shape, specialize.fresh_nan_bits(f), f.dtype)
        if f.has_zero:                  # unsigned P3109: -0 is 0
            r = np.where(x == 0, x, r).astype(f.dtype)
        return _signop_result(r, return_flags)
    r = _fnuz_fixed(x, (x ^ f.dtype.type(f.sign_mask)).astype(f.dtype), f)
    return _signop_result(r, return_flags)


def abs(a, fmt, *, return_flags=False):  # noqa: A001  (the IEEE name; shadows the builtin here)
    """|a|: clears the sign bit (of NaNs too; the fnuz NaN unchanged). No flags.
    fnu formats (e8m0, no sign bit): a unchanged."""
    f = _validate.target_format(fmt)
    x = _validate.as_bits(a, f, "a")
    if not f.has_sign:
        return _signop_result(np.array(x, f.dtype), return_flags)
    r = _fnuz_fixed(x, (x & f.dtype.type(f.sign_mask - 1)).astype(f.dtype), f)
    return _signop_result(r, return_flags)


def copysign(a, b, fmt, *, return_flags=False):
    """a with b's sign bit (broadcast; fnuz zero and NaN of a unchanged). No flags."""
    f = _validate.target_format(fmt)
    x = _validate.as_bits(a, f, "a")
    y = _validate.as_bits(b, f, "b")
    shape = np.broadcast_shapes(x.shape, y.shape)
    x = np.broadcast_to(x, shape)
    if not f.has_sign:                  # fnu (e8m0): b is positive, a unchanged
        return _signop_result(np.array(x, f.dtype), return_flags)
    m = f.dtype.type(f.sign_mask)
    r = ((x & f.dtype.type(f.sign_mask - 1)) | (np.broadcast_to(y, shape) & m)).astype(f.dtype)
    return _signop_result(_fnuz_fixed(x, r, f), return_flags)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------
def _make_compare(name, op, doc):
    def cmp(a, b, fmt, *, return_flags=False, subnormals=None, daz=None, policy=None):
        f, res = _policy(fmt, None, policy, subnormals=subnormals, daz=daz)
        return _compare(op, a, b, f, res, return_flags)
    cmp.__name__ = cmp.__qualname__ = name
    cmp.__doc__ = (doc + "\n\n    Returns a bool array of the broadcast shape (and uint8 flags with "
                   "return_flags). ``daz``/``subnormals`` read subnormal operands as zero. "
                   "-0 == +0. Wraps `softfloat._kernels.arith.compare_array`.")
    return cmp


_Q = "Quiet: invalid only for a signaling NaN operand; "
_S = "Signaling: invalid for any NaN operand; "
eq = _make_compare("eq", kernels.CMP_EQ, "a == b. " + _Q + "False when unordered.")
ne = _make_compare("ne", kernels.CMP_NE, "a != b. " + _Q + "True when unordered.")
lt = _make_compare("lt", kernels.CMP_LT, "a < b. " + _Q + "False when unordered.")
le = _make_compare("le", kernels.CMP_LE, "a <= b. " + _Q + "False when unordered.")
gt = _make_compare("gt", kernels.CMP_GT, "a > b. " + _Q + "False when unordered.")
ge = _make_compare("ge", kernels.CMP_GE, "a >= b. " + _Q + "False when unordered.")
unordered = _make_compare("unordered", kernels.CMP_UN, "True where a or b is NaN. " + _Q)
_SG = kernels.CMP_SIGNALING
eq_signaling = _make_compare("eq_signaling", kernels.CMP_EQ + _SG, "a == b. " + _S + "False when unordered.")
ne_signaling = _make_compare("ne_signaling", kernels.CMP_NE + _SG, "a != b. " + _S + "True when unordered.")
lt_signaling = _make_compare("lt_signaling", kernels.CMP_LT + _SG, "a < b (C's <). " + _S + "False when unordered.")
le_signaling = _make_compare("le_signaling", kernels.CMP_LE + _SG, "a <= b (C's <=). " + _S + "False when unordered.")
gt_signaling = _make_compare("gt_signaling", kernels.CMP_GT + _SG, "a > b (C's >). " + _S + "False when unordered.")
ge_signaling = _make_compare("ge_signaling", kernels.CMP_GE + _SG, "a >= b (C's >=). " + _S + "False when unordered.")


# ---------------------------------------------------------------------------
# minimum / maximum (IEEE 754-2019)
# ---------------------------------------------------------------------------
def _make_minmax(name, op, doc):
    def mm(a, b, fmt, *, return_flags=False, subnormals=None, daz=None, nan=None, policy=None):
        f, res = _policy(fmt, None, policy, subnormals=subnormals, daz=daz, nan=nan)
        return _binary(op, a, b, f, res, return_flags)
    mm.__name__ = mm.__qualname__ = name
    mm.__doc__ = (doc + "\n\n    -0 < +0. A signaling NaN operand raises invalid. NaN results "
                  "follow the ``nan`` policy; ``daz`` reads subnormal operands as (signed) "
                  "zero. Wraps `softfloat._kernels.arith.binary_array`.")
    return mm


minimum = _make_minmax("minimum", kernels.OP_MIN,
                       "IEEE 754-2019 minimum(a, b): NaN if either operand is NaN.")
maximum = _make_minmax("maximum", kernels.OP_MAX,
                       "IEEE 754-2019 maximum(a, b): NaN if either operand is NaN.")
minimum_number = _make_minmax("minimum_number", kernels.OP_MINNUM,
                              "IEEE 754-2019 minimumNumber(a, b): a number wins over a NaN.")
maximum_number = _make_minmax("maximum_number", kernels.OP_MAXNUM,
                              "IEEE 754-2019 maximumNumber(a, b): a number wins over a NaN.")


# ---------------------------------------------------------------------------
# integral values and integers
# ---------------------------------------------------------------------------
def round_to_integral(a, fmt, rounding=None, *, exact=False, return_flags=False,
                      subnormals=None, daz=None, nan=None, sr_bits=None, seed=None, rng=None,
                      saturation=None,
                      policy=None):
    """Round to an integral value of the format in the mode (IEEE roundToIntegral;
    with ``exact=True`` roundToIntegralExact, which raises inexact when the value
    changes). The sign is kept (-0.5 -> -0). NaN: the NaN policy; sNaN invalid.
    Wraps `softfloat._kernels.arith.unary_array` (OP_RINT / OP_RINTX)."""
    op = kernels.OP_RINTX if _check_bool(exact, "exact") else kernels.OP_RINT
    f, res = _policy(fmt, rounding, policy, subnormals=subnormals, daz=daz, nan=nan,
                     sr_bits=sr_bits, seed=seed, rng=rng,
                     saturation=saturation)
    return _unary(op, a, f, res, return_flags)


def _to_int(a, fmt, rounding, ibits, exact, return_flags, policy, keywords):
    exact = _check_bool(exact, "exact")
    f, res = _policy(fmt, rounding, policy, **keywords)
    pol, key = _setup(f, res)
    x = _kbits(a, f, "a")
    src = _validate.flat(x)
    out = np.empty(src.size, np.int64)      # one signature; int32 results narrowed below
    flg = _flag_buffer(src.size, return_flags)
    allf = kernels.to_int_array(src, out, flg, return_flags, ibits, exact, *f.params, pol, key,
                          _validate.CHUNK)
    return _finish(out, flg, allf, res, x.shape, return_flags,
                   np.int32 if ibits == 32 else None)


def to_int32(a, fmt, rounding=None, *, exact=False, return_flags=False, subnormals=None,
             daz=None, sr_bits=None, seed=None, rng=None, policy=None):
    """Encodings -> int32, rounded in the mode (IEEE convertToInteger; with
    ``exact=True`` convertToIntegerExact, which raises inexact).

    NaN, infinities and values out of range raise invalid and return
    -2**31 (0x80000000, x86's "integer indefinite", as SoftFloat's 8086-SSE
    specialization does for both signs). Wraps `softfloat._kernels.arith.to_int_array`."""
    return _to_int(a, fmt, rounding, 32, exact, return_flags, policy, dict(
        subnormals=subnormals, daz=daz, sr_bits=sr_bits, seed=seed, rng=rng))


def to_int64(a, fmt, rounding=None, *, exact=False, return_flags=False, subnormals=None,
             daz=None, sr_bits=None, seed=None, rng=None, policy=None):
    """Encodings -> int64, as `to_int32` (invalid -> -2**63)."""
    return _to_int(a, fmt, rounding, 64, exact, return_flags, policy, dict(
        subnormals=subnormals, daz=daz, sr_bits=sr_bits, seed=seed, rng=rng))


_INT_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))


def from_int(x, fmt, rounding=None, *, return_flags=False, subnormals=None, ftz=None,
             overflow=None, tininess=None, sr_bits=None, seed=None, rng=None,
             saturation=None, policy=None):
    """Signed integers (int8/16/32/64 arrays, or Python ints) -> encodings of
    ``fmt``, correctly rounded (overflow per the overflow policy). Unsigned arrays
    are refused (they look like encodings): cast them to a signed type first.
    Wraps `softfloat._kernels.arith.from_int_array`."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError("x: expected signed integers, got bool")
    if isinstance(x, int):
        if not -2**63 <= x < 2**63:
            raise ValueError(f"x: {x} does not fit in int64")
        arr = np.asarray(x, np.int64)
    else:
        arr = np.asarray(x)
        if arr.dtype not in _INT_DTYPES:
            raise TypeError(f"x: expected a signed integer array (int8/16/32/64), got dtype "
                            f"{arr.dtype}" + ("; cast unsigned integers explicitly, e.g. "
                                              ".astype(np.int64)" if arr.dtype.kind == "u" else ""))
    f, res = _policy(fmt, rounding, policy, subnormals=subnormals, ftz=ftz, overflow=overflow,
                     tininess=tininess, sr_bits=sr_bits, seed=seed, rng=rng,
                     saturation=saturation)
    pol, key = _setup(f, res)
    src = _validate.writable(_validate.flat(arr.astype(np.int64, copy=False)))
    out = np.empty(src.size, _validate.KERNEL_BITS)
    flg = _flag_buffer(src.size, return_flags)
    allf = kernels.from_int_array(src, out, flg, return_flags, *f.params, pol, key, _validate.CHUNK)
    return _finish(out, flg, allf, res, arr.shape, return_flags, f.dtype)
