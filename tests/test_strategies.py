"""softfloat.strategies: bounds respected, every special class produced, clear errors.

Values are checked with tests/exact_reference.py's Fraction decoder (not with the
strategies' own helpers) and, for fp16/bf16, with numpy/ml_dtypes.
"""
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import strategies as sfst

import exact_reference as ref

FORMATS = ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "tf32", "fp32"]


def _cls(bits, fmt):
    return ref.decode(int(bits), sf.get_format(fmt)).cls


def _val(bits, fmt):
    d = ref.decode(int(bits), sf.get_format(fmt))
    if d.cls == "finite" or d.cls == "zero":
        return d.value
    return None


def _is_subnormal(bits, fmt):
    f = sf.get_format(fmt)
    d = ref.decode(int(bits), sf.get_format(fmt))
    return d.cls == "finite" and abs(d.value) < Fraction(2) ** f.emin


def _tags(b, f):
    d = ref.decode(int(b), f)
    tags = {(d.cls, d.sign)}
    if d.cls == "finite" and abs(d.value) < Fraction(2) ** f.emin:
        tags.add(("subnormal", d.sign))
    if int(b) & (f.sign_mask - 1) == f.max_bits:
        tags.add(("max", d.sign))
    return tags


@pytest.mark.parametrize("fmt", FORMATS)
def test_encodings_dtype_and_every_class(fmt):
    f = sf.get_format(fmt)

    @settings(max_examples=100, database=None)
    @given(sfst.encodings(fmt))
    def run(b):
        assert isinstance(b, f.dtype.type)
        assert 0 <= int(b) < 1 << f.nbits
    run()
    want = {("finite", 0), ("finite", 1), ("zero", 0), ("subnormal", 0),
            ("subnormal", 1), ("max", 0), ("max", 1)}
    if f.kind != "fnuz":
        want |= {("zero", 1), ("qnan", 0)}
    else:
        want |= {("qnan", 1)}          # the one NaN, 0x80
    if f.kind == "ieee":
        want |= {("inf", 0), ("inf", 1), ("snan", 0), ("qnan", 1)}
    for tag in sorted(want):
        find(sfst.encodings(fmt), lambda b: tag in _tags(b, f),
             settings=settings(max_examples=3000, database=None))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp32"])
def test_encodings_respect_options(fmt):

    @settings(max_examples=300, database=None)
    @given(sfst.encodings(fmt, allow_nan=False, allow_infinity=False, allow_subnormal=False))
    def no_specials(b):
        assert _cls(b, fmt) in ("finite", "zero")
        assert not _is_subnormal(b, fmt)
    no_specials()

    lo, hi = -1.5, 1000.25

    @settings(max_examples=300, database=None)
    @given(sfst.encodings(fmt, min_value=lo, max_value=hi))
    def bounded(b):
        v = _val(b, fmt)
        assert v is not None and lo <= v <= hi
    bounded()

    @settings(max_examples=200, database=None)
    @given(sfst.encodings(fmt, min_value=0.0))
    def nonneg(b):
        d = ref.decode(int(b), sf.get_format(fmt))
        assert d.cls in ("finite", "zero", "inf")
        assert d.cls == "zero" or d.sign == 0
    nonneg()
    # the bounds themselves, and the neighbours just inside, are reachable
    x = find(sfst.encodings(fmt, min_value=lo, max_value=hi), lambda b: _val(b, fmt) == -1.5)
    assert _val(x, fmt) == -1.5
    top = find(sfst.encodings(fmt, min_value=lo, max_value=hi),
               lambda b: _val(b, fmt) > 300, settings=settings(max_examples=2000, database=None))
    assert _val(top, fmt) <= hi


def test_encodings_shrink_to_positive_zero():
    assert find(sfst.encodings("bf16"), lambda b: True) == 0
    x = find(sfst.encodings("fp16"), lambda b: ref.decode(int(b), sf.FP16).cls == "finite"
             and abs(ref.decode(int(b), sf.FP16).value) >= 1)
    assert int(x) & 0x7FFF == 0x3C00          # +-1.0: the smallest magnitude that qualifies


def test_values_are_exactly_representable():
    @settings(max_examples=300, database=None)
    @given(sfst.values("bf16"), sfst.values("fp16", allow_nan=False))
    def run(x, y):
        assert isinstance(x, float) and isinstance(y, float)
        if not math.isnan(x):
            # ml_dtypes' bfloat16 and numpy's float16 hold them exactly
            assert float(np.float32(x).astype(ml_dtypes.bfloat16)) == x or math.isinf(x)
        assert float(np.float16(y)) == y
    run()
    seen = set()

    @settings(max_examples=300, database=None)
    @given(sfst.values("fp8_e4m3"))
    def classes(x):
        seen.add("nan" if math.isnan(x) else "inf" if math.isinf(x) else
                 "-0" if x == 0 and math.copysign(1, x) < 0 else "num")
        if not math.isnan(x):
            assert sf.quantize(x, "fp8_e4m3") == x
    classes()
    assert seen == {"nan", "num", "-0"}           # e4m3 (fn) has no infinity


