"""softfloat.mma's fast AMD and FMA-chain kernels (softfloat/_kernels/mma_amd.py)
against their slow twins (the reference kernels of softfloat/_kernels/mma_chains.py;
MPFR for fp64) and the Fraction reference (tests/mma_reference.py), and the
flags of ``mma(..., return_flags=True)`` against exact rationals."""
import contextlib
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import mma as M

sys.path.insert(0, os.path.dirname(__file__))
import mma_reference as REF  # noqa: E402
import mmasim_harness as H  # noqa: E402

# one instruction per fast kernel and operand types
FAST_CASES = [("cdna3", "f32_32x32x8_f16"), ("cdna3", "f32_16x16x4_4b_bf16"),
              ("cdna3", "f32_32x32x4_xf32"), ("cdna3", "f32_16x16x32_fp8_bf8"),
              ("cdna3", "f32_32x32x16_bf8_bf8"), ("cdna2", "f32_32x32x8f16"),
              ("cdna2", "f32_32x32x4bf16_1k"), ("cdna2", "f32_32x32x2bf16"),
              ("cdna1", "f32_32x32x8f16"), ("cdna1", "f32_32x32x4bf16"),
              ("cdna3", "f32_32x32x2_f32"), ("cdna3", "f64_16x16x4_f64"),
              ("hopper", "m8n8k4.f64.f64.f64.f64")]


@contextlib.contextmanager
def slow_twin():
    with sf.localcontext(fast_paths=False):       # the slow twins of the fast kernels
        yield


def _both(unit, a, b, c):
    fast = M.mma(unit, a, b, c)
    with slow_twin():
        slow = M.mma(unit, a, b, c)
    return fast, slow


def _assert_same(unit, fast, slow, what):
    bad = np.argwhere(fast != slow)
    assert bad.size == 0, (unit.instruction, what, len(bad),
                           [(hex(int(fast[tuple(x)])), hex(int(slow[tuple(x)])))
                            for x in bad[:3]])


@pytest.mark.parametrize("arch,ins", FAST_CASES)
def test_fast_kernels_match_their_slow_twins(arch, ins):
    unit = M.tensor_core(arch, instruction=ins)
    nk = 3 if unit.out_fmt.name != "fp64" else 2
    for seed in range(3):
        a, b, c, _, _ = H.make_case(unit, 24, 20, nk, 100 + seed)
        for cc in (c, None):
            fast, slow = _both(unit, a, b, cc)
            _assert_same(unit, fast, slow, (seed, cc is None))
    # finite operands only (the fast kernels' own outputs, nothing redone),
    # batched, and a K that is not a multiple of the instruction's
    a, b, c, _, _ = H.make_case(unit, 16, 16, 4, 7, kinds=(0, 1, 2, 4, 5))
    a3 = np.stack([a, a[::-1]])
    fast, slow = _both(unit, a3[..., :-1], b[:-1], c)
    _assert_same(unit, fast, slow, "batched, padded K")


def _enc(vals, fmt):
    if fmt.name == "fp64":
        return np.asarray(vals, np.float64).view(np.uint64)
    return sf.to_bits(np.asarray(vals, np.float64), fmt)


def test_two_stage_special_cases():
    """Overflowing chunk sums (the infinity kept over later chunks), products of
    2**128 and more (bf16, xf32), cancellation to zero (+0), results rounding
    to zero from below (their sign), -0 accumulators, subnormal accumulators,
    chunks of -0 products only (+0)."""
    for ins in ("f32_32x32x8_bf16", "f32_32x32x4_xf32", "f32_32x32x8_f16",
                "f32_32x32x16_fp8_fp8"):
        unit = M.tensor_core("cdna3", instruction=ins)
        fa, k = unit.a_fmt, unit.k
        big = float(fa.max)
        rows = [[big] * k * 2, [big, -big] + [0.0] * (2 * k - 2),
                [1.0, -1.0] + [0.0] * (2 * k - 2), [2.0 ** fa.emin] * (2 * k),
                [-(2.0 ** (fa.emin - fa.mbits))] + [0.0] * (2 * k - 1),
                [1.5, 2.0 ** -20, -1.5] + [0.0] * (2 * k - 3), [0.0] * (2 * k),
                [-1.0] * (2 * k)]
        a = _enc(rows, fa)
        cols = [[big] * (2 * k), [1.0] * (2 * k), [2.0 ** fa.emin] * (2 * k),
                [-(2.0 ** fa.emin)] + [1.0] * (2 * k - 1), [0.0] * (2 * k)]
        b = _enc(np.array(cols).T, unit.b_fmt)
        for cv in (-0.0, 2.0 ** -140, -(2.0 ** -149), 3.0e38, -1.0):
            c = _enc(np.full((len(rows), len(cols)), cv), sf.FP32)
            fast, slow = _both(unit, a, b, c)
            _assert_same(unit, fast, slow, cv)


