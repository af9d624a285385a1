"""P3109 formats: decoding against the published value tables (digests in the
default suite, the tables themselves when the P3109/Public repository is here)
and against the exact reference (tests/p3109_reference.py); projection
(to_bits, convert) against the reference, exhaustively for every format of 8
bits or fewer in every rounding and saturation mode; names and policies."""
import json
import os
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import p3109
from softfloat.formats import get_format

import p3109_reference as ref
from p3109_tables import all_names, digest_of_keys, digest_of_values, read_table, repo

HERE = os.path.dirname(__file__)
DIGESTS = json.load(open(os.path.join(HERE, "p3109_digests.json")))
SMALL = [n for n in all_names() if int(n[6:].split("p")[0]) <= 8]


def lib_keys(name):
    """The library's decoding of every code as (kind, odd significand, exponent)."""
    f = get_format(name)
    codes = np.arange(1 << f.nbits).astype(f.dtype)
    cls, sign, exp, sig = p3109.decode_parts(codes, f)
    tz = np.zeros_like(sig)
    m = sig.copy()
    nz = m != 0
    while True:
        even = nz & (m % 2 == 0)
        if not even.any():
            break
        m[even] //= 2
        tz[even] += 1
    kind = np.where(cls == 2, np.where(sign == 1, 2, 1), np.where(cls == 3, 3, 0))
    fin = cls == 1
    return np.stack([kind, np.where(fin, np.where(sign == 1, -m, m), 0),
                     np.where(fin, exp + tz, 0)], axis=1)


def test_digests_cover_every_table():
    assert sorted(DIGESTS) == sorted(all_names())
    assert len(DIGESTS) == 504


def test_every_format_decodes_as_the_published_tables():
    # every format K = 3..16 (4.6 million codes): the library's exact decoding
    # against the digests of the published tables
    bad = [n for n in all_names() if digest_of_keys(lib_keys(n)) != DIGESTS[n]]
    assert bad == []


@pytest.mark.parametrize("name", SMALL)
def test_reference_decoding_and_from_bits(name):
    K, P, s, e = ref.parse_name(name)
    f = get_format(name)
    vals = [ref.decode(c, K, P, s, e) for c in range(2 ** K)]
    assert digest_of_values(vals) == DIGESTS[name]       # the reference = the tables
    got = sf.from_bits(np.arange(2 ** K).astype(f.dtype), f)
    for c, v in enumerate(vals):
        if v == ref.NAN:
            assert np.isnan(got[c])
        elif v in (ref.INF, ref.NINF):
            assert got[c] == (np.inf if v == ref.INF else -np.inf)
        else:
            assert Fraction(float(got[c])) == v, (name, c)


def test_tables_against_reference():
    r = repo()
    if r is None:
        pytest.skip("P3109/Public repository not here (set SOFTFLOAT_P3109_REPO); the "
                    "digests test covers the tables")
    for name in all_names():
        K = int(name[6:].split("p")[0])
        if K > 8:
            continue                                   # the slow test reads the rest
        rows = read_table(name, r)
        fmt = ref.parse_name(name)
        assert [ref.decode(c, *fmt) for c, _, _ in rows] == [v for _, v, _ in rows], name
        assert digest_of_values([v for _, v, _ in rows]) == DIGESTS[name]


@pytest.mark.slow
def test_all_tables_against_reference_and_digests():
    r = repo()
    if r is None:
        pytest.skip("P3109/Public repository not here (set SOFTFLOAT_P3109_REPO)")
    for name in all_names():
        rows = read_table(name, r)
        fmt = ref.parse_name(name)
        assert [ref.decode(c, *fmt) for c, _, _ in rows] == [v for _, v, _ in rows], name
        assert digest_of_values([v for _, v, _ in rows]) == DIGESTS[name], name


# ---------------------------------------------------------------------------
# projection: to_bits (float64 -> format) and convert against the reference
# ---------------------------------------------------------------------------
MODES = ref.MODES
SATS = ref.SATS


