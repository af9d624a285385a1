"""Silent wrong answers and silent casts in the numerics, each checked against an
independent answer: LPArray copies, means and scalar operands (exact rationals),
block formats compared by value, flush-to-zero in the caller (the same calls
without it), tininess of e8m0 (the exact reference), torch's fp8 casts (torch
itself), the torch CPU models' edge cases (torch), the order probe on deep and
value-dependent sums, argument checks, and the peak memory of large calls.
"""
from __future__ import annotations

import copy
import pickle
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import mx

import exact_reference as R


def _round_frac(q: Fraction, fmt, rounding="nearest_even") -> int:
    """The exact reference's encoding of the rational q (q != 0) in fmt."""
    if q == 0:
        return 0
    return R.round_exact(int(q < 0), abs(q), sf.get_format(fmt), rounding)[0]


# ---------------------------------------------------------------------------
# LPArray
# ---------------------------------------------------------------------------
def test_copy_and_deepcopy_do_not_share_the_buffer():
    a = sf.array(np.array([1.0, 2.0]), "bf16", acc="fp32")
    for c in (copy.copy(a), copy.deepcopy(a)):
        c[0] = 9.0
        assert np.asarray(a).tolist() == [1.0, 2.0]
        assert c.acc == "fp32" and c.format == sf.BF16


def test_mean_is_sum_over_n_with_one_rounding():
    # the count is not rounded into the array's format (fp8 e4m3 has no 1000)
    a = sf.array(np.full(1000, 0.01), "fp8_e4m3", acc="fp32")
    v = Fraction(float(np.asarray(a)[0]))
    assert int(np.mean(a).bits) == _round_frac(v * 1000 / 1000, "fp8_e4m3")
    assert float(np.mean(a)) == 0.009765625
    # fp16: 2048 / 2049 (the sum 2048 is exact in fp16; 2049 is not)
    b = sf.array(np.r_[np.ones(2048), 0.0], "fp16")
    assert float(np.mean(b)) == 0.99951171875
    assert int(np.mean(b).bits) == _round_frac(Fraction(2048, 2049), "fp16")


@pytest.mark.parametrize("fmt, acc", [("fp16", None), ("bf16", "fp32"), ("fp8_e5m2", "fp16"),
                                      ("fp8_e4m3", "fp32")])
def test_mean_against_exact_rationals(fmt, acc):
    rng = np.random.default_rng(7)
    x = sf.array(rng.standard_normal((5, 37)) * 3, fmt, acc=acc)
    mfmt = sf.get_format(fmt if acc is None else acc)
    for axis in (None, 0, 1, (0, 1)):
        got = np.mean(x, axis=axis)
        # the sum by the accumulation model (its own function), kept in its format
        b = x.bits if axis is not None and not isinstance(axis, tuple) else x.bits.reshape(-1)
        ax = -1 if axis is None or isinstance(axis, tuple) else axis
        s = sf.from_bits(sf.sum(b, fmt, ax, acc=acc), mfmt)
        n = x.size if ax == -1 and b.ndim == 1 else x.shape[axis]
        want = [_round_frac(Fraction(float(v)) / n, fmt) for v in np.ravel(s)]
        assert np.ravel(got.bits).tolist() == want, axis


def test_int_and_longdouble_scalars_round_once():
    z = sf.array(np.zeros(1), "bf16")
    big = 2 ** 60 + 2 ** 52 + 1                 # above the bf16 midpoint 2**60 + 2**52
    assert int((z + big).bits[0]) == _round_frac(Fraction(big), "bf16")
    assert float((z + big)[0]) == 2.0 ** 60 + 2.0 ** 53
    assert int((z - big).bits[0]) == _round_frac(Fraction(-big), "bf16")
    ld = np.longdouble(2 ** 60) + np.longdouble(2 ** 52) + np.longdouble(1)
    if np.finfo(np.longdouble).nmant >= 63:     # x86 extended precision holds it exactly
        assert int((z + ld).bits[0]) == _round_frac(Fraction(big), "bf16")
    for mode in ("toward_zero", "upward", "nearest_away"):
        with sf.localcontext(rounding=mode):
            got = int((z + (2 ** 70 + 1)).bits[0])
        assert got == _round_frac(Fraction(2 ** 70 + 1), "bf16", mode), mode
    assert float((z + 10 ** 400)[0]) == np.inf  # beyond float64: overflows in bf16


