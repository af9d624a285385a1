"""NVIDIA tensor cores: the fused dot-product kernels ("fdpa", and "grouped"
for mxf4 / mxf4nvf4) of `softfloat.mma`, the fast ones where they fit and the
references for the outputs they leave."""
from __future__ import annotations

import math

import numpy as np

from .._kernels import mma as KM
from .._kernels import mma_decode as KD
from .._kernels import mma_fast as KF
from .._parallel import run_chunks_weighted
from ..formats import FP16, Format
from ..rounding import Rounding
from .decode import LUT_BITS, decode, decode_all, decode_values

def fdpa_fits(model) -> bool:
    """Whether `fdpa_fast_chunk` takes the model: a chunk of a multiple of 4
    products (every NVIDIA one), operands of at most `LUT_BITS` bits, block
    scales (if any) e8m0 powers of two constant over a chunk (folded into the
    operands' values and exponents), and float64 arithmetic exact: products of
    significands exact, a chunk's L + 1 aligned terms (each below 2**(F + 2))
    summing below 2**53."""
    Ma, Mb = model.a_fmt.mbits, model.b_fmt.mbits
    if model.scaled and (model.scale_fmt.name != "e8m0" or model.scale_block % model.chunk):
        return False
    return (model.chunk % 4 == 0 and Ma + Mb + 2 <= 53
            and max(model.a_fmt.nbits, model.b_fmt.nbits) <= LUT_BITS
            and model.frac_bits + 2 + int(model.chunk + 1).bit_length() <= 53)


def _apply_scales(v, e0, cls, s):
    """Fold e8m0 block scales into decoded operands (flat v values, e0
    exponents, cls classes): ``s`` the scale code of each element, in their
    layout; values times 2**(s - 127), exponents plus s - 127 (zeros stay at
    NO_EXP); a NaN scale (0xFF) marks its elements as NaN operands."""
    s = s.reshape(-1)
    sx = s.astype(np.int32) - 127
    v *= np.ldexp(1.0, sx)
    e0 += np.where(e0 == KD.NO_EXP, np.float32(0), sx.astype(np.float32))
    cls |= (s == 0xFF).astype(np.uint8) * np.uint8(2)


