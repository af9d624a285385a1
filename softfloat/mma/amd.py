"""AMD matrix cores (CDNA3 two-stage sums, CDNA2 flush-to-zero chains, CDNA1
exact dots) and the fp32/fp64 fused multiply-add chains of `softfloat.mma`:
the fast kernels of `softfloat._kernels.mma_amd` where they fit, the reference
kernels of `softfloat._kernels.mma` (MPFR for fp64) for the outputs they leave
or, without fast paths, for all."""
from __future__ import annotations

import numpy as np

from .._kernels import mma_amd as KA
from .._kernels import mma_chains as KC
from .._parallel import run_chunks_weighted
from ..formats import FP32, FP64
from ..specialize import all_ones_nan_bits
from .decode import (LUT_BITS, decode_all, decode_values, float_values, float_values_quick,
                     rows_cols)

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


def _two_stage_fits(model) -> bool:
    """Whether `two_stage_fast_chunk` takes the model: chunks of a multiple of 4
    products, operands of at most `LUT_BITS` bits, float64 arithmetic exact (a
    chunk's sum of products below 2**(F + 2) each under 2**52; the second
    stage's sum below 2**(F2 + 4 + log2 L) under 2**52) and F2 + 1 >= F."""
    L, F, F2 = model.chunk, model.frac_bits, model.frac_bits2
    return (L % 4 == 0 and max(model.a_fmt.nbits, model.b_fmt.nbits) <= LUT_BITS
            and F + 2 + int(L).bit_length() <= 52 and F2 + 4 + int(L).bit_length() <= 52
            and F2 + 1 >= F)


def _two_stage_fast(model, ops, out):
    """CDNA3 "two_stage" / "two_stage_pairs" by `two_stage_fast_chunk` into
    ``out``; returns the indices of the outputs with an infinite or NaN operand
    or c, or (bf16, xf32) a product that may reach 2**128, which the reference
    kernel redoes."""
    nbt, m, n, Kp, C3 = ops.nbt, ops.m, ops.n, ops.Kp, ops.C3
    A3, B3, npad = ops.padded()
    Av, Ae0, Acl = decode_values(A3, model.a_fmt)
    Bv, Be0, Bcl = decode_values(B3, model.b_fmt)
    outp = out if npad == n else np.empty(nbt * m * npad, np.uint32)
    nonfin = run_chunks_weighted(
        KA.two_stage_fast_chunk, nbt * m, 3 * Kp * npad, Av, Ae0, Bv, Be0, m, npad, Kp,
        ops.c_rows(npad).view(np.float32), ops.has_c, outp,
        (model.chunk, model.frac_bits, model.frac_bits2, model.algorithm == "two_stage_pairs"))
    rs = (Acl.reshape(nbt, m, Kp) != 0).any(-1)
    cs = (Bcl.reshape(nbt, Kp, npad) != 0).any(1)
    cc = None
    if model.a_fmt.emax >= 64:          # bf16, xf32: products may reach 2**128
        xa = Ae0.reshape(nbt, m, Kp).max(-1).astype(np.int64)
        xb = Be0.reshape(nbt, Kp, npad).max(1).astype(np.int64)[:, :n]
        cc = xa[:, :, None] + xb[:, None, :] + 1 >= 128
    if ops.has_c:
        cspec = ~np.isfinite(C3.view(np.float32))
        cc = cspec if cc is None else cc.reshape(-1) | cspec
    if npad != n:
        out[:] = outp.reshape(nbt, m, npad)[:, :, :n].reshape(-1)
    if nonfin:                          # overflowed chains: the reference keeps the infinity
        over = ~np.isfinite(out.view(np.float32))
        cc = over if cc is None else cc.reshape(-1) | over
    return rows_cols(rs, cs[:, :n], cc, nbt, m, n)


