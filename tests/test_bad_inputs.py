"""The public API fed hypothesis-generated junk.

Every call either raises a clear TypeError or ValueError (a non-empty message; numpy's
AxisError is a ValueError) or returns a correct result. Never a crash, another
exception type, or a silent cast: where a call succeeds, its inputs were of an
accepted kind (the rule is restated here independently of softfloat/_validate.py)
and its result has the right shape and dtype, with values checked against numpy's
float16 where numpy computes the same thing (fp16, round to nearest even: float32
arithmetic rounded to half is correct for + - * /, as 24 >= 2 * 11 + 2).

Kept fast: a few dozen examples per property, kernels compiled once per test run.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import mx
from softfloat import strategies as sfst

SET = settings(max_examples=40, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])
CLEAR = (TypeError, ValueError)
FP16 = sf.FP16
FMTS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz", "e5m3", "tf32"]

# --------------------------------------------------------------------------
# Junk
# --------------------------------------------------------------------------
SHAPES = [(), (0,), (1,), (3,), (2, 3), (0, 4), (3, 1), (1, 3), (2, 1, 3)]
DTYPES = ["f8", "f4", "f2", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?", "c16",
          "O", "U4", "S4", "M8[s]", "m8[s]", ">f4", ">f8", ">u2"]


def _build(dtype: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65520.0, 6e-8])
        pick = rng.random(n) < 0.3
        v[pick] = rng.choice(specials, int(pick.sum()))
        with np.errstate(over="ignore"):
            return v.astype(dt).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        nat = dt.newbyteorder("=")
        return rng.integers(info.min, info.max, n, dtype=nat, endpoint=True).astype(dt) \
            .reshape(shape)
    if dt.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if dt.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).reshape(shape)
    if dt.kind == "O":
        pool = [1.5, None, 2, "x", True, 3.0]
        out = np.empty(n, object)
        for i in range(n):
            out[i] = pool[int(rng.integers(len(pool)))]
        return out.reshape(shape)
    if dt.kind in "US":
        return np.array([str(float(x)) for x in rng.standard_normal(n)], dt).reshape(shape)
    return np.arange(n).astype(dt).reshape(shape)


@st.composite
def host_arrays(draw, dtypes=DTYPES, shapes=SHAPES):
    return _build(draw(st.sampled_from(dtypes)), draw(st.sampled_from(shapes)),
                  draw(st.integers(0, 2**32 - 1)))


def _masked(x):
    return np.ma.masked_array(np.asarray(x, float), mask=np.zeros(np.shape(x), bool))


JUNK_SCALARS = [None, "fp16", "", 1, 0, -1, True, False, 1.5, float("nan"), 1j, b"x", [], [None],
                [1, 2.5], [True, 2.5], ["1.5"], [[1.0], [2.0, 3.0]], {"a": 1}, object(),
                np.float32(2.0), np.int64(3), np.uint16(0x3C00), np.bool_(True), 2**70,
                np.datetime64("2020-01-01"), _masked([1.0, 2.0]), (1.0, 2.0), [1.0, 2.0]]
junk = st.one_of(host_arrays(), st.sampled_from(JUNK_SCALARS))


def _call(f, *a, **k):
    """(True, result) or (False, error) for a clear error; anything else propagates."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return True, f(*a, **k)
    except CLEAR as e:
        assert str(e).strip(), f"{type(e).__name__} without a message"
        return False, e


# --------------------------------------------------------------------------
# The accepted kinds, restated
# --------------------------------------------------------------------------
def _float_leaves(x) -> bool:
    if isinstance(x, (list, tuple)):
        return all(_float_leaves(v) for v in x)
    return isinstance(x, (float, np.floating)) and np.dtype(type(x)).itemsize <= 8


def values_ok(x) -> bool:
    """Accepted by to_bits/quantize/array: float16/32/64 arrays or scalars, Python
    floats, non-ragged lists of floats; never masked arrays, ints or bools."""
    if isinstance(x, np.ma.MaskedArray):
        return False
    if isinstance(x, (np.ndarray, np.generic)):
        # either byte order (a big-endian array is converted exactly)
        return x.dtype.newbyteorder("=") in (np.float16, np.float32, np.float64)
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)):
        if not _float_leaves(x):
            return False
        try:
            np.asarray(x, float)
        except ValueError:
            return False                            # ragged
        return True
    return False


