"""Arithmetic on encodings (softfloat.arith) against references computed another
way: exact Fraction arithmetic rounded by tests/exact_reference.py (round_exact), integer
square roots (math.isqrt), numpy float16, float64 arithmetic that is exact (or
made round-to-odd) followed by one conversion, and MPFR (gmpy2.fma).

`ref` below is the specification written out in plain Python, one element at a
time: it shares nothing with softfloat._kernels. Values AND flags are compared,
bit for bit (NaN results included: the NaN policy is part of the spec), except
for fn formats under a non-propagating NaN policy (see `_same`).
"""
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import get_format

import exact_reference as O

BUILTIN = ["fp16", "bf16", "fp32", "tf32", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz",
           "fp8_e5m2fnuz"]
MODES = list(O.DETERMINISTIC)
INEXACT, UNDERFLOW, OVERFLOW, INFINITE, INVALID = 1, 2, 4, 8, 16

# Every test runs with the fast paths on and off (conftest.fast_paths_both).
pytestmark = pytest.mark.usefixtures("fast_paths_both")


# ---------------------------------------------------------------------------
# The reference: IEEE 754 + the library's stated policies, in plain Python.
# ---------------------------------------------------------------------------
class Pol:
    def __init__(self, mode="nearest_even", daz=False, ftz=False, tininess="after",
                 overflow=None, nan="propagate"):
        self.mode, self.daz, self.ftz = mode, daz, ftz
        self.tininess, self.overflow, self.nan = tininess, overflow, nan

    def kw(self):
        d = dict(daz=self.daz, ftz=self.ftz, tininess=self.tininess, nan=self.nan)
        if self.overflow is not None:
            d["overflow"] = self.overflow
        return d


def dec(bits, fmt, daz):
    fmt = get_format(fmt)
    d = O.decode(bits, fmt)
    if daz and d.cls == "finite" and abs(d.value) < Fraction(2) ** O.layout(fmt).emin:
        return O.Decoded("zero", d.sign, Fraction(0))
    return d


def is_nan(d):
    return d.cls in ("qnan", "snan")


def default_nan(fmt):
    return get_format(fmt.name if hasattr(fmt, "name") else fmt).default_nan_bits


def nan_result(fmt, p, src=None):
    """The NaN an operation returns: src = the bits of the NaN operand that
    decides (None: a fresh NaN)."""
    fmt = get_format(fmt)
    L = O.layout(fmt)
    if L.kind == "fnuz":
        return 1 << (L.E + L.M)
    if L.kind == "fn":                       # one NaN per sign; the sign is kept
        return O.nan_bits(fmt, 0 if src is None else src >> (L.E + L.M))
    if isinstance(p.nan, int):
        return p.nan
    if p.nan == "canonical" or src is None:
        return default_nan(fmt)
    return src | (1 << (L.M - 1))            # quieted, sign and payload kept


def first_nan(fmt, p, ops):
    """ops: list of (bits, decoded). Invalid if any is signaling; the first NaN decides."""
    fl = INVALID if any(d.cls == "snan" for _, d in ops) else 0
    src = next(b for b, d in ops if is_nan(d))
    return nan_result(fmt, p, src), fl


def zero(fmt, sign):
    L = O.layout(get_format(fmt))
    return 0 if L.kind == "fnuz" else sign << (L.E + L.M)


def inf(fmt, sign, p):
    """An exact infinite result; formats without infinity: NaN + invalid, or the
    largest finite value when overflow saturates (as conversions of inf)."""
    fmt = get_format(fmt)
    L = O.layout(fmt)
    if L.kind == "ieee":
        return (sign << (L.E + L.M)) | (((1 << L.E) - 1) << L.M), 0
    if p.overflow == "saturate":
        return (sign << (L.E + L.M)) | get_format(fmt).max_bits, 0
    if L.kind == "fn":                       # as core.inf_bits: the NaN of that sign
        return O.nan_bits(fmt, sign), INVALID
    return nan_result(fmt, p), INVALID