def test_full_like_refuses_non_numbers_and_array_equal_compares_values():
    a = sf.array(np.array([1.0, 2.0]), "bf16")
    for junk in ("1.5", None, True, np.bool_(False), [1.0], b"1"):
        with pytest.raises(TypeError, match="fill_value"):
            np.full_like(a, junk)
    assert np.asarray(np.full_like(a, 3)).tolist() == [3.0, 3.0]
    assert np.array_equal(a, np.array([1.0, 2.0]))
    assert np.array_equal(a, [1, 2])
    assert not np.array_equal(a, np.array([1.0, 2.5]))
    assert not np.array_equal(a, np.array([1.0]))
    assert np.array_equal(a, a.astype("fp16"))
    n = sf.array(np.array([np.nan]), "fp16")
    assert not np.array_equal(n, n) and np.array_equal(n, n, equal_nan=True)


# ---------------------------------------------------------------------------
# block formats by value
# ---------------------------------------------------------------------------
def test_pickled_block_format_quantizes_as_the_original():
    x = np.linspace(-3, 3, 64).astype(np.float32)
    for name, bf in mx.BLOCK_FORMATS.items():
        bf2 = pickle.loads(pickle.dumps(bf))
        assert bf2 == bf and bf2 is not bf
        for args in ((x, bf), (x, bf2)):
            codes, scales = mx.quantize(*args)
            v = mx.dequantize(codes, scales, args[1])
            np.testing.assert_array_equal(v, mx.dequantize(*mx.quantize(x, bf), bf))
        np.testing.assert_array_equal(mx.quantize_values(x, bf2), mx.quantize_values(x, bf))


def test_custom_block_formats_of_one_name_have_their_own_tables():
    e4 = mx.BlockFormat("custom", sf.FP8_E4M3, 32, sf.E8M0, sf.FP8_E4M3.max,
                        sf.FP8_E4M3.emax, sf.FP8_E4M3.precision)
    e5 = mx.BlockFormat("custom", sf.FP8_E5M2, 32, sf.E8M0, sf.FP8_E5M2.max,
                        sf.FP8_E5M2.emax, sf.FP8_E5M2.precision)
    code = np.array([0x7B], np.uint8)                # e5m2 57344, e4m3 352
    one = np.array([127], np.uint8)                  # scale 2**0
    assert mx.dequantize(code, one, e4)[0] == 352.0
    assert mx.dequantize(code, one, e5)[0] == 57344.0
    with pytest.raises(ValueError):                  # constants that are not the element's
        mx.BlockFormat("bad", sf.FP8_E4M3, 32, sf.E8M0, 500.0, 8, 4)
    with pytest.raises(ValueError):                  # a scale the kernels do not read
        mx.BlockFormat("bad", sf.FP8_E4M3, 32, sf.FP8_E5M2, 448.0, 8, 4)


