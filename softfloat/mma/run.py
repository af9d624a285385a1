"""`mma`: run a `MatrixUnit` model on encodings, any K as a chain of instructions."""
from __future__ import annotations

import math

import numpy as np

from .. import _validate as V
from .._kernels import mma as KM
from .._kernels import mma_amd as KA
from .._parallel import run_chunks, run_chunks_weighted
from ..context import Policy, getcontext
from ..conversions import from_bits
from ..flags import Flags
from ..formats import FP16, FP32, FP64, Format
from ..rounding import Rounding
from ..specialize import all_ones_nan_bits
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


_LUT_BITS = 19          # formats of at most this many bits decode through tables
_luts: dict = {}


def _lut(fmt: Format, values: bool, sign_off: bool = False):
    """The decoding of every encoding of ``fmt`` (at most `_LUT_BITS` bits), made
    once by the decoding kernels themselves: (sig int32, exp int32, cls) as
    `_decode` gives them, or with ``values`` (value float64, binade exponent
    float32 with zeros and specials at NO_EXP, cls) for the fast "fdpa" kernel."""
    key = (fmt.params, values, sign_off)
    t = _luts.get(key)
    if t is None:
        codes = np.arange(1 << fmt.nbits, dtype=np.uint32).astype(fmt.dtype)
        E, M, bias, kind = fmt.params
        n = codes.size
        if values:
            t = (np.empty(n, np.float64), np.empty(n, np.int32), np.empty(n, np.uint8))
            KM.decode_values_chunk(0, n, codes, *t, E, M, bias, kind, KM.POW2)
            t = (t[0], t[1].astype(np.float32), t[2])
        else:
            t = (np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8))
            KM.decode_chunk(0, n, codes, *t, E, M, bias, kind, bool(sign_off))
        _luts[key] = t
    return t


def _decode(bits: np.ndarray, fmt: Format, sign_off: bool = False):
    flat = np.ascontiguousarray(bits).reshape(-1)
    n = flat.size
    sig = np.empty(n, np.int32)
    exp = np.empty(n, np.int32)
    cls = np.empty(n, np.uint8)
    if fmt.nbits <= _LUT_BITS and n >= 64:
        run_chunks(KM.lut_chunk, n, flat, *_lut(fmt, False, sign_off), sig, exp, cls)
        return sig, exp, cls
    E, M, bias, kind = fmt.params
    if fmt.kind == "ieee" and fmt.bias == (1 << (E - 1)) - 1 and not sign_off:
        run_chunks(KM.decode_ieee_chunk, n, flat, sig, exp, cls, E, M)
        return sig, exp, cls
    run_chunks(KM.decode_chunk, n, flat, sig, exp, cls, E, M, bias, kind, bool(sign_off))
    return sig, exp, cls


def _decode_all(model, A3, BT3, C3):
    return (_decode(A3, model.a_fmt) + _decode(BT3, model.b_fmt)
            + _decode(C3, model.c_fmt))


def _decode_values(bits: np.ndarray, fmt: Format):
    """(values float64, binade exponents float32 with zeros at NO_EXP, classes)
    for the fast "fdpa" kernel (formats of at most `_LUT_BITS` bits)."""
    flat = np.ascontiguousarray(bits).reshape(-1)
    n = flat.size
    val = np.empty(n, np.float64)
    exp0 = np.empty(n, np.float32)
    cls = np.empty(n, np.uint8)
    run_chunks(KM.lut_chunk, n, flat, *_lut(fmt, True), val, exp0, cls)
    return val, exp0, cls


def _fast_fits(model) -> bool:
    """Whether `fdpa_fast_chunk` takes the model: a chunk of a multiple of 4
    products (every NVIDIA one), operands of at most `_LUT_BITS` bits, block
    scales (if any) e8m0 powers of two constant over a chunk (folded into the
    operands' values and exponents), and float64 arithmetic exact: products of
    significands exact, a chunk's L + 1 aligned terms (each below 2**(F + 2))
    summing below 2**53."""
    Ma, Mb = model.a_fmt.mbits, model.b_fmt.mbits
    if model.scaled and (model.scale_fmt.name != "e8m0" or model.scale_block % model.chunk):
        return False
    return (model.chunk % 4 == 0 and Ma + Mb + 2 <= 53
            and max(model.a_fmt.nbits, model.b_fmt.nbits) <= _LUT_BITS
            and model.frac_bits + 2 + int(model.chunk + 1).bit_length() <= 53)


def _apply_scales(v, e0, cls, s):
    """Fold e8m0 block scales into decoded operands (flat v values, e0
    exponents, cls classes): ``s`` the scale code of each element, in their
    layout; values times 2**(s - 127), exponents plus s - 127 (zeros stay at
    NO_EXP); a NaN scale (0xFF) marks its elements as NaN operands."""
    s = s.reshape(-1)
    sx = s.astype(np.int32) - 127
    v *= np.ldexp(1.0, sx)
    e0 += np.where(e0 == KM.NO_EXP, np.float32(0), sx.astype(np.float32))
    cls |= (s == 0xFF).astype(np.uint8) * np.uint8(2)