def rnd(fmt, value, p):
    """Round a nonzero exact Fraction."""
    return O.round_exact(int(value < 0), abs(value), get_format(fmt), p.mode, tininess=p.tininess,
                         ftz=p.ftz, overflow=p.overflow)


def cancel_zero(fmt, p):
    return zero(fmt, 1 if p.mode == "downward" else 0)


def ref_add(fmt, a, b, p, negate=False):
    da, db = dec(a, fmt, p.daz), dec(b, fmt, p.daz)
    if is_nan(da) or is_nan(db):
        return first_nan(fmt, p, [(a, da), (b, db)])
    sb = db.sign ^ negate
    if da.cls == "inf" and db.cls == "inf":
        return inf(fmt, da.sign, p) if da.sign == sb else (nan_result(fmt, p), INVALID)
    if da.cls == "inf":
        return inf(fmt, da.sign, p)
    if db.cls == "inf":
        return inf(fmt, sb, p)
    s = da.value + (-db.value if negate else db.value)
    if s == 0:
        if da.cls == "zero" and db.cls == "zero" and da.sign == sb:
            return zero(fmt, da.sign), 0
        return cancel_zero(fmt, p), 0
    return rnd(fmt, s, p)


def ref_mul(fmt, a, b, p):
    da, db = dec(a, fmt, p.daz), dec(b, fmt, p.daz)
    if is_nan(da) or is_nan(db):
        return first_nan(fmt, p, [(a, da), (b, db)])
    s = da.sign ^ db.sign
    if "inf" in (da.cls, db.cls):
        if "zero" in (da.cls, db.cls):
            return nan_result(fmt, p), INVALID
        return inf(fmt, s, p)
    if "zero" in (da.cls, db.cls):
        return zero(fmt, s), 0
    return rnd(fmt, da.value * db.value, p)


def ref_div(fmt, a, b, p):
    da, db = dec(a, fmt, p.daz), dec(b, fmt, p.daz)
    if is_nan(da) or is_nan(db):
        return first_nan(fmt, p, [(a, da), (b, db)])
    s = da.sign ^ db.sign
    if da.cls == "inf":
        return (nan_result(fmt, p), INVALID) if db.cls == "inf" else inf(fmt, s, p)
    if db.cls == "inf":
        return zero(fmt, s), 0
    if db.cls == "zero":
        if da.cls == "zero":
            return nan_result(fmt, p), INVALID
        bits, fl = inf(fmt, s, p)
        return bits, fl | INFINITE
    if da.cls == "zero":
        return zero(fmt, s), 0
    return rnd(fmt, da.value / db.value, p)


def exact_sqrt_for_rounding(v, prec):
    """A Fraction that rounds like sqrt(v) (v > 0) into any format of precision
    <= prec: sqrt exactly when it is rational, else floor(sqrt * 2**k) + 1/2 over
    2**k with k giving > prec + 2 bits (no rounding boundary lies strictly between)."""
    k = 0
    while True:
        scaled = v * Fraction(4) ** k
        n = scaled.numerator // scaled.denominator
        r = math.isqrt(n)
        if r.bit_length() > prec + 3:
            break
        k += 8
    exact = scaled.denominator == 1 and r * r == n
    if exact:
        return Fraction(r, 2 ** k)
    return Fraction(2 * r + 1, 2 ** (k + 1))


def ref_sqrt(fmt, a, p):
    da = dec(a, fmt, p.daz)
    if is_nan(da):
        return first_nan(fmt, p, [(a, da)])
    if da.cls == "zero":
        return zero(fmt, da.sign), 0
    if da.sign:
        return nan_result(fmt, p), INVALID
    if da.cls == "inf":
        return inf(fmt, 0, p)
    return rnd(fmt, exact_sqrt_for_rounding(da.value, get_format(fmt).precision), p)