# ---------------------------------------------------------------------------
# flush-to-zero in the caller changes nothing
# ---------------------------------------------------------------------------
def _entry_points():
    import nn
    from softfloat import fp8_scaling
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(4096) * 2.0 ** -120).astype(np.float32)
    x[::7] *= 2.0 ** 100                              # normals too
    sub32 = sf.to_bits(np.full(8, 1e-40, np.float32), "fp32")
    b16 = sf.to_bits(x.astype(np.float64) * 2.0 ** 110, "fp16")
    bb = sf.to_bits(x, "bf16")
    # inputs made here, not in the calls: numpy's own casts and arithmetic flush
    # under FTZ/DAZ (the caller's business, not softfloat's)
    x64 = x.astype(np.float64)
    xbig = x * np.float32(2.0 ** 100)
    return {
        "sum fp32": lambda: sf.sum(sub32, "fp32"),
        "sum bf16 acc fp32": lambda: sf.sum(bb, "bf16", acc="fp32"),
        "matmul bf16 acc fp32": lambda: sf.matmul(bb[:64].reshape(8, 8), bb[64:128]
                                                  .reshape(8, 8), "bf16", acc="fp32"),
        "to_bits fp16": lambda: sf.to_bits(x, "fp16"),
        "to_bits bf16": lambda: sf.to_bits(x, "bf16"),
        "add fp16": lambda: sf.add(b16, b16, "fp16"),
        "div bf16": lambda: sf.div(bb, bb[::-1].copy(), "bf16"),
        "fma fp16": lambda: sf.fma(b16, b16, b16, "fp16"),
        "sqrt bf16": lambda: sf.sqrt(bb, "bf16"),
        "LPArray mean": lambda: np.mean(sf.array(x, "bf16", acc="fp32")).bits,
        **{f"quantize_values {f}": (lambda f=f: mx.quantize_values(x, f))
           for f in ("mxfp8", "mxfp8_e5m2", "mxint8", "mxfp6_e2m3", "mxfp4", "nvfp4")},
        **{f"quantize {f}": (lambda f=f: mx.quantize(x, f)[0]) for f in ("mxfp8", "mxint8")},
        "nvfp4_values_nearest": lambda: mx.nvfp4_values_nearest(x.reshape(64, 64), 1)[0],
        "quantize_per_tensor": lambda: mx.quantize_per_tensor(xbig)[0],
        "nn Precision bf16 round": lambda: nn.Precision("bf16").round(x, sf.BF16),
        "nn Precision tf32 round": lambda: nn.Precision("bf16").round(x, sf.TF32),
        "quantize f64 bf16": lambda: sf.quantize(x64, sf.BF16, out_dtype=np.float32),
        "quantize f32 fp16": lambda: sf.quantize(xbig, sf.FP16),
        "quantize_per_tensor_values": lambda: fp8_scaling.quantize_per_tensor_values(xbig)[0],
        "nn decode tf32": lambda: nn.precision.decode(sf.to_bits(x, "tf32"), sf.TF32),
    }


def test_flush_to_zero_in_the_caller_changes_no_result():
    torch = pytest.importorskip("torch")
    fns = _entry_points()
    want = {k: f() for k, f in fns.items()}
    torch.set_flush_denormal(True)
    try:
        from softfloat._kernels.mx_elem import caller_flushes
        if not caller_flushes():
            pytest.skip("this host does not flush (no MXCSR)")
        got = {k: f() for k, f in fns.items()}
    finally:
        torch.set_flush_denormal(False)
    bad = []
    for k in fns:
        w, g = np.asarray(want[k]), np.asarray(got[k])
        if w.dtype.kind == "f":
            w, g = w.view(f"u{w.itemsize}"), g.view(f"u{g.itemsize}")
        if not np.array_equal(w, g):
            bad.append(k)
    assert not bad, f"flush-to-zero changed: {bad}"


# ---------------------------------------------------------------------------
# tininess of fnu formats
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("tin", ["after", "before"])
@pytest.mark.parametrize("fmt", ["e8m0", "e5m2fnu", "e4m3fnu"])
def test_fnu_tininess_matches_the_exact_reference(fmt, tin):
    f = sf.get_format(fmt)
    lo = 2.0 ** f.emin
    x = np.array([lo * t for t in (0.5, 0.75, 0.8, 0.9, 0.9375, 0.96875, 0.99, 1.0, 1.25)]
                 + [lo / 3, lo * 1.5])
    for mode in ("nearest_even", "nearest_away", "upward", "toward_zero"):
        bits, flg = sf.to_bits(x, f, mode, tininess=tin, return_flags=True)
        for v, b, fl in zip(x, bits, flg):
            wb, wf = R.round_exact(0, Fraction(float(v)), f, mode, tininess=tin)
            assert (int(b), int(fl)) == (wb, wf), (fmt, tin, mode, v)
    # mul and convert take the same rounding
    a = sf.to_bits(np.float64(lo * 2 ** 10 * 1.25), "e5m2fnu")
    b = sf.to_bits(np.float64(2.0 ** -10 * 0.75 * 2), "e5m2fnu")
    if fmt == "e5m2fnu":
        p = Fraction(float(sf.from_bits(a, f))) * Fraction(float(sf.from_bits(b, f)))
        got = sf.mul(a, b, f, tininess=tin, return_flags=True)
        assert (int(got[0]), int(got[1])) == R.round_exact(0, p, f, "nearest_even",
                                                           tininess=tin)
    c = sf.to_bits(np.float32(1.75 * 2.0 ** -128), "fp32")
    got = sf.convert(c, "fp32", "e8m0", tininess=tin, return_flags=True)
    want = R.round_exact(0, Fraction(float(np.float32(1.75 * 2.0 ** -128))), sf.E8M0,
                         "nearest_even", tininess=tin)
    assert (int(got[0]), int(got[1])) == want


