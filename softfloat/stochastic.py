"""Stochastic rounding with the random bits as an operand.

A chip's stochastic rounding is a function of the value *and* the random bits it
was given; to check one, the bits must go in as data. Every rounding entry point
(`to_bits`, `quantize`, `convert`, `add`, `sub`, `mul`, `div`, `fma`, `sqrt`) takes

* ``random_bits=R``: unsigned integers, one per result, broadcast like the
  data (to the result's shape), each < 2**N;
* ``random_nbits=N``: how many bits each holds;

and one of the schemes (docs/stochastic.md has the definitions and the sources):

* ``"stochastic_a"``, ``"stochastic_b"``, ``"stochastic_c"``: IEEE P3109's
  StochasticA/B/C (interim report, 4.7.4, the RoundAway table);
* ``"stochastic_add"``: add and truncate, as the GPUs' and CPUs' instructions do
  (R added below the last bit a normal result keeps, then truncation);
* ``"stochastic"``: the seeded mode's own rule (up when R < ceil(nu * 2**N)).

Without ``random_bits`` a scheme draws R from the seeded stream (``seed=``), as
``"stochastic"`` does; `stochastic_bits` returns that stream's integers, so a
seeded run can be replayed through ``random_bits=`` bit for bit.

Wrapped kernels: `softfloat._kernels.sr_loops` (the rounding is
`core.round_pack`'s, the scheme code in the policy's mode).
"""
from __future__ import annotations

import numpy as np

from . import _validate
from ._kernels import sr_loops
from ._kernels.arith import OP_ADD, OP_DIV, OP_MUL, OP_SUB
from ._kernels.codes import P_MODE, P_SRBITS, RSR_A, RSR_ADD, RSR_B, RSR_C
from ._parallel import run_chunks
from .context import check_option, kernel_policy, random_key, resolve
from .flags import Flags
from .formats import FP64
from .rounding import STOCHASTIC_SCHEMES, Rounding

__all__ = ["stochastic_bits", "STOCHASTIC_SCHEMES", "scheme_of", "max_random_nbits"]

_CODES = dict(zip(STOCHASTIC_SCHEMES, (RSR_A, RSR_B, RSR_C, RSR_ADD)))


def scheme_of(rounding):
    """The scheme name of a rounding argument (``"stochastic_a"`` ...), or None
    for the modes of `softfloat.Rounding` (``"stochastic"`` included)."""
    if isinstance(rounding, str):
        key = rounding.strip().lower().replace("-", "_")
        if key in _CODES:
            return key
    return None


def wanted(rounding, random_bits, random_nbits) -> bool:
    """Whether a call goes through this module: a scheme, or explicit bits."""
    return random_bits is not None or random_nbits is not None or scheme_of(rounding) is not None


def max_random_nbits(op, M: int) -> int:
    """The largest N for operation ``op`` (``"convert"``, ``"add"``, ``"sub"``,
    ``"mul"``, ``"div"``, ``"fma"``, ``"sqrt"``) into a format with M fraction
    bits: the top N + 1 discarded bits and the tie test below them must be exact
    in the kernels' integer significand (conversions and products: exact; + - and
    fma: the rounding point lies >= 4 bits above the jammed sticky bit plus N + 2;
    / gives >= 62 - M quotient bits, sqrt 31 root bits, each with a sticky bit),
    and N <= 32."""
    limit = {"convert": 60 - M, "mul": 60 - M, "add": 58 - M, "sub": 58 - M, "fma": 58 - M,
             "div": 58 - 2 * M, "sqrt": 28 - M}[op]
    return max(0, min(32, limit))


_KERNEL_OP = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "div": OP_DIV}


def _nbits(random_nbits, res, op, fmt):
    n = res.sr_bits if random_nbits is None else random_nbits
    if random_nbits is not None:
        if (not isinstance(random_nbits, (int, np.integer))
                or isinstance(random_nbits, (bool, np.bool_))):
            raise TypeError(f"random_nbits must be an int, got {type(random_nbits).__name__}")
        if not 1 <= random_nbits <= 32:
            raise ValueError(f"random_nbits must be in [1, 32], got {random_nbits}")
    lim = max_random_nbits(op, fmt.params[1])
    if n > lim:
        raise ValueError(f"random_nbits={n}: {op} into {fmt.name} computes at most "
                         f"{lim} random bits' worth of the discarded field exactly "
                         f"(see softfloat.stochastic.max_random_nbits)")
    return int(n)


