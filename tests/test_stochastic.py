"""Stochastic rounding with explicit random bits (softfloat.stochastic): every
scheme against the independent oracle of tests/sr_oracle.py, exhaustively over
value and all N-bit random integers for the fp8/fp6/fp4 targets and small N; the
seeded stream replayed through random_bits; the arithmetic; the input checks."""
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from sr_oracle import SCHEMES, Grid, P3109Grid, expected_fraction, expected_units

_KIND = {"fp8_e4m3": "fn", "fp8_e5m2": "ieee", "fp6_e3m2": "finite", "fp6_e2m3": "finite",
         "fp4_e2m1": "finite", "fp8_e4m3fnuz": "fnuz"}


def grid_of(name):
    E, M, bias, _ = sf.get_format(name).params
    return Grid(E, M, bias, _KIND[name])


def _fp16_finite_nonzero():
    """Every finite nonzero fp16 encoding, with sign and |x| in units of 2**-24."""
    c = np.arange(1 << 16, dtype=np.uint16)
    c = c[((c >> 10) & 0x1F) != 0x1F]
    c = c[(c & 0x7FFF) != 0]
    ef = (c.astype(np.int64) >> 10) & 0x1F
    fr = c.astype(np.int64) & 0x3FF
    mag = np.where(ef == 0, fr, (fr | 0x400) << np.maximum(ef - 1, 0))
    return c, (c.astype(np.int64) >> 15), mag


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp6_e3m2", "fp4_e2m1"])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_convert_fp16_exhaustive(fmt, scheme):
    """fp16 -> fmt: every finite nonzero fp16 value, N = 1..4, every R < 2**N."""
    g = grid_of(fmt)
    codes, sign, mag = _fp16_finite_nonzero()
    for N in (1, 2, 3, 4):
        R = np.arange(1 << N, dtype=np.uint8)
        got = sf.convert(np.repeat(codes[:, None], R.size, 1), "fp16", fmt, scheme,
                         random_bits=R[None, :], random_nbits=N)
        want = expected_units(g, sign[:, None], mag[:, None], 24, scheme, N, R[None, :])
        bad = np.argwhere(got.astype(np.int64) != want)
        assert bad.size == 0, (f"{scheme} N={N}: {len(bad)} mismatches, first fp16 "
                               f"{int(codes[bad[0][0]]):#06x} R={bad[0][1]}: got "
                               f"{int(got[tuple(bad[0])]):#x} want {int(want[tuple(bad[0])]):#x}")


def test_units_oracle_agrees_with_fraction_oracle():
    """The two forms of the oracle (vectorized integers, Fractions) agree."""
    g = grid_of("fp8_e4m3")
    codes, sign, mag = _fp16_finite_nonzero()
    rng = np.random.default_rng(1)
    idx = rng.choice(codes.size, 300, replace=False)
    for scheme in SCHEMES:
        for N in (1, 3, 6):
            R = rng.integers(0, 1 << N, idx.size)
            want = expected_units(g, sign[idx], mag[idx], 24, scheme, N, R)
            for j, i in enumerate(idx):
                x = Fraction(int(mag[i]), 1 << 24) * (-1 if sign[i] else 1)
                assert expected_fraction(g, x, scheme, N, int(R[j])) == want[j]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_to_bits_float64_wide_fields(scheme):
    """float64 values (53-bit significands: many discarded bits) into fp8 and
    bf16 with N up to 16, random R, against the Fraction oracle."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(400) * np.exp2(rng.integers(-12, 10, 400))
    for fmt, N in (("fp8_e4m3", 5), ("fp8_e5m2", 11), ("fp4_e2m1", 16)):
        g = grid_of(fmt)
        R = rng.integers(0, 1 << N, x.size).astype(np.uint32)
        got = sf.to_bits(x, fmt, scheme, random_bits=R, random_nbits=N)
        want = [expected_fraction(g, Fraction(float(v)), scheme, N, int(r)) for v, r in zip(x, R)]
        assert got.astype(np.int64).tolist() == want


def test_schemes_agree_when_field_fits_n_bits():
    """A, B and C all equal exact stochastic rounding when the discarded field has
    at most N bits (the closed forms of docs/stochastic.md); add = A on normals."""
    codes, _, _ = _fp16_finite_nonzero()
    big = codes[(codes & 0x7FFF) >= 0x2400]        # e4m3-normal results: 7 bits discarded
    R = np.arange(128, dtype=np.uint8)
    data = np.repeat(big[:, None], R.size, 1)
    outs = [sf.convert(data, "fp16", "fp8_e4m3", s, random_bits=R[None, :], random_nbits=7)
            for s in ("stochastic_a", "stochastic_b", "stochastic_c", "stochastic_add")]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


@pytest.mark.parametrize("scheme", SCHEMES)
def test_seeded_stream_replays_through_random_bits(scheme):
    """stochastic_bits gives the integers the seeded call draws: replaying them
    through random_bits= gives the same results, for conversions and arithmetic."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 50))
    R = sf.stochastic_bits(x.shape, seed=11, nbits=12)
    a = sf.to_bits(x, "bf16", scheme, seed=11, random_nbits=12)
    b = sf.to_bits(x, "bf16", scheme, random_bits=R, random_nbits=12)
    np.testing.assert_array_equal(a, b)
    h = sf.to_bits(x, "fp16")
    for op in (sf.add, sf.mul):
        a = op(h, h[:1], "fp16", scheme, seed=5, random_nbits=12)
        b = op(h, h[:1], "fp16", scheme, random_bits=sf.stochastic_bits(h.shape, seed=5, nbits=12),
               random_nbits=12)
        np.testing.assert_array_equal(a, b)


