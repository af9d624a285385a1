"""softfloat.encodings (sf.explain, sf.fields): an encoding as its fields, class and value."""
import doctest

import numpy as np
import pytest

import softfloat as sf
import softfloat.encodings as X


def test_docstring_example():
    assert doctest.testmod(X, raise_on_error=False).failed == 0


def test_a_counterexample_in_decimal_reads_as_fields():
    lines = sf.explain((31744, 64512), "fp16").splitlines()
    assert lines == ["0x7c00 fp16  0 11111 0000000000  infinity   +inf",
                     "0xfc00 fp16  1 11111 0000000000  infinity   -inf"]


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz",
                                 "fp6_e2m3", "fp4_e2m1", "e8m0"])
def test_fields_reassemble_every_encoding(fmt):
    f = sf.get_format(fmt)
    codes = np.arange(1 << f.nbits, dtype=f.dtype) if f.nbits <= 8 else \
        np.random.default_rng(0).integers(0, 1 << f.nbits, 3000).astype(f.dtype)
    vals = sf.from_bits(codes, f)
    for c, v in zip(codes, vals):
        r = sf.fields(int(c), f)
        back = (r.sign << (f.ebits + f.mbits) if f.has_sign else 0) | r.exponent << f.mbits \
            | r.fraction
        assert back == int(c) and r.bits == int(c)
        if np.isnan(v):
            assert r.kind == "nan"
        else:
            assert r.value == v
            if r.kind in ("normal", "subnormal"):
                m = (r.kind == "normal") + r.fraction / 2 ** f.mbits
                e = (r.exponent - f.bias) if r.kind == "normal" else f.emin
                assert (-1) ** r.sign * m * 2.0 ** e == v
            assert str(r).endswith(repr(float(v))) or r.kind in ("infinity", "zero")


def test_explain_refuses_what_is_not_an_encoding():
    with pytest.raises(ValueError):
        sf.explain([70000], "fp16")
    with pytest.raises(TypeError):
        sf.explain([1.5], "fp16")
    with pytest.raises(ValueError, match="no encodings"):
        sf.explain([], "fp16")
    with pytest.raises(ValueError, match="one encoding"):
        sf.fields([1, 2], "fp16")
