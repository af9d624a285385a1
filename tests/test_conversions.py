"""Conversions (to_bits, from_bits, quantize, convert) against the oracle
(tests/exact_reference.py: exact Fraction arithmetic), MPFR, numpy and ml_dtypes.

Values AND flags are compared; NaN results compare as "both NaN" except where
the NaN policy is what is under test.
"""
import math
import zlib
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import softfloat as sf
from softfloat import convert, from_bits, get_format, quantize, to_bits

import exact_reference as O

BUILTIN = ["fp16", "bf16", "fp32", "tf32", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz",
           "fp8_e5m2fnuz"]
SMALL = [n for n in BUILTIN if get_format(n).nbits <= 16]
MODES = list(O.DETERMINISTIC)
# (tininess, ftz) combinations exercised with every mode
POLICIES = [dict(tininess="after"), dict(tininess="before"), dict(tininess="after", ftz=True),
            dict(tininess="before", ftz=True)]

# numpy/ml_dtypes reference casts that overflow or meet NaN warn; that is expected here
# Every test runs with the fast paths on and off (conftest.fast_paths_both).
pytestmark = [pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning"),
              pytest.mark.usefixtures("fast_paths_both")]

HOST_TYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp8_e5m2": ml_dtypes.float8_e5m2,
              "fp8_e4m3": ml_dtypes.float8_e4m3fn, "fp8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
              "fp8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz, "fp32": np.float32}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def oracle_array(xs, fmt, mode, src="fp64", daz=False, **pol):
    """Oracle bits and flags for every element of a host float array."""
    f = get_format(fmt)
    bits = np.empty(xs.size, np.int64)
    flags = np.empty(xs.size, np.int64)
    for i, x in enumerate(xs.reshape(-1).tolist()):
        bits[i], flags[i] = O.round_value(x, f, mode, daz=daz, src=src, **pol)
    return bits, flags


def assert_same(xs, got_bits, got_flags, ref_bits, ref_flags, fmt, what=""):
    """Bits equal (or both NaN) and flags equal, element by element."""
    f = get_format(fmt)
    gb = np.asarray(got_bits).reshape(-1).astype(np.int64)
    gf = np.asarray(got_flags).reshape(-1).astype(np.int64)
    rb = np.asarray(ref_bits, dtype=np.int64)
    rf = np.asarray(ref_flags, dtype=np.int64)
    bad = []
    for i in np.flatnonzero((gb != rb) | (gf != rf)).tolist():
        same = gb[i] == rb[i] or (O.is_nan_bits(int(gb[i]), f) and O.is_nan_bits(int(rb[i]), f))
        if not same or gf[i] != rf[i]:
            bad.append(i)
    if bad:
        xs = np.asarray(xs).reshape(-1)
        rows = [f"x={float(xs[i])!r} ({float(xs[i]).hex()}): got {int(gb[i]):#x} flags "
                f"{int(gf[i])}, want {int(rb[i]):#x} flags {int(rf[i])}"
                for i in bad[:8]]
        raise AssertionError(f"{len(bad)}/{gb.size} mismatches {what} {f.name}:\n"
                             + "\n".join(rows))


def check_to_bits(xs, fmt, mode, **pol):
    src = {np.dtype(np.float64): "fp64", np.dtype(np.float32): "fp32",
           np.dtype(np.float16): "fp16"}[xs.dtype]
    b, fl = to_bits(xs, fmt, mode, return_flags=True, **pol)
    assert b.dtype == get_format(fmt).dtype and fl.dtype == np.uint8
    # without per-element flags another kernel may run (the hardware one): same
    # bits, and the context's sticky flags are the OR of the per-element ones
    with sf.localcontext() as ctx:
        b2 = to_bits(xs, fmt, mode, **pol)
    assert np.array_equal(b2, b)
    assert int(ctx.flags) == int(np.bitwise_or.reduce(fl.reshape(-1), initial=0))
    rb, rf = oracle_array(xs, fmt, mode, src=src, **pol)
    assert_same(xs, b, fl, rb, rf, fmt, f"{mode} {pol}")


def f64(bits64):
    return np.array(bits64, dtype=np.uint64).view(np.float64)


def classify(enc, fmt):
    """(nan, snan) boolean masks of an array of encodings, from the field layout
    (vectorized; agrees with oracle.decode, which test_classify_matches_decode checks)."""
    L = O.layout(get_format(fmt))
    e = enc.astype(np.int64)
    efield = (e >> L.M) & ((1 << L.E) - 1)
    frac = e & ((1 << L.M) - 1)
    sign = e >> (L.E + L.M)
    top = (1 << L.E) - 1
    if L.kind == "ieee":
        nan = (efield == top) & (frac != 0)
        return nan, nan & ((frac >> (L.M - 1)) == 0)
    if L.kind == "fn":
        nan = (efield == top) & (frac == (1 << L.M) - 1)
    else:
        nan = (sign == 1) & (efield == 0) & (frac == 0)
    return nan, np.zeros_like(nan)


@pytest.mark.parametrize("fmt", ["fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz", "e3m4"])
def test_classify_matches_decode(fmt):
    enc = np.arange(256, dtype=np.uint8)
    nan, snan = classify(enc, fmt)
    cls = [O.decode(int(b), get_format(fmt)).cls for b in enc]
    assert nan.tolist() == [c in ("qnan", "snan") for c in cls]
    assert snan.tolist() == [c == "snan" for c in cls]


def values_of(fmt):
    """Every encoding of a <= 16-bit format and its exact value per the oracle."""
    f = get_format(fmt)
    enc = np.arange(1 << f.nbits, dtype=f.dtype)
    return enc, [O.decode(int(b), f) for b in enc]