def bits_ok(x, fmt) -> bool:
    """Accepted as encodings: fmt's storage dtype (values in range), or a Python int
    in range; never masked arrays, bools, floats or other integer dtypes."""
    f = sf.get_format(fmt)
    if isinstance(x, np.ma.MaskedArray):
        return False
    if type(x) is int:
        return 0 <= x < (1 << f.nbits)
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.newbyteorder("=") == f.dtype:
        return x.size == 0 or int(np.max(x)) < (1 << f.nbits)
    return False


def _fp16_close(got_bits, want_f16) -> None:
    want = np.asarray(want_f16, np.float16)
    got = np.asarray(got_bits).view(np.float16)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


# --------------------------------------------------------------------------
# Values in: to_bits, quantize, array
# --------------------------------------------------------------------------
@SET
@given(junk, st.sampled_from(FMTS))
def test_to_bits_quantize_array(x, fmt):
    f = sf.get_format(fmt)
    for fn in (sf.to_bits, sf.quantize, sf.array):
        ok, r = _call(fn, x, fmt)
        assert ok == values_ok(x), (fn.__name__, type(x), getattr(x, "dtype", None), r)
        if not ok:
            continue
        shape = np.shape(np.asarray(x, float))
        if fn is sf.array:
            assert isinstance(r, sf.LPArray) and r.shape == shape and r.format == f
            r = r.bits
        assert np.shape(r) == shape
        assert np.asarray(r).dtype == (np.float64 if fn is sf.quantize else f.dtype)
        if fmt == "fp16" and fn is sf.to_bits:
            with np.errstate(over="ignore"):
                want = np.asarray(x).astype(np.float64).astype(np.float16)
            _fp16_close(r, want)


# --------------------------------------------------------------------------
# Encodings in: from_bits, convert
# --------------------------------------------------------------------------
bits_or_junk = st.one_of(host_arrays(dtypes=["u1", "u2", "u4", "i4", "u8", "f2", "?"]),
                         st.sampled_from(JUNK_SCALARS + [0x3C00, 0x1FFFF, -1]))


@SET
@given(bits_or_junk, st.sampled_from(FMTS))
def test_from_bits_and_convert(x, fmt):
    f = sf.get_format(fmt)
    ok, r = _call(sf.from_bits, x, fmt)
    assert ok == bits_ok(x, fmt), (type(x), getattr(x, "dtype", None), r)
    if ok:
        assert r.dtype == np.float64 and r.shape == np.shape(x)
        if f is FP16:
            want = np.asarray(x, np.uint16).view(np.float16).astype(np.float64)
            assert np.array_equal(r, want, equal_nan=True)
    ok2, r2 = _call(sf.convert, x, fmt, "bf16")
    assert ok2 == ok, r2
    if ok2:
        assert r2.dtype == np.uint16 and r2.shape == np.shape(x)


# --------------------------------------------------------------------------
# Arithmetic: dtypes and broadcasting
# --------------------------------------------------------------------------
@st.composite
def fp16_operand(draw):
    """Mostly valid fp16 encodings of some shape, sometimes junk."""
    if draw(st.integers(0, 4)) == 0:
        return draw(junk)
    shape = draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(0, 1 << 16, shape, dtype=np.uint16, endpoint=False)


def _bshape(*xs):
    try:
        return np.broadcast_shapes(*[np.shape(x) for x in xs])
    except ValueError:
        return None


BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
CMP = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ne": np.not_equal, "ge": np.greater_equal}