def ref_fma(fmt, a, b, c, p):
    """SoftFloat mulAdd's rules: a NaN among a, b wins; 0 * inf is invalid with the
    default NaN even if c is a quiet NaN; then c's NaN; exact zeros per IEEE."""
    da, db, dc = dec(a, fmt, p.daz), dec(b, fmt, p.daz), dec(c, fmt, p.daz)
    ops = [(a, da), (b, db), (c, dc)]
    if is_nan(da) or is_nan(db):
        return first_nan(fmt, p, ops)
    sp = da.sign ^ db.sign
    if "inf" in (da.cls, db.cls):
        if "zero" in (da.cls, db.cls):
            return nan_result(fmt, p), INVALID
        if is_nan(dc):
            return first_nan(fmt, p, ops)
        if dc.cls == "inf" and dc.sign != sp:
            return nan_result(fmt, p), INVALID
        return inf(fmt, sp, p)
    if is_nan(dc):
        return first_nan(fmt, p, ops)
    if dc.cls == "inf":
        return inf(fmt, dc.sign, p)
    s = da.value * db.value + dc.value
    if s == 0:
        if (da.cls == "zero" or db.cls == "zero") and dc.cls == "zero" and sp == dc.sign:
            return zero(fmt, sp), 0
        return cancel_zero(fmt, p), 0
    return rnd(fmt, s, p)


def _value_order(d):
    return d.value if d.cls != "inf" else (math.inf if d.sign == 0 else -math.inf)


def ref_minmax(fmt, which, a, b, p):
    """IEEE 754-2019 minimum, maximum, minimumNumber, maximumNumber."""
    da, db = dec(a, fmt, p.daz), dec(b, fmt, p.daz)

    def out(bits, d):
        return zero(fmt, d.sign) if d.cls == "zero" else bits

    if is_nan(da) or is_nan(db):
        if which.endswith("number") and not (is_nan(da) and is_nan(db)):
            fl = INVALID if "snan" in (da.cls, db.cls) else 0
            return (out(b, db) if is_nan(da) else out(a, da)), fl
        return first_nan(fmt, p, [(a, da), (b, db)])
    want_min = which.startswith("min")
    va, vb = _value_order(da), _value_order(db)
    if va == vb:
        if da.cls == "zero":
            s = (da.sign | db.sign) if want_min else (da.sign & db.sign)
            return zero(fmt, s), 0
        return a, 0
    pick_a = (va < vb) == want_min
    return (out(a, da) if pick_a else out(b, db)), 0


def ref_compare(fmt, pred, a, b, daz=False):
    """pred in eq ne lt le gt ge unordered, optionally + '_signaling'."""
    da, db = dec(a, fmt, daz), dec(b, fmt, daz)
    signaling = pred.endswith("_signaling")
    base = pred.replace("_signaling", "")
    if is_nan(da) or is_nan(db):
        fl = INVALID if (signaling or "snan" in (da.cls, db.cls)) else 0
        return base in ("ne", "unordered"), fl
    va, vb = _value_order(da), _value_order(db)
    return {"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb, "gt": va > vb,
            "ge": va >= vb, "unordered": False}[base], 0


def round_int(v, mode):
    """Integer nearest to Fraction v by mode; (n, inexact)."""
    sign = int(v < 0)
    m = abs(v)
    n = m.numerator // m.denominator
    k = O._choose(n, m - n, sign, mode, 32, None)
    return (-k if sign else k), m != n


def ref_rint(fmt, a, p, exact):
    da = dec(a, fmt, p.daz)
    if is_nan(da):
        return first_nan(fmt, p, [(a, da)])
    if da.cls == "inf":
        return a, 0
    if da.cls == "zero":
        return zero(fmt, da.sign), 0
    n, inx = round_int(da.value, p.mode)
    fl = INEXACT if (exact and inx) else 0
    if n == 0:
        return zero(fmt, da.sign), fl
    bits, f2 = O.round_exact(da.sign, Fraction(abs(n)), get_format(fmt), "nearest_even")
    assert f2 == 0
    return bits, fl


def ref_to_int(fmt, a, p, ibits, exact):
    da = dec(a, fmt, p.daz)
    imin = -(1 << (ibits - 1))
    if da.cls not in ("finite", "zero"):
        return imin, INVALID
    if da.cls == "zero":
        return 0, 0
    n, inx = round_int(da.value, p.mode)
    if not imin <= n < -imin:
        return imin, INVALID
    return n, (INEXACT if (exact and inx) else 0)