def test_arrays_of_encodings():
    @settings(max_examples=60, database=None)
    @given(sfst.arrays("bf16", (3, 4)), sfst.arrays("fp16", st.integers(0, 5),
                                                    allow_nan=False, min_value=-2.0,
                                                    max_value=2.0))
    def run(a, b):
        assert a.dtype == np.uint16 and a.shape == (3, 4)
        assert b.dtype == np.uint16 and b.ndim == 1
        v = b.view(np.float16).astype(np.float64)
        assert np.all((v >= -2) & (v <= 2))
    run()

    @settings(max_examples=30, database=None)
    @given(sfst.arrays("fp8_e5m2", 8, elements=st.just(np.uint8(0x3C))))
    def elems(a):
        assert a.dtype == np.uint8 and (a == 0x3C).all()
    elems()


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
def test_midpoints_are_ties(fmt):
    f = sf.get_format(fmt)
    seen = set()

    @settings(max_examples=300, database=None)
    @given(sfst.midpoints(fmt))
    def run(x):
        m = Fraction(x)
        lo, hi = ref.neighbours(abs(m), f) if abs(m) <= f.max else (Fraction(f.max), None)
        if hi is None:             # the overflow boundary: max + half a step
            seen.add("overflow")
            step = Fraction(2) ** (f.emax - f.mbits)
            assert abs(m) == Fraction(f.max) + step / 2
            return
        assert lo < abs(m) < hi and abs(m) - lo == hi - abs(m)
        # and round-to-nearest-even goes to the even one of the two
        b = sf.to_bits(x, fmt, "nearest_even")
        assert (int(b) & 1) == 0 or abs(m) < Fraction(2) ** (f.emin - f.mbits)
        seen.add("sub" if abs(m) < Fraction(2) ** f.emin else "normal")
        seen.add("neg" if x < 0 else "pos")
    run()
    assert {"overflow", "sub", "normal", "neg", "pos"} <= seen


def test_midpoints_options():
    @settings(max_examples=200, database=None)
    @given(sfst.midpoints("fp16", allow_subnormal=False, include_overflow=False,
                          min_value=0.5, max_value=70000.0))
    def run(x):
        assert 0.5 <= x < 65504 and x >= 2.0 ** -14
    run()
    assert find(sfst.midpoints("fp16", min_value=0.0), lambda x: True) == 2.0 ** -25


def test_argument_errors():
    with pytest.raises(TypeError, match="Format"):
        sfst.encodings(16)
    with pytest.raises(ValueError, match="unknown format"):
        sfst.encodings("fp17")
    with pytest.raises(TypeError, match="allow_subnormal"):
        sfst.encodings("fp16", allow_subnormal="no")
    with pytest.raises(TypeError, match="min_value"):
        sfst.values("fp16", min_value="1")
    with pytest.raises(ValueError, match="larger"):
        sfst.encodings("fp16", min_value=2.0, max_value=1.0)
    with pytest.raises(ValueError, match="allow_nan"):
        sfst.encodings("fp16", allow_nan=True, min_value=0.0)
    with pytest.raises(ValueError, match="no infinity"):
        sfst.encodings("fp8_e4m3", allow_infinity=True)
    with pytest.raises(ValueError, match="no encoding"):
        sfst.encodings("fp16", min_value=1.0001, max_value=1.0002)
    with pytest.raises(TypeError):
        sfst.encodings("fp16", True)              # keyword-only
    with pytest.raises(TypeError, match="either"):
        sfst.arrays("fp16", 3, elements=st.just(np.uint16(1)), allow_nan=False)
    with pytest.raises(TypeError, match="unexpected"):
        sfst.arrays("fp16", 3, allow_nans=False)
    with pytest.raises(ValueError, match="no midpoint"):
        sfst.midpoints("fp16", min_value=1.0, max_value=1.0001)


def test_not_imported_by_softfloat():
    import subprocess
    import sys
    code = ("import sys, softfloat; "
            "print('hypothesis' in sys.modules, 'softfloat.strategies' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


def test_docs_example_runs():
    """The property tests in docs/strategies.md run and pass."""
    import pathlib
    import re
    text = (pathlib.Path(__file__).parents[1] / "docs" / "strategies.md").read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[-1]
    ns = {}
    exec(compile(code, "docs/strategies.md", "exec"), ns)
    tests = [v for k, v in ns.items() if k.startswith("test_")]
    assert len(tests) == 3
    for t in tests:
        settings(max_examples=50, database=None)(t)()