@SET
@given(fp16_operand(), fp16_operand(), st.sampled_from(sorted(BIN) + sorted(CMP)))
def test_binary_and_comparisons(a, b, name):
    fn = getattr(sf, name)
    ok, r = _call(fn, a, b, "fp16")
    valid = bits_ok(a, "fp16") and bits_ok(b, "fp16") and _bshape(a, b) is not None
    assert ok == valid, (name, np.shape(a), np.shape(b), r)
    if not ok:
        return
    assert r.shape == _bshape(a, b)
    ha = np.asarray(a, np.uint16).view(np.float16)
    hb = np.asarray(b, np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        if name in BIN:
            _fp16_close(r, BIN[name](ha.astype(np.float32), hb.astype(np.float32)))
        else:
            assert r.dtype == np.bool_ and np.array_equal(r, CMP[name](ha, hb))


@SET
@given(fp16_operand(), fp16_operand(), fp16_operand())
def test_fma_sqrt(a, b, c):
    ok, r = _call(sf.fma, a, b, c, "fp16")
    valid = all(bits_ok(x, "fp16") for x in (a, b, c)) and _bshape(a, b, c) is not None
    assert ok == valid, r
    if ok:
        assert r.shape == _bshape(a, b, c) and r.dtype == np.uint16
    ok, r = _call(sf.sqrt, a, "fp16")
    assert ok == bits_ok(a, "fp16"), r
    if ok:
        with np.errstate(all="ignore"):
            _fp16_close(r, np.sqrt(np.asarray(a, np.uint16).view(np.float16).astype(np.float32)))


# --------------------------------------------------------------------------
# Accumulation: sum, dot, matmul
# --------------------------------------------------------------------------
axes = st.one_of(st.none(), st.integers(-4, 4), st.sampled_from([1.0, "0", True, (0,), [0]]))


@SET
@given(fp16_operand(), axes)
def test_sum_axis(x, axis):
    ok, r = _call(sf.sum, x, "fp16", axis)
    valid = bits_ok(x, "fp16") and (axis is None or (type(axis) is int and np.ndim(x) > 0
                                                     and -np.ndim(x) <= axis < np.ndim(x)))
    if ok and bits_ok(x, "fp16") and np.ndim(x) == 0 and axis in (0, -1):
        valid = True                                 # a 0-d array is one term
    assert ok == valid, (np.shape(x), axis, r)
    if ok and valid and np.ndim(x):
        want = np.sum(np.zeros(np.shape(x)), axis=axis)
        assert np.shape(r) == np.shape(want)


@SET
@given(fp16_operand(), fp16_operand())
def test_matmul_and_dot_shapes(a, b):
    ok, r = _call(sf.matmul, a, b, "fp16")
    both = bits_ok(a, "fp16") and bits_ok(b, "fp16")
    try:
        want = np.matmul(np.zeros(np.shape(a)), np.zeros(np.shape(b))) if both else None
    except ValueError:
        want = None
    assert ok == (want is not None), (np.shape(a), np.shape(b), r)
    if ok:
        assert np.shape(r) == np.shape(want) and r.dtype == np.uint16
        ha = np.asarray(a, np.uint16).view(np.float16).astype(np.float64)
        hb = np.asarray(b, np.uint16).view(np.float16).astype(np.float64)
        finite = np.isfinite(ha).all() and np.isfinite(hb).all()
        if finite and np.ndim(a) and np.ndim(b) and np.shape(a)[-1] == 1:
            # one term per output: the product rounded once (exact in float64)
            with np.errstate(all="ignore"):
                _fp16_close(r, np.matmul(ha, hb).astype(np.float16))
    ok, r = _call(sf.dot, a, b, "fp16")
    valid = both and np.ndim(a) == 1 and np.ndim(b) == 1 and np.shape(a) == np.shape(b)
    assert ok == valid, (np.shape(a), np.shape(b), r)


# --------------------------------------------------------------------------
# Options: one validation, real booleans
# --------------------------------------------------------------------------
OPTION_JUNK = st.sampled_from([None, True, False, np.True_, "yes", "no", "", 0, 1, 2, 1.0, -1,
                               "nearest_even", "rtz", "bogus", "propagate", "canonical",
                               "ieee", "saturate", "nan", "after", "before", 0x7E00, 0x7C00,
                               33, 16, np.int64(8), [True], object()])
NAN_ENC = {0x7E00, 0x7E01, 0xFE00, 0x7FFF, 0x7C01}


def option_ok(name, v) -> bool:
    if v is None:
        return name != "return_flags"
    isbool = isinstance(v, (bool, np.bool_))
    isint = isinstance(v, (int, np.integer)) and not isbool
    if name in ("subnormals", "ftz", "daz", "return_flags"):
        return isbool
    if name == "rounding":
        return isinstance(v, str) and v in sf.ROUNDING_MODES + ("rtz",) and v != "stochastic"
    if name == "overflow":
        return v in ("ieee", "saturate") if isinstance(v, str) else False
    if name == "tininess":
        return isinstance(v, str) and v in ("after", "before")
    if name == "nan":
        return (isinstance(v, str) and v in ("propagate", "canonical")) or (
            isint and int(v) in NAN_ENC)
    if name == "sr_bits":
        return isint and 1 <= int(v) <= 32
    raise AssertionError(name)


OPTIONS = ["rounding", "subnormals", "ftz", "daz", "overflow", "tininess", "nan", "sr_bits",
           "return_flags"]


@SET
@given(st.sampled_from(OPTIONS), OPTION_JUNK)
def test_option_values(name, v):
    x = np.array([1.0, 2.0**-20, 70000.0])
    b = sf.to_bits(x, "fp16")
    calls = [lambda: sf.to_bits(x, "fp16", **{name: v}),
             lambda: sf.add(b, b, "fp16", **{name: v}),
             lambda: sf.convert(b, "fp16", "bf16", **{name: v}) if name != "nan" or v is None
             or isinstance(v, str) else sf.add(b, b, "fp16", nan=v)]
    if name != "rounding" and not (name == "nan" and isinstance(v, (int, np.integer))):
        # (an int NaN pattern is one of the accumulator's format, fp32 here)
        calls.append(lambda: sf.sum(b, "fp16", acc="fp32", **{name: v}))
    for call in calls:
        ok, r = _call(call)
        assert ok == option_ok(name, v), (name, v, r)
    if name != "return_flags":
        ok, r = _call(lambda: sf.localcontext(**{name: v}).__enter__())
        if ok:
            sf.setcontext(sf.Context())
        # a Context field: None only where it means "not set"; any int NaN pattern
        # (checked against the format where it is used)
        if v is None:
            want = name in ("ftz", "daz", "overflow")
        else:
            want = (option_ok(name, v) or (name == "overflow" and v == "nan")
                    or (name == "nan" and isinstance(v, (int, np.integer))
                        and not isinstance(v, (bool, np.bool_))))
        assert ok == want, (name, v, r)


# --------------------------------------------------------------------------
# Names and formats
# --------------------------------------------------------------------------
@SET
@given(st.one_of(st.text(max_size=12), st.from_regex(r"(fp\d{1,2}_)?e\d{1,2}m\d{1,2}(fn|fnuz)?",
                                                      fullmatch=True),
                 st.sampled_from([None, 16, 1.5, b"fp16", "FP16 ", "fp32_e4m3", "fp9_e5m3",
                                  "e4m3fnu", "e0m3", "bfloat16", "fp8_e4m3fn"])))
def test_format_names(name):
    ok, f = _call(sf.get_format, name)
    if not ok:
        return
    assert isinstance(name, str) and isinstance(f, sf.Format)
    import re
    m = re.fullmatch(r"fp(\d+)_e(\d+)m(\d+)(fn|fnuz)?", name.strip().lower())
    if m and f.name not in ("fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz"):
        assert int(m.group(1)) == f.nbits == 1 + int(m.group(2)) + int(m.group(3))


field = st.one_of(st.integers(-3, 60), st.sampled_from([True, np.int16(5), np.int8(2),
                                                        np.uint8(7), 5.0, "5", None, 2**70,
                                                        np.int64(-2000), np.float32(3)]))


@SET
@given(field, field, st.one_of(st.none(), field, st.integers(-1200, 1200)),
       st.sampled_from(["ieee", "fn", "fnuz", "x", None]))
def test_format_fields(E, M, bias, kind):
    ok, f = _call(sf.Format, "t", E, M, kind, bias)
    if not ok:
        return
    for v in (E, M) + (() if bias is None else (bias,)):
        assert isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
    assert all(type(v) is int for v in f.params)
    assert 2 <= f.ebits <= 8 and 1 <= f.mbits <= 23
    # every value of the format is a float64: the extremes decode exactly
    assert 0 < f.max < np.inf and f.max == float(f._value_of(f.max_bits))
    assert f.smallest_subnormal >= 2.0 ** -1022
    top = sf.from_bits(np.array([f.max_bits, 1], f.dtype), f)
    assert top[0] == f.max and top[1] == f.smallest_subnormal


# --------------------------------------------------------------------------
# array reductions, platform_op, strategies' factories
# --------------------------------------------------------------------------
@SET
@given(st.sampled_from([(2, 3), (4,), (), (0, 2)]), axes,
       st.sampled_from([{}, {"keepdims": True}, {"keepdims": "yes"}, {"dtype": np.float32},
                        {"initial": 1.0}, {"out": np.zeros(3)}, {"where": True}]))
def test_lparray_sum_arguments(shape, axis, kw):
    a = sf.array(np.ones(shape), "fp16")
    ok, r = _call(np.sum, a, axis=axis, **kw)
    try:
        want = np.sum(np.ones(shape), axis=axis, **{k: v for k, v in kw.items()
                                                    if k != "out"})
        numpy_ok = "out" not in kw and kw.get("keepdims", False) in (True, False)
    except (TypeError, ValueError):
        numpy_ok = False
    if ok:
        assert numpy_ok and not any(k in kw for k in ("dtype", "initial", "out"))
        assert r.shape == np.shape(want) and np.array_equal(np.asarray(r), want)


PLAT_OPS = ["add", "sub", "mul", "div", "sqrt", "neg", "abs", "relu", "fma", "addcmul",
            "addcdiv", "lerp", "bogus", 3, None]


@SET
@given(st.sampled_from(PLAT_OPS), st.lists(fp16_operand(), min_size=0, max_size=4),
       st.sampled_from(["ieee", "torch_cuda", "x86_sse", "riscv", "bogus", None, 7]))
def test_platform_op(op, operands, platform):
    ok, r = _call(sf.platform_op, op, *operands, fmt="fp16", platform=platform)
    if ok:
        assert op in sf.PLATFORM_OPS and len(operands) == sf.PLATFORM_OPS[op]
        # operands are fp16 encodings, or scalars read as values (Python or
        # signed numpy float/int, never bool), with at least one array of encodings
        arrays = [x for x in operands if not _platform_scalar(x)]
        assert arrays and all(bits_ok(x, "fp16") for x in arrays)
        assert r.shape == _bshape(*operands) and r.dtype == np.uint16


def _platform_scalar(x) -> bool:
    """platform_op's documented scalar operand: a Python or numpy float or signed int."""
    if isinstance(x, (bool, np.bool_, np.ndarray)):
        return False
    return isinstance(x, (float, int, np.floating, np.signedinteger))


@pytest.mark.parametrize("factory, args, kw", [
    (sfst.encodings, ("fp16",), {"allow_nan": "yes"}),
    (sfst.encodings, ("fp17",), {}),
    (sfst.encodings, (16,), {}),
    (sfst.encodings, ("fp16",), {"min_value": "0"}),
    (sfst.encodings, ("fp16",), {"min_value": float("nan")}),
    (sfst.values, ("bf16",), {"allow_subnormal": 1}),
    (sfst.values, ("fp32_e4m3",), {}),
    (sfst.arrays, ("fp16", (2,)), {"bogus": 1}),
    (sfst.arrays, ("fp16", (2,)), {"elements": [1, 2]}),
    (sfst.midpoints, ("fp16",), {"include_overflow": "no"}),
    (sfst.midpoints, (None,), {}),
])
def test_strategy_factories_refuse_junk(factory, args, kw):
    with pytest.raises(CLEAR):
        factory(*args, **kw)


def test_datetime_and_object_arrays_refused_everywhere():
    """A few named kinds on every entry point at once (no hypothesis)."""
    for x in (np.arange(3).astype("M8[s]"), np.array([1.5, None], object),
              np.array(["1.5"]), np.array([1 + 2j]), np.array([True])):
        for call in (lambda: sf.to_bits(x, "fp16"), lambda: sf.from_bits(x, "fp16"),
                     lambda: sf.add(x, x, "fp16"), lambda: sf.sum(x, "fp16"),
                     lambda: sf.matmul(x, x, "fp16"), lambda: sf.array(x, "fp16"),
                     lambda: sf.platform_op("add", x, x, fmt="fp16")):
            ok, r = _call(call)
            assert not ok, (x.dtype, r)


# --------------------------------------------------------------------------
# MX, per-tensor scaling, probe, platform models, nn recipes, LPArray, and the
# environment switches. The rule is the same: a clear TypeError/ValueError (the
# probe: also its ProbeError) or a correct result, never a silent cast. A
# ``slow`` variant runs many more examples of each.
# --------------------------------------------------------------------------
SLOW = settings(SET, max_examples=600)
MX_NAMES = ["mxfp8", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "mxint8", "nvfp4", "bogus", 3, None]
AXIS_JUNK = st.sampled_from([-1, 0, 1, 2, -3, None, True, False, np.bool_(True), 1.0, "0",
                             (0, 1), [0], np.int64(0)])
SCALAR_JUNK = st.sampled_from([1.0, 2, 0.0, -1.0, np.inf, np.nan, 3.5e38, 1e300, "3.0", "1",
                               True, None, [1.0], np.float32(448.0), np.int8(3),
                               np.array(2.0), np.array([2.0]), b"2", 1j, 2 ** 200])


def _axis_ok(axis, ndim) -> bool:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        return False
    return -ndim <= axis < ndim


def _mx_walk(x, name, axis, seed, rounding):
    for fn in (mx.quantize, mx.quantize_values):
        ok, r = _call(fn, x, name, axis=axis, seed=seed, rounding=rounding)
        if not ok:
            continue
        assert name in MX_NAMES[:6] and values_ok(x) and np.ndim(x) >= 1
        assert _axis_ok(axis, np.ndim(x))
        assert seed is None or (isinstance(seed, (int, np.integer))
                                and not isinstance(seed, (bool, np.bool_)) and seed >= 0)
        codes = r[0] if fn is mx.quantize else r
        assert codes.shape == np.shape(x)
        if fn is mx.quantize:
            v = mx.dequantize(*r, name, axis=axis)
            q = mx.quantize_values(x, name, axis=axis, seed=seed, rounding=rounding)
            if rounding != "stochastic":
                with np.errstate(over="ignore", invalid="ignore"):
                    np.testing.assert_array_equal(v.astype(np.float32), q)


mx_args = (st.one_of(host_arrays(shapes=[(1,), (3,), (2, 3), (40,), (2, 33)]),
                     st.sampled_from(JUNK_SCALARS)),
           st.sampled_from(MX_NAMES), AXIS_JUNK,
           st.sampled_from([None, 0, 7, -1, True, 2.5, "1", np.int64(3)]),
           st.sampled_from(["nearest_even", "stochastic", "toward_zero", "bogus", None, 1]))


@SET
@given(*mx_args)
def test_mx_junk(x, name, axis, seed, rounding):
    _mx_walk(x, name, axis, seed, rounding)


@pytest.mark.slow
@SLOW
@given(*mx_args)
def test_mx_junk_many(x, name, axis, seed, rounding):
    _mx_walk(x, name, axis, seed, rounding)


def _real(v) -> bool:
    if isinstance(v, np.ndarray):
        return v.ndim == 0 and v.dtype.kind in "fiu"
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_))