def random_operand(random_bits, nbits: int, shape) -> np.ndarray:
    """``random_bits`` validated (an unsigned integer array, or Python ints >= 0,
    each < 2**nbits) and broadcast to ``shape`` (`result_shape`): flat uint64."""
    if isinstance(random_bits, np.ma.MaskedArray):
        raise TypeError("random_bits: masked arrays are not accepted")
    if isinstance(random_bits, (np.ndarray, np.generic)):
        r = np.asarray(random_bits)
        if r.dtype.kind != "u":
            raise TypeError(f"random_bits: expected an unsigned integer array, got dtype "
                            f"{r.dtype}; convert with .astype(np.uint32) if the values are >= 0")
    else:
        stack = [random_bits]
        while stack:                      # Python ints only: no bools, floats, None
            v = stack.pop()
            if isinstance(v, (list, tuple)):
                stack.extend(v)
            elif isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"random_bits: expected unsigned integers, got "
                                f"{type(v).__name__} {v!r}")
            elif v < 0:
                raise ValueError(f"random_bits: expected unsigned integers, got {v}")
            elif v >> nbits:
                raise ValueError(f"random_bits: {v} does not fit in random_nbits={nbits} bits "
                                 f"(expected 0..{(1 << nbits) - 1})")
        r = np.asarray(random_bits, dtype=np.uint64)
    r = r.astype(np.uint64, copy=False)
    if r.size and int(r.max()) >> nbits:
        raise ValueError(f"random_bits: value {int(r.max())} does not fit in random_nbits={nbits} "
                         f"bits (expected 0..{(1 << nbits) - 1})")
    return np.ascontiguousarray(np.broadcast_to(r, shape)).reshape(-1)


def result_shape(shape, random_bits):
    """The shape of the result: the data's and random_bits' broadcast together
    (random_bits is one more operand)."""
    if random_bits is None:
        return tuple(shape)
    try:
        return tuple(np.broadcast_shapes(tuple(shape), np.shape(random_bits)))
    except ValueError:
        raise ValueError(f"random_bits of shape {np.shape(random_bits)} does not broadcast "
                         f"with the data's shape {tuple(shape)}") from None


def _spread(flat, shape, final):
    """A flat operand of ``shape`` broadcast to ``final`` (flat, contiguous)."""
    if tuple(shape) == tuple(final):
        return flat
    return np.ascontiguousarray(np.broadcast_to(flat.reshape(shape), final)).reshape(-1)


def stochastic_bits(shape, *, seed, nbits: int = 32) -> np.ndarray:
    """The random integers (uint32, ``shape``) that stochastic rounding with
    ``seed`` draws for a result of that shape, N = ``nbits``: element i (in C
    order) gets the seeded stream's integer i. Passing them as ``random_bits=``
    (with ``random_nbits=nbits`` and the same rounding) gives the seeded call's
    results bit for bit. ``seed``: an int (a Generator advances, as in a call)."""
    check_option("sr_bits", nbits)
    if seed is None:
        raise ValueError("stochastic_bits needs a seed (an int or a numpy Generator): without "
                         "one the stream is fresh entropy and cannot be replayed")
    check_option("seed", seed)
    shape = tuple(np.broadcast_shapes(tuple(shape) if np.ndim(shape) else (int(shape),)))
    n = int(np.prod(shape, dtype=np.int64))
    out = np.empty(n, np.uint32)
    run_chunks(sr_loops.stream_chunk, n, out, np.int64(random_key(seed)), np.int64(nbits))
    return out.reshape(shape)


def _setup(fmt, rounding, random_bits, random_nbits, policies, op, shape):
    """(res, pol, key, rb, have_rb): the policy tuple with the scheme's code and N,
    the random operand or the stream key."""
    scheme = scheme_of(rounding)
    pobj = policies.pop("policy", None)
    if pobj is not None and scheme:
        # a Policy value holds a Rounding: the scheme rides on its "stochastic"
        res = resolve(None, policy=pobj, **{k: v for k, v in policies.items() if v is not None})
        res = res.replace(rounding=Rounding.STOCHASTIC)
    else:
        res = resolve("stochastic" if scheme else rounding, policy=pobj, **policies)
    if res.rounding != Rounding.STOCHASTIC:
        raise ValueError(f"random_bits/random_nbits are for stochastic rounding "
                         f"('stochastic' or one of {list(STOCHASTIC_SCHEMES)}), not "
                         f"{res.rounding.label!r}")
    if random_bits is not None and (policies.get("seed") is not None
                                    or policies.get("rng") is not None):
        raise TypeError("give random_bits= or seed=/rng=, not both")
    if (random_nbits is not None and policies.get("sr_bits") is not None
            and policies["sr_bits"] != random_nbits):
        raise ValueError(f"sr_bits={policies['sr_bits']} and random_nbits={random_nbits} "
                         f"disagree; give one")
    n = _nbits(random_nbits, res, op, fmt)
    if random_bits is not None and random_nbits is None:
        raise TypeError("random_bits needs random_nbits= (how many bits each integer holds)")
    pol = list(kernel_policy(res, fmt))
    pol[P_SRBITS] = np.int64(n)
    if scheme:
        pol[P_MODE] = np.int64(_CODES[scheme])
    pol = tuple(pol)
    if random_bits is not None:
        return res, pol, np.int64(0), random_operand(random_bits, n, shape), True
    return res, pol, np.int64(random_key(res.seed)), np.zeros(1, np.uint64), False