def test_two_stage_fp8_exhaustive_products():
    """Every fp8 e4m3 fnuz x e5m2 fnuz pair (the even slot of a pair sum) and
    every e4m3 x e4m3 pair against one fixed odd product, with c = 0, c = -1 and
    c tiny: 3 x 2 x 65,536 outputs, fast against slow."""
    unit = M.tensor_core("cdna3", instruction="f32_16x16x32_fp8_bf8")
    allv = np.arange(256, dtype=np.uint8)
    a = np.zeros((256, 32), np.uint8)
    a[:, 0] = allv
    a[:, 1] = 0x40                                   # 2.0 in e4m3 fnuz... any fixed value
    b = np.zeros((32, 256), np.uint8)
    b[0] = allv
    b[1] = 0x3C
    for cv in (0.0, -1.0, 2.0 ** -130):
        c = _enc(np.full((256, 256), cv), sf.FP32)
        fast, slow = _both(unit, a, b, c)
        _assert_same(unit, fast, slow, cv)
        unit2 = M.tensor_core("cdna3", instruction="f32_16x16x32_fp8_fp8")
        fast, slow = _both(unit2, a, b, c)
        _assert_same(unit2, fast, slow, cv)


def test_ftz_and_exact_fp16_exhaustive_a():
    """Every fp16 encoding as a against a column set spanning the range
    (subnormals, flush boundaries, large values): CDNA2 ftz chains and CDNA1
    exact dots, fast against slow."""
    allv = np.arange(1 << 16, dtype=np.uint16)
    rng = np.random.default_rng(3)
    bv = np.array([1.0, -1.0, 2.0 ** -14, 2.0 ** -24, 3.0 * 2.0 ** -15, 65504.0, 0.5, -2.0 ** -8])
    for ins, arch in (("f32_32x32x8f16", "cdna2"), ("f32_32x32x8f16", "cdna1")):
        unit = M.tensor_core(arch, instruction=ins)
        a = np.zeros((allv.size, 4), np.uint16)
        a[:, 0] = allv
        a[:, 1:] = rng.choice(allv, size=(allv.size, 3))
        b = np.zeros((4, bv.size), np.uint16)
        b[0] = sf.to_bits(bv, "fp16")
        b[1:] = sf.to_bits(rng.standard_normal((3, bv.size)) * 2.0 ** rng.integers(-20, 8, (3, bv.size)), "fp16")
        c = _enc(rng.standard_normal((allv.size, bv.size)) * 2.0 ** -120, sf.FP32)
        fast, slow = _both(unit, a, b, c)
        _assert_same(unit, fast, slow, arch)