def _f32_positive(v) -> bool:
    if not _real(v):
        return False
    t = float(np.asarray(v)[()]) if abs(float(np.asarray(v, dtype=object)[()])) < 1e308 \
        else np.inf
    return bool(np.isfinite(t) and t > 0 and float(np.float32(t)) == t)


def _scaling_walk(a, m, p):
    ok, r = _call(mx.fp8_scale, a, margin=m, previous=p)
    if ok:
        assert _real(a) and _real(m) and _f32_positive(p)
        assert np.isfinite(float(np.asarray(m, dtype=float)))
        assert r > 0 and float(np.float32(r)) == r
    ok, r = _call(mx.quantize_per_tensor, np.array([1.0, -3.0, 0.5]), scale=a)
    if ok:
        assert a is None or (_f32_positive(a) and r[1] == float(np.asarray(a)[()]))
    c = sf.to_bits(np.array([1.0, 2.0]), "fp8_e4m3")
    ok, r = _call(mx.dequantize_per_tensor, c, a)
    if ok:
        assert _f32_positive(a)
        assert r.tolist() == [1.0 / float(np.asarray(a)[()]), 2.0 / float(np.asarray(a)[()])]


@SET
@given(SCALAR_JUNK, SCALAR_JUNK, SCALAR_JUNK)
def test_per_tensor_scaling_junk(a, m, p):
    _scaling_walk(a, m, p)