def boundary_values(fmt, binades=None, seed=0):
    """Constructed float64 inputs: for representable values v in a dense set of
    binades, v itself, the midpoints with both neighbours and the float64
    numbers just beside those midpoints; plus the subnormal boundaries, the
    overflow threshold and a few specials."""
    f = get_format(fmt)
    L = O.layout(f)
    rng = np.random.default_rng(seed)
    pts, mids = set(), set()
    exps = list(range(L.emin - 1, L.emax + 1))
    if binades is not None and len(exps) > binades:
        keep = exps[:binades // 3] + exps[-binades // 3:]
        keep += sorted(rng.choice(exps, binades - len(keep), replace=False).tolist())
        exps = sorted(set(keep))
    fracs = {0, 1, (1 << L.M) - 2, (1 << L.M) - 1}
    fracs |= set(rng.integers(0, 1 << L.M, 2).tolist())
    quantum = lambda e: Fraction(2) ** (max(e, L.emin) - L.M)
    for e in exps:
        for fr in fracs:
            if e < L.emin:          # subnormal binade: significand < 1
                v = Fraction(fr, 1 << L.M) * Fraction(2) ** L.emin
            else:
                v = (1 + Fraction(fr, 1 << L.M)) * Fraction(2) ** e
            q = quantum(e)
            pts.add(v)
            mids.add(v + q / 2)                     # the midpoint with the next value
            pts.add(v + q / 4 if fr % 2 else v + 3 * q / 4)
    # subnormal boundaries and the overflow threshold
    tiny = Fraction(2) ** (L.emin - L.M)
    two_emin = Fraction(2) ** L.emin
    mx = O.max_value(f)
    top_q = Fraction(2) ** (L.emax - L.M)
    # just below 2**emin: within half a full-precision ulp (tiny/4) of it, where
    # tininess before and after rounding differ
    mids |= {tiny / 2, 3 * tiny / 2, two_emin - tiny / 2, two_emin + tiny / 2,
             two_emin - tiny / 4, mx + top_q / 2}
    pts |= {two_emin - tiny / 8, two_emin - 3 * tiny / 8}
    pts |= {tiny, tiny / 4, 3 * tiny / 4, two_emin, two_emin - tiny, mx, mx + top_q / 4,
            mx + 3 * top_q / 4, mx + top_q, 2 * mx, Fraction(2) ** (L.emax + 1)}
    pts.discard(0)
    out = [float(c) for c in pts]
    for c in mids:       # the midpoint and the float64 numbers on either side
        x = float(c)
        out += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    out = np.array([x for x in out if 0 < x < math.inf] + [0.0, math.inf, 1e-320, 1e300])
    return np.concatenate([out, -out])


# --------------------------------------------------------------------------
# from_bits and round trips over every encoding
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", SMALL)
def test_from_bits_every_encoding_against_oracle(fmt):
    enc, dec = values_of(fmt)
    vals = from_bits(enc, fmt)
    assert vals.dtype == np.float64 and vals.shape == enc.shape
    for b, d, v in zip(enc.tolist(), dec, vals.tolist()):
        if d.cls in ("qnan", "snan"):
            assert math.isnan(v), hex(b)
        elif d.cls == "inf":
            assert v == (-math.inf if d.sign else math.inf), hex(b)
        else:
            assert Fraction(v) == d.value and math.copysign(1, v) == (-1) ** d.sign, hex(b)


@pytest.mark.parametrize("fmt", [n for n in SMALL if n in HOST_TYPES])
def test_from_bits_every_encoding_against_host_type(fmt):
    f = get_format(fmt)
    enc = np.arange(1 << f.nbits, dtype=f.dtype)
    ref = enc.view(HOST_TYPES[fmt]).astype(np.float64)
    got = from_bits(enc, f)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint64), ref[~nan].view(np.uint64))


@pytest.mark.parametrize("fmt", SMALL)
@pytest.mark.parametrize("host", [np.float64, np.float32])
def test_round_trip_every_encoding_every_mode(fmt, host):
    """from_bits then to_bits gives the encoding back exactly with no flag, in
    every mode; NaN stays NaN (a signaling NaN comes back quieted, with invalid)."""
    f = get_format(fmt)
    enc = np.arange(1 << f.nbits, dtype=f.dtype)
    vals = from_bits(enc, f).astype(host)      # exact: every value fits float32 too
    nan, snan = classify(enc, f)
    for mode in MODES:
        b, fl = to_bits(vals, f, mode, return_flags=True)
        assert np.array_equal(b[~nan], enc[~nan]), mode
        assert not fl[~nan].any(), mode
        assert classify(b[nan], f)[0].all()
        # float64 keeps a signaling NaN signaling; numpy's cast to float32 quiets it
        assert np.array_equal(fl[nan] == 16, snan[nan] & (host is np.float64))
        assert set(fl[nan].tolist()) <= {0, 16}
        if f.kind == "ieee":
            # quiet NaNs keep sign and payload exactly; signaling ones are quieted
            assert np.array_equal(b[nan], enc[nan] | (1 << (f.mbits - 1)))


def test_round_trip_fp16_from_float16_input():
    enc = np.arange(1 << 16, dtype=np.uint16)
    x = enc.view(np.float16)
    b, fl = to_bits(x, "fp16", return_flags=True)
    nan = np.isnan(x)
    assert np.array_equal(b[~nan], enc[~nan]) and not fl[~nan].any()
    assert np.isnan(from_bits(b[nan], "fp16")).all()