# ---------------------------------------------------------------------------
# Operand strategies: encodings biased towards specials and boundaries.
# ---------------------------------------------------------------------------
def interesting(fmt):
    f = get_format(fmt)
    M, S = f.mbits, f.sign_mask
    one = f.bias << M
    mags = {0, 1, 2, 3, (1 << M) - 1, 1 << M, (1 << M) + 1, (2 << M) - 1, one, one + 1,
            one - 1, one + (1 << (M - 1)), f.max_bits, f.max_bits - 1,
            ((f.bias + M) << M), ((f.bias + M + 1) << M) - 1}
    if f.kind == "ieee":
        mags |= {f.inf_bits, f.inf_bits | 1, f.inf_bits | (1 << (M - 1)),
                 f.inf_bits | (1 << (M - 1)) | 1, f.inf_bits | ((1 << M) - 1)}
    if f.kind == "fn":
        mags.add(S - 1)
    out = sorted({m | s for m in mags for s in (0, S) if m < S})
    return out


def encodings(fmt):
    f = get_format(fmt)
    return st.one_of(st.sampled_from(interesting(fmt)),
                     st.integers(0, (1 << f.nbits) - 1))


def near(fmt, x):
    """An encoding close to x (or to -x): exercises cancellation and equality."""
    f = get_format(fmt)
    n = 1 << f.nbits
    return st.tuples(st.integers(-40, 40), st.booleans()).map(
        lambda t: ((x + t[0]) % n) ^ (f.sign_mask if t[1] else 0))


def operand_lists(fmt, arity, size=12):
    if arity == 1:
        one = encodings(fmt).map(lambda a: (a,))
    elif arity == 2:
        one = encodings(fmt).flatmap(
            lambda a: st.tuples(st.just(a), st.one_of(encodings(fmt), near(fmt, a))))
    else:
        one = st.tuples(encodings(fmt), encodings(fmt)).flatmap(
            lambda ab: st.tuples(st.just(ab[0]), st.just(ab[1]),
                                 st.one_of(encodings(fmt), near(fmt, ab[0]))))
    return st.lists(one, min_size=1, max_size=size)


policies = st.sampled_from([
    dict(), dict(tininess="before"), dict(ftz=True), dict(daz=True),
    dict(daz=True, ftz=True, tininess="before"), dict(nan="canonical"),
    dict(overflow="saturate"),
])


def make_pol(fmt, mode, extra):
    return Pol(mode=mode, **extra)


def _same(fmt, p, got, want):
    """Bit equality; fn formats under a non-propagating NaN policy compare NaN
    results as "both NaN" (specialize.make_nan keeps the sign there; see the report)."""
    if got == want:
        return True
    if get_format(fmt).kind == "fn" and p.nan != "propagate":
        return O.is_nan_bits(got, get_format(fmt)) and O.is_nan_bits(want, get_format(fmt))
    return False


ARITH = {
    "add": (2, lambda f, x, p: ref_add(f, x[0], x[1], p)),
    "sub": (2, lambda f, x, p: ref_add(f, x[0], x[1], p, negate=True)),
    "mul": (2, lambda f, x, p: ref_mul(f, x[0], x[1], p)),
    "div": (2, lambda f, x, p: ref_div(f, x[0], x[1], p)),
    "sqrt": (1, lambda f, x, p: ref_sqrt(f, x[0], p)),
    "fma": (3, lambda f, x, p: ref_fma(f, x[0], x[1], x[2], p)),
}


def run_lib(name, fmt, cols, p):
    f = get_format(fmt)
    args = [np.array(c, dtype=f.dtype) for c in cols]
    fn = getattr(sf, name)
    out = fn(*args, fmt, p.mode, return_flags=True, **p.kw())
    # without per-element flags: same bits, sticky flags = OR of the per-element ones
    with sf.localcontext() as ctx:
        b = fn(*args, fmt, p.mode, **p.kw())
    assert np.array_equal(b, out[0])
    assert int(ctx.flags) == int(np.bitwise_or.reduce(out[1].reshape(-1), initial=0))
    return out