def test_e8m0_example_of_the_issue():
    x = 1.75 * 2.0 ** -128
    assert int(sf.to_bits(x, "e8m0", tininess="before", return_flags=True)[1]) == 3
    assert int(sf.to_bits(x, "e8m0", tininess="after", return_flags=True)[1]) == 1


# ---------------------------------------------------------------------------
# torch's fp8 casts (torch_cpu platform)
# ---------------------------------------------------------------------------
_TORCH_FP8 = {"fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2",
              "fp8_e4m3fnuz": "float8_e4m3fnuz", "fp8_e5m2fnuz": "float8_e5m2fnuz",
              "e8m0": "float8_e8m0fnu"}


def _torch_cast(torch, u, name):
    return torch.from_numpy(u.view(np.float32)).to(getattr(torch, _TORCH_FP8[name])) \
        .view(torch.uint8).numpy()


def _structured_f32() -> np.ndarray:
    """Every float32 with 16 free high bits and each of several low patterns
    (0, half, half-1, all ones, 1: every rounding case of an 8-bit target), plus
    random patterns: about 1.4 million inputs, every sign, exponent and NaN kind."""
    hi = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    low = [0, 0x8000, 0x7FFF, 0xFFFF, 1, 0x4000, 0xC000, 0x0800, 0x0801, 0x07FF]
    parts = [hi | np.uint32(v) for v in low]
    # the rounding bits of fp8 (3 and 2 fraction bits) sit in the high half: vary
    # them with the low half set and clear
    rng = np.random.default_rng(11)
    parts.append(rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32))
    return np.concatenate(parts)


@pytest.mark.parametrize("name", sorted(_TORCH_FP8))
def test_torch_cpu_fp8_casts_match_torch(name):
    torch = pytest.importorskip("torch")
    from softfloat.platforms import platform_to_bits
    u = _structured_f32()
    got = platform_to_bits(u.view(np.float32), name, platform="torch_cpu")
    want = _torch_cast(torch, u, name)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(u[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]
    # float64 input: torch rounds a double tensor through float (float64_route)
    with np.errstate(invalid="ignore", over="ignore"):
        x64 = u.view(np.float32).astype(np.float64)[::7] * 1.000000001
    x32 = torch.from_numpy(x64).to(torch.float32)
    want64 = x32.to(getattr(torch, _TORCH_FP8[name])).view(torch.uint8).numpy()
    got64 = platform_to_bits(x64, name, platform="torch_cpu")
    assert np.array_equal(got64, want64)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_TORCH_FP8))
def test_torch_cpu_fp8_casts_match_torch_on_every_float32(name):
    torch = pytest.importorskip("torch")
    from softfloat.platforms import platform_to_bits
    step = 1 << 24                                    # 16M inputs (64 MB) at a time
    for start in range(0, 1 << 32, step):
        u = np.arange(start, start + step, dtype=np.uint64).astype(np.uint32)
        got = platform_to_bits(u.view(np.float32), name, platform="torch_cpu")
        want = _torch_cast(torch, u, name)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, [(hex(u[i]), hex(got[i]), hex(want[i])) for i in bad[:8]]


def test_platform_rules_are_looked_up_by_value():
    from softfloat.platforms import TORCH_CPU
    impostor = sf.Format("fp8_e4m3", 5, 2)            # an e5m2 format named fp8_e4m3
    assert TORCH_CPU.cast_rule(sf.FP8_E4M3) == "saturate"
    assert TORCH_CPU.cast_rule(impostor) == "ieee"
    assert TORCH_CPU.cast_rule("e8m0") == "exponent_field"