@pytest.mark.parametrize("fmt", ["tf32", "fp32"])
def test_round_trip_wide_formats_sample(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(5)
    if fmt == "tf32":
        enc = np.arange(1 << 19, dtype=np.uint32)            # all of them: it is cheap
    else:
        enc = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    vals = from_bits(enc, f)
    nan = np.isnan(vals)
    for mode in ("nearest_even", "odd", "downward"):
        b, fl = to_bits(vals, f, mode, return_flags=True)
        assert np.array_equal(b[~nan], enc[~nan]) and not fl[~nan].any()
    # a sample against the oracle's decoding
    for b in enc[rng.integers(0, enc.size, 2000)].tolist():
        d = O.decode(b, f)
        v = float(from_bits(np.array(b, f.dtype), f))
        if d.cls in ("qnan", "snan"):
            assert math.isnan(v)
        elif d.cls == "inf":
            assert math.isinf(v) and (v < 0) == bool(d.sign)
        else:
            assert Fraction(v) == d.value and math.copysign(1, v) == (-1) ** d.sign
    if fmt == "fp32":     # fp32 bits are float32 bits
        assert np.array_equal(vals[~nan], enc.view(np.float32)[~nan].astype(np.float64))


def test_fp32_round_trip_from_float32_every_mode():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    nan = np.isnan(x)
    for mode in MODES:
        b, fl = to_bits(x, "fp32", mode, return_flags=True)
        assert np.array_equal(b[~nan], x.view(np.uint32)[~nan]) and not fl[~nan].any()


# --------------------------------------------------------------------------
# to_bits against the oracle: constructed cases
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", BUILTIN)
@pytest.mark.parametrize("mode", MODES)
def test_to_bits_boundaries_against_oracle(fmt, mode):
    f = get_format(fmt)
    xs = boundary_values(f, binades=None if f.ebits <= 5 else 24)
    for pol in POLICIES:
        check_to_bits(xs, f, mode, **pol)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz", "tf32"])
def test_to_bits_boundaries_from_float32(fmt):
    f = get_format(fmt)
    xs = boundary_values(f, binades=12, seed=3).astype(np.float32)   # rounds once: fine
    for mode in MODES:
        check_to_bits(xs, f, mode)
        check_to_bits(xs, f, mode, tininess="before", ftz=True)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2"])
def test_to_bits_from_float16_input(fmt):
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)[::7]
    for mode in ("nearest_even", "odd", "upward"):
        check_to_bits(x, fmt, mode)
    check_to_bits(x, fmt, "toward_zero", daz=True, ftz=True)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e4m3fnuz", "e3m4", "e6m9fn"])
@pytest.mark.parametrize("policy", ["ieee", "saturate", "nan", None])
def test_overflow_policies(fmt, policy):
    f = get_format(fmt)
    mx = O.max_value(f)
    top_q = Fraction(2) ** (f.emax - f.mbits)
    xs = np.array([float(mx), float(mx + top_q / 4), float(mx + top_q / 2),
                   math.nextafter(float(mx + top_q / 2), 0), float(mx + top_q),
                   float(4 * mx), 1e300, math.inf])
    xs = np.concatenate([xs, -xs])
    for mode in MODES:
        if policy == "nan" and f.kind == "ieee":
            with pytest.raises(ValueError, match="infinity"):
                to_bits(xs, f, mode, overflow=policy)
            continue
        check_to_bits(xs, f, mode, overflow=policy)
    if policy == "saturate":
        # never infinity or NaN from a finite input; an infinite input stays infinite
        # where the format has infinities (IEEE: saturation is about overflow) and
        # becomes the largest finite value where it has none
        b = to_bits(xs, f, "nearest_even", overflow="saturate")
        got = np.abs(from_bits(b, f))
        fin = np.isfinite(xs)
        assert np.array_equal(got[fin], np.full(fin.sum(), float(mx)))
        assert (got[~fin] == (math.inf if f.kind == "ieee" else float(mx))).all()


def test_overflow_results_spelled_out():
    # fp16, 65520 (the midpoint above 65504): inf with overflow|inexact under RNE,
    # 65504 under RTZ, odd and downward (positive), -65504 under upward (negative)
    x = np.array([65520.0, -65520.0])
    assert to_bits(x, "fp16", "rne", return_flags=True)[0].tolist() == [0x7C00, 0xFC00]
    assert to_bits(x, "fp16", "rne", return_flags=True)[1].tolist() == [5, 5]
    assert to_bits(x, "fp16", "rtz").tolist() == [0x7BFF, 0xFBFF]
    assert to_bits(x, "fp16", "odd").tolist() == [0x7BFF, 0xFBFF]
    assert to_bits(x, "fp16", "downward").tolist() == [0x7BFF, 0xFC00]
    assert to_bits(x, "fp16", "upward").tolist() == [0x7C00, 0xFBFF]
    # OCP e4m3: 464 is the tie between 448 and (non-existent) 480 -> 448; above -> NaN
    b, fl = to_bits(np.array([464.0, 465.0, -500.0, math.inf]), "fp8_e4m3",
                    return_flags=True)
    assert b.tolist() == [0x7E, 0x7F, 0xFF, 0x7F] and fl.tolist() == [1, 5, 5, 16]
    b = to_bits(np.array([465.0, -1e9, -math.inf]), "fp8_e4m3", overflow="saturate")
    assert b.tolist() == [0x7E, 0xFE, 0xFE]
    # fnuz: the one NaN 0x80, whatever the sign
    b = to_bits(np.array([1e6, -1e6]), "fp8_e4m3fnuz")
    assert b.tolist() == [0x80, 0x80]


def test_underflow_tininess_spelled_out():
    # fp16 (emin = -14, p = 11). x = (2 - 2^-11) * 2^-15 lies below 2^-14 but
    # rounds (RNE) to 2^-14: tiny before rounding, not after rounding.
    x = np.array([float.fromhex("0x1.ffep-15")])   # 2^-14 - 2^-26
    b, fa = to_bits(x, "fp16", return_flags=True, tininess="after")
    _, fb = to_bits(x, "fp16", return_flags=True, tininess="before")
    assert b[0] == 0x0400 and fa[0] == 1 and fb[0] == 3
    # exact subnormals raise nothing; inexact ones raise underflow|inexact
    b, fl = to_bits(np.array([2.0 ** -24, 3 * 2.0 ** -26]), "fp16", return_flags=True)
    assert b.tolist() == [1, 1] and fl.tolist() == [0, 3]
    # ftz: an (exact or not) subnormal result becomes signed zero with underflow|inexact
    b, fl = to_bits(np.array([2.0 ** -24, -2.0 ** -20, 2.0 ** -14]), "fp16",
                    return_flags=True, ftz=True)
    assert b.tolist() == [0x0000, 0x8000, 0x0400] and fl.tolist() == [3, 3, 0]
    # fnuz has no -0: a negative underflow to zero gives +0
    b = to_bits(np.array([-1e-30, -0.0]), "fp8_e4m3fnuz")
    assert b.tolist() == [0, 0]


