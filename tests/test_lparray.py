"""The array type against the bit-level functions (softfloat.add, ...) and the
accumulation models; an algorithm written once runs on float64 and LPArray."""
from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf

FMTS = ["fp16", "bf16", "fp8_e4m3"]


def _vals(fmt, n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 4
    x[:4] = [0.0, -0.0, 1.0, 3.0]
    return sf.quantize(x, fmt)


@pytest.mark.parametrize("fmt", FMTS)
def test_binary_ufuncs_match_bit_functions(fmt):
    a, b = sf.array(_vals(fmt, seed=1), fmt), sf.array(_vals(fmt, seed=2), fmt)
    for ufunc, fn in ((np.add, sf.add), (np.subtract, sf.sub), (np.multiply, sf.mul),
                      (np.divide, sf.div), (np.maximum, sf.maximum), (np.minimum, sf.minimum),
                      (np.fmax, sf.maximum_number), (np.fmin, sf.minimum_number),
                      (np.copysign, sf.copysign)):
        r = ufunc(a, b)
        assert isinstance(r, sf.LPArray) and r.format.name == fmt
        np.testing.assert_array_equal(r.bits, fn(a.bits, b.bits, fmt), err_msg=ufunc.__name__)
    np.testing.assert_array_equal((a + b).bits, sf.add(a.bits, b.bits, fmt))
    np.testing.assert_array_equal((a - b).bits, sf.sub(a.bits, b.bits, fmt))
    np.testing.assert_array_equal((a * b).bits, sf.mul(a.bits, b.bits, fmt))
    np.testing.assert_array_equal((a / b).bits, sf.div(a.bits, b.bits, fmt))
    for ufunc, fn in ((np.equal, sf.eq), (np.not_equal, sf.ne), (np.less, sf.lt),
                      (np.less_equal, sf.le), (np.greater, sf.gt), (np.greater_equal, sf.ge)):
        np.testing.assert_array_equal(ufunc(a, b), fn(a.bits, b.bits, fmt))
    np.testing.assert_array_equal(a < b, sf.lt(a.bits, b.bits, fmt))


@pytest.mark.parametrize("fmt", FMTS)
def test_unary_ufuncs_and_fma(fmt):
    a = sf.array(_vals(fmt, seed=3), fmt)
    np.testing.assert_array_equal(np.sqrt(abs(a)).bits, sf.sqrt(sf.abs(a.bits, fmt), fmt))
    np.testing.assert_array_equal(np.sqrt(a).bits, sf.sqrt(a.bits, fmt))
    np.testing.assert_array_equal((-a).bits, sf.neg(a.bits, fmt))
    np.testing.assert_array_equal(np.absolute(a).bits, sf.abs(a.bits, fmt))
    np.testing.assert_array_equal(np.square(a).bits, sf.mul(a.bits, a.bits, fmt))
    np.testing.assert_array_equal(np.isnan(np.sqrt(a)), np.isnan(np.asarray(np.sqrt(a))))
    b, c = sf.array(_vals(fmt, seed=4), fmt), sf.array(_vals(fmt, seed=5), fmt)
    np.testing.assert_array_equal(sf.fused_multiply_add(a, b, c).bits,
                                  sf.fma(a.bits, b.bits, c.bits, fmt))
    np.testing.assert_array_equal(a.fma(b, c).bits, sf.fma(a.bits, b.bits, c.bits, fmt))


def test_rounds_after_each_step_and_scalars():
    x = sf.array([3.0, 1e-3, 300.0], "fp16")
    y = sf.array([4.0, 1e-3, 400.0], "fp16")
    r = np.sqrt(x * x + y * y)
    f = "fp16"
    want = sf.sqrt(sf.add(sf.mul(x.bits, x.bits, f), sf.mul(y.bits, y.bits, f), f), f)
    np.testing.assert_array_equal(r.bits, want)
    assert float(r[0]) == 5.0
    # Python scalars are rounded into the format first: 0.1 -> fp16(0.1)
    np.testing.assert_array_equal((x + 0.1).bits,
                                  sf.add(x.bits, sf.to_bits(np.float64(0.1), f), f))
    np.testing.assert_array_equal((1.0 - x).bits,
                                  sf.sub(sf.to_bits(np.float64(1.0), f), x.bits, f))
    # rounding follows the context
    with sf.localcontext(rounding="toward_zero"):
        t = x / 3.0
    np.testing.assert_array_equal(t.bits, sf.div(x.bits, sf.to_bits(3.0, f), f, "toward_zero"))


def test_mixed_formats_and_plain_arrays_raise():
    a, b = sf.array([1.0, 2.0], "fp16"), sf.array([1.0, 2.0], "bf16")
    with pytest.raises(TypeError):
        a + b
    with pytest.raises(TypeError):
        a + np.array([1.0, 2.0])
    with pytest.raises(TypeError):
        np.cumsum(a)                       # not supported: no silent float64 fallback
    # explicit conversion works
    np.testing.assert_array_equal((a + b.astype("fp16")).bits, sf.add(a.bits, a.bits, "fp16"))
    assert np.asarray(a).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0])