def probe_values(name):
    """Every finite value of the format, the midpoints and quarter points between
    neighbours, values past the largest, below the smallest, their negatives,
    zero and the infinities: exact float64s, as Fractions."""
    K, P, s, e = ref.parse_name(name)
    fin = sorted({v for v in (ref.decode(c, K, P, s, e) for c in range(2 ** K))
                  if v not in (ref.INF, ref.NINF, ref.NAN) and v >= 0})
    pts = set(fin)
    for a, b in zip(fin, fin[1:]):
        d = b - a
        pts.update((a + d / 4, a + d / 2, a + 3 * d / 4))
    top, ulp = fin[-1], fin[-1] - fin[-2]
    pts.update((top + ulp / 4, top + ulp / 2, top + 3 * ulp / 4, top + ulp, top + 2 * ulp,
                2 * top, 4 * top))
    tiny = fin[1]
    pts.update((tiny / 2, tiny / 4, 3 * tiny / 4))
    pts = sorted(pts)
    return pts + [-p for p in pts if p != 0]


def check_projection(name, modes=MODES, sats=SATS):
    f = get_format(name)
    fmt = ref.parse_name(name)
    vals = probe_values(name)
    x = np.array([float(v) for v in vals] + [np.inf, -np.inf, np.nan])
    assert all(Fraction(float(v)) == v for v in vals)
    for mode in modes:
        R = [ref.round_to_precision(v, fmt[1], ref.bias(fmt[0], fmt[1], fmt[2]), mode)
             for v in vals] + [ref.INF, ref.NINF, ref.NAN]
        for sat in sats:
            want = [ref.encode(ref.saturate(r, mode, sat, *fmt), *fmt) if r != ref.NAN
                    else ref.encode(ref.NAN, *fmt) for r in R]
            got = sf.to_bits(x, f, mode, saturation=sat)
            bad = np.flatnonzero(got.astype(np.int64) != np.array(want))
            assert bad.size == 0, (name, mode, sat, [(x[i], int(got[i]), want[i])
                                                     for i in bad[:5]])


# the default suite: every format of K <= 5 and the report's required ones
FAST_SMALL = [n for n in SMALL if int(n[6:].split("p")[0]) <= 5] + [
    "binary8p3se", "binary8p4se", "binary8p1uf"]


@pytest.mark.parametrize("name", FAST_SMALL)
def test_projection_fast_subset(name):
    check_projection(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SMALL if n not in FAST_SMALL])
def test_projection_every_small_format(name):
    check_projection(name)


# ---------------------------------------------------------------------------
# the fast paths against the general kernels (same bits, same flags)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["binary8p4se", "binary8p3sf", "binary8p2se", "binary16p11se",
                                  "binary12p5sf", "binary8p3ue", "binary8p1se"])
def test_fast_paths_match_general_kernels(name):
    f = get_format(name)
    rng = np.random.default_rng(7)
    fin = np.flatnonzero(np.isfinite(sf.from_bits(np.arange(1 << f.nbits).astype(f.dtype), f)))
    top = float(sf.from_bits(f.dtype.type(f.max_bits), f))
    x = np.concatenate([rng.standard_normal(3000) * top / 4, rng.standard_normal(500) * top,
                        rng.standard_normal(500) * 2.0 ** f.min_exponent * 8,
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, top * 1.1, -top * 1.1]])
    a = rng.choice(fin, 4000).astype(f.dtype)
    b = rng.choice(np.arange(1 << f.nbits), 4000).astype(f.dtype)
    # every fp16 / bf16 encoding but the signaling NaNs (they take the general path)
    h = np.arange(1 << 16).astype(np.uint16)
    srcs = []
    for src, E, M in (("fp16", 5, 10), ("bf16", 8, 7)):
        mag = h & 0x7FFF
        snan = (mag > (((1 << E) - 1) << M)) & (((mag >> (M - 1)) & 1) == 0)
        srcs.append((src, h[~snan]))
    for mode in MODES:
        for sat in SATS:
            fast = [sf.to_bits(x, f, mode, saturation=sat, return_flags=True),
                    sf.to_bits(x.astype(np.float32), f, mode, saturation=sat, return_flags=True)]
            fast += [op(a, b, f, mode, saturation=sat, return_flags=True)
                     for op in (sf.add, sf.sub, sf.mul, sf.div)]
            fast += [sf.convert(h, src, f, mode, saturation=sat, return_flags=True)
                     for src, h in srcs]
            with sf.localcontext(fast_paths=False):
                slow = [sf.to_bits(x, f, mode, saturation=sat, return_flags=True),
                        sf.to_bits(x.astype(np.float32), f, mode, saturation=sat,
                                   return_flags=True)]
                slow += [op(a, b, f, mode, saturation=sat, return_flags=True)
                         for op in (sf.add, sf.sub, sf.mul, sf.div)]
                slow += [sf.convert(h, src, f, mode, saturation=sat, return_flags=True)
                         for src, h in srcs]
            for (bf, ff), (bs, fs) in zip(fast, slow):
                assert np.array_equal(bf, bs) and np.array_equal(ff, fs), (name, mode, sat)