def test_daz_reads_subnormal_inputs_as_zero():
    x64 = np.array([5e-324, -2.0 ** -1030, 2.0 ** -1022, -2.0 ** -1022])
    b, fl = to_bits(x64, "fp16", "upward", daz=True, return_flags=True)
    # without daz, 5e-324 rounds up to the smallest fp16 subnormal
    assert b.tolist() == [0, 0x8000, 1, 0x8000] and fl.tolist() == [0, 0, 3, 3]
    assert to_bits(x64[:1], "fp16", "upward").tolist() == [1]
    x32 = np.array([2.0 ** -149, -2.0 ** -127, 2.0 ** -126], np.float32)
    b, fl = to_bits(x32, "bf16", daz=True, return_flags=True)
    assert b.tolist() == [0, 0x8000, 0x0080] and fl.tolist() == [0, 0, 0]
    b, fl = to_bits(x32, "bf16", return_flags=True)        # kept (IEEE): -2^-127 is exact
    assert b.tolist() == [0, 0x8040, 0x0080] and fl.tolist() == [3, 0, 0]
    # subnormals=False is ftz and daz together
    b, fl = to_bits(np.array([2.0 ** -20, 5e-324]), "fp16", subnormals=False,
                    return_flags=True)
    assert b.tolist() == [0, 0] and fl.tolist() == [3, 0]


# --------------------------------------------------------------------------
# to_bits against the oracle: hypothesis
# --------------------------------------------------------------------------
@st.composite
def format_values(draw, fmts=BUILTIN, width=64):
    """(format name, float64 array) with values spread over and around the
    format's range: random significands, representable values, midpoints and
    their float64 neighbours, and specials."""
    name = draw(st.sampled_from(fmts))
    L = O.layout(get_format(name))
    n = draw(st.integers(1, 24))
    out = []
    for _ in range(n):
        kind = draw(st.integers(0, 3))
        sign = draw(st.sampled_from([1.0, -1.0]))
        if kind == 0:
            e = draw(st.integers(L.emin - L.M - 3, L.emax + 2))
            m = draw(st.integers(1 << 52, (1 << 53) - 1))
            x = math.ldexp(m, e - 52)
        elif kind == 1:        # representable value, midpoint, or just beside either
            e = draw(st.integers(L.emin - 1, L.emax))
            fr = draw(st.integers(0, (1 << L.M) - 1))
            v = (Fraction(fr, 1 << L.M) if e < L.emin else 1 + Fraction(fr, 1 << L.M)) \
                * Fraction(2) ** max(e, L.emin)
            q = Fraction(2) ** (max(e, L.emin) - L.M)
            v += draw(st.sampled_from([0, q / 2, q / 4, 3 * q / 4]))
            x = float(v)
            for _ in range(draw(st.integers(-2, 2))):
                x = math.nextafter(x, math.inf)
            if width == 32:
                x = float(np.float32(x))
        elif kind == 2:
            x = draw(st.floats(width=width, allow_nan=True, allow_infinity=True))
            sign = 1.0
        else:
            x = draw(st.sampled_from([0.0, 5e-324, 1e-45, 2.0 ** -126, 1.0, 3.4e38]))
        out.append(sign * x)
    dt = np.float64 if width == 64 else np.float32
    return name, np.array(out, dtype=dt)


@given(format_values(), st.sampled_from(MODES), st.sampled_from(POLICIES), st.booleans())
def test_to_bits_float64_hypothesis(fv, mode, pol, daz):
    fmt, xs = fv
    check_to_bits(xs, fmt, mode, daz=daz, **pol)


@given(format_values(width=32), st.sampled_from(MODES), st.sampled_from(POLICIES),
       st.booleans())
def test_to_bits_float32_hypothesis(fv, mode, pol, daz):
    fmt, xs = fv
    check_to_bits(xs, fmt, mode, daz=daz, **pol)


@given(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=30),
       st.sampled_from(["e3m4", "e6m9fn", "e2m1", "e8m20fnuz", "e5m7", "e4m3b11"]),
       st.sampled_from(MODES), st.sampled_from(POLICIES))
def test_to_bits_custom_formats_hypothesis(xs, fmt, mode, pol):
    f = (sf.Format("e4m3b11", 4, 3, "fnuz", bias=11) if fmt == "e4m3b11"
         else get_format(fmt))
    xs = np.array(xs)
    scale = float(O.max_value(f)) / 1.7e308   # bring values into range
    check_to_bits(xs * scale, f, mode, **pol)


# --------------------------------------------------------------------------
# double rounding traps: one rounding from float64, never through float32
# --------------------------------------------------------------------------
TRAPS = [
    # (x, fp16 value, bf16 value) under nearest_even
    (1 + 2.0 ** -11 + 2.0 ** -40, 1.0009765625, 1.0),
    (1 + 3 * 2.0 ** -11 - 2.0 ** -40, 1.0009765625, 1.0),
    (65520 - 2.0 ** -30, 65504.0, 65536.0),
    (2.0 ** -25 + 2.0 ** -60, 2.0 ** -24, float(np.float32(2.0 ** -25))),
    (2.0 ** -24 + 2.0 ** -25 - 2.0 ** -60, 2.0 ** -24, 2.0 ** -24 + 2.0 ** -25),
    (1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -8, 1 + 2.0 ** -7),   # bf16 trap
    (1 + 2.0 ** -8 - 2.0 ** -40, 1 + 2.0 ** -8, 1.0),
]


