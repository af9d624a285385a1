"""softfloat.mx's fast kernels (float32 input, 1-D blocks: `_kernels.mx_fast.quantize_fast_chunk`
/ `quantize_fast_rows_chunk`, and `quantize_values`) against the general kernel
(`quantize_chunk`, run with ``fast_paths=False``), code for code, scale for scale and
value for value (bits, signed zeros included).

Inputs: every nonnegative value of the element format, every midpoint between
neighbours (and beyond the largest value), each also nudged one float32 ulp down and
up, with both signs, times block exponents 2**E from the float32 subnormal range
(scales clamped at 2**-127) to near float32's largest value; each block led by a
value that sets its scale (max_elem * 2**E and one ulp above it, and values just
below / above a power of two), in every rounding mode, every scale rule, blocks along
the last axis and along axis 0; plus float32 subnormals, zeros, NaN and infinity blocks, partial
blocks, 3-D arrays and random data. The general kernel is itself checked against the
Fraction reference in tests/test_mx.py."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import mx


# these tests check the fast paths themselves: they stay on even in a run with
# SOFTFLOAT_FAST_PATHS=0 (conftest.fast_paths_on)
pytestmark = pytest.mark.usefixtures("fast_paths_on")


MODES = list(sf.ROUNDING_MODES)
FORMATS = list(mx.BLOCK_FORMATS)


def _rules(fmt):
    return list(mx.NVFP4_SCALE_RULES) if fmt == "nvfp4" else list(mx.SCALE_RULES)


def _grid(bf):
    """Nonnegative element values, their midpoints and one point beyond the largest
    value, as float64 (element units)."""
    if bf.is_int:
        v = np.arange(128) / 64.0
    else:
        n = 1 << bf.elem.nbits
        with np.errstate(invalid="ignore"):
            v = sf.from_bits(np.arange(n, dtype=np.uint8), bf.elem)
        v = np.unique(v[np.isfinite(v) & (v >= 0)])
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([v, mid, [bf.max_elem * 1.25, bf.max_elem * 2]])


def _boundary_data(fmt, rng):
    """(rows, block) float32 array: each row one block (see the module docstring)."""
    bf = mx.block_format(fmt)
    k = bf.block
    g = _grid(bf)
    rows = []
    for E in (-150, -140, -133, -127, -126, -120, -60, -10, -3, 0, 1, 7, 60, 100, 111):
        base = (g * 2.0 ** E).astype(np.float32)
        ok = np.isfinite(base) & (base.astype(np.float64) == g * 2.0 ** E)
        vals = base[ok]
        vals = np.concatenate([vals, np.nextafter(vals, np.float32(0)),
                               np.nextafter(vals, np.float32(np.inf))])
        vals = vals[np.isfinite(vals)]
        vals = vals * np.where(rng.random(vals.size) < 0.5, -1, 1).astype(np.float32)
        # leads: amax at max_elem (rceil's ratio a power of two), one float32 ulp above
        # it (rceil's and ceil's next step), at, below and above a power of two (floor,
        # ceil, even), and beyond max_elem
        for lead in (bf.max_elem, bf.max_elem * (1 + 2.0 ** -23), 2.0 ** bf.emax_elem,
                     2.0 ** bf.emax_elem * (1 - 2.0 ** -20),
                     2.0 ** bf.emax_elem * (1 + 2.0 ** -23), bf.max_elem * 1.1):
            lv = np.float32(lead * 2.0 ** E)
            if not np.isfinite(lv):
                continue
            body = vals[np.abs(vals) <= np.abs(lv)] if lead < bf.max_elem * 1.05 else vals
            body = np.resize(body, -(-body.size // (k - 1)) * (k - 1)).reshape(-1, k - 1)
            rows.append(np.concatenate([np.full((body.shape[0], 1), lv, np.float32), body],
                                       axis=1))
    x = np.concatenate(rows).astype(np.float32)
    # float32 subnormals and zeros
    sub = np.array([0.0, -0.0, 2.0 ** -149, -(2.0 ** -149), 2.0 ** -140, 3 * 2.0 ** -149,
                    2.0 ** -126 - 2.0 ** -149] * k, np.float32)[:k]
    return np.concatenate([x, sub[None, :]])


def _compare(x, fmt, **kw):
    c1, s1 = mx.quantize(x, fmt, **kw)
    v1 = mx.quantize_values(x, fmt, **kw)
    with sf.localcontext(fast_paths=False):
        c2, s2 = mx.quantize(x, fmt, **kw)
    assert c1.dtype == c2.dtype and c1.shape == c2.shape and s1.shape == s2.shape
    nbad = int(np.count_nonzero(c1 != c2)) + int(np.count_nonzero(s1 != s2))
    ts = kw.get("tensor_scale")
    ax = kw.get("axis", -1)
    with np.errstate(invalid="ignore", over="ignore"):
        v2 = mx.dequantize(c2, s2, fmt, axis=ax, block=kw.get("block")).astype(np.float32)
    both_nan = np.isnan(v1) & np.isnan(v2)
    nbad += int(np.count_nonzero((v1.view(np.uint32) != v2.view(np.uint32)) & ~both_nan))
    assert nbad == 0, (fmt, kw, ts)
    return c1.size


def _fast_taken(x, fmt, **kw):
    p = mx._prepare(x, fmt, kw.get("axis", -1), kw.get("block"), kw.get("scale_rule"),
                    kw.get("rounding", "nearest_even"), kw.get("seed"), kw.get("tensor_scale"))
    return p.fast


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", MODES)
def test_fast_equals_general_on_boundaries(fmt, mode):
    rng = np.random.default_rng(FORMATS.index(fmt) * 10 + MODES.index(mode))
    x = _boundary_data(fmt, rng)
    n = 0
    for rule in _rules(fmt):
        tss = (None, float(np.float32(0.37)), mx.nvfp4_tensor_scale(x)) if fmt == "nvfp4" \
            else (None,)
        for ts in tss:
            kw = dict(scale_rule=rule, rounding=mode, seed=7)
            if ts is not None:
                kw["tensor_scale"] = ts
            if fmt == "nvfp4" and mode == "stochastic":
                # NVFP4 stochastic needs the exact quotient: the general kernel only
                assert not _fast_taken(x, fmt, **kw)
                continue
            assert _fast_taken(x, fmt, **kw)
            n += _compare(x, fmt, **kw)
            n += _compare(np.ascontiguousarray(x.T), fmt, axis=0, **kw)
    assert n > 0 or (fmt == "nvfp4" and mode == "stochastic")


@pytest.mark.parametrize("fmt", FORMATS)
def test_fast_equals_general_layouts(fmt):
    """Axes of a 3-D array, partial blocks, block overrides, NaN/inf blocks, random
    data over 2**+-60 (all modes but NVFP4 stochastic)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 37, 70)) * np.exp2(rng.integers(-60, 61, (5, 37, 1)))
         ).astype(np.float32)
    x[0, 0, :40] = 0.0
    x[1, 2, 3] = np.inf
    x[1, 5, 7] = -np.inf
    x[2, 4, 9] = np.nan
    x[3, :, 11] = np.nan
    for mode in MODES:
        if fmt == "nvfp4" and mode == "stochastic":
            continue
        for axis in (-1, 0, 1):
            for block in (None, 8, 128):
                _compare(x, fmt, axis=axis, block=block, rounding=mode, seed=1)
        # full power-of-two blocks along the last axis: the flat, tiled path of
        # quantize_fast_rows_chunk (tiles of 512 elements, a partial last tile)
        y = x[:, :, :64].reshape(5, -1)[:, :2336]
        for block in (None, 16, 1024):
            _compare(y, fmt, block=block, rounding=mode, seed=2)


