"""fp8 GEMM models and block-scaled MMA (softfloat.mx_gemm) against references from
the definitions: tests/naive_models.py's block_fma (exact Fractions) per promotion chunk,
then binary32 round-to-nearest-even additions through the oracle; block-scaled MMA
with exact Fraction block dots."""
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import mx, mx_gemm

import naive_models as naive
import exact_reference as O

F32 = sf.get_format("fp32")


def _rne32(v: Fraction) -> Fraction:
    if v == 0:
        return Fraction(0)
    b, _ = O.round_exact(int(v < 0), abs(v), F32, "nearest_even")
    return O.decode(b, F32).value


def _fp8(seed, shape, fmt="fp8_e4m3", positive=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 4
    if positive:
        x = np.abs(x)
    return sf.to_bits(x, fmt)


def ref_fp8_matmul(A, B, fmt, N, scales=None):
    m, K = A.shape
    n = B.shape[1]
    out = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            acc = Fraction(0)
            for c, k0 in enumerate(range(0, K, N)):
                k1 = min(K, k0 + N)
                pb, _ = naive.block_fma(A[i, k0:k1].tolist(), B[k0:k1, j].tolist(), fmt, 32,
                                        -10, "fp32", "toward_zero")
                part = O.decode(int(pb), F32).value
                if scales is not None:
                    s = _rne32(Fraction(float(scales[0][i, c])) * Fraction(float(scales[1][c, j])))
                    part = _rne32(part * s)
                acc = _rne32(acc + part)
            out[i, j] = float(acc)
    return out


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("model, N", [("hopper_fp8_fast", None), ("hopper_fp8_promote128", 128),
                                      ("hopper_fp8_promote64", 64)])
def test_fp8_models_against_reference(fmt, model, N):
    A = _fp8(1, (3, 300), fmt)
    B = _fp8(2, (300, 2), fmt)
    got = mx_gemm.fp8_matmul(A, B, fmt, model=model)
    want = ref_fp8_matmul(A, B, fmt, N or 300)
    assert np.array_equal(got, want)


def test_fp8_scaled_chunks():
    A = _fp8(3, (2, 256))
    B = _fp8(4, (256, 3))
    rng = np.random.default_rng(5)
    sa = rng.uniform(0.5, 2, (2, 2)).astype(np.float32)
    sb = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    got = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128", scale_a=sa, scale_b=sb)
    assert np.array_equal(got, ref_fp8_matmul(A, B, "fp8_e4m3", 128, (sa, sb)))
    with pytest.raises(ValueError, match="promotion"):
        mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast", scale_a=sa, scale_b=sb)


def test_h100_fp8_preset_registered():
    A = _fp8(6, (2, 64))
    B = _fp8(7, (64, 2))
    got = sf.from_bits(sf.matmul(A, B, "fp8_e4m3", acc="h100"), "fp32")
    assert np.array_equal(got, mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast"))
    assert sf.tensor_core("h100", "fp8_e4m3") == mx_gemm.HOPPER_FP8_BLOCK


def test_promotion_reduces_error_at_k4096():
    """DeepSeek-V3's observation: without promotion the limited accumulator loses
    accuracy at K = 4096 (positive terms: the truncation bias adds up); promoting
    every 128 products keeps it far smaller (the 13-bit truncation still acts
    within each chunk: ~1e-3 here, positive terms, against ~7e-2)."""
    K = 4096
    A = _fp8(8, (4, K), positive=True)
    B = _fp8(9, (K, 4), positive=True)
    exact = sf.from_bits(A, "fp8_e4m3") @ sf.from_bits(B, "fp8_e4m3")
    fast = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast")
    prom = mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128")
    e_fast = np.abs(fast / exact - 1).max()
    e_prom = np.abs(prom / exact - 1).max()
    assert e_fast > 1e-2 and e_prom < 2e-3 and e_fast > 20 * e_prom


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "mxfp6_e3m2", "mxfp4", "mxint8", "nvfp4"])
def test_mx_matmul_against_exact(fmt):
    rng = np.random.default_rng(10)
    a = rng.standard_normal((3, 70)).astype(np.float32)
    b = rng.standard_normal((70, 4)).astype(np.float32)
    ca, sa = mx.quantize(a, fmt, axis=-1)
    cb, sb = mx.quantize(b, fmt, axis=0)
    got = mx_gemm.mx_matmul(ca, sa, cb, sb, fmt)
    va = mx.dequantize(ca, sa, fmt, axis=-1)
    vb = mx.dequantize(cb, sb, fmt, axis=0)
    kb = mx.block_format(fmt).block
    want = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            acc = Fraction(0)
            for k0 in range(0, 70, kb):
                blk = sum(Fraction(float(va[i, k])) * Fraction(float(vb[k, j]))
                          for k in range(k0, min(70, k0 + kb)))
                acc = _rne32(acc + _rne32(blk))
            want[i, j] = float(acc)
    assert np.array_equal(got, want)
    with pytest.raises(NotImplementedError):
        mx_gemm.mx_matmul(*mx.quantize(a, "mxfp8_e5m2"), *mx.quantize(b, "mxfp8_e5m2", axis=0),
                          "mxfp8_e5m2")


def test_model_validation():
    with pytest.raises(ValueError, match="unknown fp8 GEMM model"):
        mx_gemm.fp8_gemm_model("hopper")
    with pytest.raises(ValueError):
        mx_gemm.FP8GemmModel(promote_every=0)
    assert mx_gemm.fp8_gemm_model("hopper_fp8_promote32").promote_every == 32