@pytest.mark.parametrize("x, want16, want_bf16", TRAPS)
def test_double_rounding_traps(x, want16, want_bf16):
    a = np.array([x, -x])
    for fmt, want in (("fp16", want16), ("bf16", want_bf16)):
        got = quantize(a, fmt)
        assert got.tolist() == [want, -want], (fmt, x)
        # the oracle agrees, and so does MPFR
        f = get_format(fmt)
        assert O.decode(O.round_value(x, f, "rne")[0], f).value == Fraction(want)
        assert O.mpfr_round(x, f, "rne") == O.round_value(x, f, "rne")[0]
    # and the trap is real: going through float32 first lands elsewhere
    via32 = (float(np.float16(np.float32(x))), float(ml_dtypes.bfloat16(np.float32(x))))
    assert via32[0] != want16 or via32[1] != want_bf16 or x == 1 + 2.0 ** -8 - 2.0 ** -40


def test_double_rounding_near_midpoints_random():
    """10^4 float64 values within 2^-30 relative of fp16/bf16 midpoints (float32
    would land them exactly on the midpoint): direct rounding, checked against
    numpy's float16 (which rounds float64 directly) and the oracle."""
    rng = np.random.default_rng(11)
    n = 10_000
    mids16 = (rng.integers(0x0001, 0x7BFF, n).astype(np.uint16).view(np.float16)
              .astype(np.float64))
    ulp16 = np.spacing(mids16.astype(np.float16)).astype(np.float64)
    eps = rng.uniform(-1, 1, n) * 2.0 ** -30
    x = (mids16 + ulp16 / 2) * (1 + eps)
    assert np.array_equal(to_bits(x, "fp16"), x.astype(np.float16).view(np.uint16))
    sample = x[:1500]
    check_to_bits(sample, "fp16", "nearest_even")
    check_to_bits(sample, "bf16", "nearest_even")
    mid_bf = (rng.integers(0x0080, 0x7F7F, 1500).astype(np.uint16).astype(np.uint32) << 16
              | 0x8000).view(np.float32).astype(np.float64) * (1 + eps[:1500])
    check_to_bits(mid_bf, "bf16", "nearest_even")


# --------------------------------------------------------------------------
# NaN policies
# --------------------------------------------------------------------------
QNAN_PAYLOAD = 0x7FF8_0000_0000_0000 | 0x0002_A000_0000_0000 | 0x1234
SNAN_PAYLOAD = 0x7FF0_0000_0000_0000 | 0x0005_4000_0000_0000


def _nan_inputs():
    pats = [QNAN_PAYLOAD, SNAN_PAYLOAD, QNAN_PAYLOAD | (1 << 63), SNAN_PAYLOAD | (1 << 63),
            0x7FF0_0000_0000_0001]         # sNaN whose payload sits below fp16's bits
    return pats, f64(pats)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "tf32", "fp32", "fp8_e5m2"])
def test_nan_propagate_keeps_sign_and_top_payload_quieted(fmt):
    f = get_format(fmt)
    pats, x = _nan_inputs()
    b, fl = to_bits(x, f, nan="propagate", return_flags=True)
    for p, got, flag in zip(pats, b.tolist(), fl.tolist()):
        sign = p >> 63
        frac52 = p & ((1 << 52) - 1)
        want = ((sign << (f.nbits - 1)) | f.inf_bits | (frac52 >> (52 - f.mbits))
                | (1 << (f.mbits - 1)))
        assert got == want, (hex(p), hex(got), hex(want))
        assert flag == (0 if (p >> 51) & 1 else 16)
    # the oracle's view of invalid agrees
    assert [O.round_value(v, f)[1] for v in x.tolist()] == fl.tolist()


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz"])
def test_nan_canonical_and_pattern(fmt):
    f = get_format(fmt)
    pats, x = _nan_inputs()
    b, fl = to_bits(x, f, nan="canonical", return_flags=True)
    if f.kind == "ieee":
        assert (b == f.default_nan_bits).all()
    else:      # formats without payloads: their NaN (fn keeps the sign)
        assert all(O.is_nan_bits(int(v), f) for v in b)
    assert fl.tolist() == [0, 16, 0, 16, 16]
    if f.kind == "ieee":
        pattern = f.inf_bits | (1 << (f.mbits - 1)) | 1
        assert (to_bits(x, f, nan=pattern) == pattern).all()
        # inf - nothing: a non-NaN pattern is refused
        with pytest.raises(ValueError, match="NaN"):
            to_bits(x, f, nan=int(f.inf_bits))
    with pytest.raises(ValueError, match="NaN policy"):
        to_bits(x, f, nan="quiet")


def test_nan_fn_formats():
    _, x = _nan_inputs()
    assert to_bits(x, "fp8_e4m3").tolist() == [0x7F, 0x7F, 0xFF, 0xFF, 0x7F]
    assert to_bits(x, "fp8_e4m3fnuz").tolist() == [0x80] * 5
    # and from fn NaNs to IEEE formats: a NaN (the default one)
    b = convert(np.array([0x7F, 0xFF], np.uint8), "fp8_e4m3", "fp16", return_flags=True)
    assert all(O.is_nan_bits(int(v), get_format("fp16")) for v in b[0])
    assert b[1].tolist() == [0, 0]


def test_nan_between_formats():
    # fp16 payloads into bf16 (7 fraction bits: the top ones) and fp32 (left-aligned)
    x = np.array([0x7E55, 0xFD01, 0x7C01], np.uint16)    # qNaN, -sNaN, sNaN (low payload)
    b, fl = convert(x, "fp16", "bf16", return_flags=True)
    assert b.tolist() == [0x7FCA, 0xFFC0 | (0x101 >> 3), 0x7FC0] and fl.tolist() == [0, 16, 16]
    b, fl = convert(x, "fp16", "fp32", return_flags=True)
    assert b.tolist() == [0x7FCAA000, 0xFFE02000, 0x7FC02000] and fl.tolist() == [0, 16, 16]
    b = convert(x, "fp16", "fp32", nan="canonical")
    assert b.tolist() == [0x7FC00000] * 3