def test_reductions_use_the_accumulation_model():
    ones = np.ones(3000)
    assert float(np.sum(sf.array(ones, "fp16"))) == 2048.0
    assert float(sf.array(ones, "fp16").sum()) == 2048.0
    assert float(np.sum(sf.array(ones, "bf16"))) == 256.0
    s = np.sum(sf.array(ones, "fp16", acc="fp32"))       # fp32 sum 3000, back to fp16
    assert s.format.name == "fp16" and float(s) == 3000.0
    m = np.arange(12.0).reshape(3, 4)
    a = sf.array(m, "fp16")
    np.testing.assert_array_equal(np.asarray(np.sum(a, axis=0)), m.sum(axis=0))
    np.testing.assert_array_equal(np.asarray(a.sum(axis=1)), m.sum(axis=1))
    assert float(np.mean(a)) == 5.5
    # matmul/dot: the model's result, rounded into the array's format
    b = sf.array(np.arange(8.0).reshape(4, 2), "fp16", acc="fp32")
    a32 = a.with_acc("fp32")
    want = sf.matmul(a.bits, b.bits, "fp16", acc="fp32", out_fmt="fp16")
    np.testing.assert_array_equal((a32 @ b).bits, want)
    np.testing.assert_array_equal(np.matmul(a32, b).bits, want)
    np.testing.assert_array_equal(np.dot(a32, b).bits, want)
    tc = a.with_acc("v100")
    np.testing.assert_array_equal(
        (tc @ b).bits, sf.matmul(a.bits, b.bits, "fp16", acc="v100", out_fmt="fp16"))


def test_array_functions():
    a = sf.array(np.arange(6.0).reshape(2, 3), "bf16")
    np.testing.assert_array_equal(np.asarray(np.concatenate([a, a])),
                                  np.concatenate([np.asarray(a)] * 2))
    np.testing.assert_array_equal(np.asarray(np.stack([a, a], axis=1)),
                                  np.stack([np.asarray(a)] * 2, axis=1))
    np.testing.assert_array_equal(np.asarray(np.where(np.asarray(a) > 2, a, -a)),
                                  np.where(np.arange(6.0).reshape(2, 3) > 2,
                                           np.arange(6.0).reshape(2, 3),
                                           -np.arange(6.0).reshape(2, 3)))
    assert np.reshape(a, (3, 2)).shape == (3, 2) and a.T.shape == (3, 2)
    assert float(np.max(a)) == 5.0 and float(np.min(a)) == 0.0
    np.testing.assert_array_equal(np.asarray(np.outer(a[0], a[1])),
                                  np.outer(np.arange(3.0), np.arange(3.0, 6.0)))
    assert float(np.linalg.norm(sf.array([3.0, 4.0], "fp16"))) == 5.0
    a2 = a.copy()
    a2[0, 0] = 7.0
    a2[1] -= a2[0]
    assert float(a2[0, 0]) == 7.0 and float(a2[1, 0]) == -4.0
    assert float(a[0, 0]) == 0.0


def _newton_sqrt(x, steps=6):
    """Written once with plain NumPy calls."""
    y = np.maximum(x, 1.0)
    for _ in range(steps):
        y = (y + x / y) * 0.5
    return y


def _horner(x, coeffs):
    acc = np.zeros_like(x)
    for c in coeffs:
        acc = acc * x + c
    return acc


def test_same_algorithm_runs_on_float64_and_lparray():
    x = np.array([2.0, 10.0, 0.5, 123.0])
    r64 = _newton_sqrt(x)
    r16 = _newton_sqrt(sf.array(x, "fp16"))
    assert isinstance(r64, np.ndarray) and isinstance(r16, sf.LPArray)
    np.testing.assert_allclose(np.asarray(r16), np.sqrt(x), rtol=2 ** -9)
    # and it is exactly the hand-rounded computation
    f = "fp16"
    xb = sf.to_bits(x, f)
    y = sf.maximum(xb, sf.to_bits(1.0, f), f)
    for _ in range(6):
        y = sf.mul(sf.add(y, sf.div(xb, y, f), f), sf.to_bits(0.5, f), f)
    np.testing.assert_array_equal(r16.bits, y)
    coeffs = [0.5, -1.25, 3.0, 0.1]
    p16 = _horner(sf.array(x / 100, "bf16"), coeffs)
    np.testing.assert_allclose(np.asarray(p16), _horner(sf.quantize(x / 100, "bf16"), coeffs),
                               rtol=2 ** -6)


