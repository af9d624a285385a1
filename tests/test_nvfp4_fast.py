"""NVFP4's threshold kernel (`softfloat._kernels.mx_nvfp4.nv_fast_chunk`: e2m1 elements in
nearest_even, nearest_away and toward_zero decided by exact float32 comparisons with
the rounding boundaries m * s * ts, no division) against the general kernel
(`quantize_chunk`: the exact integer quotient rounded by round_pack, run with
``fast_paths=False``; itself checked against the Fraction reference in
tests/test_mx.py): element codes, scale codes and value bits (signed zeros
included).

The inputs are built per (block scale s, tensor scale ts, scale rule): every block
is led by the largest float32 ``lead`` whose block scale is s (found by bisection on
the general kernel), followed by 15 test values of magnitude <= lead, with random
signs. The test values: every float32 within +-W float32 ulps of each rounding
boundary of the three modes (the e2m1 midpoints and values times s * ts, exact in
float64) and of 0, and a strided sweep of all float32 from 0 to lead; the slow test
takes every float32 of the binades from four binades below the smallest boundary up
to lead. Block scales from e4m3's smallest subnormal 2**-9 to its largest value 448,
tensor scales 1, 0.37, a float32 subnormal and a large one. Blocks along the last
axis (the contiguous path, full blocks of 16, and rows whose length is not a
multiple of 16: partial blocks), and along axis 0 (the column path)."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import mx


# these tests check the fast paths themselves: they stay on even in a run with
# SOFTFLOAT_FAST_PATHS=0 (conftest.fast_paths_on)
pytestmark = pytest.mark.usefixtures("fast_paths_on")


THR_MODES = ("nearest_even", "nearest_away", "toward_zero")
# e4m3 block scales: smallest subnormal, largest subnormal, 2**-6 (smallest normal),
# 1, 1.125, 1.875 * 2**-3, 13, 448 (largest)
SCALES = (2.0 ** -9, 7 * 2.0 ** -9, 2.0 ** -6, 1.0, 1.125, 1.875 / 8, 13.0, 448.0)
TENSOR_SCALES = (1.0, float(np.float32(0.37)), float(np.float32(3 * 2.0 ** -140)),
                 float(np.float32(1.3 * 2.0 ** 100)))
# element values and the midpoints, in units of the divisor s * ts
_POINTS = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6])


def _scale_codes(amax, ts, rule):
    """The general kernel's block scale code for blocks led by each amax (float32)."""
    x = np.zeros((amax.size, 16), np.float32)
    x[:, 0] = amax
    with sf.localcontext(fast_paths=False):
        return mx.quantize(x, "nvfp4", tensor_scale=ts, scale_rule=rule)[1][:, 0]


def _lead(s, ts, rule):
    """The largest float32 whose block scale (general kernel) is the e4m3 value s, or
    None when no float32 amax gives s."""
    code = int(sf.to_bits(np.array([s]), "fp8_e4m3")[0])
    lo, hi = 0, 0x7F7FFFFF              # float32 bit patterns, scale codes nondecreasing
    while hi - lo > 1:                  # largest bits with scale code <= code
        mid = (lo + hi) // 2
        c = _scale_codes(np.array([mid], np.uint32).view(np.float32), ts, rule)[0]
        if c <= code:
            lo = mid
        else:
            hi = mid
    lead = np.array([lo], np.uint32).view(np.float32)
    if _scale_codes(lead, ts, rule)[0] != code:
        return None
    return lead[0]


def _test_values(s, ts, lead, width, stride):
    """float32 magnitudes <= lead: +-width ulps around every point m * s * ts (and 0),
    and every stride-th float32 from 0 to lead."""
    top = int(np.float32(lead).view(np.uint32))
    pts = (_POINTS * s) * ts                                       # exact in float64
    fb = pts.astype(np.float32).view(np.uint32).astype(np.int64)
    near = (fb[:, None] + np.arange(-width, width + 1)[None, :]).reshape(-1)
    sweep = np.arange(0, top + 1, stride, dtype=np.int64)
    b = np.unique(np.concatenate([near, sweep]))
    b = b[(b >= 0) & (b <= top)]
    return b.astype(np.uint32).view(np.float32)