@pytest.mark.slow
@SLOW
@given(SCALAR_JUNK, SCALAR_JUNK, SCALAR_JUNK)
def test_per_tensor_scaling_junk_many(a, m, p):
    _scaling_walk(a, m, p)


@SET
@given(st.sampled_from([np.sum, lambda x: "x", lambda x: np.array([1.0, 2.0]), None, 3,
                        lambda x: float(np.sort(x).sum())]),
       st.sampled_from([1, 2, 5, 0, -1, True, 2.0, "4", 10 ** 12]),
       st.sampled_from(["fp32", "fp16", "fp64", "fp8_e4m3", "bogus", None]),
       st.sampled_from([None, 1, 0, -3, True, 2.5]),
       st.sampled_from([None, 5, 0, -1]))
def test_probe_junk(fn, n, fmt, group, max_calls):
    import softfloat.probe as P
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = P.probe_sum(fn, n, fmt, group=group, max_calls=max_calls, precision=False)
    except CLEAR + (P.ProbeError,) as e:
        assert str(e).strip()
        return
    assert isinstance(n, int) and not isinstance(n, bool) and 1 <= n
    assert sorted(P.tree_leaves(r.tree)) == list(range(n))


PLATFORMS = ["torch_cpu", "torch_cuda", "ieee", "numpy", "bogus", None, 3]
PLAT_FMTS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "e8m0", "fp8_e4m3fnuz", "bogus", None]