@pytest.mark.parametrize("fmt", BUILTIN)
@pytest.mark.parametrize("name", list(ARITH))
@settings(max_examples=25)
@given(data=st.data())
def test_arith_against_exact_reference(name, fmt, data):
    """Every op x every built-in format x every deterministic mode (drawn) x
    policies (drawn), on encodings biased towards specials: bits and flags."""
    arity, ref = ARITH[name]
    mode = data.draw(st.sampled_from(MODES), label="mode")
    extra = data.draw(policies, label="policy")
    p = make_pol(fmt, mode, extra)
    ops = data.draw(operand_lists(fmt, arity), label="operands")
    cols = list(zip(*ops))
    bits, flags = run_lib(name, fmt, cols, p)
    for i, x in enumerate(ops):
        wb, wf = ref(fmt, x, p)
        assert _same(fmt, p, int(bits[i]), wb) and int(flags[i]) == wf, (
            f"{name}{tuple(hex(v) for v in x)} {fmt} {mode} {extra}: got "
            f"({int(bits[i]):#x}, {int(flags[i])}) want ({wb:#x}, {wf})")


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3", "fp8_e5m2fnuz", "fp32"])
@settings(max_examples=12)
@given(data=st.data())
def test_minmax_compare_against_reference(fmt, data):
    f = get_format(fmt)
    extra = data.draw(st.sampled_from([dict(), dict(daz=True), dict(nan="canonical")]))
    p = Pol(**extra)
    ops = data.draw(operand_lists(fmt, 2))
    a = np.array([x[0] for x in ops], f.dtype)
    b = np.array([x[1] for x in ops], f.dtype)
    for which in ("minimum", "maximum", "minimum_number", "maximum_number"):
        bits, flags = getattr(sf, which)(a, b, fmt, return_flags=True, **{
            k: v for k, v in p.kw().items() if k in ("daz", "nan")})
        for i, x in enumerate(ops):
            wb, wf = ref_minmax(fmt, which, x[0], x[1], p)
            assert _same(fmt, p, int(bits[i]), wb) and int(flags[i]) == wf, (which, x)
    for pred in ("eq", "ne", "lt", "le", "gt", "ge", "unordered", "eq_signaling",
                 "ne_signaling", "lt_signaling", "le_signaling", "gt_signaling",
                 "ge_signaling"):
        got, flags = getattr(sf, pred)(a, b, fmt, return_flags=True, daz=p.daz)
        assert got.dtype == np.bool_
        for i, x in enumerate(ops):
            wv, wf = ref_compare(fmt, pred, x[0], x[1], p.daz)
            assert bool(got[i]) == wv and int(flags[i]) == wf, (pred, [hex(v) for v in x])


@pytest.mark.parametrize("fmt", BUILTIN)
@settings(max_examples=15)
@given(data=st.data())
def test_integral_and_integers_against_reference(fmt, data):
    f = get_format(fmt)
    mode = data.draw(st.sampled_from(MODES))
    daz = data.draw(st.booleans())
    p = Pol(mode=mode, daz=daz)
    xs = data.draw(st.lists(encodings(fmt), min_size=1, max_size=12))
    a = np.array(xs, f.dtype)
    for exact in (False, True):
        bits, flags = sf.round_to_integral(a, fmt, mode, exact=exact, daz=daz,
                                           return_flags=True)
        for i, x in enumerate(xs):
            wb, wf = ref_rint(fmt, x, p, exact)
            assert (int(bits[i]), int(flags[i])) == (wb, wf), ("rint", hex(x), mode, exact)
        for ibits, fn in ((32, sf.to_int32), (64, sf.to_int64)):
            v, flags = fn(a, fmt, mode, exact=exact, daz=daz, return_flags=True)
            assert v.dtype == (np.int32 if ibits == 32 else np.int64)
            for i, x in enumerate(xs):
                assert (int(v[i]), int(flags[i])) == ref_to_int(fmt, x, p, ibits, exact), (
                    ibits, hex(x), mode, exact)
    ints = data.draw(st.lists(st.one_of(
        st.integers(-2**63, 2**63 - 1), st.integers(-3000, 3000),
        st.sampled_from([-2**63, 2**63 - 1, -2**31, 2**31 - 1, 2**24 + 1, 65504, 65520])),
        min_size=1, max_size=12))
    bits, flags = sf.from_int(np.array(ints, np.int64), fmt, mode, return_flags=True)
    for i, n in enumerate(ints):
        want = (zero(fmt, 0), 0) if n == 0 else O.round_exact(int(n < 0), Fraction(abs(n)),
                                                              f, mode)
        assert (int(bits[i]), int(flags[i])) == want, (n, mode)


