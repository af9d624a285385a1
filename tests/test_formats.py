"""Format descriptors: constants of every built-in format against the oracle's
own decoding and against ml_dtypes.finfo / numpy.finfo; lookup, aliases,
custom formats and bad parameters."""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat import Format, get_format
from softfloat.formats import FP64

import exact_reference as O

# name -> (ebits, mbits, bias, kind, nbits, dtype, host type with the same encoding or None)
BUILTIN = {
    "fp16": (5, 10, 15, "ieee", 16, np.uint16, np.float16),
    "bf16": (8, 7, 127, "ieee", 16, np.uint16, ml_dtypes.bfloat16),
    "fp32": (8, 23, 127, "ieee", 32, np.uint32, np.float32),
    "tf32": (8, 10, 127, "ieee", 19, np.uint32, None),
    "fp8_e5m2": (5, 2, 15, "ieee", 8, np.uint8, ml_dtypes.float8_e5m2),
    "fp8_e4m3": (4, 3, 7, "fn", 8, np.uint8, ml_dtypes.float8_e4m3fn),
    "fp8_e4m3fnuz": (4, 3, 8, "fnuz", 8, np.uint8, ml_dtypes.float8_e4m3fnuz),
    "fp8_e5m2fnuz": (5, 2, 16, "fnuz", 8, np.uint8, ml_dtypes.float8_e5m2fnuz),
}

# Hand-written special values (hex floats, after ml_dtypes' tests).
SPECIALS = {
    #            max                        max_bits  inf_bits  default NaN
    "fp16": (float.fromhex("0x1.ffcp15"), 0x7BFF, 0x7C00, 0x7E00),
    "bf16": (float.fromhex("0x1.fep127"), 0x7F7F, 0x7F80, 0x7FC0),
    "fp32": (float.fromhex("0x1.fffffep127"), 0x7F7FFFFF, 0x7F800000, 0x7FC00000),
    "tf32": (float.fromhex("0x1.ffcp127"), 0x3FBFF, 0x3FC00, 0x3FE00),
    "fp8_e5m2": (57344.0, 0x7B, 0x7C, 0x7E),
    "fp8_e4m3": (448.0, 0x7E, None, 0x7F),
    "fp8_e4m3fnuz": (240.0, 0x7F, None, 0x80),
    "fp8_e5m2fnuz": (57344.0, 0x7F, None, 0x80),
}


def _oracle_constants(fmt):
    """max, smallest normal, smallest subnormal, eps from the oracle's decode of
    every encoding (for <= 16 bits) or of the boundary encodings (fp32, tf32)."""
    L = O.layout(fmt)
    if L.nbits <= 16:
        finite = [O.decode(b, fmt).value for b in O.all_encodings(fmt)
                  if O.decode(b, fmt).cls == "finite"]
    else:
        probe = [1, (1 << L.M), ((L.emax + L.bias) << L.M) | L.max_frac,
                 (L.bias << L.M), (L.bias << L.M) | 1]
        finite = [O.decode(b, fmt).value for b in probe]
    pos = sorted(v for v in finite if v > 0)
    normal = min(v for v in pos if v >= Fraction(2) ** L.emin)
    one = O.decode(L.bias << L.M, fmt).value
    assert one == 1
    after_one = O.decode((L.bias << L.M) | 1, fmt).value
    return pos[-1], normal, pos[0], after_one - 1


@pytest.mark.parametrize("name", list(BUILTIN))
def test_builtin_layout(name):
    E, M, bias, kind, nbits, dt, _ = BUILTIN[name]
    f = get_format(name)
    assert (f.ebits, f.mbits, f.bias, f.kind) == (E, M, bias, kind)
    assert f.nbits == nbits
    assert f.dtype == np.dtype(dt)
    assert f.precision == M + 1
    assert f.params == (E, M, bias, {"ieee": 0, "fn": 1, "fnuz": 2}[kind])
    assert f.sign_mask == 1 << (nbits - 1)
    assert f.has_inf == (kind == "ieee")
    assert f.name == name and str(f) == name
    assert f in sf.formats()