# ---------------------------------------------------------------------------
# torch CPU models and the probe
# ---------------------------------------------------------------------------
def test_torch_cpu_models_edge_cases_match_torch():
    torch = pytest.importorskip("torch")
    from softfloat import torch_models as tm
    x = sf.to_bits(np.float64(1.5), "fp16")
    t = torch.tensor(1.5, dtype=torch.float16)
    assert tm.torch_cpu_sum(x, "fp16").shape == tuple(torch.sum(t).shape) == ()
    assert tm.torch_cpu_mean(x, "fp16").shape == tuple(torch.mean(t).shape) == ()
    for dt, fm in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        b = torch.full((4,), -0.0, dtype=dt)
        want = torch.nn.functional.linear(torch.zeros(3, 0, dtype=dt),
                                          torch.zeros(4, 0, dtype=dt), b)
        want = want.view(torch.int16).numpy().astype(np.int64) & 0xFFFF
        got = tm.torch_cpu_matmul(np.zeros((3, 0), np.uint16), np.zeros((0, 4), np.uint16),
                                  fm, bias=np.full(4, 0x8000, np.uint16))
        assert got.tolist() == want.tolist()
        got0 = tm.torch_cpu_matmul(np.zeros((3, 0), np.uint16), np.zeros((0, 4), np.uint16),
                                   fm)
        w0 = torch.mm(torch.zeros(3, 0, dtype=dt), torch.zeros(0, 4, dtype=dt))
        assert got0.tolist() == w0.view(torch.int16).numpy().view(np.uint16).tolist()


def test_platform_sum_threads_are_bounded():
    from softfloat.platforms import platform_sum
    x = sf.to_bits(np.ones(40000), "fp16")
    for bad in (10 ** 9, 10 ** 8, 0, -1, True, 2.0):
        with pytest.raises(ValueError, match="threads"):
            platform_sum(x, "fp16", platform="torch_cpu", threads=bad)
        with pytest.raises(ValueError, match="threads"):
            sf.platforms.platform_mean(x, "fp16", platform="torch_cpu", threads=bad)
    assert float(sf.from_bits(platform_sum(x[:100], "fp16", platform="torch_cpu",
                                           threads=4096), "fp16")) == 100.0


def test_probe_of_a_deep_sequential_sum_and_of_a_sort_then_sum():
    import softfloat.probe as P
    n = 700
    r = P.probe_sum(lambda x: np.cumsum(x, dtype=np.float32)[-1], n, "fp32", precision=False)
    want = 0
    for i in range(1, n):
        want = (want, i)
    assert r.tree == want and r.fused_nodes == 0
    assert P.tree_leaves(r.tree) == list(range(n))
    with pytest.raises(P.ProbeError, match="depends on the values"):
        P.probe_sum(lambda x: np.cumsum(np.sort(x), dtype=np.float32)[-1], 8, "fp32")


# ---------------------------------------------------------------------------
# checked arguments
# ---------------------------------------------------------------------------
def test_fp8_scale_and_per_tensor_arguments():
    assert mx.fp8_scale(3.5e38) == float(np.float32(448.0 / 3.5e38))
    codes, s = mx.quantize_per_tensor(np.array([3.5e38, -1e38]))
    assert s > 0 and float(sf.from_bits(codes, "fp8_e4m3")[0]) == 448.0
    for bad in ("3.0", True, None, [1.0]):
        with pytest.raises(TypeError, match="amax"):
            mx.fp8_scale(bad)
    for bad in (np.inf, np.nan):
        with pytest.raises(ValueError, match="margin"):
            mx.fp8_scale(3.0, margin=bad)
    with pytest.raises(TypeError, match="margin"):
        mx.fp8_scale(3.0, margin="1")
    for bad in (True, "2.0"):
        with pytest.raises(TypeError, match="scale"):
            mx.quantize_per_tensor(np.ones(4), scale=bad)
    with pytest.raises(ValueError, match="margin"):
        mx.quantize_per_tensor(np.ones(4), scale=2.0, margin=1)
    c = sf.to_bits(np.ones(3), "fp8_e4m3")
    for bad, exc in ((0.0, ValueError), (-1.0, ValueError), ("2", TypeError),
                     (np.inf, ValueError), (0.1, ValueError), (True, TypeError)):
        with pytest.raises(exc, match="scale"):
            mx.dequantize_per_tensor(c, bad)
    assert mx.dequantize_per_tensor(c, 2.0).tolist() == [0.5] * 3
    with pytest.raises(ValueError, match="margin"):
        mx.DelayedScaling(margin=np.inf)


def test_axis_seed_and_byte_order():
    x = np.linspace(-1, 1, 64)
    with pytest.raises(TypeError, match="axis"):
        mx.quantize(x, "mxfp8", axis=None)
    for bad in (True, np.bool_(False)):
        with pytest.raises(TypeError, match="axis"):
            mx.quantize(x, "mxfp8", axis=bad)
    with pytest.raises(ValueError, match="seed"):
        sf.to_bits(x, "fp16", "stochastic", seed=-1)
    with pytest.raises(ValueError, match="seed"):
        mx.quantize(x, "mxfp8", rounding="stochastic", seed=-1)
    for dt in (">f4", ">f8", ">f2"):
        xb = x.astype(dt)
        assert np.array_equal(sf.to_bits(xb, "bf16"), sf.to_bits(x.astype(dt[1:]), "bf16"))
    b = sf.to_bits(x, "fp16")
    assert np.array_equal(sf.from_bits(b.astype(">u2"), "fp16"), sf.from_bits(b, "fp16"))