def test_names_and_policies():
    assert get_format("Binary8p3se") is get_format("binary8p3se")
    assert get_format("BINARY8P4SF").kind == "p3109sf"
    for bad in ("binary8p8se", "binary17p3se", "binary2p1ue", "binary8p0se", "binary08p3se"):
        with pytest.raises(ValueError):
            get_format(bad)
    with pytest.raises(ValueError, match="ambiguous"):
        get_format("e04m03")
    assert get_format("e4m3").kind == "fn" and get_format("e4m3ieee").kind == "ieee"
    assert get_format("e4m3ieee").max == 240.0 and get_format("e4m3").max == 448.0
    with pytest.raises(ValueError, match="P3109 formats only"):
        sf.to_bits(1.0, "fp16", saturation="satfinite")
    with pytest.raises(ValueError, match="unknown saturation"):
        sf.to_bits(1.0, "binary8p3se", saturation="clamp")
    with pytest.raises(ValueError, match="not for P3109"):
        sf.to_bits(1.0, "binary8p3se", overflow="saturate")
    with sf.localcontext(saturation="satfinite"):
        assert sf.to_bits(1e9, "binary8p4se") == 0x7E
    assert sf.to_bits(1e9, "binary8p4se") == 0x7F
    # x / 0 is NaN in P3109 formats; neg keeps 0 and NaN
    assert sf.div(np.uint8(0x40), np.uint8(0), "binary8p3se") == 0x80
    assert list(sf.neg(np.array([0, 0x80, 0x40], np.uint8), "binary8p3se")) == [0, 0x80, 0xC0]
    assert list(sf.neg(np.array([0, 0x80], np.uint8), "binary8p3ue")) == [0, 0xFF]


@pytest.mark.parametrize("src", ["fp16", "bf16"])
def test_sources_widened_through_float32_match_the_general_kernel(src):
    """fp16/bf16 -> signed P3109 formats whose range starts below the source's
    (binary8p3se, binary8p3sf): the exact float32 step before the branch-free
    kernel, against the general kernel, on every encoding but the signaling NaNs
    (with one of those the whole call takes the general kernel: also checked)."""
    f = get_format(src)
    allb = np.arange(1 << 16, dtype=np.uint16)
    snan = f.is_nan_bits(allb) & (((allb >> (f.mbits - 1)) & 1) == 0)
    assert snan.sum() == 2 * ((1 << (f.mbits - 1)) - 1)
    for bits in (allb[~snan], allb):
        for name in ("binary8p3se", "binary8p3sf"):
            for mode in ("nearest_even", "toward_zero", "upward", "odd"):
                for sat in ("satnone", "satfinite", "satpropagate"):
                    fast = sf.convert(bits, src, name, mode, saturation=sat, return_flags=True)
                    with sf.localcontext(fast_paths=False):
                        slow = sf.convert(bits, src, name, mode, saturation=sat,
                                          return_flags=True)
                    assert np.array_equal(fast[0], slow[0]), (src, name, mode, sat)
                    assert np.array_equal(fast[1], slow[1]), (src, name, mode, sat)