def test_fp64_fma_chain_matches_mpfr_and_fractions():
    """The binary64 FMA chain (hardware FMA) against MPFR (the slow twin) on
    subnormal, huge, cancelling and special operands, and against the Fraction
    reference on a few outputs."""
    unit = M.tensor_core("hopper", instruction="m8n8k4.f64.f64.f64.f64")
    rng = np.random.default_rng(5)
    K = 12
    vals = [rng.standard_normal((6, K)) * 2.0 ** rng.integers(-1074, 1000, (6, K)),
            np.full((1, K), 2.0 ** -1074), np.full((1, K), 1.7e308)]
    a = np.concatenate(vals)
    a[0, 3] = np.inf
    a[1, 5] = np.nan
    a[2, :K // 2] = -a[3, :K // 2]
    b = (rng.standard_normal((K, 7)) * 2.0 ** rng.integers(-60, 60, (K, 7)))
    b[:, 0] = 1.0
    b[:, 1] = 2.0 ** -1000
    c = rng.standard_normal((a.shape[0], 7)) * 2.0 ** rng.integers(-1074, 1020, (a.shape[0], 7))
    A, B, C = (np.ascontiguousarray(x).view(np.uint64) for x in (a, b, c))
    fast, slow = _both(unit, A, B, C)
    _assert_same(unit, fast, slow, "fp64")
    for i in (0, 2, 4, 6, 7):
        for j in range(7):
            want = REF.one_output(unit, A[i], B[:, j], C[i, j])
            got = float(fast[i, j].view(np.float64))
            if isinstance(want, tuple):
                assert (np.isnan(got) if want[0] == "nan" else got == np.inf * want[1])
            else:
                assert got == float(want), (i, j)


# ---------------------------------------------------------------------------
# flags
# ---------------------------------------------------------------------------
FLAG_CASES = [("cdna3", "f32_32x32x8_f16"), ("cdna3", "f32_16x16x32_fp8_fp8"),
              ("cdna2", "f32_32x32x4bf16_1k"), ("cdna1", "f32_32x32x4bf16"),
              ("cdna3", "f32_32x32x2_f32"), ("hopper", "m64n8k16.f32.f16.f16"),
              ("ampere", "m16n8k16.f16.f16.f16.f16"), ("hopper", "m8n8k4.f64.f64.f64.f64"),
              ("blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m1.ue8m0")]


def _exact_flags(unit, a_row, b_col, c, d, sa_row=None, sb_col=None):
    """The expected flags of one output, from Fractions."""
    fa, fb = unit.a_fmt, unit.b_fmt
    av = [REF.value(x, fa) for x in a_row]
    bv = [REF.value(x, fb) for x in b_col]
    cv = Fraction(0) if c is None else REF.value(c, unit.c_fmt)
    if unit.scaled:
        off = unit.scale_fmt.name == "fp8_e4m3"
        blk = unit.scale_block
        sa = [REF.value(x, unit.scale_fmt, off) for x in sa_row]
        sb = [REF.value(x, unit.scale_fmt, off) for x in sb_col]
    ops = av + bv + [cv] + (sa + sb if unit.scaled else [])
    dv = REF.value(d, unit.out_fmt)
    in_nan = any(isinstance(x, tuple) and x[0] == "nan" for x in ops)
    in_inf = any(isinstance(x, tuple) for x in ops)
    f = 0
    if isinstance(dv, tuple):
        if dv[0] == "inf" and not in_inf:
            f |= 4 | 1
        if dv[0] == "nan" and not in_nan:
            f |= 16
        return f
    if in_inf:
        return f
    exact = cv + sum((x * y * ((sa[k // blk] * sb[k // blk]) if unit.scaled else 1)
                      for k, (x, y) in enumerate(zip(av, bv))), Fraction(0))
    if exact != dv:
        f |= 1
        if exact != 0 and abs(exact) < Fraction(2) ** unit.out_fmt.emin:
            f |= 2
    return f


@pytest.mark.parametrize("arch,ins", FLAG_CASES)
def test_flags_against_exact_rationals(arch, ins):
    unit = M.tensor_core(arch, instruction=ins)
    m, n = (5, 4) if unit.k >= 32 else (6, 6)
    a, b, c, sa, sb = H.make_case(unit, m, n, 2, H.case_seed(arch, ins) + 3)
    # a row of tiny values (underflow), exact small integers (no flag)
    if unit.a_fmt.name != "fp64":
        a[0] = _enc(np.full(a.shape[1], 2.0 ** (unit.a_fmt.emin + 1)), unit.a_fmt)
        a[1] = _enc(np.resize([1.0, 2.0, 0.0, -1.0], a.shape[1]), unit.a_fmt)
        b[:, 0] = _enc(np.resize([1.0, 0.5, 2.0, 0.0], b.shape[0]), unit.b_fmt)
        b[:, 1] = _enc(np.full(b.shape[0], 2.0 ** (unit.b_fmt.emin + 1)), unit.b_fmt)
        c[1, 0] = 0
    d, fl = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb, return_flags=True)
    seen = 0
    for i in range(m):
        for j in range(n):
            want = _exact_flags(unit, a[i], b[:, j], c[i, j], d[i, j],
                                None if sa is None else sa[i], None if sb is None else sb[:, j])
            assert int(fl[i, j]) == want, (i, j, int(fl[i, j]), want, hex(int(d[i, j])))
            seen |= want
    assert seen & 1                       # some outputs are inexact


def test_flags_exact_and_underflow_examples():
    """Small integers and an exact subnormal result raise no flag; an input
    below binary32's smallest normal flushed to zero (CDNA2) raises inexact and
    underflow."""
    a = sf.to_bits(np.array([[1.0, 2.0] + [0.0] * 6, [0.0] * 8]), "fp16")
    b = sf.to_bits(np.array([[3.0, 5.0] + [0.0] * 6, [0.0] * 8]).T, "fp16")
    c = sf.to_bits(np.array([[0.5, 0.0], [3 * 2.0 ** -149, 2.0 ** -140 + 2.0 ** -149]]), "fp32")
    d, fl = M.mma(M.tensor_core("cdna3", "fp16", "fp32"), a, b, c, return_flags=True)
    assert sf.from_bits(d, "fp32").tolist() == [[13.5, 0.0], [3 * 2.0 ** -149,
                                                             2.0 ** -140 + 2.0 ** -149]]
    assert fl.tolist() == [[0, 0], [0, 0]]
    d, fl = M.mma(M.tensor_core("cdna2", "fp16", "fp32"), a[:, :4], b[:4], c,
                  return_flags=True)
    assert sf.from_bits(d, "fp32").tolist() == [[13.5, 0.0], [0.0, 0.0]]
    assert fl.tolist() == [[0, 0], [3, 3]]


@pytest.mark.slow
@pytest.mark.parametrize("arch,ins", [(a, i) for a in ("cdna1", "cdna2", "cdna3")
                                      for i in H.families(a)]
                         + [("hopper", "m16n8k16.f64.f64.f64.f64")])
def test_fast_kernels_match_their_slow_twins_every_family(arch, ins):
    unit = M.tensor_core(arch, instruction=ins)
    for seed in range(6):
        a, b, c, _, _ = H.make_case(unit, 96, 64, 3, 1000 + seed)
        fast, slow = _both(unit, a, b, c if seed % 2 else None)
        _assert_same(unit, fast, slow, seed)


def test_exact_ties_and_tiny_sums():
    """CDNA1 exact dots whose exact sum is a binary32 tie (broken by a tiny
    remainder either way), or halfway between 0 and the smallest subnormal, or
    below it: fast against slow and the Fraction reference."""
    unit = M.tensor_core("cdna1", instruction="f32_32x32x4bf16")
    t = 2.0 ** -24
    rows = [[1.0, t, 0.0, 0.0], [1.0, t, 2.0 ** -100, 0.0], [1.0, t, -(2.0 ** -100), 0.0],
            [1.0, -t / 2, 2.0 ** -90, 0.0], [2.0 ** -75, 2.0 ** -75, 0.0, 0.0],
            [-(2.0 ** -75), 2.0 ** -100, 0.0, 0.0], [2.0 ** -75, -(2.0 ** -76), 2.0 ** -130, 0.0]]
    a = sf.to_bits(np.array(rows), "bf16")
    b = sf.to_bits(np.array([[1.0, 1.0, 1.0, 1.0], [2.0 ** -75, 1.0, 2.0 ** -60, 1.0]]).T,
                   "bf16")
    c = sf.to_bits(np.array([[0.0, 2.0 ** -149]] * len(rows)), "fp32")
    fast, slow = _both(unit, a, b, c)
    _assert_same(unit, fast, slow, "ties")
    for i in range(len(rows)):
        for j in range(2):
            assert int(fast[i, j]) == REF.one_output(unit, a[i], b[:, j], c[i, j]), (i, j)


def test_exact_fast_kernel_every_path():
    """CDNA1 exact dots down each path of `exact_fast_chunk`: products within
    the exponent window (one float64 sum, rounded to odd), products spanning
    more (two-sums), and errors that do not add exactly (a huge c against tiny
    products: Grow-Expansion); bf16 chains that overflow (redone by the
    reference, which keeps the infinity); fast against slow and the Fraction
    reference."""
    from softfloat.mma import amd as AMD
    rng = np.random.default_rng(11)
    for ins, fmt in (("f32_32x32x8f16", "fp16"), ("f32_32x32x4bf16", "bf16")):
        unit = M.tensor_core("cdna1", instruction=ins)
        L, K = unit.chunk, 8
        narrow = rng.standard_normal((4, K))
        wide = rng.standard_normal((4, K)) * 2.0 ** rng.integers(-14, 15, (4, K))
        rows = [narrow, wide]
        if fmt == "bf16":
            rows.append(np.array([[2.0 ** 127] * K, [2.0 ** 127, -(2.0 ** 127)] * (K // 2)]))
        a = sf.to_bits(np.concatenate(rows), fmt)
        b = sf.to_bits(np.concatenate([rng.standard_normal((K, 3)),
                                       rng.standard_normal((K, 3))
                                       * 2.0 ** rng.integers(-14, 15, (K, 3))], axis=1), fmt)
        av, bv = sf.from_bits(a, fmt), sf.from_bits(b, fmt)
        WA = AMD._windows(np.ascontiguousarray(av), unit.a_fmt, a.size // L, L, 1)
        WB = AMD._windows(np.ascontiguousarray(bv), unit.b_fmt, K // L, L, b.shape[1])
        w = WA.reshape(a.shape[0], K // L)[:, :, None] + WB.reshape(K // L, -1)[None]
        lim = 51 - (L - 1).bit_length()
        assert (w[:4, :, :3] <= lim).all() and (w > lim).any()
        for cv in (0.0, 3.0e30, -(2.0 ** -140)):
            c = sf.to_bits(np.full((a.shape[0], b.shape[1]), cv), "fp32")
            fast, slow = _both(unit, a, b, c)
            _assert_same(unit, fast, slow, (ins, cv))
            if fmt == "bf16":
                assert np.isinf(sf.from_bits(fast[-2], "fp32")).any()
            for i in range(0, a.shape[0], 3):
                for j in range(b.shape[1]):
                    assert int(fast[i, j]) == REF.one_output(unit, a[i], b[:, j], c[i, j]), \
                        (ins, cv, i, j)
