"""Accumulation models against the slow references in tests/naive_models.py."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_models as N
import exact_reference as O
import softfloat as sf

# ACCUM_EXAMPLES=1000 python -m pytest tests/test_accumulate.py  for a longer run
_N = int(os.environ.get("ACCUM_EXAMPLES", "0"))


def _ex(n):
    return _N or n


DET = ("nearest_even", "toward_zero", "upward", "downward", "nearest_away", "odd")


def _encodings(fmt, lo, hi):
    """Finite encodings built from fields: exponents in [lo, hi] (clipped to the
    format), every fraction, both signs; plus zeros and subnormals now and then."""
    f = sf.get_format(fmt)
    L = O.layout(f)
    e_lo = max(1, lo + f.bias)
    e_hi = min(L.emax + f.bias, hi + f.bias)
    normal = st.builds(lambda s, e, m: (s << (f.ebits + f.mbits)) | (e << f.mbits) | m,
                       st.integers(0, 1), st.integers(e_lo, e_hi),
                       st.integers(0, (1 << f.mbits) - 1))
    sub = st.builds(lambda s, m: (s << (f.ebits + f.mbits)) | m, st.integers(0, 1),
                    st.integers(0, (1 << f.mbits) - 1))
    parts = [normal, normal, normal, normal]
    if lo + f.bias <= 1:
        parts.append(sub)
    return st.one_of(*parts).filter(lambda b: O.decode(b, f).cls in ("zero", "finite"))


def finite_bits(fmt):
    return _encodings(fmt, -1000, 1000)


def small_bits(fmt, lo=-6, hi=6):
    """Finite encodings with exponents in [lo, hi] (plus zeros): sums that cancel
    and round, without overflow."""
    return _encodings(fmt, lo, hi)


def arr(bits, fmt):
    return np.array(bits, dtype=sf.get_format(fmt).dtype)


def same(got, want_bits, fmt):
    """Bit equality, NaN == NaN."""
    fmt = sf.get_format(fmt)
    if O.is_nan_bits(int(got), fmt) and O.is_nan_bits(int(want_bits), fmt):
        return True
    return int(got) == int(want_bits)


def terms_of(bits, fmt):
    return [N.value_of(b, fmt) for b in bits]


def prods_of(a, b, fmt):
    return [N.product(N.value_of(x, fmt), N.value_of(y, fmt))[0] for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# Recursive summation, every order, every deterministic mode
# ---------------------------------------------------------------------------
@settings(max_examples=_ex(80))
@given(st.sampled_from(["fp16", "bf16", "fp8_e4m3", "fp8_e5m2"]), st.data())
def test_sequential_sum_matches_naive(fmt, data):
    acc = data.draw(st.sampled_from([fmt, "fp16", "bf16", "fp32", "e5m3"]))
    mode = data.draw(st.sampled_from(DET))
    bits = data.draw(st.lists(finite_bits(fmt), min_size=1, max_size=24))
    got, flags = sf.sum(arr(bits, fmt), fmt, acc=acc, rounding=mode, return_flags=True)
    want, wflags = N.sequential(terms_of(bits, fmt), acc, mode)
    assert same(got, want, acc), (bits, acc, mode, hex(int(got)), hex(want))
    assert int(flags) == wflags


@settings(max_examples=_ex(80))
@given(st.sampled_from(["fp16", "bf16"]), st.sampled_from(["pairwise", "blocked", "tree"]),
       st.data())
def test_tree_orders_match_naive(fmt, order, data):
    acc = data.draw(st.sampled_from([fmt, "fp32", "e5m4"]))
    mode = data.draw(st.sampled_from(DET))
    bits = data.draw(st.lists(small_bits(fmt), min_size=1, max_size=33))
    k = len(bits)
    kw = {}
    if order == "pairwise":
        tree = N.pairwise_tree(k)
    elif order == "blocked":
        b = data.draw(st.integers(1, 9))
        kw["block"] = b
        tree = N.blocked_tree(k, b)
    else:
        perm = data.draw(st.permutations(range(k)))
        # a random shape: split the permutation into random groups, nest twice
        cuts = sorted(data.draw(st.lists(st.integers(1, max(1, k - 1)), max_size=4,
                                         unique=True))) if k > 1 else []
        groups, prev = [], 0
        for c in cuts + [k]:
            if c > prev:
                g = tuple(perm[prev:c])
                groups.append(g[0] if len(g) == 1 else g)
                prev = c
        tree = tuple(groups) if len(groups) > 1 else groups[0]
        order = tree
    got, flags = sf.sum(arr(bits, fmt), fmt, acc=acc, order=order, rounding=mode,
                        return_flags=True, **kw)
    want, wflags = N.eval_tree(tree, terms_of(bits, fmt), acc, mode)
    assert same(got, want, acc), (bits, tree, acc, mode)
    assert int(flags) == wflags


@settings(max_examples=_ex(50))
@given(st.sampled_from(["fp16", "bf16"]), st.data())
def test_kahan_matches_naive(fmt, data):
    mode = data.draw(st.sampled_from(DET))
    bits = data.draw(st.lists(small_bits(fmt), min_size=1, max_size=24))
    got, flags = sf.sum(arr(bits, fmt), fmt, kahan=True, rounding=mode, return_flags=True)
    want, wflags = N.kahan(terms_of(bits, fmt), fmt, mode)
    assert same(got, want, fmt)
    assert int(flags) == wflags


# ---------------------------------------------------------------------------
# Dot products: exact (fused) and rounded products
# ---------------------------------------------------------------------------
@settings(max_examples=_ex(80))
@given(st.sampled_from(["fp16", "bf16", "fp8_e4m3"]), st.data())
def test_dot_products_match_naive(fmt, data):
    acc = data.draw(st.sampled_from([fmt, "fp32", "bf16"]))
    mode = data.draw(st.sampled_from(DET))
    prod = data.draw(st.sampled_from(["exact", "rounded"]))
    order = data.draw(st.sampled_from(["sequential", "pairwise"]))
    k = data.draw(st.integers(1, 20))
    a = data.draw(st.lists(small_bits(fmt), min_size=k, max_size=k))
    b = data.draw(st.lists(small_bits(fmt), min_size=k, max_size=k))
    got, flags = sf.dot(arr(a, fmt), arr(b, fmt), fmt, acc=acc, rounding=mode,
                        products=prod, order=order, return_flags=True)
    terms, wflags = [], 0
    for x, y in zip(a, b):
        p, f = N.product(N.value_of(x, fmt), N.value_of(y, fmt))
        wflags |= f
        if prod == "rounded":
            pb, f = N.round_into(p, acc, mode)
            wflags |= f
            p = N.value_of(pb, acc)
        terms.append(p)
    tree = 0 if k == 1 else (tuple(range(k)) if order == "sequential" else N.pairwise_tree(k))
    want, f = N.eval_tree(tree, terms, acc, mode)
    assert same(got, want, acc), (a, b, acc, mode, prod, order)
    assert int(flags) == wflags | f


def test_matmul_shapes_and_specials():
    f = "fp16"
    rng = np.random.default_rng(1)
    a = sf.to_bits(rng.standard_normal((2, 3, 5)), f)
    b = sf.to_bits(rng.standard_normal((5, 4)), f)
    r = sf.matmul(a, b, f, acc="fp32")
    assert r.shape == (2, 3, 4) and r.dtype == np.uint32
    # each element is a dot product
    for bt in range(2):
        for i in range(3):
            for j in range(4):
                assert r[bt, i, j] == sf.dot(a[bt, i], np.ascontiguousarray(b[:, j]), f,
                                             acc="fp32")
    assert sf.matmul(a[0, 0], b, f).shape == (4,)
    assert sf.matmul(a[0], b[:, 0].copy(), f).shape == (3,)
    # inf * 0 is invalid; inf - inf is invalid; NaN propagates
    inf, one, zero = 0x7C00, 0x3C00, 0
    r, fl = sf.dot(arr([inf, one], f), arr([zero, one], f), f, return_flags=True)
    assert O.is_nan_bits(int(r), sf.FP16) and fl & 16
    r, fl = sf.dot(arr([inf, inf], f), arr([one, 0xBC00], f), f, return_flags=True)
    assert O.is_nan_bits(int(r), sf.FP16) and fl & 16
    r = sf.dot(arr([0x7E01, one], f), arr([one, one], f), f)
    assert int(r) == 0x7E01                       # payload propagated (context default)


def test_validation_errors():
    x = np.zeros(4, np.uint16)
    with pytest.raises(ValueError):
        sf.sum(x, "fp16", order="zigzag")
    with pytest.raises(ValueError):
        sf.sum(x, "fp16", order="blocked")
    with pytest.raises(ValueError):
        sf.sum(x, "fp16", order=((0, 1), 2))          # index 3 missing
    with pytest.raises(ValueError):
        sf.sum(x, "fp16", order="pairwise", kahan=True)
    with pytest.raises(TypeError):
        sf.sum(x.astype(np.float32), "fp16")
    with pytest.raises(TypeError):
        sf.sum(x, "fp16", acc=3)
    with pytest.raises(ValueError):
        sf.dot(x, x[:3], "fp16")
    with pytest.raises(ValueError):
        sf.matmul(x.reshape(2, 2), x.reshape(4, 1), "fp16")
    with pytest.raises(ValueError):
        sf.matmul_values(np.array([0.1]), np.array([1.0]), "fp16")
    with pytest.raises(ValueError):
        sf.tensor_core("v100", "bf16")
    with pytest.raises(TypeError):
        sf.sum(x, "fp16", bogus=1)


# ---------------------------------------------------------------------------
# The float32 fast path is the sequential nearest-even model
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2"])
def test_fast_path_matches_naive(fmt):
    rng = np.random.default_rng(7)
    a = sf.to_bits(rng.standard_normal((4, 37)) * 3, fmt)
    b = sf.to_bits(rng.standard_normal((37, 5)), fmt)
    got = sf.matmul(a, b, fmt, acc="fp32")            # fast path
    for i in range(4):
        for j in range(5):
            want, _ = N.sequential(prods_of(a[i], b[:, j], fmt), "fp32", "nearest_even")
            assert int(got[i, j]) == want
    # and the integer kernel agrees bit for bit on a larger case, fp16 out included
    a = sf.to_bits(rng.standard_normal((16, 300)), fmt)
    b = sf.to_bits(rng.standard_normal((300, 24)), fmt)
    fast = sf.matmul(a, b, fmt, acc="fp32", out_fmt=fmt)
    slow = sf.matmul(a, b, fmt, acc="fp32", out_fmt=fmt, return_flags=True)[0]
    np.testing.assert_array_equal(fast, slow)
    x = sf.to_bits(rng.standard_normal((3, 1000)), fmt)
    np.testing.assert_array_equal(sf.sum(x, fmt, acc="fp32"),
                                  sf.sum(x, fmt, acc="fp32", return_flags=True)[0])


def test_fast_path_falls_back_when_products_are_inexact():
    # bf16 products of tiny values underflow float32: the integer kernel must run
    a = np.array([2.0 ** -100, 1.0], np.float64)
    b = np.array([2.0 ** -60, 2.0 ** -130], np.float64)
    got = sf.dot_values(a, b, "bf16", acc="fp32")
    want, _ = N.sequential(prods_of(sf.to_bits(a, "bf16"), sf.to_bits(b, "bf16"), "bf16"),
                           "fp32", "nearest_even")
    assert sf.to_bits(np.float64(got), "fp32") == want


# ---------------------------------------------------------------------------
# Block FMA (tensor cores)
# ---------------------------------------------------------------------------
@settings(max_examples=_ex(80))
@given(st.sampled_from(["v100", "a100", "h100", "b200"]), st.sampled_from(["fp16", "bf16"]),
       st.data())
def test_block_fma_matches_naive(gpu, fmt, data):
    if gpu == "v100" and fmt == "bf16":
        fmt = "fp16"
    out = data.draw(st.sampled_from(["fp32", "fp16"])) if fmt == "fp16" else "fp32"
    model = sf.block_fma_preset(gpu, fmt, out)
    k = data.draw(st.integers(1, 40))
    sb = small_bits(fmt, -14, 8) if fmt == "fp16" else small_bits(fmt, -40, 40)
    a = data.draw(st.lists(sb, min_size=k, max_size=k))
    b = data.draw(st.lists(sb, min_size=k, max_size=k))
    c = data.draw(st.one_of(st.none(), small_bits(model.fmt.name, -20, 20)))
    got = sf.matmul(arr(a, fmt)[None], arr(b, fmt)[:, None], fmt, acc=model,
                    c=None if c is None else arr([[c]], model.fmt.name))
    want, _ = N.block_fma(a, b, fmt, model.width, model.extra_bits, model.fmt.name,
                          model.rounding, c)
    assert same(got[0, 0], want, model.fmt.name), (gpu, a, b, c)


def _fp16(vals):
    return sf.to_bits(np.array(vals, np.float64), "fp16")


def _tc(gpu, a, b, c=None):
    cc = None if c is None else sf.to_bits(np.array([[c]]), "fp32")
    r = sf.matmul(_fp16(a)[None], _fp16(b)[:, None], "fp16", acc=gpu, c=cc)
    return float(sf.from_bits(r, "fp32")[0, 0])


def test_tensor_core_alignment_and_truncation():
    # 1 + 2^-23 + 2^-24 + 2^-24: exactly 1 + 2^-22 (an fp32 number).
    a = [1.0, 2.0 ** -11, 2.0 ** -12, 2.0 ** -12]
    b = [1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -12]
    # V100: aligned to 2^0 with 23 fraction bits, the 2^-24 terms are truncated away.
    assert _tc("v100", a, b) == 1 + 2.0 ** -23
    # A100/H100 keep extra alignment bits: the exact sum survives.
    for gpu in ("a100", "h100", "b200"):
        assert _tc(gpu, a, b) == 1 + 2.0 ** -22
    # IEEE fp32 accumulation (nearest even): ((1 + 2^-23) + 2^-24) ties to even twice.
    assert float(sf.from_bits(sf.dot(_fp16(a), _fp16(b), "fp16", acc="fp32"), "fp32")) \
        == 1 + 2.0 ** -22
    # The fp32 result is truncated, also for negative sums (toward zero).
    a2 = [1.0, 2.0 ** -11, 2.0 ** -11, 0.0]
    b2 = [-1.0, -(2.0 ** -13), -(2.0 ** -13), 0.0]    # -(1 + 2^-24 + 2^-24): exact
    assert _tc("v100", a2, b2) == -1.0
    assert _tc("a100", a2, b2) == -(1 + 2.0 ** -23)


def test_tensor_core_non_monotonic():
    # c just below 1 and four products of 1.5 * 2^-24 (Fasi et al. 2021, sec. on
    # monotonicity; Mikaitis 2023): raising c by 2^-24 to 1.0 moves the alignment
    # point up one bit, the products are truncated away, and the result drops.
    a = [3 * 2.0 ** -13] * 4
    b = [2.0 ** -12] * 4
    lo = _tc("v100", a, b, c=1 - 2.0 ** -24)
    hi = _tc("v100", a, b, c=1.0)
    assert lo == 1 + 2.0 ** -23 and hi == 1.0 and hi < lo


def test_tensor_core_block_width_and_recursion():
    # 8 products of 2^-24 after a leading 1: V100 (4 per block) truncates within
    # each block; A100 (8 per block, 1 extra bit) keeps them all in one block.
    a = [1.0] + [2.0 ** -12] * 7
    b = [1.0] + [2.0 ** -12] * 7
    assert _tc("v100", a, b) == 1.0
    assert _tc("a100", a, b) == 1 + 7 * 2.0 ** -24 - 2.0 ** -24   # truncated to 2^-23 steps
    # with fp16 output the block result is rounded to nearest even in fp16
    m = sf.tensor_core("v100", "fp16", "fp16")
    r = sf.matmul(_fp16([1.0, 2.0 ** -11, 2.0 ** -11, 0])[None],
                  _fp16([1.0, 1.0, 1.0, 0])[:, None], "fp16", acc=m)
    assert float(sf.from_bits(r, "fp16")[0, 0]) == 1.0 + 2.0 ** -10


# ---------------------------------------------------------------------------
# The worked summation study: stagnation and stochastic rounding
# ---------------------------------------------------------------------------
def test_recursive_sum_of_ones_stalls():
    for fmt, stall in (("fp16", 2048.0), ("bf16", 256.0)):
        x = sf.to_bits(np.ones(5000), fmt)
        assert float(sf.from_bits(sf.sum(x, fmt), fmt)) == stall
        # with a float32 accumulator the sum is exact
        assert float(sf.from_bits(sf.sum(x, fmt, acc="fp32"), "fp32")) == 5000.0


def test_stochastic_sum_keeps_going_and_is_reproducible():
    x = sf.to_bits(np.ones(5000), "bf16")
    r1 = sf.sum(x, "bf16", rounding="stochastic", seed=3)
    r2 = sf.sum(x, "bf16", rounding="stochastic", seed=3)
    assert r1 == r2
    vals = [float(sf.from_bits(sf.sum(x, "bf16", rounding="stochastic", seed=s), "bf16"))
            for s in range(20)]
    # E[sum] = 5000; every run is far past the nearest-even stall at 256
    assert min(vals) > 2000 and abs(np.mean(vals) - 5000) < 600


def test_values_face_and_out_format():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    r = sf.matmul_values(a, a, "fp16", acc="fp32")
    np.testing.assert_array_equal(r, a @ a)
    r = sf.matmul_values(a, a, "fp16", acc="fp32", out_fmt="fp16")
    np.testing.assert_array_equal(r, a @ a)
    assert sf.sum_values(np.array([1.0, 2.0 ** -11]), "fp16") == 1.0
    assert sf.sum_values(np.array([1.0, 2.0 ** -11]), "fp16", acc="fp32") == 1 + 2.0 ** -11
    assert sf.dot_values(np.array([1.0, 1.0]), np.array([1.0, 2.0 ** -11]), "fp16",
                         acc="fp32", out_fmt="fp16") == 1.0


def test_empty_sums_and_shapes():
    e = np.zeros(0, np.uint16)
    assert int(sf.sum(e, "fp16")) == 0 and int(sf.dot(e, e, "fp16", acc="fp32")) == 0
    assert sf.sum(np.zeros((0, 4), np.uint16), "fp16").shape == (0,)
    np.testing.assert_array_equal(sf.sum(np.zeros((3, 0), np.uint16), "fp16"), [0, 0, 0])
    z = sf.matmul(np.zeros((2, 0), np.uint16), np.zeros((0, 3), np.uint16), "fp16")
    assert z.shape == (2, 3) and not z.any()
    assert sf.matmul(np.zeros((0, 2, 2), np.uint16), np.zeros((2, 3), np.uint16),
                     "fp16").shape == (0, 2, 3)
    x = sf.to_bits(np.arange(10.0).reshape(2, 5), "fp16")
    np.testing.assert_array_equal(sf.from_bits(sf.sum(x, "fp16", axis=0), "fp16"),
                                  [5.0, 7.0, 9.0, 11.0, 13.0])
    assert float(sf.from_bits(sf.sum(x, "fp16", axis=None), "fp16")) == 45.0


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2"])
def test_fast_path_equals_integer_kernel_large(fmt):
    """Native float32 fast path vs the integer kernel (return_flags forces it) on
    larger products with wide dynamic range, fp32 and fmt outputs."""
    rng = np.random.default_rng(11)
    a = sf.to_bits(rng.standard_normal((48, 1500)) * np.exp2(rng.integers(-8, 8, (48, 1500))),
                   fmt)
    b = sf.to_bits(rng.standard_normal((1500, 40)) * np.exp2(rng.integers(-8, 8, (1500, 40))),
                   fmt)
    for out in ("fp32", fmt):
        fast = sf.matmul(a, b, fmt, acc="fp32", out_fmt=out)
        slow = sf.matmul(a, b, fmt, acc="fp32", out_fmt=out, return_flags=True)[0]
        np.testing.assert_array_equal(fast, slow)
    x = sf.to_bits(rng.standard_normal((20, 20000)) * 100, fmt)
    np.testing.assert_array_equal(sf.sum(x, fmt, acc="fp32"),
                                  sf.sum(x, fmt, acc="fp32", return_flags=True)[0])


# --------------------------------------------------------------------------
# Deep explicit trees and block widths
# --------------------------------------------------------------------------
def test_deep_explicit_trees_compile_without_recursion():
    """5,000 levels hit RecursionError in the recursive tree compiler. A left-nested
    tree is the sequential order; a right-nested one is a right fold."""
    K = 5000
    rng = np.random.default_rng(5)
    x = sf.to_bits(rng.standard_normal(K), "fp16")
    left = 0
    for k in range(1, K):
        left = (left, k)
    right = K - 1
    for k in range(K - 2, -1, -1):
        right = (k, right)
    got = sf.sum(x, "fp16", order=left, rounding="upward")
    want, _ = N.sequential(terms_of(x.tolist(), "fp16"), "fp16", "upward")
    assert same(got, want, "fp16")
    got = sf.sum(x, "fp16", order=right, acc="bf16")
    terms = terms_of(x.tolist(), "fp16")
    # a node's first child is rounded into the accumulator, then the rest added
    # (naive_models.eval_tree's rule, unrolled: that model recurses)
    def first(t):
        return N.value_of(N.round_into(t, "bf16", "nearest_even")[0], "bf16")
    accv = N.add(first(terms[-2]), terms[-1], "bf16", "nearest_even")[0]
    for t in reversed(terms[:-2]):
        accv = N.add(first(t), N.value_of(accv, "bf16"), "bf16", "nearest_even")[0]
    assert same(got, accv, "bf16")
    assert int(sf.sum(x, "fp16", acc=sf.Accumulator("fp32", order=left))) == int(
        sf.sum(x, "fp16", acc="fp32"))


@pytest.mark.parametrize("kw", [dict(width=2**70), dict(width=0), dict(width=2**31),
                                dict(frame_emin=-2**70), dict(width=np.uint64(2**63)),
                                dict(frame_emin=5000)])
def test_block_fma_fields_out_of_range(kw):
    """BlockFMA(width=2**70) gave a numba OverflowError at the first use."""
    with pytest.raises(ValueError, match="BlockFMA"):
        sf.BlockFMA(**kw)
    for bad in (True, 4.0, "4", None):
        with pytest.raises(TypeError, match="BlockFMA.width"):
            sf.BlockFMA(width=bad)
    b = sf.BlockFMA(width=np.int16(4))
    assert type(b.width) is int