def test_seeded_mode_unchanged_and_replayed():
    """The seeded "stochastic" mode (its own kernels and fast paths) and its
    bits replayed through random_bits give the same results."""
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    for fmt in ("bf16", "fp16", "fp8_e4m3"):
        a = sf.to_bits(x, fmt, "stochastic", seed=9)
        b = sf.to_bits(x, fmt, "stochastic", random_bits=sf.stochastic_bits(x.shape, seed=9),
                       random_nbits=32)
        np.testing.assert_array_equal(a, b)


def _e4m3_all():
    c = np.arange(256, dtype=np.uint8)
    return c[(c & 0x7F) != 0x7F]


@pytest.mark.parametrize("scheme", ["stochastic_a", "stochastic_b", "stochastic_c",
                                    "stochastic_add"])
def test_add_mul_e4m3_exhaustive(scheme):
    """e4m3 + and * over every pair of non-NaN operands, N = 3, every R."""
    g = grid_of("fp8_e4m3")
    c = _e4m3_all()
    v = sf.from_bits(c, "fp8_e4m3")
    units = np.rint(np.abs(v) * 2**9).astype(np.int64) * np.sign(v).astype(np.int64)
    N = 3
    R = np.arange(8, dtype=np.uint8)
    a, b = np.meshgrid(c, c, indexing="ij")
    ua, ub = np.meshgrid(units, units, indexing="ij")
    for op, exact, U in ((sf.add, ua + ub, 9), (sf.mul, ua * ub, 18)):
        keep = exact != 0
        got = op(a[keep][:, None], b[keep][:, None], "fp8_e4m3", scheme,
                 random_bits=R[None, :], random_nbits=N)
        want = expected_units(g, (exact[keep] < 0)[:, None].astype(np.int64),
                              np.abs(exact[keep])[:, None], U, scheme, N, R[None, :])
        np.testing.assert_array_equal(got.astype(np.int64), want)