def test_precision_options_are_not_read_by_truthiness():
    import nn
    with pytest.raises(TypeError, match="master_weights"):
        nn.Precision("bf16", master_weights="no")
    with pytest.raises(TypeError, match="loss_scale"):
        nn.Precision("fp16", loss_scaling="static", loss_scale="1024")
    with pytest.raises(ValueError, match="loss_scale"):
        nn.Precision("fp16", loss_scale=-1.0)
    assert nn.Precision("bf16", master_weights=True).master_weights is True


# ---------------------------------------------------------------------------
# peak memory: at most twice the inputs and the output
# ---------------------------------------------------------------------------
def _peak(fn) -> int:
    fn()                                              # compiled, caches filled
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_peak_memory_of_large_calls():
    n = 1 << 21
    x = np.random.default_rng(5).standard_normal(n)
    b16 = sf.to_bits(x, "fp16")
    b8 = sf.to_bits(x, "fp8_e4m3")
    cases = {
        "convert fp16 -> fp8": (lambda: sf.convert(b16, "fp16", "fp8_e4m3"), 3 * n),
        "convert fp8 -> fp16": (lambda: sf.convert(b8, "fp8_e4m3", "fp16"), 3 * n),
        "to_bits f64 -> fp8": (lambda: sf.to_bits(x, "fp8_e4m3"), 9 * n),
        "add fp8": (lambda: sf.add(b8, b8, "fp8_e4m3"), 3 * n),
        "div fp8 with flags": (lambda: sf.div(b8, b8, "fp8_e4m3", return_flags=True), 4 * n),
        "fma fp8": (lambda: sf.fma(b8, b8, b8, "fp8_e4m3"), 4 * n),
        "sqrt fp8": (lambda: sf.sqrt(b8, "fp8_e4m3"), 2 * n),
        "div fp16": (lambda: sf.div(b16, b16, "fp16"), 6 * n),
    }
    over = {}
    for k, (fn, io) in cases.items():
        p = _peak(fn)
        if p > 2 * io:
            over[k] = round(p / io, 2)
    with sf.localcontext(fast_paths=False):
        p = _peak(lambda: sf.div(b16, b16, "fp16"))
        if p > 2 * 6 * n:
            over["div fp16, general kernels"] = round(p / (6 * n), 2)
    assert not over, f"peak memory / (inputs + output): {over}"


def test_blas_order_under_flush_to_zero_takes_the_integer_path():
    # fp32 sums of subnormal products (bf16 2^-70 * 2^-70 = 2^-140, exact in float32);
    # under FTZ the BLAS would give 0: the sequential order (allowed by the bounded
    # model) on the integer path instead, for encodings and for matmul_values alike
    torch = pytest.importorskip("torch")
    a = (2.0 ** -70 * (1 + np.arange(12).reshape(3, 4) / 8)).astype(np.float64)
    b = np.full((4, 2), 2.0 ** -70)
    ab, bb = sf.to_bits(a, "bf16"), sf.to_bits(b, "bf16")
    want = sf.matmul(ab, bb, "bf16", acc="fp32", order="sequential")
    assert (sf.from_bits(want, "fp32") > 0).all()
    wantv = sf.matmul_values(a, b, "bf16", acc="fp32", order="sequential")
    torch.set_flush_denormal(True)
    try:
        from softfloat._kernels.mx_elem import caller_flushes
        if not caller_flushes():
            pytest.skip("this host does not flush (no MXCSR)")
        got = sf.matmul(ab, bb, "bf16", acc="fp32", order="blas")
        gotv = sf.matmul_values(a, b, "bf16", acc="fp32", order="blas", check=False)
        gotseq = sf.matmul_values(a, b, "bf16", acc="fp32", check=False)
    finally:
        torch.set_flush_denormal(False)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(gotv, wantv)
    np.testing.assert_array_equal(gotseq, wantv)
