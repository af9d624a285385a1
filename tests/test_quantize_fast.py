"""softfloat.quantize's value-to-value fast path (softfloat._kernels.quantize:
nearest-even rounding in one pass, values and sticky flags) against its slow twin,
the general path (to_bits + from_bits, with fast paths off), and numpy's float16
cast: float32 inputs strided-exhaustively over all 2**32 patterns plus every
pattern next to each format's midpoints and range edges; float64 inputs near
midpoints; the flags element by element."""
import numpy as np
import pytest

import softfloat as sf
from softfloat import conversions as C

FORMATS = ["fp16", "bf16", "fp8_e5m2", "tf32", sf.Format("e6m5", 6, 5)]


def fast(x, fmt, **kw):
    """quantize with its fast path (asserted to be the one taken) and the flags."""
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    a = np.asarray(x)
    assert C._quantize_fast_spec(a.dtype, f, sf.Policy.resolve(**kw)) is not None
    with sf.localcontext() as ctx, np.errstate(over="ignore", invalid="ignore"):
        v = sf.quantize(x, f, **kw)
        return v, ctx.flags


def slow(x, fmt, **kw):
    with sf.localcontext(fast_paths=False) as ctx, np.errstate(over="ignore", invalid="ignore"):
        v = sf.quantize(x, fmt, **kw)
        return v, ctx.flags


def same(a, b):
    """Equal bit for bit (NaNs included: the fast path hands them to the general one)."""
    return a.dtype == b.dtype and np.array_equal(a.view(f"u{a.itemsize}"),
                                                 b.view(f"u{b.itemsize}"))


def check(x, fmt, **kw):
    (v, fl), (w, gl) = fast(x, fmt, **kw), slow(x, fmt, **kw)
    assert same(v, w)
    assert fl == gl
    v32 = sf.quantize(x, fmt, out_dtype=np.float32, **kw)
    assert same(v32, w.astype(np.float32))


def check_flags_each(x, fmt, **kw):
    """The sticky flags of the fast path on each element alone equal the general
    path's per-element flags."""
    with sf.localcontext(fast_paths=False), np.errstate(over="ignore", invalid="ignore"):
        _, want = sf.quantize(x, fmt, return_flags=True, **kw)
    got = np.array([int(fast(x[i:i + 1], fmt, **kw)[1]) for i in range(x.size)], np.uint8)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (x[bad[:5]], got[bad[:5]], want[bad[:5]])


def edges(fmt):
    """float32 values next to every midpoint and edge of fmt within its range."""
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    vals = sf.from_bits(np.arange(1 << f.nbits, dtype=np.uint64).astype(f.dtype), f) \
        if f.nbits <= 16 else np.ldexp(1.0, np.arange(f.emin - f.mbits, f.emax + 1))
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