@SET
@given(st.one_of(host_arrays(shapes=[(), (3,), (2, 3)]), st.sampled_from(JUNK_SCALARS)),
       st.sampled_from(PLAT_FMTS), st.sampled_from(PLATFORMS),
       st.sampled_from([1, 2, 4096, 4097, 0, -1, True, 2.0, 10 ** 9, None]))
def test_platform_models_junk(x, fmt, platform, threads):
    from softfloat.platforms import platform_mean, platform_sum, platform_to_bits
    ok, r = _call(platform_to_bits, x, fmt, platform)
    if ok:
        assert values_ok(x) and fmt in PLAT_FMTS[:6]
        assert r.shape == np.shape(x) and r.dtype == sf.get_format(fmt).dtype
    b = sf.to_bits(np.linspace(-2, 2, 6).reshape(2, 3), "fp16")
    kw = {} if threads is None else {"threads": threads}
    for fn in (platform_sum, platform_mean):
        ok, r = _call(fn, b, "fp16", axis=None, platform=platform, **kw)
        if ok:
            assert platform in PLATFORMS[:4] or platform is None
            if kw:
                assert platform == "torch_cpu"
                assert isinstance(threads, int) and not isinstance(threads, bool)
                assert 1 <= threads <= 4096
            assert r.shape == ()