# --------------------------------------------------------------------------
# convert between formats
# --------------------------------------------------------------------------
PAIRS = [("bf16", "fp8_e4m3"), ("bf16", "fp8_e5m2"), ("fp16", "fp8_e4m3fnuz"),
         ("fp32", "fp16"), ("fp32", "bf16"), ("fp32", "tf32"), ("tf32", "fp16"),
         ("fp16", "bf16"), ("bf16", "fp16"), ("fp8_e5m2", "fp8_e4m3"),
         ("fp8_e4m3", "fp8_e5m2fnuz"), ("fp8_e5m2fnuz", "fp16")]


def _encodings_sample(f, n, seed):
    rng = np.random.default_rng(seed)
    if f.nbits <= 8:
        return np.arange(1 << f.nbits, dtype=f.dtype)
    r = rng.integers(0, 1 << f.nbits, n, dtype=np.uint64).astype(f.dtype)
    # plus all encodings around the target's range: small exponents and the ends
    edge = np.array([0, 1, 2, f.sign_mask | 1, f.max_bits, f.sign_mask | f.max_bits],
                    dtype=f.dtype)
    return np.concatenate([r, edge])


@pytest.mark.parametrize("src, dst", PAIRS)
def test_convert_against_oracle(src, dst):
    s, d = get_format(src), get_format(dst)
    enc = _encodings_sample(s, 600, zlib.crc32(f"{src}{dst}".encode()))
    for mode in MODES:
        for pol in (dict(), dict(tininess="before", ftz=True), dict(daz=True)):
            b, fl = convert(enc, s, d, mode, return_flags=True, **pol)
            assert b.dtype == d.dtype
            rb, rf = [], []
            for e in enc.tolist():
                dec = O.decode(e, s)
                if dec.cls == "finite" and pol.get("daz") and abs(dec.value) < 2.0 ** s.emin:
                    dec = O.Decoded("zero", dec.sign, Fraction(0))
                if dec.cls == "finite":
                    r = O.round_exact(dec.sign, abs(dec.value), d, mode,
                                      **{k: v for k, v in pol.items() if k != "daz"})
                elif dec.cls == "zero":
                    r = O.round_value(-0.0 if dec.sign else 0.0, d, mode)
                elif dec.cls == "inf":
                    r = O.round_value(-math.inf if dec.sign else math.inf, d, mode)
                else:
                    r = (O.nan_bits(d), 16 if dec.cls == "snan" else 0)
                rb.append(r[0])
                rf.append(r[1])
            assert_same(enc, b, fl, rb, rf, d, f"{src}->{dst} {mode} {pol}")