def test_general_path_kept_for_float64_2d_ftz():
    x = np.ones((4, 64), np.float32)
    assert _fast_taken(x, "mxfp8_e4m3")
    assert not _fast_taken(x.astype(np.float64), "mxfp8_e4m3")
    assert not _fast_taken(x, "mxfp8_e4m3", block=(2, 32))
    with sf.localcontext(subnormals=False):
        assert not _fast_taken(x, "mxfp8_e4m3")
    with sf.localcontext(fast_paths=False):
        assert not _fast_taken(x, "mxfp8_e4m3")


def test_quantize_values_semantics():
    """quantize_values: dequantize's values without the NVFP4 tensor scale, float32;
    float64 input goes through quantize + dequantize."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    ts = mx.nvfp4_tensor_scale(x)
    c, s = mx.quantize(x, "nvfp4", tensor_scale=ts)
    v = mx.quantize_values(x, "nvfp4", tensor_scale=ts)
    assert v.dtype == np.float32
    assert np.array_equal(v.astype(np.float64), mx.dequantize(c, s, "nvfp4"))
    x64 = x.astype(np.float64)
    c, s = mx.quantize(x64, "mxfp6_e3m2", axis=0)
    assert np.array_equal(mx.quantize_values(x64, "mxfp6_e3m2", axis=0),
                          mx.dequantize(c, s, "mxfp6_e3m2", axis=0).astype(np.float32))


def test_scale_rule_defaults_and_errors():
    """scale_rule=None is "floor" for MX formats and "nearest" for NVFP4; an MX rule
    with NVFP4 (or an NVFP4 rule with MX) is a ValueError."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 64)).astype(np.float32) * 3
    for fmt in FORMATS:
        default = "nearest" if fmt == "nvfp4" else "floor"
        a = mx.quantize(x, fmt)
        b = mx.quantize(x, fmt, scale_rule=default)
        assert all(np.array_equal(u, w) for u, w in zip(a, b))
    for rule in mx.SCALE_RULES:
        with pytest.raises(ValueError, match="nvfp4"):
            mx.quantize(x, "nvfp4", scale_rule=rule)
        with pytest.raises(ValueError, match="nvfp4"):
            mx.quantize_values(x, "nvfp4", scale_rule=rule)
    for rule in mx.NVFP4_SCALE_RULES:
        with pytest.raises(ValueError, match="mxfp4"):
            mx.quantize(x, "mxfp4", scale_rule=rule)