PRECISION_OPTS = {
    "params": ["fp32", "fp16", "bf16", "fp8_e4m3", "bogus", 16, None],
    "master_weights": [True, False, "no", "yes", 1, 0, None, np.True_],
    "loss_scaling": ["none", "static", "dynamic", "bogus", None, True],
    "loss_scale": [1024.0, 1024, "1024", True, -1.0, 0.0, np.inf, np.nan, None, 2.0 ** -140],
    "rounding": ["nearest_even", "stochastic", "toward_zero", "bogus", None, 1],
    "order": ["sequential", "blocked", "blas", "bogus", None, 1],
    "block": [32, 0, -1, True, 2.5, "32"],
}


@SET
@given(st.sampled_from(sorted(PRECISION_OPTS)), st.data())
def test_nn_precision_junk(name, data):
    import nn
    v = data.draw(st.sampled_from(PRECISION_OPTS[name]))
    ok, p = _call(nn.Precision, **({"params": v} if name == "params" else
                                  {"params": "bf16", name: v}))
    if not ok:
        return
    if name == "master_weights":
        assert isinstance(v, (bool, np.bool_)) and p.master_weights == (bool(v))
    if name == "loss_scale":
        assert _real(v) and np.isfinite(float(v)) and float(v) > 0
        assert p.loss_scale == float(v)
    if name == "block":
        assert isinstance(v, int) and not isinstance(v, bool) and v >= 1
    if name == "order":
        assert v in (None, "sequential", "blocked") or (v == "blas" and p.acc is None)