def _blocks(vals, lead, rng):
    """(n, 16) float32: lead, then 15 test values per row, random signs everywhere."""
    n = -(-vals.size // 15)
    body = np.resize(vals, n * 15).reshape(n, 15)
    x = np.concatenate([np.full((n, 1), lead, np.float32), body], axis=1)
    sign = np.where(rng.random(x.shape) < 0.5, np.float32(-1), np.float32(1))
    return (x * sign).astype(np.float32)


def _check(x, ts, rule, mode, axis=-1):
    """Fast (threshold kernel) against general: codes, scales, value bits; returns
    the number of elements compared."""
    kw = dict(tensor_scale=ts, scale_rule=rule, rounding=mode, axis=axis)
    p = mx._prepare(x, "nvfp4", axis, None, rule, mode, None, ts)
    assert p.fast
    c1, s1 = mx.quantize(x, "nvfp4", **kw)
    v1 = mx.quantize_values(x, "nvfp4", **kw)
    with sf.localcontext(fast_paths=False):
        c2, s2 = mx.quantize(x, "nvfp4", **kw)
    v2 = mx.dequantize(c2, s2, "nvfp4", axis=axis).astype(np.float32)
    assert np.array_equal(s1, s2), (rule, mode, ts)
    bad = np.flatnonzero(c1.reshape(-1) != c2.reshape(-1))
    assert bad.size == 0, (rule, mode, ts, x.reshape(-1)[bad[:5]], c1.reshape(-1)[bad[:5]],
                           c2.reshape(-1)[bad[:5]])
    nan = np.isnan(v1) & np.isnan(v2)
    vb = np.flatnonzero(((v1.view(np.uint32) != v2.view(np.uint32)) & ~nan).reshape(-1))
    assert vb.size == 0, (rule, mode, ts, x.reshape(-1)[vb[:5]], v1.reshape(-1)[vb[:5]],
                          v2.reshape(-1)[vb[:5]])
    return x.size


def _cases():
    for rule in mx.NVFP4_SCALE_RULES:
        for ts in TENSOR_SCALES:
            for s in SCALES:
                yield rule, ts, s


@pytest.mark.parametrize("mode", THR_MODES)
def test_threshold_kernel_is_taken(mode):
    x = np.ones((4, 64), np.float32)
    p = mx._prepare(x, "nvfp4", -1, None, None, mode, None, None)
    assert p.fast and mx._nv_thr_mode(p) >= 0
    for other in ("upward", "downward", "odd"):
        p = mx._prepare(x, "nvfp4", -1, None, None, other, None, None)
        assert mx._nv_thr_mode(p) < 0          # the division kernel keeps these


@pytest.mark.parametrize("mode", THR_MODES)
def test_threshold_kernel_near_boundaries(mode):
    rng = np.random.default_rng(THR_MODES.index(mode))
    n = found = 0
    for rule, ts, s in _cases():
        lead = _lead(s, ts, rule)
        if lead is None:
            continue
        found += 1
        vals = _test_values(s, ts, lead, width=2048, stride=1 << 15)
        x = _blocks(vals, lead, rng)
        n += _check(x, ts, rule, mode)                            # rows of full blocks
        n += _check(np.ascontiguousarray(x.T), ts, rule, mode, axis=0)   # columns
        # rows of 16 * 3 + 7 (four blocks of x, the last cut to its lead and 6 more):
        # partial blocks, the block-by-block path
        x4 = np.resize(x, (-(-x.shape[0] // 4) * 4, 16)).reshape(-1, 64)
        n += _check(np.ascontiguousarray(x4[:, :55]), ts, rule, mode)
    # every (rule, ts, s) has a lead except where s * ts * 6 is no float32's scale
    assert found >= len(SCALES) * len(TENSOR_SCALES) * 2 - 8, found
    assert n > 15_000_000


@pytest.mark.slow
@pytest.mark.parametrize("mode", THR_MODES)
def test_threshold_kernel_every_float32_of_the_binades(mode):
    """Every float32 from four binades below the smallest boundary (a quarter of the
    divisor) up to the block's lead, for 8 (s, ts) pairs and both scale rules."""
    rng = np.random.default_rng(10 + THR_MODES.index(mode))
    n = 0
    for rule in mx.NVFP4_SCALE_RULES:
        for ts in (1.0, float(np.float32(0.37)), float(np.float32(3 * 2.0 ** -140)),
                   float(np.float32(1.3 * 2.0 ** 100))):
            for s in (1.125, 7 * 2.0 ** -9):
                lead = _lead(s, ts, rule)
                if lead is None:
                    continue
                lo = np.float32(0.25 * s * ts * 2.0 ** -4)
                b0 = int(lo.view(np.uint32))
                b1 = int(np.float32(lead).view(np.uint32))
                for c0 in range(b0, b1 + 1, 15 << 20):
                    bits = np.arange(c0, min(b1 + 1, c0 + (15 << 20)), dtype=np.uint32)
                    x = _blocks(bits.view(np.float32), lead, rng)
                    n += _check(x, ts, rule, mode)
                    xc = np.resize(x, (-(-x.shape[0] // 64) * 64, 16))
                    n += _check(np.ascontiguousarray(xc.T), ts, rule, mode, axis=0)
    assert n > 100_000_000


@pytest.mark.parametrize("mode", THR_MODES)
def test_threshold_kernel_transposed_shapes(mode):
    """The shapes `softfloat.mx._nv_fast` runs through a transposed copy (rows shorter
    than a block; fewer than 16 columns) and their neighbours, on boundary data: the
    same codes, scales and values as the general kernel."""
    rng = np.random.default_rng(20 + THR_MODES.index(mode))
    ts = float(np.float32(0.37))
    lead = _lead(1.125, ts, "nearest")
    base = _blocks(_test_values(1.125, ts, lead, width=64, stride=1 << 22), lead, rng)
    flat = base.reshape(-1)
    n = 0
    for shape, axis in (((512, 10), -1), ((512, 10), 0), ((40, 3), -1), ((15, 10), -1),
                        ((128, 10), 0), ((3, 100, 7), 1), ((100, 5), 0), ((100, 15), 0),
                        ((100, 16), 0), ((64, 17), -1), ((7, 200), 0), ((16, 1), 0)):
        size = int(np.prod(shape))
        x = np.resize(np.roll(flat, size), size).reshape(shape)
        for rule in mx.NVFP4_SCALE_RULES:
            for block in (None, 8):
                kw = dict(tensor_scale=ts, scale_rule=rule, rounding=mode, axis=axis,
                          block=block)
                c1, s1 = mx.quantize(x, "nvfp4", **kw)
                v1 = mx.quantize_values(x, "nvfp4", **kw)
                with sf.localcontext(fast_paths=False):
                    c2, s2 = mx.quantize(x, "nvfp4", **kw)
                v2 = mx.dequantize(c2, s2, "nvfp4", axis=axis, block=block).astype(np.float32)
                assert c1.shape == c2.shape and s1.shape == s2.shape, (shape, axis)
                assert np.array_equal(c1, c2) and np.array_equal(s1, s2), (shape, axis, rule)
                assert np.array_equal(v1.view(np.uint32), v2.view(np.uint32)), (shape, axis)
                n += x.size
    assert n > 75_000


def test_nvfp4_values_nearest_equals_quantize_values():
    """nn's entry point: the values and tensor scale of nvfp4_tensor_scale +
    quantize_values, on its short path (2-D float32) and on the fallbacks (float64,
    3-D, non-contiguous views, a flush-to-zero context, a given tensor scale); bad
    tensor scales and non-finite input still raise."""
    rng = np.random.default_rng(30)
    x = (rng.standard_normal((96, 80)) * np.exp2(rng.integers(-30, 30, (96, 1)))
         ).astype(np.float32)
    x[3, :20] = 0.0
    x[5, 7] = 2.0 ** -149
    cases = [(x, 0), (x, 1), (x, -1), (x.T, 0), (x.T, -1), (x[:, :10], 0), (x[:50], -1),
             (np.zeros((32, 16), np.float32), 1), (x.astype(np.float64), 0),
             (x.reshape(2, 48, 80), -1)]
    for v, axis in cases:
        for ts in (None, float(np.float32(0.37))):
            got, gts = mx.nvfp4_values_nearest(v, axis, ts)
            want_ts = mx.nvfp4_tensor_scale(v) if ts is None else ts
            want = mx.quantize_values(v, "nvfp4", axis=axis, tensor_scale=want_ts)
            assert gts == want_ts and got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (v.shape, axis)
    with sf.localcontext(subnormals=False):
        got, gts = mx.nvfp4_values_nearest(x, 0)
        want = mx.quantize_values(x, "nvfp4", axis=0, tensor_scale=mx.nvfp4_tensor_scale(x))
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    with pytest.raises(ValueError):
        mx.nvfp4_values_nearest(x, 0, 0.37)          # not a float32 value
    with pytest.raises(TypeError):
        mx.nvfp4_values_nearest(x, 0, True)
    bad = x.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError):
        mx.nvfp4_values_nearest(bad, 0)