@pytest.mark.parametrize("name", list(BUILTIN))
def test_builtin_constants_against_oracle(name):
    f = get_format(name)
    mx, normal, sub, eps = _oracle_constants(f)
    assert f.max == float(mx) == SPECIALS[name][0]
    assert f.smallest_normal == float(normal) == 2.0 ** f.emin
    assert f.smallest_subnormal == float(sub)
    assert f.eps == float(eps) == 2.0 ** -f.mbits
    assert f.unit_roundoff == f.eps / 2
    # the special encodings decode as they should
    mx_bits, inf_b, nan_b = SPECIALS[name][1:]
    assert f.max_bits == mx_bits
    assert O.decode(f.max_bits, f).value == mx
    assert f.inf_bits == inf_b
    if inf_b is not None:
        assert O.decode(inf_b, f).cls == "inf"
    assert f.default_nan_bits == nan_b
    assert O.decode(nan_b, f).cls == "qnan"
    # emax is the exponent of max
    assert 2.0 ** f.emax <= f.max < 2.0 ** (f.emax + 1)


@pytest.mark.parametrize("name", [n for n in BUILTIN if BUILTIN[n][6] is not None])
def test_builtin_constants_against_finfo(name):
    f = get_format(name)
    host = BUILTIN[name][6]
    fi = ml_dtypes.finfo(host) if host not in (np.float16, np.float32) else np.finfo(host)
    assert f.max == float(fi.max)
    assert f.smallest_normal == float(fi.smallest_normal)
    assert f.smallest_subnormal == float(fi.smallest_subnormal)
    assert f.eps == float(fi.eps)
    assert f.mbits == fi.nmant and f.ebits == fi.nexp and f.nbits == fi.bits
    assert f.emin == fi.minexp and f.emax == fi.maxexp - 1
    # the largest finite encoding is the same pattern in the host type
    assert float(np.array(f.max_bits, f.dtype).view(host)) == f.max


def test_fp8_e4m3_is_ocp_fn():
    f = get_format("fp8_e4m3")
    assert f.max == 448.0 and f.inf_bits is None and f.has_negative_zero
    nan_codes = [b for b in range(256) if O.decode(b, f).cls == "qnan"]
    assert nan_codes == [0x7F, 0xFF]
    # 0x7E and 0xFE are +-448 and 0x78 is 256 (exponent field all ones is usable)
    assert O.decode(0x7E, f).value == 448 and O.decode(0xFE, f).value == -448
    assert O.decode(0x78, f).value == 256


@pytest.mark.parametrize("name", ["fp8_e4m3fnuz", "fp8_e5m2fnuz"])
def test_fnuz_one_nan_no_negative_zero(name):
    f = get_format(name)
    classes = [O.decode(b, f).cls for b in range(256)]
    assert classes.count("qnan") == 1 and classes[0x80] == "qnan"
    assert classes.count("zero") == 1 and classes[0] == "zero"
    assert "inf" not in classes and not f.has_negative_zero


ALIASES = {
    "fp16": ["half", "binary16", "float16", "FP16", " Half ", "e5m10"],
    "bf16": ["bfloat16", "BFloat16", "e8m7"],
    "fp32": ["single", "binary32", "float32", "e8m23"],
    "tf32": ["tensorfloat32", "TF32", "e8m10"],
    "fp8_e5m2": ["e5m2", "float8_e5m2", "fp8-e5m2"],
    "fp8_e4m3": ["e4m3", "fp8_e4m3fn", "e4m3fn", "float8_e4m3fn"],
    "fp8_e4m3fnuz": ["e4m3fnuz", "float8_e4m3fnuz"],
    "fp8_e5m2fnuz": ["e5m2fnuz", "float8_e5m2fnuz"],
}


@pytest.mark.parametrize("name", list(ALIASES))
def test_aliases(name):
    f = get_format(name)
    assert get_format(f) is f
    for alias in ALIASES[name]:
        assert get_format(alias) is f, alias


def test_alias_with_hyphen_tensorfloat_32():
    assert get_format("tensorfloat-32") is get_format("tf32")