LP_SCALARS = st.sampled_from([1.5, 2, -3, 2 ** 60 + 2 ** 52 + 1, 10 ** 400, np.float32(0.1),
                              np.longdouble(1) / 3, np.int64(-7), np.uint8(3), True, None,
                              "1.5", [1.0], np.array(1.0), 1j, np.nan])


def _exact(v):
    """The exact value of a real scalar (None for NaN, infinities, longdouble)."""
    from fractions import Fraction
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, np.longdouble) or not np.isfinite(float(v)):
        return None
    return Fraction(float(v))


@SET
@given(LP_SCALARS, st.sampled_from(["add", "mul", "sub", "full_like", "array_equal", "setitem"]))
def test_lparray_scalar_junk(v, what):
    import exact_reference as R
    a = sf.array(np.zeros(2), "bf16")
    calls = {"add": lambda: a + v, "mul": lambda: (a + 1.0) * v, "sub": lambda: a - v,
             "full_like": lambda: np.full_like(a, v), "array_equal": lambda: np.array_equal(a, v),
             "setitem": lambda: a.__setitem__(0, v)}
    ok, r = _call(calls[what])
    scalar = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_))
    if what == "array_equal":
        assert ok and r is False or (ok and v is not None)
        return
    if what in ("add", "full_like", "sub") and ok:
        assert scalar or (isinstance(v, np.ndarray) and what != "full_like")
        q = _exact(v) if scalar else None
        if q is not None and abs(q) < 2 ** 128 and q != 0:
            want = R.round_exact(int((q if what != "sub" else -q) < 0), abs(q), sf.BF16,
                                 "nearest_even")[0]
            assert int(np.ravel(r.bits)[0]) == want
    if what == "full_like" and not ok:
        assert not scalar or isinstance(v, np.ndarray)


@pytest.mark.parametrize("value, ok", [("off", True), ("maybe", False)] + [
    pytest.param(v, k, marks=pytest.mark.slow)
    for v, k in (("0", True), ("1", True), ("", True), ("TRUE", True), ("2", False))])
def test_fast_paths_switch(value, ok):
    import os
    import subprocess
    import sys
    env = dict(os.environ, SOFTFLOAT_FAST_PATHS=value)
    code = ("import softfloat as sf, numpy as np\n"
            "try:\n    print(sf.Context().fast_paths)\n"
            "except ValueError as e:\n    print('ValueError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120).stdout.strip()
    if ok:
        assert out == str(value.strip().lower() not in ("0", "false", "no", "off"))
    else:
        assert out.startswith("ValueError") and "SOFTFLOAT_FAST_PATHS" in out
