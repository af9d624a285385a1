"""softfloat.mma: the matrix-unit kernels against an independent Fraction
reference (tests/mma_reference.py), the fast kernel against its slow twin, the
interface (presets, names, errors, K chaining and padding, matmul), and the two
defects of the earlier tensor-core presets (Hopper fp8, Ampere fp16 output)."""
import dataclasses
import os
import sys

import numpy as np
import pytest

import softfloat as sf
from softfloat import mma as M
from softfloat.mma import decode as D
from softfloat.mma import fused as FU

sys.path.insert(0, os.path.dirname(__file__))
import mma_reference as REF  # noqa: E402
import mmasim_harness as H  # noqa: E402

# one instruction per algorithm and output rounding (and the arch quirks)
ORACLE_CASES = [
    ("volta", "m8n8k4.f32.f16.f16.f32"), ("volta", "m8n8k4.f16.f16.f16.f16"),
    ("volta", "m8n8k4.f32.f16.f16.f16"), ("turing", "m8n8k4.f32.f16.f16.f32"),
    ("ampere", "m16n8k16.f16.f16.f16.f16"), ("ampere", "m16n8k8.f32.tf32.tf32.f32"),
    ("ada", "m16n8k32.f32.e4m3.e5m2.f32"), ("ada", "m16n8k32.f16.e5m2.e5m2.f16"),
    ("hopper", "m64n8k32.f32.e4m3.e4m3"), ("hopper", "m64n8k16.f32.bf16.bf16"),
    ("blackwell", "m128n8k32.kind::f8f6f4.f32.e2m3.e3m2"),
    ("blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e2m1.ue8m0"),
    ("blackwell", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"),
    ("rtx_blackwell", "m16n8k64.kind::mxf4.block32.f32.e2m1.e2m1.f32.ue8m0"),
    ("cdna1", "f32_32x32x4f16"), ("cdna1", "f32_32x32x2bf16"),
    ("cdna2", "f32_32x32x4bf16_1k"), ("cdna2", "f32_32x32x2bf16"), ("cdna2", "f32_32x32x4f16"),
    ("cdna3", "f32_32x32x8_bf16"), ("cdna3", "f32_32x32x4_xf32"),
    ("cdna3", "f32_16x16x32_fp8_bf8"), ("cdna3", "f32_32x32x2_f32"),
    ("hopper", "m8n8k4.f64.f64.f64.f64"),
]


def _same(unit, ours, want):
    if unit.out_fmt.name == "fp64":
        o = np.uint64(ours).view(np.float64)
        if isinstance(want, tuple):
            return np.isnan(o) if want[0] == "nan" else o == np.inf * want[1]
        return o == float(want)
    if unit.algorithm in ("ftz_chain", "fma") and int(want) == 0:
        return int(ours) & ~unit.out_fmt.sign_mask == 0   # the reference keeps no -0
    return int(ours) == int(want)


@pytest.mark.parametrize("arch,ins", ORACLE_CASES)
def test_kernels_match_the_fraction_reference(arch, ins):
    unit = M.tensor_core(arch, instruction=ins)
    m, n = (6, 5) if unit.k >= 32 else (8, 8)
    a, b, c, sa, sb = H.make_case(unit, m, n, 2, H.case_seed(arch, ins) + 1)
    ours = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
    for i in range(m):
        for j in range(n):
            want = REF.one_output(unit, a[i], b[:, j], c[i, j],
                                  None if sa is None else sa[i], None if sb is None else sb[:, j])
            assert _same(unit, ours[i, j], want), (i, j, hex(int(ours[i, j])), want)


@pytest.mark.parametrize("arch,fin,fout", [("hopper", "fp16", "fp32"), ("ampere", "bf16", "fp32"),
                                           ("volta", "fp16", "fp16"), ("hopper", "fp8_e5m2", "fp32"),
                                           ("ada", "fp8_e4m3", "fp16"), ("ampere", "tf32", "fp32"),
                                           ("blackwell", "fp4_e2m1", "fp32")])
def test_fast_kernel_matches_its_slow_twin(arch, fin, fout, monkeypatch):
    unit = M.tensor_core(arch, fin, fout)
    rng = np.random.default_rng(3)
    total = 0
    for seed in range(3):
        a, b, c, _, _ = H.make_case(unit, 37, 29, 3, seed + 100)
        K = a.shape[1] - rng.integers(0, unit.k)        # ragged K: zero padding
        fast = M.mma(unit, a[:, :K], b[:K], c)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", False)   # the slow twins
        slow = M.mma(unit, a[:, :K], b[:K], c)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", True)
        np.testing.assert_array_equal(fast, slow)
        total += fast.size
    # operands drawn near overflow and underflow, without specials (fast kernel only)
    a, b, c, _, _ = H.make_case(unit, 64, 48, 2, 7, kinds=(0, 1, 4, 5))
    fast = M.mma(unit, a, b, c)
    monkeypatch.setattr(sf.getcontext(), "fast_paths", False)   # the slow twins
    np.testing.assert_array_equal(fast, M.mma(unit, a, b, c))
    assert total > 3000


@pytest.mark.parametrize("arch,ins", [
    ("blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0"),
    ("blackwell", "m128n8k32.kind::mxf8f6f4.block32.f32.e5m2.e2m1.ue8m0"),
    ("rtx_blackwell", "m16n8k32.kind::mxf8f6f4.block32.f32.e3m2.e2m3.f32.ue8m0"),
    ("rtx_blackwell", "m16n8k32.kind::mxf8f6f4.block32.f32.e2m1.e4m3.f32.ue8m0")])
def test_fast_kernel_with_block_scales_matches_its_slow_twin(arch, ins, monkeypatch):
    """Block-scaled "fdpa" (e8m0 scales folded into the operands): every scale
    code (2**-127 ... 2**127 and the NaN 0xFF) on both sides, batches, n padded
    to the kernel's column blocks, against the reference kernel."""
    unit = M.tensor_core(arch, instruction=ins)
    assert FU.fdpa_fits(unit)
    total = 0
    for seed, kinds in ((11, (0, 1, 2, 4, 5)), (12, (0, 1, 2, 3, 4, 5))):
        rng = np.random.default_rng(seed)
        a, b, c, _, _ = H.make_case(unit, 40, 70, 3, seed, kinds=kinds)
        a = np.stack([a, a[::-1]])
        nsb = a.shape[-1] // unit.scale_block
        sa = rng.integers(0, 256, size=(2, 40, nsb)).astype(np.uint8)
        sb = rng.integers(0, 256, size=(nsb, 70)).astype(np.uint8)
        sa[0, :, 0] = np.arange(40) * 6 + 15             # every region of the range
        sb[0, :] = np.arange(70) * 3 + 30
        sa[1, :8] = 127
        sb[:, :8] = 127 + rng.integers(-3, 4, size=(nsb, 8))
        fast = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", False)   # the slow twins
        slow = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", True)
        np.testing.assert_array_equal(fast, slow)
        total += fast.size
    assert total == 2 * 2 * 40 * 70


@pytest.mark.parametrize("arch,ins", [
    ("blackwell", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"),
    ("blackwell", "m128n8k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0"),
    ("rtx_blackwell", "m16n8k64.kind::mxf4nvf4.block32.f32.e2m1.e2m1.f32.ue8m0"),
    ("rtx_blackwell", "m16n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3")])
def test_grouped_fast_kernel_matches_its_slow_twin(arch, ins, monkeypatch):
    """The "grouped" fast kernel (mxf4, mxf4nvf4): every scale code on both
    sides (zero, subnormal, NaN, 2**-127 ... 2**127), groups of all-zero
    products and cancelling ones, overflowing chains, infinite and NaN c,
    batches and n padded to the kernel's column blocks, against the reference
    kernel output by output."""
    unit = M.tensor_core(arch, instruction=ins)
    assert FU.grouped_fits(unit)
    rng = np.random.default_rng(21)
    total = 0
    for seed in range(3):
        a, b, c, _, _ = H.make_case(unit, 24, 70, 3, seed + 40)
        a = np.stack([a, a[::-1]])
        a[0, :3, :unit.group] = 0                           # all-zero groups
        a[0, 3:5] = 0                                       # zero results
        c[3:5] = 0
        c[5, :3] = [0x7F800000, 0xFF800000, 0x7FC00000]     # infinite and NaN c
        b[unit.group:2 * unit.group, :5] = 0
        nsb = a.shape[-1] // unit.scale_block
        sa = rng.integers(0, 256, size=(2, 24, nsb)).astype(np.uint8)
        sb = rng.integers(0, 256, size=(nsb, 70)).astype(np.uint8)
        sa[0, :, 0] = np.arange(24) * 11
        sb[0, :] = np.arange(70) * 3 + 40
        sa[1, :6] = sf.to_bits(1.0, unit.scale_fmt)           # scales near 1
        sb[:, :6] = sf.to_bits(2.0, unit.scale_fmt)
        fast = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", False)   # the slow twins
        slow = M.mma(unit, a, b, c, scale_a=sa, scale_b=sb)
        monkeypatch.setattr(sf.getcontext(), "fast_paths", True)
        np.testing.assert_array_equal(fast, slow)
        total += fast.size
        with np.errstate(over="ignore", invalid="ignore"):
            v = sf.from_bits(slow, "fp32")
        assert np.isnan(v).any() and (v == 0).any()
        if unit.scale_fmt.name == "e8m0":       # products of 2**254 overflow
            assert np.isinf(v).any()
    assert total == 3 * 2 * 24 * 70


def test_table_decoding_matches_the_direct_decoder():
    """`decode` / `decode_values` read through per-format tables (binary32
    through `decode_ieee_chunk`); the same encodings through the general
    decoding kernels, element by element: zeros, subnormals, infinities, NaNs."""
    from softfloat._kernels import mma_decode as KM
    rng = np.random.default_rng(8)
    for name in ("fp16", "bf16", "tf32", "fp8_e4m3", "fp8_e5m2fnuz", "fp6_e3m2", "fp4_e2m1",
                 "e8m0", "fp32"):
        fmt = sf.get_format(name)
        x = rng.integers(0, 1 << fmt.nbits, size=(3, 77), dtype=np.uint64).astype(fmt.dtype)
        top = (1 << fmt.nbits) - 1
        x[0, :6] = [v & top for v in (0, fmt.sign_mask, 1, fmt.sign_mask | 1, top,
                                      fmt.sign_mask - 1)]
        E, Mb, bias, kind = fmt.params
        for off in (False, True):
            want = (np.empty(x.size, np.int32), np.empty(x.size, np.int32),
                    np.empty(x.size, np.uint8))
            KM.decode_chunk(0, x.size, x.reshape(-1), *want, E, Mb, bias, kind, off)
            for got, w in zip(D.decode(x, fmt, off), want):
                np.testing.assert_array_equal(got, w)
        if fmt.nbits > D.LUT_BITS:
            continue                                # (fp32: no table; the IEEE decoder)
        want = (np.empty(x.size), np.empty(x.size, np.int32), np.empty(x.size, np.uint8))
        KM.decode_values_chunk(0, x.size, x.reshape(-1), *want, E, Mb, bias, kind, KM.POW2)
        for got, w in zip(D.decode_values(x, fmt), want):
            np.testing.assert_array_equal(got, w.astype(got.dtype))


def test_output_rounding_matches_round_pack():
    """The matrix units' own output rounding (`mma_round.round_out`, and the fast
    kernels' `mma_fast.round_block`) gives the results of the core's `round_pack`
    on the same inputs (benchmarks/bench_mma_round.py, which also times both:
    round_pack, with its policy tuple and flags, is several times slower, hence
    the rounding allow-list entries): every (S, q) with |S| < 2**10 over the
    whole exponent range and random S of 1 to 62 bits, in each of MMA-Sim's
    output roundings."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
    import bench_mma_round as B
    rng = np.random.default_rng(12)
    for name, rne, p, E, Mo in B.ROUNDINGS:
        pol = B.POL_RNE if rne else B.POL_RZ
        emin = 2 - (1 << (E - 1))
        S, q = B.exhaustive(p, E)
        keep = np.abs(S) < (1 << 10)
        for S, q in ((S[keep], q[keep]), B.inputs(rng, 100_000, p, E)):
            o1 = np.empty(S.size, np.int64)
            o2 = np.empty(S.size, np.int64)
            B.loop_round_out(S, q, rne, p, emin, E, Mo, o1)
            B.loop_round_pack(S, q, rne, p, emin, E, Mo, o2, pol)
            assert np.array_equal(o1, o2), name
        n, F = 64 * 1000, 25
        S, q = B.inputs(rng, n, p, E)
        S = np.where(np.abs(S) < (1 << 53), S, S >> 10).astype(np.float64)   # below 2**53
        c, cx, out = np.zeros(n), np.zeros(n, np.int64), np.empty(n)
        mxi = q + F
        B.loop_round_block(S, mxi, c, cx, F, rne, p, emin, B.POW2[B.P2_OFF + (1 << (E - 1))],
                           B.POW2[B.P2_OFF + p], -200)
        B.loop_block_round_pack(S, mxi, F, rne, p, emin, E, Mo, out, pol)
        assert np.array_equal(c, out), name


def test_special_results_take_the_specializations_nan():
    """`mma_round.special_bits`: a NaN result (a NaN term, or both infinities) is
    the NaN specialization's all-ones NaN (`specialize.all_ones_nan_bits`, MMA-Sim's
    canonical NaN), an infinite one the output format's infinity of its sign."""
    from numba import njit
    from softfloat._kernels.mma_round import special_bits
    from softfloat.specialize import all_ones_nan_bits

    @njit
    def sb(nan, pinf, ninf, E, Mo):
        return special_bits(nan, pinf, ninf, E, Mo)

    for name, E, Mo in (("fp16", 5, 10), ("fp32", 8, 23)):
        nan = all_ones_nan_bits(name)
        assert sb(True, False, False, E, Mo) == nan
        assert sb(True, True, False, E, Mo) == nan
        assert sb(False, True, True, E, Mo) == nan
        assert sb(False, True, False, E, Mo) == int(sf.to_bits(np.inf, name))
        assert sb(False, False, True, E, Mo) == int(sf.to_bits(-np.inf, name))


def _finite_bits(fmt, shape, rng):
    """Encodings drawn uniformly over every bit pattern, infinities and NaNs
    replaced by zeros: zeros, subnormals and values near overflow in every row."""
    x = rng.integers(0, 1 << fmt.nbits, size=shape).astype(fmt.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        x[~np.isfinite(sf.from_bits(x, fmt))] = 0
    return x


@pytest.mark.parametrize("arch,ins", [
    ("volta", "m8n8k4.f32.f16.f16.f16"), ("ampere", "m16n8k16.f16.f16.f16.f16"),
    ("ampere", "m16n8k8.f32.tf32.tf32.f32"), ("hopper", "m64n8k16.f32.bf16.bf16"),
    ("hopper", "m64n8k32.f32.e4m3.e4m3"), ("ada", "m16n8k32.f16.e5m2.e5m2.f16"),
    ("blackwell", "m128n8k32.kind::f8f6f4.f32.e2m3.e3m2")])
def test_fast_kernel_blocks_batches_and_overflowing_chains(arch, ins, monkeypatch):
    """The fast kernel's column blocks (n = 70 is padded to two), row blocks
    spanning two batches (broadcast B), a C of another format than D, and chains
    whose intermediate result overflows (wide exponents: the chunk's infinity must
    survive the later chunks), against the reference kernel, output by output."""
    unit = M.tensor_core(arch, instruction=ins)
    rng = np.random.default_rng(5)
    K = 3 * unit.k - 1
    a = _finite_bits(unit.a_fmt, (2, 13, K), rng)
    b = _finite_bits(unit.b_fmt, (K, 70), rng)
    c = _finite_bits(unit.c_fmt, (2, 13, 70), rng)
    fast = M.mma(unit, a, b, c)
    monkeypatch.setattr(sf.getcontext(), "fast_paths", False)   # the slow twins
    slow = M.mma(unit, a, b, c)
    np.testing.assert_array_equal(fast, slow)
    with np.errstate(over="ignore", invalid="ignore"):
        inf = np.isinf(sf.from_bits(slow, unit.out_fmt))
    if unit.out_fmt.name == "fp16" or unit.a_fmt.name == "bf16":
        assert inf.any()            # overflowing chunks were exercised


# ---------------------------------------------------------------------------
# The defects of the earlier presets
# ---------------------------------------------------------------------------
def _fp16(v):
    return sf.to_bits(np.array(v, np.float64), "fp16")


AMPERE_A = [-366.5, 1] + [0] * 6 + [1] + [0] * 7
AMPERE_B = [1024.0, 1] + [0] * 6 + [-64] + [0] * 7


def test_ampere_fp16_output_keeps_an_overflowing_block():
    """The first block of 8 is -375296 -> -inf in fp16; the earlier model
    dropped it and gave -64 (with overflow raised)."""
    unit = sf.tensor_core("a100", "fp16", "fp16")
    d = M.mma(unit, _fp16(AMPERE_A)[None], _fp16(AMPERE_B)[:, None])
    assert float(sf.from_bits(d, "fp16")[0, 0]) == -np.inf
    r, fl = sf.matmul(_fp16(AMPERE_A)[None], _fp16(AMPERE_B)[:, None], "fp16", acc=unit,
                      return_flags=True)
    assert float(sf.from_bits(r, "fp16")[0, 0]) == -np.inf and fl[0, 0] & 4
    # the paper-based BlockFMA kernels (fast and slow) no longer drop it either
    from softfloat._kernels import block_fma as K
    import softfloat.accumulate.dispatch as acc_mod
    bf = sf.block_fma_preset("a100", "fp16", "fp16")
    for kern in (K.block_fma, K.block_fma_slow):
        saved = acc_mod.block_fma
        acc_mod.block_fma = kern
        try:
            for flags in (False, True):
                r = sf.matmul(_fp16(AMPERE_A)[None], _fp16(AMPERE_B)[:, None], "fp16", acc=bf,
                              return_flags=flags)
                r = r[0] if flags else r
                assert float(sf.from_bits(r, "fp16")[0, 0]) == -np.inf
        finally:
            acc_mod.block_fma = saved


def test_hopper_fp8_truncates_each_chunk_to_e8m13():
    """1.75 * 1.75 + 2**-9 * 2**-4: the 2**-13 term survives the 13-bit
    alignment but not the e8m13 result (3.0625 has its last kept bit at 2**-12);
    the earlier model rounded the block into binary32 and kept it."""
    a = sf.to_bits(np.array([[1.75, 2.0 ** -9] + [0.0] * 30]), "fp8_e4m3")
    b = sf.to_bits(np.array([[1.75, 2.0 ** -4] + [0.0] * 30]).T, "fp8_e4m3")
    unit = sf.tensor_core("h100", "fp8_e4m3")
    assert unit.output_rounding == "RZ-E8M13" and unit.frac_bits == 13
    got = float(sf.from_bits(sf.matmul(a, b, "fp8_e4m3", acc="h100"), "fp32")[0, 0])
    assert got == 3.0625
    old = sf.BlockFMA(32, -10, "fp32", "toward_zero")
    assert float(sf.from_bits(sf.matmul(a, b, "fp8_e4m3", acc=old), "fp32")[0, 0]) \
        == 3.0625 + 2.0 ** -13
    # and the chunk result is truncated again at the next instruction
    a2 = np.concatenate([a, a], axis=1)
    b2 = np.concatenate([b, b], axis=0)
    assert float(sf.from_bits(sf.matmul(a2, b2, "fp8_e4m3", acc=unit), "fp32")[0, 0]) == 6.125


# ---------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------
def test_every_listed_instruction_builds_and_dense_defaults_resolve():
    n = 0
    for arch in M.ARCHS:
        for ins in H.families(arch):
            u = M.tensor_core(arch, instruction=ins)
            assert u.arch == arch and u.instruction == ins and u.k % u.chunk == 0
            assert u.sources
            n += 1
        for (fin, fout), ins in M.DENSE_GEMM[arch].items():
            assert M.tensor_core(arch, fin, fout).instruction == ins
            assert ins in M.INSTRUCTIONS[arch]
    assert n > 300


def test_names_and_aliases():
    assert M.tensor_core("H100", "fp16") == M.tensor_core("hopper", "fp16")
    assert M.tensor_core("rtx 4090", "fp8_e4m3").arch == "ada"
    assert M.tensor_core("MI300X", "fp8_e4m3fnuz").algorithm == "two_stage_pairs"
    assert M.tensor_core("Ada Lovelace").arch == "ada"
    assert M.tensor_core("b200", "nvfp4").scale_fmt == sf.FP8_E4M3
    assert M.tensor_core("gb200", "mxfp8_e4m3").scale_fmt == sf.E8M0
    assert sf.tensor_core is M.tensor_core
    u = M.tensor_core("hopper", instruction="m64n256k16.f32.f16.f16")
    assert (u.m, u.n, u.k, u.chunk) == (64, 256, 16, 16)
    assert M.tensor_core("hopper", "fp16", "fp32", instruction="m64n8k16.f32.f16.f16") \
        .frac_bits == 25


@pytest.mark.parametrize("call,match", [
    (lambda: M.tensor_core("pascal"), "unknown architecture"),
    (lambda: M.tensor_core("volta", "bf16"), "valid"),
    (lambda: M.tensor_core("hopper", instruction="m16n8k16.f32.e4m3.e4m3.f32"), "valid"),
    (lambda: M.tensor_core("hopper", "bf16", "fp32", instruction="m64n8k16.f32.f16.f16"),
     "takes fp16"),
    (lambda: M.tensor_core(3), "arch must be a str"),
])
def test_bad_names_say_what_is_valid(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_mma_validates_its_operands():
    u = M.tensor_core("ampere", "fp16")
    a = _fp16(np.ones((2, 16)))
    with pytest.raises(TypeError):
        M.mma(u, a.astype(np.float32), a.T)
    with pytest.raises(ValueError, match="align"):
        M.mma(u, a, a)
    with pytest.raises(TypeError, match="MatrixUnit"):
        M.mma("a100", a, a.T)
    s = M.tensor_core("blackwell", "mxfp8_e4m3")
    x = sf.to_bits(np.ones((2, 32)), "fp8_e4m3")
    with pytest.raises(ValueError, match="scale"):
        M.mma(s, x, x.T)
    with pytest.raises(ValueError, match="multiple"):
        M.mma(s, x[:, :16], x[:, :16].T, scale_a=np.full((2, 1), 127, np.uint8),
              scale_b=np.full((1, 2), 127, np.uint8))
    with pytest.raises(ValueError, match="no block scales"):
        M.mma(u, a, a.T, scale_a=a)
    with pytest.raises(ValueError, match="operands"):
        sf.matmul(x, x.T, "fp8_e4m3", acc=u)


def test_k_chains_instructions_and_pads_with_zeros():
    u = M.tensor_core("hopper", "fp16")
    a, b, c, _, _ = H.make_case(u, 9, 7, 3, 11, kinds=(0, 2, 4))
    # three instructions == three calls, D carried as C
    d = c
    for k0 in range(0, 48, 16):
        d = M.mma(u, a[:, k0:k0 + 16], b[k0:k0 + 16], d)
    np.testing.assert_array_equal(M.mma(u, a, b, c), d)
    # a ragged K is the same as explicit zero padding
    z = np.zeros((9, 5), a.dtype)
    np.testing.assert_array_equal(M.mma(u, a[:, :43], b[:43], c),
                                  M.mma(u, np.concatenate([a[:, :43], z], 1),
                                        np.concatenate([b[:43], np.zeros((5, 7), b.dtype)], 0),
                                        c))
    # batches broadcast; matmul with acc= runs the same model
    A = np.stack([a, a[::-1]])
    got = M.mma(u, A, b, c)
    np.testing.assert_array_equal(got[1], M.mma(u, a[::-1], b, c))
    np.testing.assert_array_equal(sf.matmul(a, b, "fp16", acc=u, c=c), M.mma(u, a, b, c))
    np.testing.assert_array_equal(sf.matmul(a, b, "fp16", acc="h100", c=c), M.mma(u, a, b, c))


def test_tf32_operands_are_truncated_fp32():
    x = np.array([1.0 + 2.0 ** -11, -3.0 - 2.0 ** -20], np.float32).view(np.uint32)
    t = M.truncate_tf32(x)
    np.testing.assert_array_equal(sf.from_bits(t, "tf32"), [1.0, -3.0])
    assert int(M.truncate_tf32(np.array([0x7F800001], np.uint32))[0]) == 0x3FC00  # inf


def test_flags_overflow_and_invalid():
    u = M.tensor_core("ampere", "fp16", "fp16")
    a = _fp16([[60000.0, 60000.0] + [0.0] * 14, [np.inf, 0.0] + [0.0] * 14])
    b = _fp16([[2.0, 2.0] + [0.0] * 14, [0.0, 1.0] + [0.0] * 14]).T
    d, fl = M.mma(u, a, b, return_flags=True)
    # overflow raises inexact with it; inf*2: inf from inf
    assert fl[0, 0] == 4 | 1 and fl[1, 1] == 16 and fl[1, 0] == 0


def test_matrix_unit_fields():
    u = M.tensor_core("cdna3", "fp16")
    assert (u.algorithm, u.chunk, u.frac_bits, u.frac_bits2) == ("two_stage", 8, 24, 31)
    with pytest.raises(ValueError):
        dataclasses.replace(u, algorithm="magic")
    with pytest.raises(ValueError):
        dataclasses.replace(u, chunk=3)
    assert "two_stage" in u.describe()