def _fdpa_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out, rne, p, emin, Eo, Mo,
               scales=None):
    """Run `fdpa_fast_chunk` into ``out``; returns the indices of the outputs
    with an infinite or NaN operand (to redo with the reference kernel).
    ``scales``: e8m0 codes (nb, m, nsb) and, transposed, (nb, n, nsb) of a
    block-scaled model."""
    L = model.chunk
    npad = -(-n // KF.JB) * KF.JB            # the kernel's column blocks
    A3 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nbt, m, K)
    B3 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nbt, K, n)
    if Kp != K:
        A3 = np.concatenate([A3, np.zeros((nbt, m, Kp - K), A3.dtype)], axis=2)
    if Kp != K or npad != n:
        B3 = np.pad(B3, ((0, 0), (0, Kp - K), (0, npad - n)))
    Av, Ae0, Acl = decode_values(A3, model.a_fmt)
    Bv, Be0, Bcl = decode_values(B3, model.b_fmt)
    if scales is not None:
        blk = model.scale_block
        sb = np.swapaxes(scales[1], 1, 2)                   # (nb, nsb, n)
        if npad != n:
            sb = np.pad(sb, ((0, 0), (0, 0), (0, npad - n)), constant_values=127)
        _apply_scales(Av, Ae0, Acl, np.repeat(scales[0], blk, axis=-1))
        _apply_scales(Bv, Be0, Bcl, np.repeat(sb, blk, axis=1))
    ZA = np.ascontiguousarray((Ae0.reshape(nbt * m, Kp // L, L) == KD.NO_EXP).any(axis=2))
    ZB = np.ascontiguousarray((Be0.reshape(nbt, Kp // L, L, npad) == KD.NO_EXP).any(axis=2))
    C, cspec = _c_block_args(model, C3, has_c, nbt, m, n, npad)
    Ec, Mc = model.c_fmt.ebits, model.c_fmt.mbits
    outp = out if npad == n else np.empty(nbt * m * npad, np.uint32)
    anyc = run_chunks_weighted(
        KF.fdpa_fast_chunk, nbt * m, 2 * Kp * npad, Av, Ae0, ZA.reshape(-1), Bv, Be0,
        ZB.reshape(-1), m, npad, Kp, C, Ec, Mc, cspec, has_c, outp, L, model.frac_bits,
        model.e_zero, rne, p, emin, Eo, Mo, KD.POW2)
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
    return (decode(SA3, model.scale_fmt, sign_off) + decode(SBT3, model.scale_fmt, sign_off)
            + (SA3.shape[-1], model.scale_block, 2 * model.scale_fmt.mbits))


_fits_cache: dict = {}


def grouped_fits(model) -> bool:
    """Whether `grouped_fast_chunk` takes the model: group sums exact in float32
    (every product, and the sum of a group, a multiple of the smallest product
    below 2**24 of it) and chunks of whole groups of a multiple of 4."""
    key = (model.a_fmt, model.b_fmt, model.group)
    fits = _fits_cache.get(key)
    if fits is None:
        bits = sum(math.log2(f.max) - (f.emin - f.mbits) for f in (model.a_fmt, model.b_fmt))
        fits = _fits_cache[key] = (model.group % 4 == 0 and bits + math.log2(model.group) <= 24
                                   and max(model.a_fmt.nbits, model.b_fmt.nbits) <= LUT_BITS)
    return fits


def _scale_values(s, fmt):
    """(values float64, binade exponents int64, NaN) of block-scale codes
    (fp8_e4m3 read without its sign: ue4m3)."""
    sig, e, cls = decode(s, fmt, fmt.name == "fp8_e4m3")
    v = np.ldexp(sig.astype(np.float64), e - fmt.mbits)
    return v, e.astype(np.int64), cls == KD.CLS_NAN


def _grouped_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, SA3, SBT3, out, p, emin, Eo,
                  Mo):
    """Run `grouped_fast_chunk` into ``out``; returns the indices of the outputs
    with an infinite or NaN operand, c or scale (the reference kernel's)."""
    G = model.group
    npad = -(-n // KF.JB) * KF.JB
    A3 = np.broadcast_to(A, batch + A.shape[-2:]).reshape(nbt, m, K)
    B3 = np.broadcast_to(B, batch + B.shape[-2:]).reshape(nbt, K, n)
    if npad != n:
        B3 = np.pad(B3, ((0, 0), (0, 0), (0, npad - n)))
    Av, _, Acl = decode_values(A3, model.a_fmt)
    Bv, _, Bcl = decode_values(B3, model.b_fmt)
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
        KF.grouped_fast_chunk, nbt * m, K * npad, Av.astype(np.float32), MA.reshape(-1),
        Bv.astype(np.float32), MB.reshape(-1), SAv, SAx, SBv.reshape(-1), SBx.reshape(-1), m,
        npad, K, nsb, C, model.c_fmt.ebits, model.c_fmt.mbits, cspec, has_c, outp,
        model.chunk, G, model.scale_block, model.frac_bits, model.e_zero, p, emin, Eo, Mo,
        KD.POW2)
    rs = (Acl.reshape(nbt, m, K) != 0).any(-1) | SAn.reshape(nbt, m, nsb).any(-1)
    cs = (Bcl.reshape(nbt, K, npad) != 0).any(1)
    cs[:, :n] |= SBn.reshape(nbt, nsb, n).any(1)
    return _finish_fast(out, outp, anyc, cspec, rs, cs, nbt, m, n, npad)


def _out_spec(fmt: Format):
    """(emin, exponent bits, fraction bits) of the D format (binary16 or binary32)."""
    if fmt == FP16:
        return -14, 5, 10
    return -126, 8, 23


def run_fused(model, ops, SA, SB, out, fast):
    """"fdpa" and "grouped" into ``out`` (uint32 encodings of the output
    format): the fast kernel where it fits, the reference on the outputs it
    leaves (or on all, without fast paths). ``ops``: the `Operands`; SA, SB the
    block scales (or None)."""
    batch, nbt, m, n, K, Kp = ops.batch, ops.nbt, ops.m, ops.n, ops.K, ops.Kp
    A, B, C3, has_c = ops.A, ops.B, ops.C3, ops.has_c
    nout = ops.nout
    Ma, Mb = model.a_fmt.mbits, model.b_fmt.mbits
    emin, Eo, Mo = _out_spec(model.out_fmt)
    p = model.output_precision
    rne = model.output_mode == Rounding.NEAREST_EVEN
    SA3 = SBT3 = None
    if model.scaled:
        nsb = SA.shape[-1]
        SA3 = np.broadcast_to(SA, batch + SA.shape[-2:]).reshape(nbt, m, nsb)
        SBT3 = np.swapaxes(np.broadcast_to(SB, batch + SB.shape[-2:]).reshape(
            nbt, nsb, n), 1, 2)
    if model.algorithm == "fdpa":
        if fast and fdpa_fits(model):
            # the branch-free kernel for outputs with finite operands, the
            # reference kernel for the others
            slow = _fdpa_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, Kp, out,
                              rne, p, emin, Eo, Mo,
                              (SA3, SBT3) if model.scaled else None)
        else:
            slow = np.arange(nout, dtype=np.int64)
        if slow.size:
            As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = decode_all(model, ops.A3, ops.BT3, C3)
            scl = _scale_args(model, SA3, SBT3)
            run_chunks_weighted(
                KM.fdpa_chunk, slow.size, 2 * Kp, As, Ae, Ac, Bs, Be, Bc, m, n, Kp,
                Cs, Ce, Cc, has_c, model.c_fmt.mbits, *scl[:-1], model.scaled, out,
                model.chunk, model.frac_bits, Ma + Mb, scl[-1], model.e_zero, rne, p,
                emin, Eo, Mo, slow, True)
        return
    if fast and grouped_fits(model):
        slow = _grouped_fast(model, A, B, C3, has_c, batch, nbt, m, n, K, SA3, SBT3,
                             out, p, emin, Eo, Mo)
    else:
        slow = np.arange(nout, dtype=np.int64)
    if slow.size:
        As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = decode_all(model, ops.A3, ops.BT3, C3)
        emin_a, emin_b = model.a_fmt.emin, model.b_fmt.emin
        qab = emin_a - Ma + emin_b - Mb
        scl = _scale_args(model, SA3, SBT3)
        run_chunks_weighted(
            KM.grouped_at_chunk, slow.size, 2 * Kp, slow, As, Ae, Ac, Bs, Be, Bc, m,
            n, Kp, Cs, Ce, Cc, has_c, model.c_fmt.mbits, *scl[:-1], out,
            model.chunk, model.group, model.frac_bits, qab, emin_a, emin_b, scl[-1],
            model.e_zero, p, emin, Eo, Mo)