# ---------------------------------------------------------------------------
# Sampled exhaustive slices: 16 random a (plus specials) x all 65536 fp16 b.
# ---------------------------------------------------------------------------
def _fp16_slice(seed, n_a=16):
    rng = np.random.default_rng(seed)
    a = np.concatenate([rng.integers(0, 0x10000, n_a), [0x0001, 0x3C00, 0x7BFF, 0x8400]])
    A = np.repeat(a.astype(np.uint16), 0x10000)
    B = np.tile(np.arange(0x10000, dtype=np.uint16), len(a))
    return A, B


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_fp16_slice_exact_float64(name, mode):
    """+ - * of fp16 are exact in float64; one conversion (softfloat.to_bits, checked
    against numpy/ml_dtypes) then rounds once in the mode. Finite operands: bits and
    flags; others: bits, NaN as NaN."""
    A, B = _fp16_slice(1)
    fa = A.view(np.float16).astype(np.float64)
    fb = B.view(np.float16).astype(np.float64)
    with np.errstate(all="ignore"):
        exact = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb}[name]
    want, wflags = sf.to_bits(exact, "fp16", mode, return_flags=True)
    # exact zeros: sign per IEEE (f64 does this in nearest mode only)
    z = exact == 0
    fin = np.isfinite(fa) & np.isfinite(fb)
    if name in ("add", "sub"):
        sb = np.signbit(fb) ^ (name == "sub")
        cancel = z & ~((fa == 0) & (fb == 0) & (np.signbit(fa) == sb))
        want[cancel] = 0x8000 if mode == "downward" else 0
    got, flags = getattr(sf, name)(A, B, "fp16", mode, return_flags=True)
    gnan = np.isnan(got.view(np.float16))
    wnan = np.isnan(want.view(np.float16))
    assert np.array_equal(gnan, wnan)
    bad = ~gnan & (got != want)
    assert not bad.any(), (hex(A[bad][0]), hex(B[bad][0]), hex(got[bad][0]), hex(want[bad][0]))
    assert np.array_equal(flags[fin], wflags[fin])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "sqrt"])
def test_fp16_slice_numpy_float16(name):
    """numpy's float16 + - * / and sqrt are correctly rounded to nearest even."""
    A, B = _fp16_slice(2)
    fa, fb = A.view(np.float16), B.view(np.float16)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb,
                "sqrt": np.sqrt(fb)}[name]
    got = sf.sqrt(B, "fp16") if name == "sqrt" else getattr(sf, name)(A, B, "fp16")
    g = got.view(np.float16)
    both_nan = np.isnan(g) & np.isnan(want)
    assert np.array_equal(np.isnan(g), np.isnan(want))
    assert np.array_equal(got[~both_nan], want.view(np.uint16)[~both_nan])


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("name", ["div", "sqrt"])
def test_slice_float64_nearest_even(fmt, name):
    """RNE / and sqrt through float64 then one RNE conversion are correct for
    p <= 25 (53 >= 2p + 2: the double rounding is innocuous): bits and flags."""
    f = get_format(fmt)
    A, B = _fp16_slice(3, n_a=8)
    if fmt == "bf16":
        rng = np.random.default_rng(4)
        A = rng.integers(0, 0x10000, A.size).astype(np.uint16)
    fa, fb = sf.from_bits(A, fmt), sf.from_bits(B, fmt)
    with np.errstate(all="ignore"):
        exact = fa / fb if name == "div" else np.sqrt(fb)
    want, wflags = sf.to_bits(exact, fmt, return_flags=True)
    if name == "div":
        got, flags = sf.div(A, B, fmt, return_flags=True)
        fin = np.isfinite(fa) & np.isfinite(fb) & (fb != 0)
    else:
        got, flags = sf.sqrt(B, fmt, return_flags=True)
        fin = np.isfinite(fb) & (fb >= 0)
    gn = np.isnan(sf.from_bits(got, fmt))
    assert np.array_equal(gn, np.isnan(sf.from_bits(want, fmt)))
    assert np.array_equal(got[~gn], want[~gn])
    assert np.array_equal(flags[fin], wflags[fin])
    assert f.nbits == 16


