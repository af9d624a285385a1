"""softfloat.cublas: the epilogue against exact rationals, the non-fp8 GEMMs against
the matrix-unit models chained directly, the FMA path against exact rationals, the
split orders, the info and the refusals. (Parity with mmaemu's recordings:
tests/test_cublas_parity.py.)"""
from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import cublas
from softfloat.mma import mma, tensor_core, truncate_tf32

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from exact_reference import round_value  # noqa: E402

MAXV = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}
CANON = {"fp32": 0x7FFFFFFF, "bf16": 0x7FFF, "fp16": 0x7FFF, "fp8_e4m3": 0x7F, "fp8_e5m2": 0x7F}


# ---------------------------------------------------------------------------
# exact-rational oracle of the epilogue, one value at a time
# ---------------------------------------------------------------------------
def f32(x) -> float:
    """The binary32 value nearest x (a float or Fraction), as a Python float."""
    bits, _ = round_value(x, sf.FP32, "nearest_even")
    return float(np.uint32(bits).view(np.float32))


def fma32(x: float, y: float, z: float) -> float:
    """RN32(x * y + z) for binary32 values, IEEE signs of zero."""
    if not all(map(math.isfinite, (x, y, z))):
        return float(np.float32(x * y + z))            # the class only: inf or NaN
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        prod_neg = x * y == 0 and (math.copysign(1, x) * math.copysign(1, y) < 0)
        if x * y == 0 and prod_neg and math.copysign(1, z) < 0:
            return -0.0
        return 0.0
    return f32(exact)


def out_bits(y: float, fmt: str) -> int:
    if math.isnan(y):
        return CANON[fmt]
    if fmt == "fp32":
        return int(np.float32(y).view(np.uint32))
    if fmt in MAXV:
        y = max(-MAXV[fmt], min(MAXV[fmt], y))
    bits, _ = round_value(y if math.isinf(y) else (Fraction(y) if y else y),
                          sf.get_format(fmt), "nearest_even")
    return bits


def epilogue_oracle(acc, alpha, beta, c, bias, sa, sb, fmt):
    a = f32(alpha)
    if sa is not None:
        a2 = f32(Fraction(sa) * Fraction(sb))
        a = a2 if a == 1.0 else fma32(a2, a, -0.0)          # RN(a2 * a): x + (-0) = x
    b = f32(beta)
    t = fma32(b, c, -0.0) if (b != 0 and c is not None) else 0.0
    y = fma32(a, acc, t)
    if bias is not None:
        y = fma32(y, 1.0, bias)
    return out_bits(y, fmt)


def random_values(rng, shape, lo, hi, zeros=0.1):
    """Signed values 2**e * (1 + u) with e in [lo, hi], some signed zeros."""
    v = np.ldexp(1 + rng.random(shape), rng.integers(lo, hi + 1, shape))
    v *= rng.choice([-1.0, 1.0], shape)
    v[rng.random(shape) < zeros] = 0.0
    v[rng.random(shape) < zeros / 2] = -0.0
    return v