def _fdpa_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out, rne, p, emin, Eo, Mo,
               scales=None):
    """Run `fdpa_fast_chunk` into ``out``; returns the indices of the outputs
    with an infinite or NaN operand (to redo with the reference kernel).
    ``scales``: e8m0 codes (nb, m, nsb) and, transposed, (nb, n, nsb) of a
    block-scaled model."""
    L = model.chunk
    npad = -(-n // KM.JB) * KM.JB            # the kernel's column blocks
    A3 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nbt, m, K)
    B3 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nbt, K, n)
    if Kp != K:
        A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
    if Kp != K or npad != n:
        B3 = np.pad(B3, ((0, 0), (0, Kp - K), (0, npad - n)))
    Av, Ae0, Acl = _decode_values(A3, model.a_fmt)
    Bv, Be0, Bcl = _decode_values(B3, model.b_fmt)
    if scales is not None:
        blk = model.scale_block
        sb = np.swapaxes(scales[1], 1, 2)                   # (nb, nsb, n)
        if npad != n:
            sb = np.pad(sb, ((0, 0), (0, 0), (0, npad - n)), constant_values=127)
        _apply_scales(Av, Ae0, Acl, np.repeat(scales[0], blk, axis=-1))
        _apply_scales(Bv, Be0, Bcl, np.repeat(sb, blk, axis=1))
    ZA = np.ascontiguousarray((Ae0.reshape(nbt * m, Kp // L, L) == KM.NO_EXP).any(axis=2))
    ZB = np.ascontiguousarray((Be0.reshape(nbt, Kp // L, L, npad) == KM.NO_EXP).any(axis=2))
    C, cspec = _c_block_args(model, C3, has_c, nbt, m, n, npad)
    Ec, Mc = model.c_fmt.ebits, model.c_fmt.mbits
    outp = out if npad == n else np.empty(nbt * m * npad, np.uint32)
    anyc = run_chunks_weighted(
        KM.fdpa_fast_chunk, nbt * m, 2 * Kp * npad, Av, Ae0, ZA.reshape(-1), Bv, Be0,
        ZB.reshape(-1), m, npad, Kp, C, Ec, Mc, cspec, has_c, outp, L, model.frac_bits,
        model.e_zero, rne, p, emin, Eo, Mo, KM.POW2)
    rs = (Acl.reshape(nbt, m, Kp) != 0).any(-1)
    cs = (Bcl.reshape(nbt, Kp, npad) != 0).any(1)
    return _finish_fast(out, outp, anyc, cspec, rs, cs, nbt, m, n, npad)


def _c_block_args(model, C3, has_c, nbt, m, n, npad):
    """c's encodings for the fast kernels, the rows padded to npad columns, and
    the array in which the kernel marks an infinite or NaN c."""
    if not has_c:
        return np.zeros(1, model.c_fmt.dtype), np.zeros(1, np.uint8)
    C = C3.reshape(nbt, m, n)
    if npad != n:
        C = np.pad(C, ((0, 0), (0, 0), (0, npad - n)))
    C = C.reshape(-1)
    return C, np.empty(C.size, np.uint8)


def _finish_fast(out, outp, anyc, cspec, rs, cs, nbt, m, n, npad):
    """After a fast kernel: its padded output ``outp`` into ``out``; returns the
    flat indices of the outputs the reference kernel redoes: rows ``rs`` (nb,
    m) and padded columns ``cs`` (nb, npad) with an infinite or NaN operand (or
    scale), and the outputs whose c the kernel marked (``anyc``: any)."""
    if npad != n:
        out[:] = outp.reshape(nbt, m, npad)[:, :, :n].reshape(-1)
    cs = cs[:, :n]
    if not (anyc or rs.any() or cs.any()):
        return np.zeros(0, np.int64)
    sp = rs[:, :, None] | cs[:, None, :]
    if anyc:
        sp = sp | (cspec.reshape(nbt, m, npad)[:, :, :n] != 0)
    return np.flatnonzero(sp.reshape(-1)).astype(np.int64)


def _scale_args(model, SA3, SBT3):
    """The reference kernels' block-scale arguments: the decoded scales of A's
    rows (nb, m, nsb) and of B's columns (nb, n, nsb), nsb, the scale block and
    twice the scale format's fraction bits (placeholders without scales)."""
    if not model.scaled:
        z32, z8 = np.zeros(1, np.int32), np.zeros(1, np.uint8)
        return z32, z32, z8, z32, z32, z8, 1, 1, 0
    sign_off = model.scale_fmt.name == "fp8_e4m3"
    return (_decode(SA3, model.scale_fmt, sign_off) + _decode(SBT3, model.scale_fmt, sign_off)
            + (SA3.shape[-1], model.scale_block, 2 * model.scale_fmt.mbits))


_fits_cache: dict = {}


def _grouped_fits(model) -> bool:
    """Whether `grouped_fast_chunk` takes the model: group sums exact in float32
    (every product, and the sum of a group, a multiple of the smallest product
    below 2**24 of it) and chunks of whole groups of a multiple of 4."""
    key = (model.a_fmt, model.b_fmt, model.group)
    fits = _fits_cache.get(key)
    if fits is None:
        bits = sum(math.log2(f.max) - (f.emin - f.mbits) for f in (model.a_fmt, model.b_fmt))
        fits = _fits_cache[key] = (model.group % 4 == 0 and bits + math.log2(model.group) <= 24
                                   and max(model.a_fmt.nbits, model.b_fmt.nbits) <= _LUT_BITS)
    return fits


def _scale_values(s, fmt):
    """(values float64, binade exponents int64, NaN) of block-scale codes
    (fp8_e4m3 read without its sign: ue4m3)."""
    sig, e, cls = _decode(s, fmt, fmt.name == "fp8_e4m3")
    v = np.ldexp(sig.astype(np.float64), e - fmt.mbits)
    return v, e.astype(np.int64), cls == KM.CLS_NAN


def _grouped_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, SA3, SBT3, out, p, emin, Eo,
                  Mo):
    """Run `grouped_fast_chunk` into ``out``; returns the indices of the outputs
    with an infinite or NaN operand, c or scale (the reference kernel's)."""
    G = model.group
    npad = -(-n // KM.JB) * KM.JB
    A3 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nbt, m, K)
    B3 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nbt, K, n)
    if npad != n:
        B3 = np.pad(B3, ((0, 0), (0, 0), (0, npad - n)))
    Av, _, Acl = _decode_values(A3, model.a_fmt)
    Bv, _, Bcl = _decode_values(B3, model.b_fmt)
    w = (np.int32(1) << np.arange(G, dtype=np.int32))
    MA = ((Av.reshape(nbt * m, K // G, G) != 0) * w).sum(-1, dtype=np.int32)
    MB = ((Bv.reshape(nbt, K // G, G, npad) != 0) * w[:, None]).sum(2, dtype=np.int32)
    nsb = SA3.shape[-1]
    SAv, SAx, SAn = _scale_values(SA3, model.scale_fmt)
    SBv, SBx, SBn = _scale_values(np.swapaxes(SBT3, 1, 2), model.scale_fmt)
    if npad != n:
        SBv = np.pad(SBv.reshape(nbt, nsb, n), ((0, 0), (0, 0), (0, npad - n)))
        SBx = np.pad(SBx.reshape(nbt, nsb, n), ((0, 0), (0, 0), (0, npad - n)))
    C, cspec = _c_block_args(model, C3, has_c, nbt, m, n, npad)
    outp = out if npad == n else np.empty(nbt * m * npad, np.uint32)
    anyc = run_chunks_weighted(
        KM.grouped_fast_chunk, nbt * m, K * npad, Av.astype(np.float32), MA.reshape(-1),
        Bv.astype(np.float32), MB.reshape(-1), SAv, SAx, SBv.reshape(-1), SBx.reshape(-1), m,
        npad, K, nsb, C, model.c_fmt.ebits, model.c_fmt.mbits, cspec, has_c, outp,
        model.chunk, G, model.scale_block, model.frac_bits, model.e_zero, p, emin, Eo, Mo,
        KM.POW2)
    rs = (Acl.reshape(nbt, m, K) != 0).any(-1) | SAn.reshape(nbt, m, nsb).any(-1)
    cs = (Bcl.reshape(nbt, K, npad) != 0).any(1)
    cs[:, :n] |= SBn.reshape(nbt, nsb, n).any(1)
    return _finish_fast(out, outp, anyc, cspec, rs, cs, nbt, m, n, npad)


def _values(bits: np.ndarray, fmt: Format, dtype) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.ascontiguousarray(from_bits(np.ascontiguousarray(bits), fmt).astype(dtype)
                                    ).reshape(-1)


def _check_model(model):
    if not isinstance(model, MatrixUnit):
        raise TypeError(f"model must be a softfloat.mma.MatrixUnit (see tensor_core), got "
                        f"{type(model).__name__}")


def _out_spec(fmt: Format):
    """(emin, exponent bits, fraction bits) of the D format (binary16 or binary32)."""
    if fmt == FP16:
        return -14, 5, 10
    return -126, 8, 23


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

    Kernels: `softfloat._kernels.mma.fdpa_chunk`, ``grouped_chunk``,
    ``two_stage_chunk``, ``exact_chunk``, ``ftz_chain_chunk``, ``fma32_chunk``
    (references) and the fast ones of `softfloat._kernels.mma_amd`.
    """
    _check_model(model)
    fast = unit_fast_paths(model, policy)
    return_flags = V.boolean(return_flags, "return_flags")
    A = V.as_bits(a, model.a_fmt, "a")
    B = V.as_bits(b, model.b_fmt, "b")
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError(f"mma: a must be (..., m, K) and b (..., K, n), got shapes "
                         f"{A.shape} and {B.shape}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"mma: shapes {A.shape} and {B.shape} do not align "
                         f"(K = {A.shape[-1]} vs {B.shape[-2]})")
    m, K, n = A.shape[-2], A.shape[-1], B.shape[-1]
    if K < 1:
        raise ValueError("mma: K must be at least 1")
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
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
    m, K, n = A.shape[-2], A.shape[-1], B.shape[-1]
    shape = batch + (m, n)
    nsb = SA.shape[-1] if SA is not None else 0
    nbt = int(np.prod(batch, dtype=np.int64))
    Kp = -(-K // model.k) * model.k
    A3 = np.broadcast_to(A, batch + (m, K)).reshape(nbt, m, K)
    BT3 = np.swapaxes(np.broadcast_to(B, batch + (K, n)).reshape(nbt, K, n), 1, 2)
    if Kp != K:
        A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
        BT3 = np.concatenate([BT3, np.zeros((nbt, n, Kp - K), BT3.dtype)], axis=2)
    A3 = np.ascontiguousarray(A3)
    BT3 = np.ascontiguousarray(BT3)
    has_c = Cb is not None
    if has_c:
        C3 = np.ascontiguousarray(np.broadcast_to(Cb, shape)).reshape(-1)
    else:
        C3 = np.zeros(1, model.c_fmt.dtype)
    nout = nbt * m * n
    ofmt = model.out_fmt
    alg = model.algorithm
    if alg in ("fdpa", "grouped", "two_stage", "two_stage_pairs"):
        out = np.empty(nout, np.uint32)
        Ma, Mb = model.a_fmt.mbits, model.b_fmt.mbits
        if alg in ("fdpa", "grouped"):
            emin, Eo, Mo = _out_spec(ofmt)
            p = model.output_precision
            rne = model.output_mode == Rounding.NEAREST_EVEN
            SA3 = SBT3 = None
            if model.scaled:
                SA3 = np.broadcast_to(SA, batch + SA.shape[-2:]).reshape(nbt, m, nsb)
                SBT3 = np.swapaxes(np.broadcast_to(SB, batch + SB.shape[-2:]).reshape(
                    nbt, nsb, n), 1, 2)
            if alg == "fdpa":
                if fast and _fast_fits(model):
                    # the branch-free kernel for outputs with finite operands, the
                    # reference kernel for the others
                    slow = _fdpa_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out,
                                      rne, p, emin, Eo, Mo,
                                      (SA3, SBT3) if model.scaled else None)
                else:
                    slow = np.arange(nout, dtype=np.int64)
                if slow.size:
                    As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = _decode_all(model, A3, BT3, C3)
                    scl = _scale_args(model, SA3, SBT3)
                    run_chunks_weighted(
                        KM.fdpa_chunk, slow.size, 2 * Kp, As, Ae, Ac, Bs, Be, Bc, m, n, Kp,
                        Cs, Ce, Cc, has_c, model.c_fmt.mbits, *scl[:-1], model.scaled, out,
                        model.chunk, model.frac_bits, Ma + Mb, scl[-1], model.e_zero, rne, p,
                        emin, Eo, Mo, slow, True)
            else:
                if fast and _grouped_fits(model):
                    slow = _grouped_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, SA3, SBT3,
                                         out, p, emin, Eo, Mo)
                else:
                    slow = np.arange(nout, dtype=np.int64)
                if slow.size:
                    As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = _decode_all(model, A3, BT3, C3)
                    emin_a, emin_b = model.a_fmt.emin, model.b_fmt.emin
                    qab = emin_a - Ma + emin_b - Mb
                    scl = _scale_args(model, SA3, SBT3)
                    run_chunks_weighted(
                        KM.grouped_at_chunk, slow.size, 2 * Kp, slow, As, Ae, Ac, Bs, Be, Bc, m,
                        n, Kp, Cs, Ce, Cc, has_c, model.c_fmt.mbits, *scl[:-1], out,
                        model.chunk, model.group, model.frac_bits, qab, emin_a, emin_b, scl[-1],
                        model.e_zero, p, emin, Eo, Mo)
        else:
            _two_stage(model, A, B, A3, BT3, C3, has_c, batch, nbt, m, n, K, Kp, out, fast)
        res = out.astype(ofmt.dtype, copy=False)
    elif alg == "fma" and model.a_fmt == FP64:
        res = (_fma64_fast if fast else _fma64)(A3, BT3, C3 if has_c else None,
                                                nbt, m, n, Kp)
    elif alg == "exact":
        res = _exact(model, A, B, A3, BT3, C3, has_c, batch, nbt, m, n, K, Kp, fast)
    elif fast:
        res = _amd_values(model, A3, BT3, C3, has_c, nbt, m, n, Kp)
    else:
        Av = _values(A3, model.a_fmt, np.float64 if alg != "ftz_chain" else np.float32)
        Bv = _values(BT3, model.b_fmt, np.float64 if alg != "ftz_chain" else np.float32)
        Cv = _values(C3, model.c_fmt, np.float32)
        out = np.empty(nout, np.float32)
        if alg == "ftz_chain":
            run_chunks_weighted(KM.ftz_chain_chunk, nout, Kp, Av, Bv, m, n, Kp, Cv, has_c, out,
                                model.products_per_step, np.float32(2.0 ** model.a_fmt.emin),
                                np.float32(2.0 ** model.b_fmt.emin))
        else:
            run_chunks_weighted(KM.fma32_chunk, nout, 4 * Kp, Av, Bv, m, n, Kp, Cv, has_c, out)
        res = out.view(np.uint32).copy()
        nanm = np.isnan(out)
        if nanm.any():
            res[nanm] = np.uint32(all_ones_nan_bits(FP32))
    res = res.reshape(shape)
    if not return_flags:
        return res
    scales = None
    if model.scaled:
        scales = (np.broadcast_to(SA, batch + SA.shape[-2:]).reshape(nbt, m, nsb),
                  np.broadcast_to(SB, batch + SB.shape[-2:]).reshape(nbt, nsb, n))
    return res, _flags(model, res, A3, BT3, C3 if has_c else None, batch, m, n, scales)


def _fma64(A3, BT3, C3, nbt, m, n, K):
    """fp64 fused multiply-add chain: MPFR's correctly rounded fma (gmpy2, 53 bits,
    binary64's exponent range and subnormals), vectorised over the outputs."""
    try:
        import gmpy2
    except ImportError:                                   # pragma: no cover
        raise ImportError("fp64 matrix instructions are modelled with MPFR: "
                          "pip install gmpy2") from None
    a = A3.view(np.float64).reshape(nbt, m, K)
    bt = BT3.view(np.float64).reshape(nbt, n, K)
    c = (C3.view(np.float64).reshape(nbt, m, n) if C3 is not None
         else np.zeros((nbt, m, n)))
    ctx = gmpy2.ieee(64)
    fma = np.frompyfunc(lambda x, y, z: float(gmpy2.fma(x, y, z)), 3, 1)
    acc = c.astype(object)
    with gmpy2.context(ctx), np.errstate(over="ignore", invalid="ignore"):
        for t in range(K):
            acc = fma(a[:, :, None, t], bt[:, None, :, t], acc)
    out = np.asarray(acc, np.float64)
    bits = out.reshape(-1).view(np.uint64).copy()
    bits[np.isnan(out.reshape(-1))] = np.uint64(all_ones_nan_bits(FP64))
    return bits


# ---------------------------------------------------------------------------
# AMD instructions and the FMA chains: the fast kernels (softfloat._kernels.mma_amd)
# ---------------------------------------------------------------------------
def _rows_cols(Aspec, Bspec, Cspec, nbt, m, n):
    """Flat indices of the outputs whose row of A (nbt, m) or column of B
    (nbt, n) or c (nbt * m * n, or None) is marked."""
    sp = Aspec[:, :, None] | Bspec[:, None, :]
    if Cspec is not None:
        sp = sp | Cspec.reshape(sp.shape)
    return np.flatnonzero(sp.reshape(-1)).astype(np.int64)


def _b_rows(x, nbt, n, K):
    """(nbt, n, K) -> contiguous (nbt, K, n)."""
    return np.ascontiguousarray(np.swapaxes(x.reshape(nbt, n, K), 1, 2))


def _two_stage_fits(model) -> bool:
    """Whether `two_stage_fast_chunk` takes the model: chunks of a multiple of 4
    products, operands of at most `_LUT_BITS` bits, float64 arithmetic exact (a
    chunk's sum of products below 2**(F + 2) each under 2**52; the second
    stage's sum below 2**(F2 + 4 + log2 L) under 2**52) and F2 + 1 >= F."""
    L, F, F2 = model.chunk, model.frac_bits, model.frac_bits2
    return (L % 4 == 0 and max(model.a_fmt.nbits, model.b_fmt.nbits) <= _LUT_BITS
            and F + 2 + int(L).bit_length() <= 52 and F2 + 4 + int(L).bit_length() <= 52
            and F2 + 1 >= F)


def _pad_operands(A, B, batch, nbt, m, n, K, Kp):
    """A as (nbt, m, Kp) and B as (nbt, Kp, npad), K padded with zero products
    to Kp and the columns with zero columns to npad (a multiple of the fast
    kernels' column block JB)."""
    npad = -(-n // KM.JB) * KM.JB
    A3 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nbt, m, K)
    B3 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nbt, K, n)
    if Kp != K:
        A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
    if Kp != K or npad != n:
        B3 = np.pad(B3, ((0, 0), (0, Kp - K), (0, npad - n)))
    return A3, B3, npad


def _c_rows(C3, has_c, nbt, m, n, npad):
    """c's encodings as (nbt * m * npad) for the fast kernels (a placeholder
    without c)."""
    if not has_c:
        return np.zeros(1, C3.dtype)
    C = C3.reshape(nbt, m, n)
    if npad != n:
        C = np.pad(C, ((0, 0), (0, 0), (0, npad - n)))
    return C.reshape(-1)


def _two_stage_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out):
    """CDNA3 "two_stage" / "two_stage_pairs" by `two_stage_fast_chunk` into
    ``out``; returns the indices of the outputs with an infinite or NaN operand
    or c, or (bf16, xf32) a product that may reach 2**128, which the reference
    kernel redoes."""
    A3, B3, npad = _pad_operands(A, B, batch, nbt, m, n, K, Kp)
    Av, Ae0, Acl = _decode_values(A3, model.a_fmt)
    Bv, Be0, Bcl = _decode_values(B3, model.b_fmt)
    C = _c_rows(C3, has_c, nbt, m, n, npad)
    outp = out if npad == n else np.empty(nbt * m * npad, np.uint32)
    run_chunks_weighted(KA.two_stage_fast_chunk, nbt * m, 3 * Kp * npad, Av, Ae0, Bv, Be0,
                        m, npad, Kp, C.view(np.float32), has_c, outp, model.chunk,
                        model.frac_bits, model.frac_bits2,
                        model.algorithm == "two_stage_pairs")
    rs = (Acl.reshape(nbt, m, Kp) != 0).any(-1)
    cs = (Bcl.reshape(nbt, Kp, npad) != 0).any(1)
    cc = None
    if model.a_fmt.emax >= 64:          # bf16, xf32: products may reach 2**128
        xa = Ae0.reshape(nbt, m, Kp).max(-1).astype(np.int64)
        xb = Be0.reshape(nbt, Kp, npad).max(1).astype(np.int64)[:, :n]
        cc = xa[:, :, None] + xb[:, None, :] + 1 >= 128
    if has_c:
        cspec = ~np.isfinite(C3.view(np.float32))
        cc = cspec if cc is None else cc.reshape(-1) | cspec
    if npad != n:
        out[:] = outp.reshape(nbt, m, npad)[:, :, :n].reshape(-1)
    return _rows_cols(rs, cs[:, :n], cc, nbt, m, n)


def _two_stage(model, A, B, A3, BT3, C3, has_c, batch, nbt, m, n, K, Kp, out, fast):
    """CDNA3 "two_stage" / "two_stage_pairs": the fast kernel where it fits,
    the reference (`two_stage_chunk`) on the outputs it leaves."""
    if fast and _two_stage_fits(model):
        slow = _two_stage_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out)
    else:
        slow = None
    if slow is not None and not slow.size:
        return
    As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = _decode_all(model, A3, BT3, C3)
    args = (model.chunk, model.frac_bits, model.frac_bits2, model.a_fmt.mbits
            + model.b_fmt.mbits, model.algorithm == "two_stage_pairs",
            model.a_fmt.emax >= 64)
    if slow is None:
        run_chunks_weighted(KM.two_stage_chunk, nbt * m * n, 3 * Kp, As, Ae, Ac, Bs, Be, Bc,
                            m, n, Kp, Cs, Ce, Cc, has_c, out, *args)
    else:
        run_chunks_weighted(KA.two_stage_at_chunk, slow.size, 3 * Kp, slow, As, Ae, Ac, Bs,
                            Be, Bc, m, n, Kp, Cs, Ce, Cc, has_c, out, *args)


def _values_quick(bits, fmt, dtype):
    """`_values` through numpy's own casts for fp16, bf16 and fp32 (exact)."""
    flat = np.ascontiguousarray(bits).reshape(-1)
    with np.errstate(invalid="ignore"):
        if fmt == FP16:
            return flat.view(np.float16).astype(dtype)
        if fmt == FP32:
            return flat.view(np.float32).astype(dtype)
        if fmt.name == "bf16":
            return (flat.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(dtype)
    return _values(flat, fmt, dtype)


def _exact_fits(model) -> bool:
    """Whether `exact_fast_chunk` takes the model: chunks of an even number of
    products (at most 254), products exact in float64 and far from its
    overflow and underflow thresholds."""
    fa, fb = model.a_fmt, model.b_fmt
    return (model.chunk % 2 == 0 and model.chunk <= 254 and fa.mbits + fb.mbits + 2 <= 53
            and fa.emax + fb.emax < 1000 and fa.emin - fa.mbits + fb.emin - fb.mbits > -900)


def _windows(v, fmt, G, L, nc):
    """`windows_chunk` over values v (G, L, nc): int32 (G, nc)."""
    W = np.empty(G * nc, np.int32)
    run_chunks_weighted(KA.windows_chunk, G, L * nc, v.reshape(-1), L, nc, W, fmt.emin,
                        fmt.mbits)
    return W


def _exact(model, A, B, A3, BT3, C3, has_c, batch, nbt, m, n, K, Kp, fast):
    """CDNA1 "exact": `exact_fast_chunk` where it fits, the reference
    (`exact_chunk`) on the outputs with an infinite or NaN operand or c (or on
    all, without fast paths); binary32 encodings, NaN the units' NaN."""
    out = np.empty(nbt * m * n, np.float32)
    vals = _values_quick if fast else _values     # numpy's casts, or from_bits
    Cv = vals(C3, model.c_fmt, np.float32)
    if fast and _exact_fits(model):
        A3p, B3p, npad = _pad_operands(A, B, batch, nbt, m, n, K, Kp)
        Av = _values_quick(A3p, model.a_fmt, np.float64)
        Bv = _values_quick(B3p, model.b_fmt, np.float64)
        Cp = _c_rows(C3, has_c, nbt, m, n, npad)
        outp = out if npad == n else np.empty(nbt * m * npad, np.float32)
        L = model.chunk
        nch = Kp // L
        WA = _windows(Av, model.a_fmt, nbt * m * nch, L, 1)
        WB = _windows(Bv, model.b_fmt, nbt * nch, L, npad)
        run_chunks_weighted(KA.exact_fast_chunk, nbt * m, 4 * Kp * npad, Av, Bv, WA, WB, m,
                            npad, Kp, _values_quick(Cp, model.c_fmt, np.float32), has_c, outp,
                            L, 51 - (L - 1).bit_length())
        if npad != n:
            out[:] = outp.reshape(nbt, m, npad)[:, :, :n].reshape(-1)
        ra = (WA.reshape(nbt, m, nch) == KA.W_SPECIAL).any(-1)
        cb = (WB.reshape(nbt, nch, npad)[:, :, :n] == KA.W_SPECIAL).any(1)
        slow = _rows_cols(ra, cb, ~np.isfinite(Cv) if has_c else None, nbt, m, n)
    else:
        slow = np.arange(out.size, dtype=np.int64)
    if slow.size:
        run_chunks_weighted(KA.exact_at_chunk, slow.size, 4 * Kp, slow,
                            vals(A3, model.a_fmt, np.float64),
                            vals(BT3, model.b_fmt, np.float64), m, n, Kp, Cv, has_c,
                            out, model.chunk)
    res = out.view(np.uint32).copy()
    res[np.isnan(out)] = np.uint32(all_ones_nan_bits(FP32))
    return res


def _amd_values(model, A3, BT3, C3, has_c, nbt, m, n, K):
    """"ftz_chain" and the binary32 "fma" chain: the fast kernels on
    float values; NaN results the matrix units' NaN (`all_ones_nan_bits`)."""
    alg = model.algorithm
    Av = _values_quick(A3, model.a_fmt, np.float32).reshape(nbt * m, K)
    Bv = _b_rows(_values_quick(BT3, model.b_fmt, np.float32), nbt, n, K)
    Cv = _values_quick(C3, model.c_fmt, np.float32)
    nout = nbt * m * n
    out = np.empty(nout, np.float32)
    if alg == "ftz_chain":
        with np.errstate(invalid="ignore"):
            Av = np.where(np.abs(Av) < np.float32(2.0 ** model.a_fmt.emin), np.float32(0), Av)
            Bv = np.where(np.abs(Bv) < np.float32(2.0 ** model.b_fmt.emin), np.float32(0), Bv)
            Cv = np.where(np.abs(Cv) < np.float32(2.0 ** -126), np.float32(0), Cv)
        run_chunks_weighted(KA.ftz_fast_chunk, nbt * m, K * n, Av, Bv, K, n, Cv, has_c, out,
                            model.products_per_step)
    else:
        run_chunks_weighted(KA.fma32_fast_chunk, nbt * m, K * n, Av, Bv, K, n, Cv, has_c, out)
    res = out.view(np.uint32).copy()
    res[np.isnan(out)] = np.uint32(all_ones_nan_bits(FP32))
    return res


def _fma64_fast(A3, BT3, C3, nbt, m, n, K):
    """fp64 fused multiply-add chain in IEEE binary64 FMA instructions
    (`softfloat._kernels.mma_amd.fma64_fast_chunk`); the slow twin is `_fma64`."""
    a = np.ascontiguousarray(A3).view(np.float64).reshape(nbt * m, K)
    b = _b_rows(np.ascontiguousarray(BT3).view(np.float64), nbt, n, K)
    c = (np.ascontiguousarray(C3).view(np.float64).reshape(-1) if C3 is not None
         else np.zeros(1))
    out = np.empty(nbt * m * n, np.float64)
    run_chunks_weighted(KA.fma64_fast_chunk, nbt * m, K * n, a, b, K, n, c, C3 is not None, out)
    bits = out.view(np.uint64).copy()
    bits[np.isnan(out)] = np.uint64(all_ones_nan_bits(FP64))
    return bits


def _fvals(bits, fmt):
    if fmt == FP64:
        return np.ascontiguousarray(bits).view(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return from_bits(bits, fmt)


def _flags(model, res, A3, BT3, C3, batch, m, n, scales=None):
    """Per output: overflow, invalid (from the operands' classes) and, for
    outputs with finite operands, inexact and underflow against the exact
    A B + C (`_exact_flags`)."""
    vals = _fvals(res.reshape(-1), model.out_fmt).reshape(-1, m, n)
    av = _fvals(A3, model.a_fmt)
    bv = _fvals(BT3, model.b_fmt)
    xa, xb = av, bv                 # the exact products' factors: block scales applied
    if scales is not None:
        blk = model.scale_block
        off = model.scale_fmt.name == "fp8_e4m3"      # ue4m3: the sign bit is not read
        keep = model.scale_fmt.sign_mask - 1
        sa, sb = (_fvals(s & s.dtype.type(keep) if off else s, model.scale_fmt)
                  for s in scales)
        with np.errstate(invalid="ignore", over="ignore"):
            xa = av * np.repeat(sa, blk, axis=-1)
            xb = bv * np.repeat(np.swapaxes(sb, 1, 2), blk, axis=-1)
    cv = (_fvals(C3, model.c_fmt).reshape(vals.shape) if C3 is not None
          else np.zeros(vals.shape))
    a_nan, b_nan = np.isnan(av).any(-1), np.isnan(bv).any(-1)
    a_inf, b_inf = np.isinf(av).any(-1), np.isinf(bv).any(-1)
    in_nan = a_nan[:, :, None] | b_nan[:, None, :] | np.isnan(cv)
    if scales is not None:
        # a NaN block scale is a NaN operand of its row (column): no invalid
        in_nan = in_nan | (np.isnan(sa).any(-1)[:, :, None]
                           | np.isnan(sb).any(-2)[:, None, :])
    in_inf = a_inf[:, :, None] | b_inf[:, None, :] | np.isinf(cv)
    fl = np.zeros(vals.shape, np.uint8)
    fl[np.isinf(vals) & ~in_inf & ~in_nan] |= np.uint8(Flags.OVERFLOW)
    fl[np.isnan(vals) & ~in_nan] |= np.uint8(Flags.INVALID)
    _exact_flags(model, vals.reshape(-1), xa, xb, cv.reshape(-1), C3 is not None, m, n,
                 fl.reshape(-1))
    return fl.reshape(res.shape)


def _exps(v):
    """(smallest, largest) exponent e of the finite nonzero values v read as
    sig * 2**e with 53-bit integers sig; None when there are none."""
    v = v[np.isfinite(v) & (v != 0)]
    if v.size == 0:
        return None
    e = np.frexp(v)[1].astype(np.int64) - 53
    return int(e.min()), int(e.max()) + 53


def _exact_flags(model, d, av, bv, cv, has_c, m, n, fl):
    """Inexact (D is not the exact A B + C) and underflow (inexact, and the
    exact A B + C nonzero below the output format's smallest normal) for the
    outputs with finite operands (`softfloat._kernels.mma_amd.exact_flags_chunk`)."""
    K = av.shape[-1]
    A = np.ascontiguousarray(av, np.float64).reshape(-1)
    Bt = np.ascontiguousarray(bv, np.float64).reshape(-1)
    C = np.ascontiguousarray(cv, np.float64)
    D = np.ascontiguousarray(d, np.float64)
    ea, eb, ec, ed = _exps(A), _exps(Bt), _exps(C), _exps(D)
    lows, tops = [], []
    if ea is not None and eb is not None:
        lows.append(ea[0] + eb[0])
        tops.append(ea[1] + eb[1] + int(K).bit_length() + 1)
    for e in (ec, ed):
        if e is not None:
            lows.append(e[0])
            tops.append(e[1] + 1)
    if not lows:
        return                      # every finite value zero: exact
    base = min(lows)
    nl = (max(tops) + 2 - base) // 32 + 2
    nout = d.size
    run_chunks_weighted(KA.exact_flags_chunk, nout, 8 * K, A, Bt, m, n, K, C, has_c, D,
                        base, nl, model.out_fmt.emin, fl)


__all__ = ["mma", "truncate_tf32", "unit_fast_paths"]