def _round_to_odd_sum(p, c):
    """p + c rounded to odd in float64 (TwoSum gives the exact error)."""
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    even = (s.view(np.int64) & 1) == 0
    fix = (err != 0) & even
    s = s.copy()
    s[fix] = np.nextafter(s[fix], np.where(err[fix] > 0, np.inf, -np.inf))
    return s


@pytest.mark.parametrize("mode", MODES)
def test_fp16_fma_slice_round_to_odd(mode):
    """fma on 8 random (a, b) x all 65536 c: a*b is exact in float64, the sum
    is rounded to odd in float64 (53 >= 11 + 2 bits), then one conversion in the
    mode. Also counts the double-rounding traps that fp32 arithmetic falls into."""
    rng = np.random.default_rng(5)
    ab = rng.integers(0, 0x10000, (8, 2)).astype(np.uint16)
    ab = ab[np.isfinite(ab.view(np.float16)).all(axis=1)]
    A = np.repeat(ab[:, 0], 0x10000)
    B = np.repeat(ab[:, 1], 0x10000)
    C = np.tile(np.arange(0x10000, dtype=np.uint16), len(ab))
    fa, fb, fc = (x.view(np.float16).astype(np.float64) for x in (A, B, C))
    fin = np.isfinite(fc)
    with np.errstate(all="ignore"):
        prod = fa * fb
        s = _round_to_odd_sum(prod, fc)
    want, wflags = sf.to_bits(s, "fp16", mode, return_flags=True)
    zero_sum = (s == 0) & fin
    both_zero = (prod == 0) & (fc == 0) & (np.signbit(prod) == np.signbit(fc))
    want[zero_sum & ~both_zero] = 0x8000 if mode == "downward" else 0
    got, flags = sf.fma(A, B, C, "fp16", mode, return_flags=True)
    assert np.array_equal(got[fin], want[fin])
    assert np.array_equal(flags[fin], wflags[fin])
    assert np.isnan(got[~fin].view(np.float16)).sum() == (~fin & np.isnan(fc)).sum()
    if mode == "nearest_even":
        with np.errstate(all="ignore"):
            f32 = (fa.astype(np.float32) * fb.astype(np.float32) + fc.astype(np.float32))
            traps = fin & (f32.astype(np.float16).view(np.uint16) != want)
        assert traps.sum() > 0           # the slice does contain double-rounding traps