@pytest.mark.parametrize("src, host", [("fp16", np.float16), ("bf16", ml_dtypes.bfloat16),
                                       ("fp8_e4m3", ml_dtypes.float8_e4m3fn),
                                       ("fp8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz)])
def test_widening_is_exact(src, host):
    """Every encoding widened to fp32 is exact (no flag) and equals the host
    type's own float32 conversion."""
    s = get_format(src)
    enc = np.arange(1 << s.nbits, dtype=s.dtype)
    b, fl = convert(enc, s, "fp32", return_flags=True)
    ref = enc.view(host).astype(np.float32)
    nan = np.isnan(ref)
    assert np.array_equal(b[~nan], ref.view(np.uint32)[~nan])
    assert np.isnan(b.view(np.float32)[nan]).all()
    snan = classify(enc, s)[1]
    assert np.array_equal(fl != 0, snan) and set(fl[snan].tolist()) <= {16}


def test_fp32_bits_to_fp16_matches_numpy():
    rng = np.random.default_rng(8)
    bits = rng.integers(0, 1 << 32, 300_000, dtype=np.uint64).astype(np.uint32)
    b = convert(bits, "fp32", "fp16")
    ref = bits.view(np.float32).astype(np.float16)
    nan = np.isnan(ref)
    assert np.array_equal(b[~nan], ref.view(np.uint16)[~nan])
    assert np.isnan(from_bits(b[nan], "fp16")).all()


def test_bf16_to_fp8_matches_ml_dtypes():
    """All bf16 encodings -> fp8 (RNE, default overflow) equal ml_dtypes going
    bf16 -> float32 (exact) -> fp8 (one rounding)."""
    enc = np.arange(1 << 16, dtype=np.uint16)
    x32 = enc.view(ml_dtypes.bfloat16).astype(np.float32)
    for dst, host in (("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2),
                      ("fp8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz)):
        b = convert(enc, "bf16", dst)
        ref = x32.astype(host).view(np.uint8)
        same = (b == ref) | (np.isnan(b.view(host)) & np.isnan(ref.view(host)))
        assert same.all(), (dst, np.flatnonzero(~same)[:5])


# --------------------------------------------------------------------------
# MPFR agreement on a sample
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "tf32", "fp8_e5m2", "e3m4"])
def test_against_mpfr(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(21)
    L = O.layout(f)
    e = rng.integers(L.emin - L.M - 2, L.emax + 2, 400)
    x = np.ldexp(rng.uniform(1, 2, 400), e) * rng.choice([-1.0, 1.0], 400)
    x = np.concatenate([x, boundary_values(f, binades=8)[::5]])
    for mode in ("nearest_even", "nearest_away", "toward_zero", "upward", "downward"):
        b = to_bits(x, f, mode)
        ref = [O.mpfr_round(v, f, mode) for v in x.tolist()]
        bad = [(v, int(g), r) for v, g, r in zip(x.tolist(), b, ref) if g != r]
        assert not bad, (mode, bad[:5])


# --------------------------------------------------------------------------
# stochastic rounding
# --------------------------------------------------------------------------
def _splitmix_bits(key, idx, nbits):
    """The library's stated random source (softfloat/_kernels/core.py rand_bits:
    SplitMix64's finaliser over key + (idx+1) * golden), rewritten in Python."""
    m = (1 << 64) - 1
    z = (key + (idx + 1) * 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    z ^= z >> 31
    return z >> (64 - nbits)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz"])
@pytest.mark.parametrize("sr_bits", [32, 3])
def test_stochastic_exact_per_element(fmt, sr_bits):
    """With the random integers known, every element equals the oracle's
    round_exact(..., sr_random=r): values and flags (pins the up rule
    r < ceil(frac * 2**sr_bits) and the stream)."""
    from softfloat.context import random_key
    f = get_format(fmt)
    xs = boundary_values(f, binades=10, seed=4)
    b, fl = to_bits(xs, f, "stochastic", seed=1234, sr_bits=sr_bits, return_flags=True)
    key = random_key(1234)
    rb, rf = [], []
    for i, x in enumerate(xs.tolist()):
        r = _splitmix_bits(key, i, sr_bits)
        if x == 0 or math.isinf(x):
            res = O.round_value(x, f, "stochastic", sr_random=r, sr_bits=sr_bits)
        else:
            res = O.round_exact(int(x < 0), abs(Fraction(x)), f, "stochastic", sr_bits=sr_bits,
                                sr_random=r)
        rb.append(res[0])
        rf.append(res[1])
    assert_same(xs, b, fl, rb, rf, f, f"stochastic sr_bits={sr_bits}")


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
def test_stochastic_only_neighbours(fmt):
    f = get_format(fmt)
    rng = np.random.default_rng(3)
    x = np.ldexp(rng.uniform(1, 2, 2000), rng.integers(f.emin - f.mbits - 1, f.emax, 2000))
    got = quantize(x, f, "stochastic", seed=7)
    for xi, g in zip(x.tolist(), got.tolist()):
        lo, hi = O.neighbours(Fraction(xi), f)
        assert math.isfinite(g) and Fraction(g) in (lo, hi), (xi, g)


@pytest.mark.parametrize("frac", [Fraction(1, 8), Fraction(1, 3), Fraction(1, 2),
                                  Fraction(9, 10), Fraction(1, 1000)])
@pytest.mark.parametrize("sr_bits", [32, 4])
def test_stochastic_frequency(frac, sr_bits):
    """The up-frequency over 200,000 draws is the exact probability
    ceil(frac * 2**sr_bits) / 2**sr_bits within 5 sigma."""
    n = 200_000
    lo = Fraction(1) + Fraction(3, 1024)               # fp16: step 2^-10 here
    x = float(lo + frac * Fraction(1, 1024))
    frac_exact = (Fraction(x) - lo) * 1024
    p = Fraction(math.ceil(frac_exact * 2 ** sr_bits), 2 ** sr_bits)
    b = to_bits(np.full(n, x), "fp16", "stochastic", seed=99, sr_bits=sr_bits)
    lo_bits = O.round_exact(0, lo, get_format("fp16"), "rne")[0]
    assert set(np.unique(b).tolist()) <= {lo_bits, lo_bits + 1}
    ups = int((b == lo_bits + 1).sum())
    sigma = math.sqrt(n * float(p) * (1 - float(p)))
    assert abs(ups - n * float(p)) <= 5 * sigma + 1, (ups, n * float(p), sigma)


def test_stochastic_small_sr_bits_rounds_probability_up():
    # sr_bits=2: frac 0.01 rounds up with probability ceil(0.04)/4 = 1/4, not 0.01
    n = 40_000
    x = 1 + 0.01 * 2.0 ** -10
    b = to_bits(np.full(n, x), "fp16", "sr", seed=5, sr_bits=2)
    ups = int((b == 0x3C01).sum())
    assert abs(ups - n / 4) <= 5 * math.sqrt(n * 3 / 16)


def test_stochastic_reproducibility_and_generator():
    x = np.linspace(1, 2, 5001)
    a = to_bits(x, "bf16", "stochastic", seed=42)
    assert np.array_equal(a, to_bits(x, "bf16", "stochastic", seed=42))
    assert not np.array_equal(a, to_bits(x, "bf16", "stochastic", seed=43))
    g = np.random.default_rng(0)
    r1 = to_bits(x, "bf16", "stochastic", rng=g)
    r2 = to_bits(x, "bf16", "stochastic", rng=g)
    assert not np.array_equal(r1, r2)                       # the generator advanced
    g2 = np.random.default_rng(0)
    assert np.array_equal(r1, to_bits(x, "bf16", "stochastic", rng=g2))
    assert np.array_equal(r2, to_bits(x, "bf16", "stochastic", rng=g2))
    # a seed in the context works like the keyword
    with sf.localcontext(seed=42):
        assert np.array_equal(a, to_bits(x, "bf16", "stochastic"))
    # exact values never move and raise nothing
    e = from_bits(np.arange(0, 0x7F80, 7, dtype=np.uint16), "bf16")
    b, fl = to_bits(e, "bf16", "stochastic", seed=1, return_flags=True)
    assert np.array_equal(b, np.arange(0, 0x7F80, 7, dtype=np.uint16)) and not fl.any()
    with pytest.raises(TypeError, match="seed"):
        to_bits(x, "bf16", "stochastic", seed=1, rng=g)
    with pytest.raises(TypeError, match="seed"):
        to_bits(x, "bf16", "stochastic", seed="abc")
    with pytest.raises(ValueError, match="sr_bits"):
        to_bits(x, "bf16", "stochastic", sr_bits=33)
    with pytest.raises(ValueError, match="sr_bits"):
        to_bits(x, "bf16", "stochastic", sr_bits=0)


# --------------------------------------------------------------------------
# bad input, shapes
# --------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.arange(3), np.array([True, False]), np.array([1 + 2j]),
                                 np.array([1.0, None], dtype=object), np.array(["1.0"]), 3, True,
                                 np.arange(3, dtype=np.uint16)])
def test_to_bits_refuses_non_float_values(bad):
    with pytest.raises(TypeError, match="float"):
        to_bits(bad, "fp16")
    with pytest.raises(TypeError, match="float"):
        quantize(bad, "bf16")


def test_bits_of_wrong_dtype_or_range():
    with pytest.raises(TypeError, match="uint16"):
        from_bits(np.array([1.0]), "fp16")
    with pytest.raises(TypeError, match="uint16"):
        from_bits(np.array([1], np.int32), "fp16")
    with pytest.raises(TypeError, match="uint8"):
        from_bits(np.array([1], np.uint16), "fp8_e4m3")
    with pytest.raises(ValueError, match="range"):
        from_bits(np.array([1 << 19], np.uint32), "tf32")
    with pytest.raises(ValueError, match="range"):
        from_bits(np.array([-1, 3], np.int64), "fp16")
    with pytest.raises(ValueError, match="not an encoding"):
        from_bits(1 << 19, "tf32")
    with pytest.raises(ValueError, match="range"):
        convert(np.array([0, 1 << 19], np.uint32), "tf32", "fp16")
    with pytest.raises(TypeError, match="uint32"):
        convert(np.array([0], np.uint16), "fp32", "fp16")
    with pytest.raises(TypeError):
        from_bits(np.array([True]), "fp8_e5m2")
    with pytest.raises(ValueError, match="fp64|float64"):
        convert(np.array([0], np.uint64), "fp64", "fp16")
    # a Python int in range is accepted; to_bits of float values is where values go
    assert float(from_bits(0x3C00, "fp16")) == 1.0


def test_unknown_names():
    x = np.array([1.0])
    with pytest.raises(ValueError, match="unknown format"):
        to_bits(x, "fp12")
    with pytest.raises(ValueError, match="unknown rounding"):
        to_bits(x, "fp16", "nearest_odd")
    with pytest.raises(ValueError, match="nearest_even"):
        quantize(x, "fp16", "banker")
    with pytest.raises(ValueError, match="unknown format"):
        convert(np.array([0], np.uint16), "fp16", "fp9")
    with pytest.raises(ValueError, match="overflow"):
        to_bits(x, "fp16", overflow="wrap")
    with pytest.raises(ValueError, match="tininess"):
        to_bits(x, "fp16", tininess="during")
    with pytest.raises(TypeError, match="subnormals"):
        to_bits(x, "fp16", subnormals="yes")


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (2, 3, 4), (1,)])
def test_shapes_preserved(shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape) * 100
    x = np.asarray(x, dtype=np.float64)
    b, fl = to_bits(x, "fp16", return_flags=True)
    assert b.shape == shape and fl.shape == shape and b.dtype == np.uint16
    v = from_bits(b, "fp16")
    assert v.shape == shape
    assert np.array_equal(v, x.astype(np.float16).astype(np.float64))
    q, qf = quantize(x, "fp16", return_flags=True)
    assert q.shape == shape and qf.shape == shape and np.array_equal(q, v)
    c = convert(b, "fp16", "fp8_e4m3")
    assert c.shape == shape and c.dtype == np.uint8
    x32 = x.astype(np.float32)
    assert to_bits(x32, "bf16").shape == shape


def test_scalars_and_lists_and_views():
    assert to_bits(1.0, "fp16").shape == () and int(to_bits(1.0, "fp16")) == 0x3C00
    assert to_bits([1.0, 2.0], "bf16").tolist() == [0x3F80, 0x4000]
    # non-contiguous input
    x = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2].T
    assert np.array_equal(to_bits(x, "fp16"), x.astype(np.float16).view(np.uint16))
    # big-endian floats are values too (not silently reinterpreted)
    xb = np.array([1.5, -2.0], dtype=">f8")
    try:
        got = to_bits(xb, "fp16")
    except TypeError:
        pass
    else:
        assert got.tolist() == [0x3E00, 0xC000]


@pytest.mark.parametrize("src, dst", [("fp16", "bf16"), ("fp32", "fp16"), ("bf16", "fp8_e4m3"),
                                      ("fp16", "fp8_e5m2fnuz")])
def test_stochastic_convert_per_element(src, dst):
    """convert with stochastic rounding, element by element against the oracle
    with the same random integers (both the general and the fast kernel)."""
    from softfloat.context import random_key
    s, d = get_format(src), get_format(dst)
    enc = _encodings_sample(s, 1500, 77)
    b, fl = convert(enc, s, d, "stochastic", seed=2024, sr_bits=13, return_flags=True)
    key = random_key(2024)
    rb, rf = [], []
    for i, e in enumerate(enc.tolist()):
        dec = O.decode(e, s)
        if dec.cls == "finite":
            r = O.round_exact(dec.sign, abs(dec.value), d, "stochastic", sr_bits=13,
                              sr_random=_splitmix_bits(key, i, 13))
        elif dec.cls in ("zero", "inf"):
            x = (0.0 if dec.cls == "zero" else math.inf) * (-1) ** dec.sign
            r = O.round_value(x, d, "stochastic")
        else:
            r = (O.nan_bits(d), 16 if dec.cls == "snan" else 0)
        rb.append(r[0])
        rf.append(r[1])
    assert_same(enc, b, fl, rb, rf, d, f"{src}->{dst} stochastic")


def test_numpy_integer_scalar_of_wrong_dtype_is_refused():
    # a uint16 scalar is not an fp8 encoding, even when its value is in range
    with pytest.raises(TypeError, match="uint8"):
        sf.from_bits(np.uint16(0x38), "fp8_e4m3")
    assert sf.from_bits(np.uint8(0x38), "fp8_e4m3") == 1.0
    assert sf.from_bits(0x38, "fp8_e4m3") == 1.0      # a Python int is fine


def test_fn_nan_policy_canonical_and_overflow_sign():
    # canonical NaN policy gives the format's NaN; overflow to NaN keeps the sign
    assert int(sf.to_bits(np.array(-np.nan), "fp8_e4m3", nan="canonical")) == 0x7F
    assert int(sf.to_bits(np.array(-np.nan), "fp8_e4m3")) == 0xFF
    assert int(sf.to_bits(np.float32(-1000.0), "fp8_e4m3", nan="canonical")) == 0xFF
