"""The P3109 operations (softfloat.p3109) against the exact reference
(tests/p3109_reference.py): operands and result in different formats, one
rounding, every rounding and saturation mode; exhaustive over small formats,
random operands over the 8-bit ones."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import p3109
from softfloat.formats import get_format

import p3109_reference as ref

MODES, SATS = ref.MODES, ref.SATS
RNG = np.random.default_rng(3109)


def all_codes(name):
    f = get_format(name)
    return np.arange(1 << f.nbits).astype(f.dtype)


def pairs(fx, fy, n=None):
    """Every pair of codes (or n random ones)."""
    a, b = all_codes(fx), all_codes(fy)
    if n is None:
        x, y = np.meshgrid(a, b, indexing="ij")
        return x.ravel(), y.ravel()
    return RNG.choice(a, n), RNG.choice(b, n)


def check(got, want, ctx):
    got = [int(v) for v in np.ravel(got)]
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, (ctx, [(i, got[i], want[i]) for i in bad[:5]])


BINARY = {"add": (p3109.add, ref.op_add), "subtract": (p3109.subtract,
                                                        lambda x, y: ref.op_add(x, ref._neg(y))),
          "multiply": (p3109.multiply, ref.op_mul), "divide": (p3109.divide, ref.op_div)}

# (x format, y format, result format): small ones exhaustively
CASES = [("binary4p2sf", "binary4p2sf", "binary8p3se"), ("binary4p2sf", "binary5p2se", "binary4p2sf"),
         ("binary5p3ue", "binary4p1se", "binary5p2uf"), ("binary4p2se", "binary4p3uf", "binary6p1se")]


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("fx,fy,fr", CASES)
def test_binary_ops_exhaustive_small(op, fx, fy, fr):
    fn, oracle = BINARY[op]
    x, y = pairs(fx, fy)
    exact = [oracle(ref.value(int(a), fx), ref.value(int(b), fy)) for a, b in zip(x, y)]
    for mode in MODES:
        for sat in SATS:
            got = fn(x, y, fx, fy, fr, mode, saturation=sat)
            check(got, [ref.project_to(v, fr, mode, sat) for v in exact], (op, mode, sat))


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("fx,fy,fr", [("binary8p3se", "binary8p4se", "binary8p4se"),
                                      ("binary8p4se", "binary8p3se", "binary32"),
                                      ("binary8p3se", "binary8p3se", "binary16"),
                                      ("binary8p4se", "binary4p2sf", "bfloat16"),
                                      ("binary8p1uf", "binary8p3ue", "binary8p5uf")])
def test_binary_ops_random_8bit(op, fx, fy, fr):
    fn, oracle = BINARY[op]
    x, y = pairs(fx, fy, 400)
    exact = [oracle(ref.value(int(a), fx), ref.value(int(b), fy)) for a, b in zip(x, y)]
    for mode in MODES:
        for sat in SATS:
            got = fn(x, y, fx, fy, fr, mode, saturation=sat)
            check(got, [ref.project_to(v, fr, mode, sat) for v in exact], (op, mode, sat))


@pytest.mark.parametrize("fr", ["binary8p3se", "binary32",
                                pytest.param("binary4p2sf", marks=pytest.mark.slow),
                                pytest.param("binary6p3ue", marks=pytest.mark.slow)])
def test_unary_ops_exhaustive(fr):
    for fx in ("binary8p3se", "binary8p4se", "binary4p2sf", "binary6p2uf"):
        x = all_codes(fx)
        vals = [ref.value(int(c), fx) for c in x]
        for mode in MODES:
            for sat in SATS:
                for fn, oracle in ((p3109.recip, lambda v: ref.op_div(Fraction(1), v)),
                                   (p3109.sqrt, ref.op_sqrt), (p3109.project, lambda v: v)):
                    got = fn(x, fx, fr, mode, saturation=sat)
                    check(got, [ref.project_to(oracle(v), fr, mode, sat) for v in vals],
                          (fn.__name__, fx, fr, mode, sat))
                got = p3109.negate(x, fx, fr, mode, saturation=sat)
                check(got, [ref.project_to(ref._neg(v), fr, mode, sat) for v in vals],
                      ("negate", fx, fr, mode, sat))


@pytest.mark.parametrize("fr", ["binary32", "binary16", "binary8p3se"])
def test_fma_faa_random(fr):
    fx, fy, fz = "binary8p4se", "binary8p3se", "binary16" if fr != "binary8p3se" else "binary8p5sf"
    n = 300
    x, y = pairs(fx, fy, n)
    z = RNG.integers(0, 1 << get_format(fz).nbits, n).astype(get_format(fz).dtype)
    X = [(ref.value(int(a), fx), ref.value(int(b), fy), ref.value(int(c), fz))
         for a, b, c in zip(x, y, z)]
    for mode in MODES:
        for sat in SATS:
            got = p3109.fma(x, y, z, fx, fy, fz, fr, mode, saturation=sat)
            check(got, [ref.project_to(ref.op_fma(*v), fr, mode, sat) for v in X], ("fma", mode))
            got = p3109.faa(x, y, z, fx, fy, fz, fr, mode, saturation=sat)
            check(got, [ref.project_to(ref.op_add(ref.op_add(a, b), c), fr, mode, sat)
                        for a, b, c in X], ("faa", mode))


@pytest.mark.parametrize("nb", [24, pytest.param(300, marks=pytest.mark.slow)])
def test_block_dot_product_and_reduce_add(nb):
    fx, fy, fs = "binary8p4se", "binary8p3se", "binary8p1uf"
    B = 16
    x = RNG.integers(0, 256, (nb, B)).astype(np.uint8)
    y = RNG.integers(0, 256, (nb, B)).astype(np.uint8)
    # mostly finite operands, a few specials
    x[RNG.random((nb, B)) < 0.9] &= 0x7E
    y[RNG.random((nb, B)) < 0.9] &= 0x7E
    sx = RNG.integers(110, 146, nb).astype(np.uint8)
    sy = RNG.integers(110, 146, nb).astype(np.uint8)
    sx[:3] = (0, 255, 128)
    for fr in ("binary32", "binary16", "binary8p3se"):
        for mode in MODES:
            for sat in SATS:
                got = p3109.block_dot_product(sx, x, sy, y, fs, fx, fs, fy, fr, mode,
                                              saturation=sat)
                want = []
                for i in range(nb):
                    S, T = ref.value(int(sx[i]), fs), ref.value(int(sy[i]), fs)
                    acc = Fraction(0)
                    for j in range(B):
                        p = ref.op_mul(ref.op_mul(S, ref.value(int(x[i, j]), fx)),
                                       ref.op_mul(T, ref.value(int(y[i, j]), fy)))
                        acc = ref.op_add(acc, p)
                    want.append(ref.project_to(acc, fr, mode, sat))
                check(got, want, ("bdp", fr, mode, sat))
                got = p3109.block_reduce_add(sx, x, fs, fx, fr, mode, saturation=sat)
                want = []
                for i in range(nb):
                    S = ref.value(int(sx[i]), fs)
                    acc = Fraction(0)
                    for j in range(B):
                        acc = ref.op_add(acc, ref.op_mul(S, ref.value(int(x[i, j]), fx)))
                    want.append(ref.project_to(acc, fr, mode, sat))
                check(got, want, ("reduce_add", fr, mode, sat))


@pytest.mark.parametrize("n", [60, pytest.param(1000, marks=pytest.mark.slow)])
def test_scaled_ops(n):
    f1, f2, fs = "binary8p3se", "binary4p2sf", "binary8p1uf"
    x1 = RNG.integers(0, 256, n).astype(np.uint8)
    x2 = RNG.integers(0, 16, n).astype(np.uint8)
    s1 = RNG.integers(100, 156, n).astype(np.uint8)
    s2 = RNG.integers(100, 156, n).astype(np.uint8)
    s1[:2] = (0, 255)
    V = [tuple(ref.value(int(c), f) for c, f in ((a, fs), (b, f1), (c2, fs), (d, f2)))
         for a, b, c2, d in zip(s1, x1, s2, x2)]
    for fr in ("binary8p4se", "binary32"):
        for mode in MODES:
            for sat in SATS:
                for fn, comb in ((p3109.scaled_add, ref.op_add),
                                 (p3109.scaled_subtract, lambda a, b: ref.op_add(a, ref._neg(b))),
                                 (p3109.scaled_multiply, ref.op_mul)):
                    got = fn(s1, x1, s2, x2, f1, f2, fr, mode, saturation=sat)
                    want = [ref.project_to(comb(ref.op_mul(a, b), ref.op_mul(c, d)), fr, mode, sat)
                            for a, b, c, d in V]
                    check(got, want, (fn.__name__, fr, mode, sat))


# ---------------------------------------------------------------------------
# operations without rounding, exhaustively over pairs of small formats
# ---------------------------------------------------------------------------
def _lt(a, b):
    order = {ref.NINF: -1, ref.INF: 1}
    if a in order or b in order:
        ka = order.get(a, 0)
        kb = order.get(b, 0)
        return ka < kb
    return a < b


def _mm_oracle(x, y, want_min, mag, number, finite=False):
    if finite:
        rank = lambda v: 0 if v == ref.NAN else 1 if v in (ref.INF, ref.NINF) else 2  # noqa: E731
        if rank(x) != rank(y):
            return x if rank(x) > rank(y) else y
    if ref.NAN in (x, y):
        if number and not (x == ref.NAN and y == ref.NAN):
            return y if x == ref.NAN else x
        return ref.NAN
    if mag:
        ax, ay = (ref.INF if v in (ref.INF, ref.NINF) else abs(v) for v in (x, y))
        if ax != ay:
            return x if (_lt(ax, ay) == want_min) else y
    if x == y:
        return x
    return x if (_lt(x, y) == want_min) else y


MINMAX = {"minimum": (True, False, False, False), "maximum": (False, False, False, False),
          "minimum_number": (True, False, True, False), "maximum_number": (False, False, True, False),
          "minimum_magnitude": (True, True, False, False),
          "maximum_magnitude": (False, True, False, False),
          "minimum_magnitude_number": (True, True, True, False),
          "maximum_magnitude_number": (False, True, True, False),
          "minimum_finite": (True, False, False, True), "maximum_finite": (False, False, False, True)}


@pytest.mark.parametrize("name", ["binary4p2sf", "binary5p2se", "binary5p3ue", "binary4p1uf",
                                  pytest.param("binary8p3se", marks=pytest.mark.slow),
                                  pytest.param("binary8p1ue", marks=pytest.mark.slow)])
def test_extrema_comparisons_predicates(name):
    x, y = pairs(name, name)
    K, P, s, e = ref.parse_name(name)
    vx = [ref.decode(int(c), K, P, s, e) for c in x]
    vy = [ref.decode(int(c), K, P, s, e) for c in y]
    for op, args in MINMAX.items():
        got = getattr(p3109, op)(x, y, name)
        check(got, [ref.encode(_mm_oracle(a, b, *args), K, P, s, e) for a, b in zip(vx, vy)], op)
    for op, fn in (("compare_less", lambda a, b: _lt(a, b)),
                   ("compare_less_equal", lambda a, b: _lt(a, b) or a == b),
                   ("compare_equal", lambda a, b: a == b),
                   ("compare_greater", lambda a, b: _lt(b, a)),
                   ("compare_greater_equal", lambda a, b: _lt(b, a) or a == b)):
        got = getattr(p3109, op)(x, y, name)
        want = [False if ref.NAN in (a, b) else bool(fn(a, b)) for a, b in zip(vx, vy)]
        assert list(got) == want, op
    c = all_codes(name)
    v = [ref.decode(int(i), K, P, s, e) for i in c]
    B = ref.bias(K, P, s)
    minnorm = Fraction(2) ** (1 - B)
    fin = [isinstance(t, Fraction) for t in v]
    preds = {"is_zero": [t == 0 for t in v], "is_one": [t == 1 for t in v],
             "is_nan": [t == ref.NAN for t in v],
             "is_infinite": [t in (ref.INF, ref.NINF) for t in v],
             "is_finite": fin,
             "is_sign_minus": [t == ref.NINF or (f and t < 0) for t, f in zip(v, fin)],
             "is_normal": [f and t != 0 and abs(t) >= minnorm for t, f in zip(v, fin)],
             "is_subnormal": [f and t != 0 and abs(t) < minnorm for t, f in zip(v, fin)]}
    for op, want in preds.items():
        assert list(getattr(p3109, op)(c, name)) == want, op
    # next: the neighbour in the sorted list of values; NaN past the ends
    order = sorted((t for t in v if t != ref.NAN),
                   key=lambda t: (-2 if t == ref.NINF else 2 if t == ref.INF else 0,
                                  t if isinstance(t, Fraction) else 0))
    for op, step in (("next_greater_than", 1), ("next_less_than", -1)):
        want = []
        for t in v:
            if t == ref.NAN:
                want.append(ref.encode(ref.NAN, K, P, s, e))
                continue
            j = order.index(t) + step
            want.append(ref.encode(order[j] if 0 <= j < len(order) else ref.NAN, K, P, s, e))
        check(getattr(p3109, op)(c, name), want, op)


def test_format_queries():
    f = get_format("binary8p3se")
    assert p3109.max_finite_of(f) == 0x7E and p3109.min_finite_of(f) == 0xFE
    assert p3109.max_subnormal_of("binary8p1uf") == 0xFF          # none: NaN
    assert p3109.min_normal_of("binary8p4se") == 0x08
    assert p3109.decode(np.uint8(0x7E), f) == Fraction(49152)


def test_report_names_of_modes():
    x = np.array([0x41], np.uint8)
    a = p3109.project(x, "binary8p3se", "binary4p2sf", "TowardPositive", saturation="SatFinite")
    b = p3109.project(x, "binary8p3se", "binary4p2sf", "upward", saturation="satfinite")
    assert a == b


def test_wide_formats_decode_exactly():
    f = get_format("binary16p1ue")
    assert not f.fits_float64
    v = p3109.decode(np.array([1, 0x8000, 0xFFFD, 0xFFFE, 0xFFFF], np.uint16), f)
    assert v[0] == Fraction(1, 2 ** 32767) and v[1] == 1 and v[2] == Fraction(2) ** 32765
    assert v[3] == float("inf") and np.isnan(v[4])
    with pytest.raises(ValueError, match="beyond float64"):
        sf.from_bits(np.uint16(1), f)
    # arithmetic on codes works: 2**32765 * 2**-32767 = 1/4, one rounding
    r = p3109.multiply(np.uint16(0xFFFD), np.uint16(1), f, f, "binary8p3se")
    assert p3109.decode(r, "binary8p3se") == Fraction(1, 4)
    # and the kernels' own arithmetic: 2**32765 + 2**32765 overflows to Inf
    assert sf.add(np.uint16(0xFFFD), np.uint16(0xFFFD), f) == 0xFFFE