@pytest.mark.parametrize("mode", ["nearest_even", "toward_zero", "upward", "downward"])
def test_fp32_fma_against_mpfr(mode):
    """fp32 fma against gmpy2.fma in a subnormalizing 24-bit context."""
    gmpy2 = pytest.importorskip("gmpy2")
    rng = np.random.default_rng(6)
    n = 400
    # operands with related exponents, so that cancellation and ties happen
    a = rng.integers(0x3F000000, 0x40000000, n).astype(np.uint32)
    b = rng.integers(0x3F000000, 0x40000000, n).astype(np.uint32)
    c = (rng.integers(0x3E000000, 0x41000000, n) | (rng.integers(0, 2, n) << 31)).astype(np.uint32)
    c[::4] = rng.integers(0, 0x00800000, n)[::4].astype(np.uint32)   # subnormal addends
    got = sf.fma(a, b, c, "fp32", mode)
    rm = {"nearest_even": gmpy2.RoundToNearest, "toward_zero": gmpy2.RoundToZero,
          "upward": gmpy2.RoundUp, "downward": gmpy2.RoundDown}[mode]
    ctx = gmpy2.context(precision=24, emin=-148, emax=128, subnormalize=True, round=rm)
    fa, fb, fc = (sf.from_bits(x, "fp32") for x in (a, b, c))
    for i in range(n):
        with ctx:
            r = gmpy2.fma(gmpy2.mpfr(float(fa[i])), gmpy2.mpfr(float(fb[i])),
                          gmpy2.mpfr(float(fc[i])))
        want = float(r)
        gotv = float(sf.from_bits(got[i], "fp32"))
        if want == 0:
            assert gotv == 0
        else:
            assert gotv == want, (hex(a[i]), hex(b[i]), hex(c[i]), gotv, want)


def test_fma_double_rounding_traps():
    """Hand-made cases where rounding the product first, or computing in fp32 and
    then rounding to fp16, is wrong."""
    h = lambda v: sf.to_bits(np.array(v), "fp16")              # noqa: E731
    # (1 + 2**-10) * (1 - 2**-11) = 1 + 2**-11 - 2**-21, just below the tie at
    # 1 + 2**-11; + 2**-21 lands exactly on it (-> 1.0, even), + 2**-20 goes
    # above it (-> 1 + 2**-10) although RN(a*b) + 2**-20 would give 1.0.
    a, b = h(1 + 2**-10), h(1 - 2**-11)
    assert sf.fma(a, b, h(2.0**-21), "fp16") == h(1.0)
    assert sf.fma(a, b, h(2.0**-20), "fp16") == h(1 + 2**-10)
    assert sf.add(sf.mul(a, b, "fp16"), h(2.0**-20), "fp16") == h(1.0)
    # a*b + c = 1 + 2**-10 + 2**-11 - 2**-31: just below a tie, so 1 + 2**-10;
    # fp32 rounds it onto the tie first and fp16 then goes to even, 1 + 2**-9.
    a, b, c = h(1 + 2**-10), h((1 - 2**-10) * 2**-11), h(1 + 2**-10)
    fa, fb, fc = (np.float32(sf.from_bits(x, "fp16")) for x in (a, b, c))
    assert np.float16(fa * fb + fc) == np.float16(1 + 2**-9)      # the trap
    assert sf.fma(a, b, c, "fp16") == h(1 + 2**-10)
    assert sf.fma(a, b, c, "fp16", "upward") == h(1 + 2**-9)
    assert sf.fma(a, b, c, "fp16", "toward_zero") == h(1 + 2**-10)


def test_stochastic_rounding_reproducible_and_unbiased():
    """SR: same seed, same bits; the mean of many SR adds approaches the exact sum;
    every result is one of the two neighbours."""
    a = np.full(20000, sf.to_bits(np.array(1.0), "fp16"), np.uint16)
    b = np.full(20000, sf.to_bits(np.array(2.0**-12), "fp16"), np.uint16)  # 1/4 ulp
    r1 = sf.add(a, b, "fp16", "stochastic", seed=7)
    r2 = sf.add(a, b, "fp16", "stochastic", seed=7)
    assert np.array_equal(r1, r2)
    v = sf.from_bits(r1, "fp16")
    assert set(np.unique(v)) <= {1.0, 1.0 + 2**-10}
    frac_up = np.mean(v > 1)
    assert abs(frac_up - 0.25) < 0.02
    r3 = sf.add(a, b, "fp16", "stochastic", seed=8)
    assert not np.array_equal(r1, r3)
    # scalar operands broadcast: the random stream is per output element
    r4 = sf.add(a[0], b, "fp16", "stochastic", seed=7)
    assert np.array_equal(r1, r4)
