"""order='blas' (the bounded fast model) and the validated-values entry point
(matmul_values(check=False)): the bound against exact sums, the refusals, and the
values path against the encodings path bit for bit."""
import math

import numpy as np
import pytest

import softfloat as sf


def _vals(rng, shape, fmt, scale=1.0):
    return sf.quantize(rng.standard_normal(shape) * scale, fmt)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2", "fp8_e4m3"])
def test_blas_order_bound(fmt):
    rng = np.random.default_rng(1)
    u = 2.0 ** -24
    for K, scale in ((1, 1.0), (33, 1.0), (500, 1e-3), (1500, 30.0)):
        a = _vals(rng, (3, K), fmt, scale)
        b = _vals(rng, (K, 5), fmt)
        c = sf.to_bits(rng.standard_normal((3, 5)), "fp32")
        got = sf.from_bits(sf.matmul(sf.to_bits(a, fmt), sf.to_bits(b, fmt), fmt, acc="fp32",
                                     order="blas", c=c), "fp32")
        cv = sf.from_bits(c, "fp32")
        g = (K + 1) * u / (1 - (K + 1) * u)
        for i in range(3):
            for j in range(5):
                p = list(a[i] * b[:, j]) + [cv[i, j]]       # exact in float64
                exact = math.fsum(p)
                bound = g * sum(abs(x) for x in p) + K * 2.0 ** -150 + abs(exact) * 2.0 ** -52
                assert abs(got[i, j] - exact) <= bound


def test_blas_sum_and_specials():
    x = sf.to_bits(np.array([[1.0, np.inf, -np.inf], [1.0, 2.0, 3.0]]), "fp16")
    r = sf.sum(x, "fp16", acc="fp32", order="blas")
    assert np.isnan(sf.from_bits(r, "fp32")[0]) and sf.from_bits(r, "fp32")[1] == 6.0
    assert int(r[0]) == 0x7FC00000                        # the default NaN


def test_blas_refusals():
    a = sf.to_bits(np.ones((2, 3)), "fp16")
    with pytest.raises(ValueError):
        sf.matmul(a, a.T, "fp16", acc="fp32", order="blas", return_flags=True)
    with pytest.raises(ValueError):
        sf.matmul(a, a.T, "fp16", acc="fp16", order="blas")
    with pytest.raises(ValueError):
        sf.matmul(a, a.T, "fp16", acc="fp32", order="blas", rounding="toward_zero")
    with pytest.raises(ValueError):
        sf.matmul(a, a.T, "fp16", acc="fp32", order="blas", ftz=True)
    with pytest.raises(ValueError):
        sf.Accumulator("fp32", order="blas", kahan=True)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
@pytest.mark.parametrize("acc", ["fp32", "same", "h100"])
def test_values_entry_point_equals_encodings_path(fmt, acc):
    """check=False (no representability scan; native float32 for fp32 sequential)
    against check=True and against sf.matmul with return_flags=True (integer kernel)."""
    if acc == "h100" and fmt == "fp8_e4m3":
        pytest.skip("no fp8 tensor-core preset")
    acc = fmt if acc == "same" else acc
    rng = np.random.default_rng(3)
    a = _vals(rng, (9, 130), fmt, 4.0)
    b = _vals(rng, (130, 6), fmt)
    a[0, 0] = np.inf if fmt != "fp8_e4m3" else a[0, 0]
    r1 = sf.matmul_values(a.astype(np.float32), b.astype(np.float32), fmt, acc=acc,
                          check=False, out_dtype=np.float32)
    r2 = sf.matmul_values(a, b, fmt, acc=acc)
    r3, _ = sf.matmul(sf.to_bits(a, fmt), sf.to_bits(b, fmt), fmt, acc=acc, return_flags=True)
    model_fmt = sf.FP32 if acc == "h100" else sf.get_format(acc)
    r3 = sf.from_bits(r3, model_fmt)
    assert r1.dtype == np.float32 and r2.dtype == np.float64
    for r in (r2, r3):
        same = (r1.astype(np.float64) == r) | (np.isnan(r1) & np.isnan(r))
        assert same.all()


def test_values_entry_point_checks():
    with pytest.raises(ValueError, match="align"):
        sf.matmul_values(np.ones((2, 5)), np.ones((4, 3)), "fp16", check=False)
    with pytest.raises(ValueError, match="align"):
        sf.matmul_values(np.ones((2, 5)), np.ones((4, 3)), "fp16")
    with pytest.raises(ValueError, match="not exactly representable"):
        sf.matmul_values(np.full((2, 2), 0.1), np.ones((2, 2)), "fp16")
    with pytest.raises(TypeError):
        sf.matmul_values(np.ones((2, 2)), np.ones((2, 2)), "fp16", check="no")
    with pytest.raises(ValueError):
        sf.matmul_values(np.ones((2, 2)), np.ones((2, 2)), "fp16", out_dtype=np.float16)
    r = sf.matmul_values(np.ones((2, 0)), np.ones((0, 3)), "fp16", acc="fp32", check=False)
    assert r.shape == (2, 3) and not r.any()


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2"])
@pytest.mark.parametrize("block", [1, 3, 16, 64, 500])
def test_blocked_native_kernel_equals_integer_kernel(fmt, block):
    """The native float32 blocked kernel (fast path) against the integer program
    kernel (return_flags=True takes it), bit for bit; and the values entry point."""
    rng = np.random.default_rng(block)
    differs = False
    for m, k, n in ((3, 1, 4), (5, 70, 6), (2, 257, 33)):
        a = _vals(rng, (m, k), fmt, 8.0)
        b = _vals(rng, (k, n), fmt)
        A, B = sf.to_bits(a, fmt), sf.to_bits(b, fmt)
        fast = sf.matmul(A, B, fmt, acc="fp32", order="blocked", block=block)
        slow, _ = sf.matmul(A, B, fmt, acc="fp32", order="blocked", block=block,
                            return_flags=True)
        np.testing.assert_array_equal(fast, slow)
        vals = sf.matmul_values(a.astype(np.float32), b.astype(np.float32), fmt, acc="fp32",
                                order="blocked", block=block, check=False,
                                out_dtype=np.float32)
        np.testing.assert_array_equal(vals, sf.from_bits(slow, "fp32"))
        differs |= bool((sf.matmul(A, B, fmt, acc="fp32") != fast).any())
    if block in (3, 16, 64) and fmt != "fp8_e5m2":   # (e5m2 sums are exact in fp32 here)
        assert differs


@pytest.mark.parametrize("order,block", [("sequential", None), ("pairwise", None),
                                         ("blocked", 1), ("blocked", 2), ("blocked", 5),
                                         ("blocked", 32), ("blocked", 1000)])
def test_named_orders_build_the_programs_of_their_trees(order, block):
    # the array-wise programs (pairwise: a compiled walk) against the programs the
    # tree compiler makes of the orders' trees: op for op, so that stochastic
    # rounding draws the same random numbers
    from softfloat.accumulate.programs import _program, _tree_program, order_tree
    for K in list(range(1, 260)) + [511, 512, 513, 1000, 4097]:
        got, ns = _program(order, block, K, False)
        want, nw = _tree_program(order_tree(order, block, K), K)
        assert np.array_equal(got, want) and ns == nw, (order, block, K)
    got, ns = _program("sequential", None, 7, True)       # with c: c, then every term
    assert got.tolist() == [[4, 0, 0]] + [[1, 0, k] for k in range(7)] and ns == 1