def two_stage(model, ops, fast):
    """CDNA3 "two_stage" / "two_stage_pairs" (binary32 encodings): the fast
    kernel where it fits, the reference (`two_stage_chunk`) on the outputs it
    leaves (or on all, without fast paths)."""
    out = np.empty(ops.nout, np.uint32)
    slow = _two_stage_fast(model, ops, out) if fast and _two_stage_fits(model) else None
    if slow is not None and not slow.size:
        return out
    As, Ae, Ac, Bs, Be, Bc, Cs, Ce, Cc = decode_all(model, ops.A3, ops.BT3, ops.C3)
    args = (model.chunk, model.frac_bits, model.frac_bits2, model.a_fmt.mbits
            + model.b_fmt.mbits, model.algorithm == "two_stage_pairs",
            model.a_fmt.emax >= 64)
    common = (As, Ae, Ac, Bs, Be, Bc, ops.m, ops.n, ops.Kp, Cs, Ce, Cc, ops.has_c, out)
    if slow is None:
        run_chunks_weighted(KC.two_stage_chunk, ops.nout, 3 * ops.Kp, *common, *args)
    else:
        run_chunks_weighted(KA.two_stage_at_chunk, slow.size, 3 * ops.Kp, slow, *common, *args)
    return out


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


def exact(model, ops, fast):
    """CDNA1 "exact": `exact_fast_chunk` where it fits, the reference
    (`exact_chunk`) on the outputs with an infinite or NaN operand or c (or on
    all, without fast paths); binary32 encodings, NaN the units' NaN."""
    nbt, m, n, Kp, L = ops.nbt, ops.m, ops.n, ops.Kp, model.chunk
    out = np.empty(ops.nout, np.float32)
    vals = float_values_quick if fast else float_values     # numpy's casts, or from_bits
    Cv = vals(ops.C3, model.c_fmt, np.float32)
    if fast and _exact_fits(model):
        A3, B3, npad = ops.padded()
        Av = float_values_quick(A3, model.a_fmt, np.float64)
        Bv = float_values_quick(B3, model.b_fmt, np.float64)
        outp = out if npad == n else np.empty(nbt * m * npad, np.float32)
        nch = Kp // L
        WA = _windows(Av, model.a_fmt, nbt * m * nch, L, 1)
        WB = _windows(Bv, model.b_fmt, nbt * nch, L, npad)
        Cp = float_values_quick(ops.c_rows(npad), model.c_fmt, np.float32)
        nonfin = run_chunks_weighted(KA.exact_fast_chunk, nbt * m, 4 * Kp * npad, Av, Bv, WA,
                                     WB, m, npad, Kp, Cp, ops.has_c, outp, L,
                                     51 - (L - 1).bit_length())
        if npad != n:
            out[:] = outp.reshape(nbt, m, npad)[:, :, :n].reshape(-1)
        ra = (WA.reshape(nbt, m, nch) == KA.W_SPECIAL).any(-1)
        cb = (WB.reshape(nbt, nch, npad)[:, :, :n] == KA.W_SPECIAL).any(1)
        cc = ~np.isfinite(Cv) if ops.has_c else None
        if nonfin:                      # overflowed chains: the reference keeps the infinity
            cc = ~np.isfinite(out) if cc is None else cc | ~np.isfinite(out)
        slow = rows_cols(ra, cb, cc, nbt, m, n)
    else:
        slow = np.arange(out.size, dtype=np.int64)
    if slow.size:
        run_chunks_weighted(KA.exact_at_chunk, slow.size, 4 * Kp, slow,
                            vals(ops.A3, model.a_fmt, np.float64),
                            vals(ops.BT3, model.b_fmt, np.float64), m, n, Kp, Cv, ops.has_c,
                            out, L)
    return _nan_bits(out)


def _nan_bits(out):
    """The binary32 encodings of the float32 results, a NaN the units' NaN
    (`all_ones_nan_bits`)."""
    res = out.view(np.uint32).copy()
    res[np.isnan(out)] = np.uint32(all_ones_nan_bits(FP32))
    return res