@pytest.mark.parametrize("out_fmt", ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"])
def test_epilogue_against_exact_rationals(out_fmt):
    """K = 1 bf16 GEMMs on Hopper: the accumulator is the exact product, so every
    output is the epilogue's (alpha, beta C, bias, the output conversion)."""
    rng = np.random.default_rng(len(out_fmt))
    m, n = 4, 16
    a = sf.to_bits(random_values(rng, (m, 1), -40, 40), "bf16")
    b = sf.to_bits(random_values(rng, (1, n), -40, 40), "bf16")
    av, bv = sf.from_bits(a, "bf16"), sf.from_bits(b, "bf16")
    checked = 0
    for alpha, beta in ((1.0, 0.0), (0.1, 0.0), (-3.7e-5, 1.0), (1.0, 0.3), (2.0 ** 70, -1.3),
                        (1e-30, 2.0 ** -100)):
        for c_fmt, bias_fmt in ((None, None), ("fp32", "bf16"), ("bf16", None), ("fp16", "fp32")):
            c = bias = None
            b_ = beta if c_fmt else 0.0                # beta needs c
            if c_fmt:
                c = sf.to_bits(random_values(rng, (m, n), -60, 60)
                               if c_fmt != "fp16" else random_values(rng, (m, n), -20, 12), c_fmt)
            if bias_fmt:
                bias = sf.to_bits(random_values(rng, (n,), -30, 30), bias_fmt)
            got = cublas.gemm(a, b, device="h100", a_fmt="bf16", out_fmt=out_fmt, c=c,
                              c_fmt=c_fmt, alpha=alpha, beta=b_, bias=bias, bias_fmt=bias_fmt)
            cv = None if c is None else sf.from_bits(c, c_fmt)
            biv = None if bias is None else sf.from_bits(bias, bias_fmt)
            for i in range(m):
                for j in range(n):
                    p = float(av[i, 0] * bv[0, j])
                    want = epilogue_oracle(p if p else 0.0, alpha, b_,        # zero sums are +0
                                           None if cv is None else float(cv[i, j]),
                                           None if biv is None else float(biv[j]),
                                           None, None, out_fmt)
                    assert int(got[i, j]) == want, (alpha, beta, c_fmt, bias_fmt, i, j)
                    checked += 1
    assert checked == 24 * m * n


@pytest.mark.parametrize("device", ["h100_pcie", "rtx4060"])
def test_scaled_epilogue_against_exact_rationals(device):
    """K = 1 fp8 GEMMs (exact products): alpha' = RN(scale_a scale_b), fma(alpha',
    acc, +0), saturation for fp8 outputs, canonical NaN, +0 for zero products."""
    rng = np.random.default_rng(4)
    A = rng.integers(0, 256, (8, 1), dtype=np.uint8)
    B = rng.integers(0, 256, (1, 16), dtype=np.uint8)
    A[0, 0], A[1, 0], B[0, 0] = 0x80, 0x7F, 0x00          # -0, NaN, +0
    av, bv = sf.from_bits(A, "fp8_e4m3"), sf.from_bits(B, "fp8_e5m2")
    for sa, sb in ((1.0, 1.0), (2.0 ** -70, 2.0 ** -62), (3.1e10, 7.7e12), (-0.37, 1.3e-3),
                   (1e-3, 3.0)):
        for out in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"):
            got = cublas.scaled_mm(A, B, np.float32(sa), np.float32(sb), device=device,
                                   out_fmt=out, a_fmt="fp8_e4m3", b_fmt="fp8_e5m2")
            for i in range(8):
                for j in range(16):
                    p = av[i, 0] * bv[0, j]
                    acc = 0.0 if p == 0 else float(p)          # zero results are +0
                    want = epilogue_oracle(acc, 1.0, 0.0, None, None, float(np.float32(sa)),
                                           float(np.float32(sb)), out)
                    assert int(got[i, j]) == want, (sa, sb, out, i, j)


# ---------------------------------------------------------------------------
# non-fp8 GEMMs against the matrix unit chained directly
# ---------------------------------------------------------------------------
def finite_codes(rng, shape, fmt, lo=-20, hi=20):
    if fmt == "fp16":
        lo, hi = -12, 10
    return sf.to_bits(random_values(rng, shape, lo, hi, zeros=0.05), fmt)


def to_out_independent(acc32: np.ndarray, fmt: str) -> np.ndarray:
    """fp32 values -> bf16/fp16/fp32 encodings with ml_dtypes / numpy casts."""
    import ml_dtypes
    if fmt == "fp32":
        return acc32.view(np.uint32)
    if fmt == "fp16":
        with np.errstate(over="ignore"):
            return acc32.astype(np.float16).view(np.uint16)
    return acc32.astype(ml_dtypes.bfloat16).view(np.uint16)


def contiguous_oracle(unit, A, B, S):
    K = A.shape[-1]
    T = -(-K // 128)
    q = -(-T // S)
    acc = None
    for s in range(S):
        lo, hi = min(s * q, T) * 128, min((s + 1) * q * 128, K)
        part = (np.zeros(A.shape[:-1] + B.shape[-1:], np.float32) if lo >= hi
                else mma(unit, A[..., lo:hi], B[..., lo:hi, :]).view(np.float32))
        acc = part if acc is None else np.float32(acc + part)
    return acc


def interleaved_oracle(unit, A, B, S, pairwise):
    K = A.shape[-1]
    T = -(-K // 64)
    parts = []
    for s in range(S):
        ks = [k for t in range(s, T, S) for k in range(t * 64, min(K, t * 64 + 64))]
        parts.append(np.zeros(A.shape[:-1] + B.shape[-1:], np.float32) if not ks
                     else mma(unit, A[..., ks], B[..., ks, :]).view(np.float32))
    if not pairwise:
        acc = parts[0]
        for p in parts[1:]:
            acc = np.float32(acc + p)
        return acc
    h = (S + 1) // 2
    acc = parts[S - 1]
    for i in range(h):
        acc = np.float32(acc + (np.float32(parts[i] + parts[i + h]) if i + h < S - 1 else parts[i]))
    return acc


@pytest.mark.parametrize("device,fmt", [("h100", "bf16"), ("h100", "fp16"), ("a100", "bf16"),
                                        ("a100", "fp16"), ("h100", "tf32"), ("a100", "fp32tf32"),
                                        ("rtx4060", "bf16"), ("b200", "bf16"),
                                        ("mi300x", "bf16"), ("mi300x", "fp32")])
def test_dense_gemms_against_the_chained_matrix_unit(device, fmt):
    rng = np.random.default_rng(sum(map(ord, device + fmt)))
    if fmt == "fp32tf32":
        A = finite_codes(rng, (2, 24, 300), "fp32")
        B = finite_codes(rng, (300, 40), "fp32")
        unit = tensor_core(device, "tf32", "fp32")
        Au, Bu, kw = truncate_tf32(A), truncate_tf32(B), dict(a_fmt="fp32", allow_tf32=True)
    else:
        A = finite_codes(rng, (2, 24, 300), fmt)
        B = finite_codes(rng, (300, 40), fmt)
        unit = tensor_core({"rtx4060": "ada"}.get(device, device), fmt, "fp32")
        Au, Bu, kw = A, B, dict(a_fmt=fmt)
    n_out = 0
    for out in ("fp32", "bf16", "fp16"):
        got, info = cublas.gemm(A, B, device=device, out_fmt=out, return_info=True, **kw)
        want = to_out_independent(mma(unit, Au, Bu).view(np.float32), out)
        assert np.array_equal(got, want), (device, fmt, out)
        assert info.instruction == unit.instruction and info.splitk == (1, "none")
        assert info.claim == "modelled"
        n_out += got.size
    for S, order in ((2, "contiguous"), (3, "contiguous"), (4, "serial"), (3, "pairwise"),
                     (5, "pairwise")):
        got = cublas.gemm(A, B, device=device, out_fmt="fp32", splitk=(S, order), **kw)
        want = (contiguous_oracle(unit, Au, Bu, S) if order == "contiguous"
                else interleaved_oracle(unit, Au, Bu, S, order == "pairwise"))
        assert np.array_equal(got, want.view(np.uint32)), (device, fmt, S, order)
        n_out += got.size
    assert n_out == 8 * 2 * 24 * 40


def test_fp8_split_orders_against_the_chained_matrix_unit():
    """fp8 with fast accumulation on architectures without recordings (one chain
    per split) and Blackwell (no restart)."""
    rng = np.random.default_rng(9)
    A = rng.integers(0, 0x78, (16, 700), dtype=np.uint8)
    B = rng.integers(0, 0x78, (700, 24), dtype=np.uint8)
    for device in ("h100", "l40", "b200"):
        unit = tensor_core(device, "fp8_e4m3", "fp32")
        for S, order in ((1, "none"), (3, "contiguous"), (4, "pairwise")):
            fast = device != "b200" or S == 1
            got = cublas.gemm(A, B, device=device, a_fmt="fp8_e4m3", out_fmt="fp32",
                              fast_accum=fast, splitk=None if S == 1 else (S, order))
            want = (mma(unit, A, B).view(np.float32) if S == 1 else
                    contiguous_oracle(unit, A, B, S) if order == "contiguous" else
                    interleaved_oracle(unit, A, B, S, True))
            assert np.array_equal(got, want.view(np.uint32)), (device, S, order)


def test_fp32_fma_chain_against_exact_rationals():
    """float32 operands without tf32: a binary32 FMA chain along K, in K order."""
    rng = np.random.default_rng(5)
    A = sf.to_bits(random_values(rng, (3, 9), -140, 30), "fp32")
    B = sf.to_bits(random_values(rng, (9, 5), -20, 20), "fp32")
    av, bv = sf.from_bits(A, "fp32"), sf.from_bits(B, "fp32")
    got, info = cublas.gemm(A, B, device="a100", a_fmt="fp32", out_fmt="fp32", return_info=True)
    assert info.instruction.startswith("fma.rn.f32") and info.claim == "modelled"
    for i in range(3):
        for j in range(5):
            acc = 0.0
            for k in range(9):
                acc = fma32(float(av[i, k]), float(bv[k, j]), acc)
            want = out_bits(fma32(1.0, acc, 0.0), "fp32")
            assert int(got[i, j]) == want, (i, j)


def test_fp32_fma_chain_fast_kernel_matches_its_slow_twin():
    """The host-fma chain against the library's fma, one call per k: subnormal,
    signed-zero, infinite and NaN operands, split index sets, batches."""
    from softfloat.cublas import _fma_chain, _fma_chain_slow
    rng = np.random.default_rng(11)
    A = rng.integers(0, 2**32, (2, 7, 40), dtype=np.uint64).astype(np.uint32)
    B = rng.integers(0, 2**32, (2, 40, 6), dtype=np.uint64).astype(np.uint32)
    A[:, :, ::3] = sf.to_bits(random_values(rng, (2, 7, 14), -149, -120), "fp32")
    B[:, ::2, :] = sf.to_bits(random_values(rng, (2, 20, 6), -10, 10), "fp32")
    A[0, 0, :] = 0x80000000                      # -0 products
    B[1, 5, 2] = 0x7F800000                      # an infinity
    for idx in (np.arange(40), np.arange(0, 40, 3), np.arange(17, 31)):
        fast = _fma_chain(A, B, idx).view(np.uint32)
        slow = _fma_chain_slow(A, B, idx).view(np.uint32)
        nan = np.isnan(fast.view(np.float32))
        assert np.array_equal(nan, np.isnan(slow.view(np.float32)))
        assert np.array_equal(fast[~nan], slow[~nan])


def test_batched_broadcast():
    rng = np.random.default_rng(6)
    A = finite_codes(rng, (2, 1, 8, 64), "bf16")
    B = finite_codes(rng, (3, 64, 16), "bf16")
    C = finite_codes(rng, (16,), "fp32")
    unit = tensor_core("h100", "bf16", "fp32")
    got = cublas.gemm(A, B, device="h100", a_fmt="bf16", out_fmt="fp32", c=C, c_fmt="fp32",
                      beta=1.0)
    assert got.shape == (2, 3, 8, 16)
    acc = np.broadcast_to(mma(unit, A, B).view(np.float32), (2, 3, 8, 16))
    want = (acc.astype(np.float64) + C.view(np.float32)).astype(np.float32)   # fma(1, acc, c)
    assert np.array_equal(got, want.view(np.uint32))


# ---------------------------------------------------------------------------
# info and split decisions
# ---------------------------------------------------------------------------
def test_info_claims_and_sources():
    rng = np.random.default_rng(7)
    A = rng.integers(0, 0x78, (16, 256), dtype=np.uint8)
    B = rng.integers(0, 0x78, (256, 32), dtype=np.uint8)
    one = np.float32(1)
    _, i1 = cublas.scaled_mm(A, B, one, one, device="h100_pcie", out_fmt="bf16",
                             return_info=True)
    assert (i1.claim, i1.split_source, i1.splitk) == ("validated", "default S=1", (1, "none"))
    assert "mmaemu" in i1.validated_by and i1.instruction == "m64n8k32.f32.e4m3.e4m3"
    _, i2 = cublas.scaled_mm(A, B, one, one, device="H100-PCIe", out_fmt="bf16",
                             splitk=(2, "contiguous"), return_info=True)
    assert i2.split_source == "explicit" and i2.splitk == (2, "contiguous")
    _, i3 = cublas.scaled_mm(A, B, one, one, device="rtx4060", out_fmt="bf16",
                             bias=sf.to_bits(np.ones(32), "bf16"), return_info=True)
    assert i3.claim == "modelled" and i3.instruction == "m16n8k32.f32.e4m3.e4m3.f32"
    _, i4 = cublas.scaled_mm(A, B, one, one, device="h100_sxm", out_fmt="bf16", splitk="auto",
                             return_info=True)
    assert i4.claim == "modelled" and i4.split_source == "default S=1"
    assert any("no recorded cuBLASLt heuristics" in s for s in i4.notes)
    _, i5 = cublas.gemm(A.astype(np.uint16), B.astype(np.uint16), device="h100", a_fmt="bf16",
                        out_fmt="bf16", splitk="auto", return_info=True)
    assert i5.split_source == "default S=1" and i5.claim == "modelled"
    _, i6 = cublas.gemm(A, B, device="b200", a_fmt="fp8_e4m3", out_fmt="bf16", fast_accum=True,
                        return_info=True)
    assert i6.claim == "modelled" and any("no promotion" in s for s in i6.notes)


def test_auto_without_mmaemu(monkeypatch):
    for mod in ("mmaemu", "mmaemu.platform", "mmaemu.platform.splitk_table"):
        monkeypatch.setitem(sys.modules, mod, None)
    A = np.full((16, 128), 0x38, np.uint8)
    B = np.full((128, 16), 0x38, np.uint8)
    out, info = cublas.scaled_mm(A, B, np.float32(1), np.float32(1), device="rtx4060",
                                 out_fmt="fp32", splitk="auto", return_info=True)
    assert info.split_source == "default S=1" and info.splitk == (1, "none")
    assert any("not installed" in s for s in info.notes)
    assert np.all(out.view(np.float32) == 128.0)
    _, info = cublas.scaled_mm(A, B, np.float32(1), np.float32(1), device="rtx4060",
                               out_fmt="fp32", splitk=(2, "serial"), return_info=True)
    assert info.claim == "modelled" and any("not installed" in s for s in info.notes)


def test_auto_uses_recorded_split():
    pytest.importorskip("mmaemu")
    # a shape the RTX 4060 table records as split (S = 3, customOption 1: pairwise)
    A = np.full((1, 16), 0x38, np.uint8)
    B = np.full((16, 16), 0x38, np.uint8)
    _, info = cublas.scaled_mm(A, B, np.float32(1), np.float32(1), device="rtx4060",
                               out_fmt="fp8_e4m3", b_fmt="fp8_e5m2", splitk="auto",
                               return_info=True)
    assert info.split_source == "mmaemu heuristics" and info.splitk[0] > 1


# ---------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------
def test_refusals():
    A = np.zeros((4, 32), np.uint8)
    B = np.zeros((32, 16), np.uint8)
    s = np.float32(1)
    with pytest.raises(ValueError, match="unknown architecture"):
        cublas.gemm(A, B, device="tpu", a_fmt="fp8_e4m3", out_fmt="fp32")
    with pytest.raises(TypeError, match="device must be a str"):
        cublas.gemm(A, B, device=3, a_fmt="fp8_e4m3", out_fmt="fp32")
    with pytest.raises(ValueError, match="no fp8 dense-GEMM instruction"):
        cublas.gemm(A, B, device="a100", a_fmt="fp8_e4m3", out_fmt="fp32")
    with pytest.raises(ValueError, match="rejects e4m3 x e4m3 -> e5m2"):
        cublas.gemm(A, B, device="h100_pcie", a_fmt="fp8_e4m3", out_fmt="fp8_e5m2")
    with pytest.raises(ValueError, match="two e5m2"):
        cublas.scaled_mm(A, B, s, s, device="h100", a_fmt="fp8_e5m2", out_fmt="bf16")
    with pytest.raises(ValueError, match="do not align"):
        cublas.gemm(A, B[:16], device="h100", a_fmt="fp8_e4m3", out_fmt="fp32")
    with pytest.raises(ValueError, match="fast_accum applies to fp8"):
        cublas.gemm(A.astype(np.uint16), B.astype(np.uint16), device="h100", a_fmt="bf16",
                    out_fmt="fp32", fast_accum=True)
    with pytest.raises(ValueError, match="one format"):
        cublas.gemm(A.astype(np.uint16), B.astype(np.uint16), device="h100", a_fmt="bf16",
                    b_fmt="fp16", out_fmt="fp32")
    with pytest.raises(ValueError, match="split order"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp32", splitk=(2, "zigzag"))
    with pytest.raises(ValueError, match="positive int"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp32", splitk=(0, "serial"))
    with pytest.raises(TypeError, match="splitk"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp32", splitk=2)
    with pytest.raises(ValueError, match="'auto'"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp32", splitk="heuristic")
    with pytest.raises(TypeError, match="float32"):
        cublas.scaled_mm(A, B, np.float64(1), s, device="h100", out_fmt="bf16")
    with pytest.raises(ValueError, match="row-wise"):
        cublas.scaled_mm(A, B, np.ones(4, np.float32), s, device="h100", out_fmt="bf16")
    with pytest.raises(ValueError, match="both scale_a and scale_b"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp32", scale_a=s)
    with pytest.raises(ValueError, match="bias is not supported with an fp32"):
        cublas.scaled_mm(A, B, s, s, device="h100", out_fmt="fp32",
                         bias=np.zeros(16, np.uint16), bias_fmt="bf16")
    with pytest.raises(ValueError, match="must be bf16"):
        cublas.scaled_mm(A, B, s, s, device="h100", out_fmt="bf16",
                         bias=np.zeros(16, np.uint16), bias_fmt="fp16")
    with pytest.raises(ValueError, match="needs bias_fmt"):
        cublas.scaled_mm(A, B, s, s, device="h100", out_fmt="fp8_e4m3",
                         bias=np.zeros(16, np.uint16))
    with pytest.raises(ValueError, match="bias: expected shape"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="bf16",
                    bias=np.zeros(4, np.uint16), bias_fmt="bf16")
    with pytest.raises(ValueError, match="needs c"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="bf16", beta=0.5)
    with pytest.raises(ValueError, match="c needs c_fmt"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="bf16",
                    c=np.zeros((4, 16), np.uint16), beta=1.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="bf16",
                    c=np.zeros((5, 16), np.uint16), c_fmt="bf16", beta=1.0)
    with pytest.raises(TypeError, match="float values"):
        cublas.gemm(A.astype(np.float32), B, device="h100", a_fmt="fp8_e4m3", out_fmt="bf16")
    with pytest.raises(ValueError, match="not supported here"):
        cublas.gemm(A, B, device="h100", a_fmt="fp8_e4m3", out_fmt="fp4_e2m1")
