"""nn._round.round_values (value-to-value nearest-even rounding in one pass)
against its slow twin, softfloat.to_bits + from_bits (and numpy's float16 cast):
float32 inputs strided-exhaustively over all 2**32 patterns plus every pattern
next to each format's midpoints and range edges; float64 inputs near midpoints."""
import numpy as np
import pytest

import softfloat as sf
from nn._round import fits, round_values

FORMATS = ["fp16", "bf16", "fp8_e5m2", "tf32", sf.Format("e6m5", 6, 5)]


def slow(x, fmt):
    with np.errstate(over="ignore", invalid="ignore"):
        return sf.from_bits(sf.to_bits(x, fmt, "nearest_even"), fmt).astype(np.float32)


def same(a, b):
    return np.array_equal(a.view(np.uint32), b.view(np.uint32)) or (
        np.array_equal(np.isnan(a), np.isnan(b))
        and np.array_equal(a[~np.isnan(a)].view(np.uint32), b[~np.isnan(b)].view(np.uint32)))


def edges(fmt):
    """float32 values next to every midpoint and edge of fmt within its range."""
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    vals = sf.from_bits(np.arange(1 << f.nbits, dtype=np.uint64).astype(f.dtype), f)
    vals = vals[np.isfinite(vals)]
    vals = np.unique(np.abs(vals))
    mids = (vals[:-1] + vals[1:]) / 2
    top = vals[-1] + (vals[-1] - vals[-2]) / 2                 # max + ulp/2: overflow edge
    with np.errstate(over="ignore"):
        pts = np.concatenate([vals, mids, [top, 2 * vals[-1]]]).astype(np.float32)
    pts = pts.view(np.int32)
    near = (pts[:, None] + np.arange(-2, 3, dtype=np.int32)[None, :]).ravel()
    near = near[(near >= 0) & (near < 0x7F800000)].view(np.float32)
    return np.concatenate([near, -near])


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float32_inputs(fmt):
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    assert fits(f)
    x = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, edges(f), np.array([np.inf, -np.inf, np.nan, 0.0, -0.0],
                                              np.float32)])
    got = round_values(x, f)
    assert same(got, slow(x, f))
    assert np.signbit(round_values(np.array([-0.0, -1e-30], np.float32), f)).all()


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float64_inputs(fmt):
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    e = edges(f).astype(np.float64)
    rng = np.random.default_rng(0)
    wiggle = np.ldexp(1.0, rng.integers(-60, -25, e.size)) * rng.choice([-1, 1], e.size)
    x = np.concatenate([e, e * (1 + wiggle), rng.standard_normal(20000) * 10.0 **
                        rng.integers(-45, 40, 20000), [1e300, -1e300, 1e-300, np.inf]])
    assert same(round_values(x, f), slow(x, f))


@pytest.mark.parametrize("fmt", ["fp32", sf.Format("e6m23", 6, 23)], ids=str)
def test_24_bit_targets(fmt):
    # a float32 input into a target of float32's precision drops no bit: the
    # normal range comes back unchanged (odd significands included), the rest as
    # the slow twin says; float64 inputs are rounded as the slow twin rounds them
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    assert fits(f)
    x = np.arange(0, 1 << 32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, np.float32([1 + 2.0 ** -23, 3 - 2.0 ** -22, np.inf, -0.0])])
    assert same(round_values(x, f), slow(x, f))
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal(20000) * 10.0 ** rng.integers(-45, 40, 20000)
    assert same(round_values(x64, f), slow(x64, f))


def test_fp16_equals_numpy_cast_strided():
    x = np.arange(1, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    assert same(round_values(x, sf.FP16), want)


def test_refusals():
    assert not fits(sf.FP8_E4M3)           # fn: no infinities (overflow rules differ)
    with pytest.raises(ValueError):
        round_values(np.ones(3, np.float32), sf.FP8_E4M3)
    with pytest.raises(TypeError):
        round_values(np.ones(3, np.int32), sf.FP16)


def test_count_underflow_equals_numpy():
    from nn._round import count_underflow
    rng = np.random.default_rng(4)
    for dt in (np.float32, np.float64):
        x = (rng.standard_normal(10001) * 10.0 ** rng.integers(-12, 3, 10001)).astype(dt)
        x[::7] = 0
        x[5] = np.nan
        q = round_values(x, sf.FP16)
        nz = x != 0
        assert count_underflow(x, q) == (int(nz.sum()), int((nz & (q == 0)).sum()))
        assert 0 < count_underflow(x, q)[1] < count_underflow(x, q)[0]


def test_fused_update_count_equals_numpy():
    from nn.optim import _add_count
    rng = np.random.default_rng(6)
    w = rng.standard_normal(20000).astype(np.float32)
    d = (rng.standard_normal(20000) * 10.0 ** rng.integers(-12, 0, 20000)).astype(np.float32)
    d[::5] = 0
    d[3] = np.nan
    new = np.empty_like(w)
    nz, lost = _add_count(w, d, new)
    want = w + d
    assert np.array_equal(new, want, equal_nan=True)
    moved = d != 0
    assert (nz, lost) == (int(moved.sum()), int((moved & (want == w)).sum()))
    assert 0 < lost < nz