def chain32(model, ops, fast):
    """CDNA2 "ftz_chain" and the binary32 "fma" chain (binary32 encodings):
    `ftz_fast_chunk` / `fma32_fast_chunk` on float32 values, or without fast
    paths the references `ftz_chain_chunk` / `fma32_chunk`."""
    alg, nbt, m, n, Kp, has_c = model.algorithm, ops.nbt, ops.m, ops.n, ops.Kp, ops.has_c
    out = np.empty(ops.nout, np.float32)
    if not fast:
        dt = np.float64 if alg != "ftz_chain" else np.float32
        Av, Bv = float_values(ops.A3, model.a_fmt, dt), float_values(ops.BT3, model.b_fmt, dt)
        Cv = float_values(ops.C3, model.c_fmt, np.float32)
        if alg == "ftz_chain":
            run_chunks_weighted(KC.ftz_chain_chunk, ops.nout, Kp, Av, Bv, m, n, Kp, Cv, has_c,
                                out, model.products_per_step,
                                np.float32(2.0 ** model.a_fmt.emin),
                                np.float32(2.0 ** model.b_fmt.emin))
        else:
            run_chunks_weighted(KC.fma32_chunk, ops.nout, 4 * Kp, Av, Bv, m, n, Kp, Cv, has_c,
                                out)
        return _nan_bits(out)
    A3, B3, _ = ops.padded(blocks=False)
    Av = float_values_quick(A3, model.a_fmt, np.float32).reshape(nbt * m, Kp)
    Bv = float_values_quick(B3, model.b_fmt, np.float32).reshape(nbt, Kp, n)
    Cv = float_values_quick(ops.C3, model.c_fmt, np.float32)
    if alg == "ftz_chain":
        with np.errstate(invalid="ignore"):
            Av = np.where(np.abs(Av) < np.float32(2.0 ** model.a_fmt.emin), np.float32(0), Av)
            Bv = np.where(np.abs(Bv) < np.float32(2.0 ** model.b_fmt.emin), np.float32(0), Bv)
            Cv = np.where(np.abs(Cv) < np.float32(2.0 ** -126), np.float32(0), Cv)
        run_chunks_weighted(KA.ftz_fast_chunk, nbt * m, Kp * n, Av, Bv, Kp, n, Cv, has_c, out,
                            model.products_per_step)
    else:
        run_chunks_weighted(KA.fma32_fast_chunk, nbt * m, Kp * n, Av, Bv, Kp, n, Cv, has_c,
                            out)
    return _nan_bits(out)


def fma64(model, ops, fast):
    """The binary64 FMA chain (NVIDIA DMMA, AMD fp64 MFMA): `fma64_fast_chunk`
    (the CPU's IEEE fused multiply-add), or without fast paths MPFR (`_fma64`);
    binary64 encodings, NaN the units' NaN."""
    C3 = ops.C3 if ops.has_c else None
    if not fast:
        return _fma64(ops.A3, ops.BT3, C3, ops.nbt, ops.m, ops.n, ops.Kp)
    nbt, m, n, Kp = ops.nbt, ops.m, ops.n, ops.Kp
    A3, B3, _ = ops.padded(blocks=False)
    a = np.ascontiguousarray(A3).view(np.float64).reshape(nbt * m, Kp)
    b = np.ascontiguousarray(B3).view(np.float64).reshape(nbt, Kp, n)
    c = C3.view(np.float64) if C3 is not None else np.zeros(1)
    out = np.empty(nbt * m * n, np.float64)
    run_chunks_weighted(KA.fma64_fast_chunk, nbt * m, Kp * n, a, b, Kp, n, c, C3 is not None,
                        out)
    bits = out.view(np.uint64).copy()
    bits[np.isnan(out)] = np.uint64(all_ones_nan_bits(FP64))
    return bits