def _finish(out, flg, allf, res, shape, return_flags, dtype):
    res.flags_sink().flags |= Flags(int(allf))
    out = out.astype(dtype, copy=False).reshape(shape)
    if return_flags:
        return out, flg.reshape(shape)
    return out


def _convert(src, src_fmt, dst, rounding, random_bits, random_nbits, return_flags, policies,
             shape):
    return_flags = _validate.boolean(return_flags, "return_flags")
    final = result_shape(shape, random_bits)
    res, pol, key, rb, have = _setup(dst, rounding, random_bits, random_nbits, policies,
                                     "convert", final)
    s, out = _validate.kernel_io(_spread(_validate.flat(src), shape, final),
                                 int(np.prod(final, dtype=np.int64)))
    shape = final
    flg = np.empty(out.size if return_flags else 1, np.uint8)
    allf = run_chunks(sr_loops.convert_rb_chunk, out.size, s, rb, have, out, flg, return_flags,
                      *src_fmt.params, *dst.params, pol, key)
    return _finish(out, flg, allf, res, shape, return_flags, dst.dtype)


def to_bits(x, fmt, rounding, *, random_bits=None, random_nbits=None, return_flags=False,
            **policies):
    """`softfloat.to_bits` with a scheme or explicit random bits (it calls this)."""
    a = _validate.as_values(x)
    dst = _validate.target_format(fmt)
    return _convert(_validate.int_view(a), _validate.HOST_FORMATS[a.dtype], dst, rounding,
                    random_bits, random_nbits, return_flags, policies, a.shape)


def convert(bits, src_fmt, dst_fmt, rounding, *, random_bits=None, random_nbits=None,
            return_flags=False, **policies):
    """`softfloat.convert` with a scheme or explicit random bits (it calls this)."""
    s = _validate.source_format(src_fmt)
    if s == FP64:
        raise ValueError("convert takes encodings of a simulated format; for float64 "
                         "values use softfloat.to_bits")
    d = _validate.target_format(dst_fmt)
    b = _validate.as_bits(bits, s, "bits")
    return _convert(b, s, d, rounding, random_bits, random_nbits, return_flags, policies, b.shape)


def arith(op, operands, fmt, rounding, *, random_bits=None, random_nbits=None,
          return_flags=False, **policies):
    """``op`` (``"add"``, ``"sub"``, ``"mul"``, ``"div"``, ``"fma"``, ``"sqrt"``) on
    encodings with a scheme or explicit random bits (`softfloat.add` ... call this)."""
    f = _validate.target_format(fmt)
    names = ("a", "b", "c")[:len(operands)]
    shape0, ops = _validate.broadcast_operands(operands, f, names)
    shape = result_shape(shape0, random_bits)
    ops = [(_spread(x, shape0, shape) if m else x, m) for x, m in ops]
    n = int(np.prod(shape, dtype=np.int64))
    res, pol, key, rb, have = _setup(f, rounding, random_bits, random_nbits, policies, op, shape)
    out = np.empty(n, _validate.KERNEL_BITS)
    flg = np.empty(n if _validate.boolean(return_flags, "return_flags") else 1, np.uint8)
    if op == "sqrt":
        (fa, ma), = ops
        fa = fa if ma else np.full(n, fa[0], fa.dtype)
        allf = run_chunks(sr_loops.sqrt_rb_chunk, n, fa, rb, have, out, flg, return_flags,
                          *f.params, pol, key)
    elif op == "fma":
        (fa, ma), (fb, mb), (fc, mc) = ops
        allf = run_chunks(sr_loops.fma_rb_chunk, n, fa, fb, fc, ma, mb, mc, rb, have, out, flg,
                          return_flags, *f.params, pol, key)
    else:
        (fa, ma), (fb, mb) = ops
        allf = run_chunks(sr_loops.binary_rb_chunk, n, _KERNEL_OP[op], fa, fb, ma, mb, rb, have, out, flg,
                          return_flags, *f.params, pol, key)
    return _finish(out, flg, allf, res, shape, return_flags, f.dtype)