@pytest.mark.parametrize("scheme", ["stochastic_a", "stochastic_c", "stochastic_add"])
def test_div_sqrt_fma_sample(scheme):
    """fp16 /, sqrt and fma with explicit bits against the Fraction oracle
    (sqrt: the discarded fraction from an exact integer square root)."""
    import math
    fmt = "fp16"
    g = Grid(5, 10, 15, "ieee")
    rng = np.random.default_rng(5)
    h = sf.to_bits(rng.uniform(0.5, 4, 300) * np.exp2(rng.integers(-14, 8, 300)), fmt)
    h2 = sf.to_bits(rng.uniform(0.5, 4, 300) * np.exp2(rng.integers(-6, 6, 300)), fmt)
    N = 8
    R = rng.integers(0, 1 << N, 300).astype(np.uint16)
    va, vb = sf.from_bits(h, fmt), sf.from_bits(h2, fmt)
    got = sf.div(h, h2, fmt, scheme, random_bits=R, random_nbits=N)
    want = [expected_fraction(g, Fraction(float(x)) / Fraction(float(y)), scheme, N, int(r))
            for x, y, r in zip(va, vb, R)]
    assert got.astype(np.int64).tolist() == want
    got = sf.fma(h, h2, h, fmt, scheme, random_bits=R, random_nbits=N)
    want = [expected_fraction(g, Fraction(float(x)) * Fraction(float(y)) + Fraction(float(x)),
                              scheme, N, int(r)) for x, y, r in zip(va, vb, R)]
    assert got.astype(np.int64).tolist() == want
    got = sf.sqrt(h, fmt, scheme, random_bits=R, random_nbits=N)
    for x, r, o in zip(va, R, got):
        # sqrt(x) truncated to 60 bits below its leading bit, plus a sticky 2**-200:
        # the oracle's floor and tie tests see the same bits as the exact root
        f = Fraction(float(x))
        s = math.isqrt(f.numerator * 4**80 // f.denominator)
        exact_sq = Fraction(s * s * f.denominator, 4**80) == f.numerator
        y = Fraction(s, 2**80) + (0 if exact_sq else Fraction(1, 2**200))
        assert int(o) == expected_fraction(g, y, scheme, N, int(r)), (x, r)


def test_input_checks():
    x = np.array([1.1, 2.2])
    with pytest.raises(ValueError, match="stochastic rounding"):
        sf.to_bits(x, "bf16", "nearest_even", random_bits=np.uint8(1), random_nbits=4)
    with pytest.raises(ValueError, match="fit in random_nbits=4"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=np.uint8(16), random_nbits=4)
    with pytest.raises(TypeError, match="unsigned integer array"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=np.array([1, 2]), random_nbits=4)
    with pytest.raises(TypeError, match="random_nbits"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=np.uint8(1))
    with pytest.raises(ValueError, match="broadcast"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=np.zeros(3, np.uint8), random_nbits=4)
    with pytest.raises(TypeError, match="not both"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=np.uint8(1), random_nbits=4, seed=1)
    with pytest.raises(ValueError, match=r"\[1, 32\]"):
        sf.to_bits(x, "bf16", "stochastic_a", random_nbits=0)
    with pytest.raises(ValueError, match="max_random_nbits"):
        sf.sqrt(np.uint32(0x3F800000), "fp32", "stochastic_a", random_nbits=8,
                random_bits=np.uint8(1))
    with pytest.raises(TypeError, match="bool"):
        sf.to_bits(x, "bf16", "stochastic_a", random_bits=[True, 1], random_nbits=4)
    with pytest.raises(ValueError, match="explicit random bits"):
        sf.sum(np.zeros(2, np.uint16), "fp16", rounding="stochastic_a")
    # a Policy value in place of the keywords; the scheme rides on its rounding
    p = sf.Policy(overflow="saturate")
    assert sf.to_bits(np.array([1e6]), "fp8_e4m3", "stochastic_a", random_bits=np.uint8(0),
                      random_nbits=2, policy=p)[0] == 0x7E
    with pytest.raises(TypeError, match="not both"):
        sf.to_bits(x, "bf16", "stochastic_a", random_nbits=2, policy=p, overflow="ieee")
    # quantize takes them too (the values of to_bits' encodings)
    q = sf.quantize(np.full(4, 1 + 2**-12), "fp16", "stochastic_a",
                    random_bits=np.arange(4, dtype=np.uint8), random_nbits=2)
    assert q.tolist() == [1.0, 1.0, 1.0, 1 + 2**-10]
    # Python ints broadcast like the data
    assert sf.to_bits(x, "bf16", "stochastic_a", random_bits=[0, 3], random_nbits=2).shape == (2,)


_P3109 = [("binary8p3se", 8, 3, True, True), ("binary8p4sf", 8, 4, True, False),
          ("binary6p2se", 6, 2, True, True), ("binary6p1se", 6, 1, True, True),
          ("binary7p3ue", 7, 3, False, True), ("binary6p2uf", 6, 2, False, False)]


@pytest.mark.parametrize("name,K,P,signed,ext", _P3109)
@pytest.mark.parametrize("scheme", ["stochastic_a", "stochastic_b", "stochastic_c",
                                    "stochastic_add"])
def test_p3109_formats_exhaustive(name, K, P, signed, ext, scheme):
    """fp16 -> P3109 formats: every finite nonzero fp16, N = 1..3, every R, under
    SatNone and SatFinite, against the oracle decoding the report's formulas."""
    try:
        sf.get_format(name)
    except ValueError:
        pytest.skip("P3109 formats not in this tree (branch p3109)")
    codes, sign, mag = _fp16_finite_nonzero()
    for sat in ("satnone", "satfinite"):
        g = P3109Grid(K, P, signed, ext, sat)
        # the oracle's unit: 2**-24 (fp16) and the format's smallest quantum
        U = max(24, g.M - g.emin)
        m = mag << (U - 24)
        for N in (1, 3):
            R = np.arange(1 << N, dtype=np.uint8)
            got = sf.convert(codes[:, None], "fp16", name, scheme, random_bits=R[None, :],
                             random_nbits=N, saturation=sat)
            want = expected_units(g, sign[:, None], m[:, None], U, scheme, N, R[None, :])
            np.testing.assert_array_equal(got.astype(np.int64), want, err_msg=f"{sat} N={N}")