SPECIALS = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], np.float32)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float32_inputs(fmt):
    x = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, edges(fmt), SPECIALS])
    check(x, fmt)
    check(x, fmt, tininess="before")
    v, _ = fast(np.array([-0.0, -1e-30], np.float32), fmt)
    assert np.signbit(v).all()


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_float64_inputs(fmt):
    e = edges(fmt).astype(np.float64)
    rng = np.random.default_rng(0)
    wiggle = np.ldexp(1.0, rng.integers(-60, -25, e.size)) * rng.choice([-1, 1], e.size)
    x = np.concatenate([e, e * (1 + wiggle), rng.standard_normal(20000) * 10.0 **
                        rng.integers(-45, 40, 20000), [1e300, -1e300, 1e-300, np.inf],
                        SPECIALS.astype(np.float64)])
    check(x, fmt)
    check(x, fmt, tininess="before")


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flags_element_by_element(fmt, dtype):
    """Inexact, underflow (tininess after and before rounding), overflow, and the
    invalid flag of a signaling NaN (the general path's), each element alone."""
    f = sf.get_format(fmt)
    e = edges(f)
    # the neighbourhoods of the tininess thresholds, of the overflow edge, and a sample
    lo = np.float32(2.0 ** f.emin)
    sel = np.concatenate([e[np.abs(e) < 4 * lo][::3], e[np.abs(e) > f.max / 2][::2],
                          e[::max(1, e.size // 150)]])
    snan = np.array([0x7F800001], np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):
        x = np.concatenate([sel, SPECIALS, snan]).astype(dtype)
    if dtype == np.float64:
        x = np.concatenate([x, np.array([0x7FF0000000000001], np.uint64).view(np.float64)])
    check_flags_each(x, f)
    check_flags_each(x[np.abs(x) < 4 * lo], f, tininess="before")


@pytest.mark.parametrize("fmt", ["fp32", sf.Format("e6m23", 6, 23)], ids=str)
def test_24_bit_targets(fmt):
    # a float32 input into a target of float32's precision drops no bit: the
    # normal range comes back unchanged (odd significands included), the rest as
    # the slow twin says; float64 inputs are rounded as the slow twin rounds them
    x = np.arange(0, 1 << 32, 65537, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, np.float32([1 + 2.0 ** -23, 3 - 2.0 ** -22, np.inf, -0.0])])
    check(x, fmt)
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal(20000) * 10.0 ** rng.integers(-45, 40, 20000)
    check(x64, fmt)


def test_fp16_equals_numpy_cast_strided():
    x = np.arange(1, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    got = sf.quantize(x, sf.FP16, out_dtype=np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert same(got[~nan], want[~nan])


def test_large_arrays_in_chunks_and_strided_views():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((700, 300)) * 10.0 ** rng.integers(-9, 6, (700, 300)))
    check(x, "fp16")                                  # > MIN_PARALLEL: chunked
    check(x.astype(np.float32)[:, ::3], "bf16")       # a strided view
    check(np.float32(3.14159), "fp16")                # a 0-d input keeps its shape
    assert sf.quantize(np.float32(3.14159), "fp16").shape == ()


def test_other_policies_take_the_general_path():
    x = np.float32([1e-6, 7e4, 1.0001, -3e-8])
    for kw in (dict(rounding="toward_zero"), dict(ftz=True), dict(daz=True),
               dict(overflow="saturate"), dict(subnormals=False)):
        res = sf.Policy.resolve(**kw)
        assert C._quantize_fast_spec(x.dtype, sf.FP16, res) is None
        np.testing.assert_array_equal(sf.quantize(x, "fp16", **kw), slow(x, "fp16", **kw)[0])
    for fmt in ("fp8_e4m3", "fp8_e4m3fnuz"):      # no infinities: other overflow rules
        assert C._quantize_fast_spec(x.dtype, sf.get_format(fmt), sf.Policy.resolve()) is None


def test_out_dtype_is_checked():
    x = np.ones(3)
    with pytest.raises(TypeError, match="out_dtype"):
        sf.quantize(x, "fp16", out_dtype=np.int32)
    with pytest.raises(TypeError, match="out_dtype"):
        sf.quantize(x, "fp16", out_dtype="float16")
    with pytest.raises(ValueError, match="float32"):
        sf.quantize(x, sf.Format("e8m3b100", 8, 3, bias=100), out_dtype=np.float32)
    assert sf.quantize(x, "fp16", out_dtype="float32").dtype == np.float32
    assert sf.quantize(x, "fp16").dtype == np.float64
    # stochastic rounding and return_flags honour it too
    v, fl = sf.quantize(x, "bf16", "stochastic", seed=1, out_dtype=np.float32,
                        return_flags=True)
    assert v.dtype == np.float32 and fl.dtype == np.uint8


def test_flush_to_zero_in_the_caller_takes_the_general_path():
    """Under FTZ/DAZ in this thread's MXCSR the kernels refuse (their float
    arithmetic would flush) and the general path gives the same values."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4096) * 2.0 ** -120).astype(np.float32)
    x64 = x.astype(np.float64) * 2.0 ** -20           # made here: numpy flushes under DAZ
    want = [slow(x, "bf16")[0], slow(x64, "fp16")[0], slow(x, "tf32")[0]]
    torch.set_flush_denormal(True)
    try:
        from softfloat._kernels import hw
        if not hw.flushes():
            pytest.skip("this host does not flush (no MXCSR)")
        got = [sf.quantize(x, "bf16"), sf.quantize(x64, "fp16"), sf.quantize(x, "tf32")]
    finally:
        torch.set_flush_denormal(False)
    for g, w in zip(got, want):
        assert same(g, w)
