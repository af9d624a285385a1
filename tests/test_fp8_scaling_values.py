"""softfloat.fp8_scaling's values functions: `amax` against NumPy, and
`quantize_per_tensor_values` / `DelayedScaling.quantize_values` (one fused
scale-and-round pass for finite float32 tensors) against their slow twin, the
codes of `quantize_per_tensor` / `DelayedScaling.quantize` decoded by
`softfloat.from_bits`."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import fp8_scaling as fs


def same(a, b):
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def tensor(seed, n=5000, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 6, n)
    x[::97] = 0.0
    x[1::89] *= -1e-40                     # float32 subnormals and negative zeros
    return x.astype(dtype)


def test_amax_equals_numpy():
    for seed, dtype in ((0, np.float32), (1, np.float64), (2, np.float16)):
        with np.errstate(over="ignore"):
            x = tensor(seed, 300000 if dtype == np.float32 else 3000, dtype)
        for special in (None, np.inf, -np.inf, np.nan):
            y = x.copy()
            if special is not None:
                y[len(y) // 3] = special
            with np.errstate(invalid="ignore"):
                want = float(np.max(np.abs(y)))
            got = fs.amax(y)
            assert (got == want) or (np.isnan(got) and np.isnan(want))
    assert fs.amax(np.zeros(0, np.float32)) == 0.0
    assert fs.amax(np.float32([-0.0])) == 0.0
    assert fs.amax(np.float32([[1.5, -7.0], [2.0, 3.0]])[:, 0]) == 2.0     # a strided view
    with pytest.raises(TypeError):
        fs.amax(np.arange(3))


def slow_values(x, fmt, **kw):
    codes, s = fs.quantize_per_tensor(x, fmt, **kw)
    with np.errstate(invalid="ignore"):
        return sf.from_bits(codes, fmt).astype(np.float32), s


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_per_tensor_values_equal_the_codes_values(fmt):
    f = sf.get_format(fmt)
    for seed in range(4):
        x = tensor(seed, 70000 if seed == 0 else 3000)           # seed 0: in chunks
        for kw in (dict(), dict(margin=2), dict(scale=1.0), dict(scale=2.0 ** -20),
                   dict(scale=3.0e5)):                          # large scales saturate
            assert fs._values_fast(x, f, kw.get("scale", 1.0),
                                   sf.Policy.resolve("nearest_even")) is not None
            v, s = fs.quantize_per_tensor_values(x, fmt, **kw)
            w, t = slow_values(x, fmt, **kw)
            assert s == t and same(v, w)
            v, s, am = fs.quantize_per_tensor_values(x, fmt, return_amax=True, **kw)
            assert same(v, w) and am == float(np.max(np.abs(x)))


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_non_finite_and_other_inputs_take_the_general_kernel(fmt):
    x = tensor(5, 2000)
    for special in (np.inf, -np.inf, np.nan):
        y = x.copy()
        y[7] = special
        v, s, am = fs.quantize_per_tensor_values(y, fmt, return_amax=True)
        w, t = slow_values(y, fmt)
        assert s == t and np.array_equal(v, w, equal_nan=True)
        assert am == abs(special) or (np.isnan(am) and np.isnan(special))
    x64 = x.astype(np.float64) * (1 + 2.0 ** -30)               # float64: general kernel
    v, s = fs.quantize_per_tensor_values(x64, fmt)
    w, t = slow_values(x64, fmt)
    assert s == t and same(v, w)
    v, s = fs.quantize_per_tensor_values(x, fmt, rounding="stochastic", seed=3)
    w, t = slow_values(x, fmt, rounding="stochastic", seed=3)
    assert s == t and same(v, w)
    with sf.localcontext(fast_paths=False):                      # the switch is honoured
        assert fs._values_fast(x, sf.get_format(fmt), 1.0, sf.Policy.resolve()) is None
        v, s = fs.quantize_per_tensor_values(x, fmt)
    assert same(v, slow_values(x, fmt)[0])


def test_other_formats_and_refusals():
    x = tensor(6, 500)
    for fmt in ("fp6_e2m3", "fp4_e2m1", "fp16"):                # the general kernel
        v, s = fs.quantize_per_tensor_values(x, fmt)
        w, t = slow_values(x, fmt)
        assert s == t and same(v, w)
    with pytest.raises(ValueError, match="beyond float32"):
        fs.quantize_per_tensor_values(x, sf.Format("e8m3b100", 8, 3, bias=100))
    with pytest.raises(ValueError, match="not both"):
        fs.quantize_per_tensor_values(x, scale=2.0, margin=1)
    with pytest.raises(ValueError, match="scale"):
        fs.quantize_per_tensor_values(x, scale=-1.0)
    with pytest.raises(TypeError):
        fs.quantize_per_tensor_values(np.arange(4))


@pytest.mark.parametrize("algo", ["max", "most_recent"])
def test_delayed_scaling_values_follow_quantize(algo):
    """Step by step (a non-finite step included): the same values, scales used and
    amax history as DelayedScaling.quantize decoded."""
    a = fs.DelayedScaling("fp8_e4m3", history_len=3, algo=algo, margin=1)
    b = fs.DelayedScaling("fp8_e4m3", history_len=3, algo=algo, margin=1)
    for step in range(7):
        x = tensor(10 + step, 4000) * np.float32(2.0 ** (step - 3))
        if step == 4:
            x[11] = np.inf
        v, s, am = a.quantize_values(x, return_amax=True)
        codes, t = b.quantize(x)
        w = sf.from_bits(codes, "fp8_e4m3").astype(np.float32)
        assert s == t and np.array_equal(v, w, equal_nan=True)
        assert a.amax_history == b.amax_history and a.scale == b.scale
        assert am == float(np.max(np.abs(x)))


def test_module_examples_run():
    import doctest
    r = doctest.testmod(fs, raise_on_error=False)
    assert r.attempted >= 4 and r.failed == 0