# --------------------------------------------------------------------------
# Reductions honour or refuse every argument; sf.array copies and never casts
# silently
# --------------------------------------------------------------------------
def test_sum_axis_out_of_range_raises_axis_error():
    M = sf.array(np.arange(6.0).reshape(2, 3), "fp16")
    for ax in (2, -3, (0, 2), (0, 0)):
        with pytest.raises((np.exceptions.AxisError, ValueError)):
            M.sum(axis=ax)
    with pytest.raises(np.exceptions.AxisError):
        np.sum(M, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        np.add.reduce(M, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        np.mean(M, axis=-3)
    with pytest.raises(TypeError, match="axis"):
        M.sum(axis=1.0)
    assert M.sum(axis=-1).values().tolist() == [3.0, 12.0]
    assert M.sum(axis=(0, 1)).values() == 15.0 and M.sum(axis=(-1, 0)).values() == 15.0


def test_reduce_keywords_honoured_or_refused():
    M = sf.array(np.arange(6.0).reshape(2, 3), "fp16")
    assert np.add.reduce(M, axis=0, keepdims=True).shape == (1, 3)
    assert np.sum(M, axis=1, keepdims=True).values().tolist() == [[3.0], [12.0]]
    assert float(np.add.reduce(M, axis=None)) == 15.0
    for kw in (dict(initial=100.0), dict(dtype=np.float32), dict(where=np.ones((2, 3), bool)),
               dict(keepdims="yes")):
        with pytest.raises(TypeError):
            np.add.reduce(M, axis=0, **kw)
        with pytest.raises(TypeError):
            np.sum(M, axis=0, **kw)
    out = sf.array([0.0, 0.0, 0.0], "fp16")
    assert np.add.reduce(M, axis=0, out=(out,)) is out
    assert out.values().tolist() == [3.0, 5.0, 7.0]
    with pytest.raises(ValueError, match="shape"):
        np.add.reduce(M, axis=0, out=(sf.array([0.0, 0.0], "fp16"),))
    with pytest.raises(TypeError):
        np.add.reduce(M, axis=0, out=(np.zeros(3),))
    with pytest.raises(TypeError, match="dtype"):
        np.add(M, M, dtype=np.float32)
    with pytest.raises(TypeError, match="where"):
        np.multiply(M, M, where=np.array([True, False, True]))
    for f, kw in ((np.max, dict(keepdims=True)), (np.min, dict(initial=0.0)),
                  (np.zeros_like, dict(dtype=np.float32)), (np.argmax, dict(keepdims=True))):
        try:
            r = f(M, **kw)
        except TypeError:
            continue
        assert f is np.argmax and r.shape == (1, 1)        # numpy honours it for argmax
    with pytest.raises(TypeError, match="out"):
        np.stack([M, M], out=sf.array(np.zeros((2, 2, 3)), "fp16"))
    with pytest.raises(TypeError, match="out"):
        np.outer(M, M, out=np.zeros((6, 6)))


def test_array_copies_like_numpy():
    x = sf.array([1.0, 2.0], "fp16", acc="fp32")
    y = sf.array(x, "fp16")
    y[0] = 5.0
    assert x.values().tolist() == [1.0, 2.0] and y.acc == "fp32"
    assert not np.shares_memory(x.bits, y.bits)


@pytest.mark.parametrize("bad", [[None], ["1.5"], [True], [True, 2.5], [1, 2.5], [[1.0], [2]],
                                 [1.0, None], 3, True, "1.5", [1.0 + 2j],
                                 np.ma.masked_array([1e9, 1.0], [True, False]),
                                 np.array([1, 2]), np.array(["1.5"]), np.array([None])])
def test_array_refuses_silent_casts(bad):
    with pytest.raises(TypeError):
        sf.array(bad, "fp16")
    with pytest.raises(TypeError):
        sf.to_bits(bad, "fp16")
    with pytest.raises(TypeError):
        sf.quantize(bad, "fp16")


def test_array_accepts_float_lists():
    assert sf.array([1.0, np.float32(2.0), np.float16(0.5)], "fp16").values().tolist() == \
        [1.0, 2.0, 0.5]
    assert sf.array([[1.0, 2.0], [3.0, 4.0]], "bf16").shape == (2, 2)
    assert sf.array(2.5, "fp16").values() == 2.5


def test_bad_accumulation_model_refused_at_construction():
    for acc, exc in ((3, TypeError), ("bogus", ValueError), (True, TypeError)):
        with pytest.raises(exc):
            sf.array([1.0], "fp16", acc=acc)
        with pytest.raises(exc):
            sf.LPArray(np.zeros(2, np.uint16), "fp16", acc=acc)