def test_custom_formats_by_name_and_constructor():
    f = get_format("e3m4")
    assert (f.ebits, f.mbits, f.bias, f.kind) == (3, 4, 3, "ieee")
    g = get_format("e4m3fnuz")       # an alias of the built-in
    assert g is get_format("fp8_e4m3fnuz")
    h = get_format("e6m9fn")
    assert (h.ebits, h.mbits, h.kind, h.bias) == (6, 9, "fn", 31)
    # ml_dtypes' float8_e4m3b11fnuz is Format(4, 3, fnuz, bias 11)
    b11 = Format("e4m3b11fnuz", 4, 3, "fnuz", bias=11)
    fi = ml_dtypes.finfo(ml_dtypes.float8_e4m3b11fnuz)
    assert b11.max == float(fi.max) == float(O.max_value(b11))
    assert b11.smallest_subnormal == float(fi.smallest_subnormal)
    # the IEEE-kind e4m3 and e3m4 of ml_dtypes (with infinities)
    for fmt, host in ((Format("e4m3ieee", 4, 3), ml_dtypes.float8_e4m3),
                      (get_format("e3m4"), ml_dtypes.float8_e3m4)):
        fi = ml_dtypes.finfo(host)
        assert fmt.max == float(fi.max) == float(O.max_value(fmt))
        assert fmt.smallest_normal == float(fi.smallest_normal)
        assert fmt.smallest_subnormal == float(fi.smallest_subnormal)
        vals = np.arange(256, dtype=np.uint8).view(host).astype(np.float64)
        for b in range(256):
            d = O.decode(b, fmt)
            if d.cls == "finite" or d.cls == "zero":
                assert Fraction(float(vals[b])) == d.value
            elif d.cls == "inf":
                assert np.isinf(vals[b])
            else:
                assert np.isnan(vals[b])
    # widest custom: 8 exponent and 23 fraction bits; a narrow one of 2+1
    assert Format("w", 8, 23).nbits == 32
    tiny = Format("e2m1", 2, 1)
    assert tiny.dtype == np.uint8 and tiny.max == float(O.max_value(tiny)) == 3.0


def test_custom_format_equality_and_repr():
    a = Format("x", 5, 4, "fn")
    b = Format("x", 5, 4, "fn", aliases=("y",))
    assert a == b and "ebits=5" in repr(a) and "fn" in repr(a)


@pytest.mark.parametrize("bad, exc, words", [
    ("fp17", ValueError, "unknown format"),
    ("", ValueError, "unknown format"),
    ("e9m3", ValueError, "at most 8 exponent"),
    ("e5m30", ValueError, "at most 8 exponent"),
    (16, TypeError, "format name"),
    (None, TypeError, "format name"),
    (np.float16, TypeError, "format name"),
])
def test_bad_format_names(bad, exc, words):
    with pytest.raises(exc, match=words):
        get_format(bad)


def test_unknown_name_lists_choices():
    with pytest.raises(ValueError) as ei:
        get_format("float8")
    msg = str(ei.value)
    assert "fp16" in msg and "bf16" in msg and "e<E>m<M>" in msg


@pytest.mark.parametrize("kwargs, words", [
    (dict(name="x", ebits=9, mbits=3), "at most 8 exponent"),
    (dict(name="x", ebits=5, mbits=24), "at most 8 exponent"),
    (dict(name="x", ebits=1, mbits=3), "ebits"),
    (dict(name="x", ebits=5, mbits=0), "mbits"),
    (dict(name="x", ebits=5, mbits=3, kind="fnz"), "kind"),
    (dict(name="", ebits=5, mbits=3), "name"),
    (dict(name="x", ebits=5, mbits=2, bias=-1000), "outside float64"),
    (dict(name="x", ebits=5, mbits=2, bias=1022), "outside float64"),
    (dict(name="x", ebits=8, mbits=23, bias=-897), "outside float64"),
    (dict(name="x", ebits=np.int64(12), mbits=3), "ebits"),
    (dict(name="x", ebits=5, mbits=np.uint8(30)), "at most 8 exponent"),
])
def test_bad_format_params(kwargs, words):
    with pytest.raises(ValueError, match=words):
        Format(**kwargs)


@pytest.mark.parametrize("kwargs, words", [
    (dict(name="x", ebits=5.0, mbits=3), "ebits must be an integer"),
    (dict(name="x", ebits=True, mbits=3), "ebits must be an integer"),
    (dict(name="x", ebits=np.bool_(True), mbits=3), "ebits must be an integer"),
    (dict(name="x", ebits="5", mbits=3), "ebits must be an integer"),
    (dict(name="x", ebits=5, mbits=np.float32(3)), "mbits must be an integer"),
    (dict(name="x", ebits=5, mbits=3, bias=1.5), "bias must be an integer"),
    (dict(name="x", ebits=5, mbits=3, bias=False), "bias must be an integer"),
])
def test_bad_format_param_types(kwargs, words):
    with pytest.raises(TypeError, match=words):
        Format(**kwargs)


def test_numpy_integer_fields_are_python_ints():
    """Format("h", np.int16(5), np.int16(10)) once reached the kernels as int16
    and broke every later sf.sum/matmul; np.int8 fields gave max == 0.0.
    Fields are now converted exactly to Python ints."""
    h = Format("h", np.int16(5), np.int16(10))
    x = Format("x", np.int8(5), np.int8(2), bias=np.int64(15))
    for f in (h, x):
        assert all(type(v) is int for v in (f.ebits, f.mbits, f.bias))
        assert all(type(v) is int for v in f.params)
    assert x.max == 57344.0 and h.max == 65504.0
    b = sf.to_bits(np.array([1.0, 2.0, 0.5]), h)
    assert sf.from_bits(sf.sum(b, h, acc="fp32", out_fmt=h), h) == 3.5
    # and the process is not poisoned: the built-in formats still work
    b16 = sf.to_bits(np.array([1.0, 2.0, 0.5]), "fp16")
    assert sf.from_bits(sf.sum(b16, "fp16", acc="fp32", out_fmt="fp16"), "fp16") == 3.5
    a = sf.to_bits(np.ones((2, 3)), "fp16")
    assert sf.from_bits(sf.matmul(a, a.T, "fp16"), "fp16").tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("E,M,kind", [(5, 2, "ieee"), (8, 7, "fn"), (4, 3, "fnuz")])
def test_extreme_biases_decode_exactly(E, M, kind):
    """At both ends of the accepted bias range every encoding decodes to its
    exact value (the Fraction reference), inside float64."""
    lo, hi = Format("t", E, M, kind)._bias_range()
    for bias in (lo, hi):
        f = Format("t", E, M, kind, bias=bias)
        bits = np.arange(1 << f.nbits, dtype=np.int64).astype(f.dtype)
        got = sf.from_bits(bits, f)
        for b in range(0, 1 << f.nbits, 3):
            d = O.decode(b, f)
            if d.value is None:
                assert np.isnan(got[b]) or np.isinf(got[b])
            else:
                v = d.value if d.value or not d.sign else -0.0
                assert got[b] == v and Fraction(float(got[b])) == d.value, (bias, hex(b))
                assert np.signbit(got[b]) == bool(d.sign)


def test_fp64_is_not_a_target():
    with pytest.raises(ValueError, match="source format"):
        get_format(FP64)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz",
                                 "fp4_e2m1", "e8m0", "e5m7", "e3m4",
                                 Format("wide_bias", 5, 4, bias=-100),
                                 Format("tiny_bias", 5, 10, bias=140),
                                 Format("tinier_bias", 5, 10, bias=141)])
def test_fits_float32_is_every_value_a_float32(fmt):
    # derived once on Format; checked here by decoding every encoding
    f = get_format(fmt) if isinstance(fmt, str) else fmt
    vals = sf.from_bits(np.arange(1 << f.nbits).astype(f.dtype), f)
    vals = vals[np.isfinite(vals)]
    with np.errstate(over="ignore"):
        every = bool(np.all(vals.astype(np.float32).astype(np.float64) == vals))
    assert f.fits_float32 == every, (f, every)
    assert f.smallest_subnormal == 2.0 ** f.min_exponent
