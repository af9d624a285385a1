"""The sweep oracles (softfloat.sweep_oracles: host, ro53, mpfr).

Checked against the tests' exact rational reference (round_exact on Python
Fractions), against each other and against MPFR, NaN bit patterns included;
the fma oracle also on every TestFloat level-1 case of f16_mulAdd and
bf16_mulAdd (the library's kernel in every mode; the exact reference on a
slice by default, on all of them in a slow test).
"""
import os
from fractions import Fraction

import numpy as np
import pytest

import softfloat as sf
from softfloat import sweep_oracles as O

import exact_reference as ref    # tests/exact_reference.py: the exact Fraction reference

MODES = list(sf.DETERMINISTIC_MODES)
HAVE_ARITH = all(hasattr(sf, op) for op in ("add", "sub", "mul", "div", "sqrt"))
needs_arith = pytest.mark.skipif(not HAVE_ARITH, reason="arithmetic kernels not available")


def _nan(bits, fmt):
    return ref.is_nan_bits(int(bits), fmt)


def _exact(op, x, y):
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    if op == "mul":
        return x * y
    return x / y


def _reference_binary(op, a, b, fmt, mode):
    """Exact Fractions + round_exact, for finite nonzero results only (None else)."""
    da, db = ref.decode(int(a), fmt), ref.decode(int(b), fmt)
    if da.cls not in ("finite", "zero") or db.cls not in ("finite", "zero"):
        return None
    if op == "div" and db.cls == "zero":
        return None
    v = _exact(op, da.value, db.value)
    if v == 0:
        return None
    return ref.round_exact(int(v < 0), abs(v), fmt, mode)


# ---------------------------------------------------------------------------
# oracles against exact rational arithmetic
def _fp8_pairs(mode, n):
    if mode == "all":
        return [(i, j) for i in range(256) for j in range(256)]
    rng = np.random.default_rng(1)
    return list(zip(rng.integers(0, 256, n), rng.integers(0, 256, n)))


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_ro53_oracle_matches_fractions_fp8(fmt, op, pairs=None):
    f = sf.get_format(fmt)
    allb = np.arange(256, dtype=np.uint8)
    for mode in MODES:
        bits, flg = O.oracle_binary(op, allb, allb, f, mode, method="ro53", outer=True)
        checked = 0
        for i, j in (pairs or _fp8_pairs(mode, 1500)):
            r = _reference_binary(op, i, j, f, mode)
            if r is None:
                continue
            checked += 1
            assert (int(bits[i, j]), int(flg[i, j])) == r, (op, mode, hex(i), hex(j))
        assert checked > 1000


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_ro53_oracle_matches_fractions_fp8_all_pairs(fmt, op):
    test_ro53_oracle_matches_fractions_fp8(fmt, op, pairs=_fp8_pairs("all", 0))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_oracles_match_fractions_fp16_bf16_sample(fmt, op):
    f = sf.get_format(fmt)
    rng = np.random.default_rng(2)
    n = 600
    # random patterns plus operands close to each other (cancellation, ties)
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = np.where(rng.random(n) < 0.3, a ^ rng.integers(0, 8, n).astype(np.uint16),
                 rng.integers(0, 1 << 16, n)).astype(np.uint16)
    for mode in MODES:
        methods = ["ro53", "host"] if mode == "nearest_even" else ["ro53"]
        for m in methods:
            bits, flg = O.oracle_binary(op, a, b, f, mode, method=m)
            for k in range(n):
                r = _reference_binary(op, a[k], b[k], f, mode)
                if r is not None:
                    assert (int(bits[k]), int(flg[k])) == r, (op, mode, m, hex(a[k]), hex(b[k]))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "fp8_e4m3"])
def test_oracle_convert_matches_fractions(fmt):
    """fp32 -> fmt on random float32 patterns and values near fmt's grid."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 32, 1000, dtype=np.uint64).astype(np.uint32)
    grid = sf.from_bits(rng.integers(0, 1 << f.nbits, 1000).astype(f.dtype), f)
    with np.errstate(invalid="ignore"):
        near = (grid.astype(np.float32).view(np.uint32).astype(np.int64)
                + rng.integers(-3, 4, grid.size)).astype(np.uint32)
    x = np.concatenate([x, near])
    for mode in MODES:
        methods = ["ro53", "host"] if mode == "nearest_even" else ["ro53"]
        for m in methods:
            bits, flg = O.oracle_convert(x, "fp32", f, mode, method=m)
            with np.errstate(invalid="ignore"):
                v = x.view(np.float32).astype(np.float64)
            for k in range(x.size):
                if not np.isfinite(v[k]) or v[k] == 0:
                    continue
                r = ref.round_exact(int(v[k] < 0), abs(Fraction(float(v[k]))), f, mode)
                assert (int(bits[k]), int(flg[k])) == r, (mode, m, hex(x[k]))


def test_oracle_tf32_sources_match_fractions_and_mpfr():
    """tf32 (19 bits) -> fp16 / bf16 / fp8 and sqrt of tf32: every encoding by
    both oracles (they agree, NaN patterns included), samples against the exact
    reference and MPFR."""
    t = sf.get_format("tf32")
    allx = np.arange(1 << 19, dtype=np.uint32)
    rng = np.random.default_rng(8)
    sample = rng.integers(0, 1 << 19, 300)
    for dst in ("fp16", "bf16", "fp8_e4m3"):
        d = sf.get_format(dst)
        h, hf = O.oracle_convert(allx, t, d, method="host")
        r, rf = O.oracle_convert(allx, t, d, method="ro53")
        assert np.array_equal(h, r) and np.array_equal(hf, rf), dst
        for mode in MODES:
            r, rf = O.oracle_convert(allx, t, d, mode)
            for k in sample:
                assert O.mpfr_convert(int(k), t, d, mode) == (r[k], rf[k]), (dst, mode, hex(k))
                dk = ref.decode(int(k), t)
                if dk.cls == "finite":
                    v = dk.value
                    assert ref.round_exact(int(v < 0), abs(v), d, mode) == (r[k], rf[k])
    h, hf = O.oracle_unary("sqrt", allx, t, method="host")
    r, rf = O.oracle_unary("sqrt", allx, t, method="ro53")
    assert np.array_equal(h, r) and np.array_equal(hf, rf)
    for mode in MODES:
        r, rf = O.oracle_unary("sqrt", allx, t, mode)
        for k in sample:
            assert O.mpfr_unary("sqrt", int(k), t, mode) == (r[k], rf[k]), (mode, hex(k))
    with pytest.raises(ValueError, match="19 bits"):
        O.oracle_unary("sqrt", np.zeros(1, np.uint32), "fp32")


def test_oracle_specials():
    f = sf.get_format("fp16")
    inf, ninf, sn, one, z, nz = 0x7C00, 0xFC00, 0x7C01, 0x3C00, 0x0000, 0x8000
    u = lambda *v: np.array(v, np.uint16)  # noqa: E731
    b, fl = O.oracle_binary("add", u(inf, one, sn, one, z, z), u(ninf, sn, one, 0xBC00, nz, nz), f)
    assert _nan(b[0], f) and fl[0] == 16                      # inf - inf invalid
    assert _nan(b[1], f) and fl[1] == 16 and b[1] == 0x7E01   # sNaN quieted, payload kept
    assert b[3] == 0 and fl[3] == 0                           # 1 + -1 = +0
    assert b[4] == 0                                          # +0 + -0 = +0
    b, _ = O.oracle_binary("add", u(z, one), u(nz, 0xBC00), f, "downward")
    assert list(b) == [0x8000, 0x8000]                        # -0 rounding downward
    b, fl = O.oracle_binary("div", u(one, z, one), u(z, z, nz), f)
    assert b[0] == inf and fl[0] == 8 and _nan(b[1], f) and fl[1] == 16 and b[2] == ninf
    b, fl = O.oracle_binary("mul", u(inf, 0x7BFF), u(z, 0x7BFF), f)
    assert _nan(b[0], f) and fl[0] == 16 and b[1] == inf and fl[1] == 5
    b, fl = O.oracle_binary("mul", u(0x7BFF), u(0x7BFF), f, "toward_zero")
    assert b[0] == 0x7BFF and fl[0] == 5
    b, fl = O.oracle_unary("sqrt", u(nz, 0xBC00, inf, 0x4400, 0x4000), f)
    assert b[0] == nz and _nan(b[1], f) and fl[1] == 16 and b[2] == inf
    assert b[3] == 0x4000 and fl[3] == 0 and b[4] == 0x3DA8 and fl[4] == 1   # sqrt(4), sqrt(2)
    # the seed notes' worked examples: 43008.111 -> 0x7940, 1.111 -> 0x3C72 / bf16 0x3F8E
    x = np.array([43008.111, 1.111, 65519.99, 65520.0, 2.0 ** -25], np.float32)
    bits, fl = O.oracle_convert(x.view(np.uint32), "fp32", "fp16")
    assert list(bits[:3]) == [0x7940, 0x3C72, 0x7BFF] and bits[3] == inf and fl[3] == 5
    assert bits[4] == 0 and fl[4] == 3
    bits, _ = O.oracle_convert(x[1:2].view(np.uint32), "fp32", "bf16")
    assert bits[0] == 0x3F8E


@pytest.mark.parametrize("op", O.BINARY_OPS)
def test_mpfr_agrees_with_ro53(op):
    rng = np.random.default_rng(4)
    for fmt in ("fp16", "bf16", "fp8_e5m2"):
        f = sf.get_format(fmt)
        a = rng.integers(0, 1 << f.nbits, 150).astype(f.dtype)
        b = rng.integers(0, 1 << f.nbits, 150).astype(f.dtype)
        for mode in MODES:
            bits, flg = O.oracle_binary(op, a, b, f, mode, method="ro53")
            for k in range(a.size):
                mb, mf = O.mpfr_binary(op, int(a[k]), int(b[k]), f, mode)
                assert (mb, mf) == (bits[k], flg[k]), (fmt, op, mode, hex(a[k]), hex(b[k]))


def test_mpfr_sqrt_and_host_sqrt_agree_with_ro53_all_fp16():
    f = sf.get_format("fp16")
    allb = np.arange(1 << 16, dtype=np.uint16)
    h, hf = O.oracle_unary("sqrt", allb, f, method="host")
    r, rf = O.oracle_unary("sqrt", allb, f, method="ro53")
    assert np.array_equal(hf, rf) and np.array_equal(h, r)      # NaN patterns too
    rng = np.random.default_rng(5)
    for mode in MODES:
        r, rf = O.oracle_unary("sqrt", allb, f, mode, method="ro53")
        for k in rng.integers(0, 1 << 16, 200):
            mb, mf = O.mpfr_unary("sqrt", int(k), f, mode)
            assert (mb, mf) == (r[k], rf[k]), (mode, hex(k))


def test_host_and_ro53_agree_fp16_bf16_rne_slice():
    """The two float64 oracles on 2**17 pairs per op (different rounding code)."""
    for fmt in ("fp16", "bf16"):
        f = sf.get_format(fmt)
        a = np.array([0x0001, 0x03FF, 0x3C00, 0x7BFF, 0x8400, 0x0080, 0x3F80, 0xC001],
                     f.dtype)[:2]
        b = np.arange(1 << 16, dtype=f.dtype)
        for op in O.BINARY_OPS:
            h, hf = O.oracle_binary(op, a, b, f, method="host", outer=True)
            r, rf = O.oracle_binary(op, a, b, f, method="ro53", outer=True)
            assert np.array_equal(hf, rf), (fmt, op)
            assert np.array_equal(h, r), (fmt, op)              # NaN patterns too


def test_oracle_argument_errors():
    with pytest.raises(ValueError, match="binary op"):
        O.oracle_binary("pow", np.uint16(1), np.uint16(1), "fp16")
    with pytest.raises(TypeError, match="uint16"):
        O.oracle_binary("add", np.float32(1), np.uint16(1), "fp16")
    with pytest.raises(ValueError, match="deterministic"):
        O.oracle_binary("add", np.uint16(1), np.uint16(1), "fp16", "stochastic")
    with pytest.raises(ValueError, match="host oracle"):
        O.oracle_binary("add", np.uint16(1), np.uint16(1), "fp16", "toward_zero", method="host")


# ---------------------------------------------------------------------------
# NaN bit patterns: the promised NaN, independently of the kernels
def test_promised_nan_patterns():
    u = lambda *v: np.array(v, np.uint16)  # noqa: E731
    # binary: the first NaN operand, quieted, sign and payload kept
    b, fl = O.oracle_binary("mul", u(0xFC05, 0x3C00, 0x7E11), u(0x7E00, 0xFD23, 0xFC01), "fp16")
    assert list(b) == [0xFE05, 0xFF23, 0x7E11] and list(fl) == [16, 16, 16]
    # invalid without NaN operands: the default NaN
    b, fl = O.oracle_binary("sub", u(0x7C00), u(0x7C00), "fp16")
    assert b[0] == 0x7E00 and fl[0] == 16
    b, _ = O.oracle_binary("div", np.array([0], np.uint16), np.array([0], np.uint16), "bf16")
    assert b[0] == 0x7FC0
    # conversions move the payload's top bits: fp16 0x7D23 (sNaN) -> bf16 0x7FE4 (0x123 >> 3)
    b, fl = O.oracle_convert(u(0x7D23, 0xFE01), "fp16", "bf16")
    assert list(b) == [0x7FE4 | 0x40, 0xFFC0] and list(fl) == [16, 0]
    b, _ = O.oracle_convert(u(0xFFC1), "bf16", "fp16")
    assert b[0] == 0xFE08
    # fn target: sign | all ones; fnuz: the one NaN
    b, _ = O.oracle_convert(u(0xFE00, 0x7E00), "fp16", "fp8_e4m3")
    assert list(b) == [0xFF, 0x7F]
    b, _ = O.oracle_convert(u(0xFE00), "fp16", "fp8_e5m2fnuz")
    assert b[0] == 0x80


def test_fma_nan_and_infinity_rules():
    u = lambda *v: np.array(v, np.uint16)  # noqa: E731
    z, one, inf, ninf, qn, sn = 0x0000, 0x3C00, 0x7C00, 0xFC00, 0x7E05, 0x7C07
    a = u(z, z, inf, one, one, inf, qn, one, sn)
    b = u(inf, inf, one, one, one, one, one, qn, one)
    c = u(qn, sn, ninf, qn, sn, one, sn, 0xFE09, qn)
    bits, fl = O.oracle_fma(a, b, c, "fp16")
    assert list(bits) == [0x7E00, 0x7E00, 0x7E00, 0x7E05, 0x7E07, 0x7C00, 0x7E05, 0x7E05 | 0,
                          0x7E07]
    assert list(fl) == [16, 16, 16, 0, 16, 0, 16, 0, 16]
    for k in range(a.size):
        mb, mf = O.mpfr_fma(int(a[k]), int(b[k]), int(c[k]), "fp16")
        assert (mb, mf) == (int(bits[k]), int(fl[k])), k
    # exact cancellation: +0, or -0 rounding downward; signed zero sums
    x = sf.to_bits(np.array([3.0]), "fp16")
    y = sf.to_bits(np.array([-3.0]), "fp16")
    one_ = sf.to_bits(np.array([1.0]), "fp16")
    assert O.oracle_fma(x, one_, y, "fp16")[0][0] == 0
    assert O.oracle_fma(x, one_, y, "fp16", "downward")[0][0] == 0x8000
    assert O.oracle_fma(u(0x8000), u(0x3C00), u(0x8000), "fp16")[0][0] == 0x8000


def _reference_fma(a, b, c, fmt, mode):
    da, db, dc = (ref.decode(int(x), fmt) for x in (a, b, c))
    if any(d.cls not in ("finite", "zero") for d in (da, db, dc)):
        return None
    v = da.value * db.value + dc.value
    if v == 0:
        return None
    return ref.round_exact(int(v < 0), abs(v), fmt, mode)


def _fma_cases(fmt, n, seed):
    """Random triples plus triples where a*b + c cancels (c near -RN(a*b))."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = rng.integers(0, 1 << 16, n).astype(np.uint16)
    c = rng.integers(0, 1 << 16, n).astype(np.uint16)
    p = sf.mul(a, b, f)
    near = (p ^ np.uint16(0x8000)).astype(np.int64) + rng.integers(-3, 4, n)
    near = np.clip(near, 0, 0xFFFF).astype(np.uint16)
    c = np.where(rng.random(n) < 0.5, near, c).astype(np.uint16)
    return a, b, c


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_fma_oracle_matches_exact_reference_and_mpfr(fmt):
    f = sf.get_format(fmt)
    a, b, c = _fma_cases(fmt, 1500, 11)
    for mode in MODES:
        bits, flg = O.oracle_fma(a, b, c, f, mode)
        checked = 0
        for k in range(a.size):
            r = _reference_fma(a[k], b[k], c[k], f, mode)
            if r is not None:
                checked += 1
                assert (int(bits[k]), int(flg[k])) == r, (mode, hex(a[k]), hex(b[k]), hex(c[k]))
            if k % 5 == 0:
                m = O.mpfr_fma(int(a[k]), int(b[k]), int(c[k]), f, mode)
                assert m == (int(bits[k]), int(flg[k])), (mode, hex(a[k]), hex(b[k]), hex(c[k]))
        assert checked > 1000


def _level1(function):
    from softfloat import testfloat as T
    return T.operands(function, level=1, chunk=1 << 22)


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_fma_oracle_on_testfloat_level1(fmt):
    """Every TestFloat level-1 case (6,133,248 per format): the oracle against
    the library's kernel in all six modes, bits, flags and NaN patterns; a slice
    of them against the exact reference and MPFR."""
    f = sf.get_format(fmt)
    name = {"fp16": "f16_mulAdd", "bf16": "bf16_mulAdd"}[fmt]
    total = 0
    for pos, (a, b, c) in _level1(name):
        total += a.size
        for mode in MODES:
            bits, flg = O.oracle_fma(a, b, c, f, mode)
            got, gotf = sf.fma(a, b, c, f, mode, return_flags=True)
            bad = np.flatnonzero((bits != got) | (flg != gotf))
            assert bad.size == 0, (mode, [(hex(a[i]), hex(b[i]), hex(c[i])) for i in bad[:5]])
        if pos == 0:
            for mode in MODES:
                bits, flg = O.oracle_fma(a[:400], b[:400], c[:400], f, mode)
                for k in range(400):
                    r = _reference_fma(a[k], b[k], c[k], f, mode)
                    m = O.mpfr_fma(int(a[k]), int(b[k]), int(c[k]), f, mode)
                    assert m == (int(bits[k]), int(flg[k])), (mode, k)
                    if r is not None:
                        assert r == (int(bits[k]), int(flg[k])), (mode, k)
    assert total == 6133248


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_fma_oracle_on_testfloat_level1_exact_reference(fmt):
    """Every TestFloat level-1 case against the exact rational reference (slow:
    Python Fractions), nearest_even and toward_zero."""
    f = sf.get_format(fmt)
    name = {"fp16": "f16_mulAdd", "bf16": "bf16_mulAdd"}[fmt]
    for _, (a, b, c) in _level1(name):
        for mode in ("nearest_even", "toward_zero"):
            bits, flg = O.oracle_fma(a, b, c, f, mode)
            for k in range(a.size):
                r = _reference_fma(a[k], b[k], c[k], f, mode)
                if r is not None:
                    assert r == (int(bits[k]), int(flg[k])), (mode, k)


def test_fma_oracle_argument_errors():
    with pytest.raises(TypeError, match="uint16"):
        O.oracle_fma(np.uint8(1), np.uint16(1), np.uint16(1), "fp16")
    with pytest.raises(ValueError, match="host oracle"):
        O.oracle_fma(np.uint16(1), np.uint16(1), np.uint16(1), "fp16", method="host")


# ---------------------------------------------------------------------------
# the SIMD twins (softfloat.sweep_oracles.simd) against the scalar kernels
from softfloat.sweep_oracles import check as _check   # noqa: E402


def _scalar_check(op, layout, f, mode, mc, got, gotf):
    old = _check.USE_SIMD
    _check.USE_SIMD = False
    try:
        return O.check_block(op, layout, f, f, mode, mc, got, gotf)
    finally:
        _check.USE_SIMD = old


def _simd_agrees(op, layout, f, mode, meth, kind):
    """check_block by the SIMD kernels (a) on the scalar oracle's results: no
    mismatch, i.e. the twins agree on bits, flags and NaN patterns at every
    case; (b) on results with flipped bits and flags: the same counts and codes
    as the scalar check kernel."""
    m = sf.get_rounding(mode)
    mc = O.method_code(meth, f, m, op)
    assert _check._simd_kind(op, layout) == kind
    exp, expf = O.oracle_block(op, layout, f, f, m, mc)            # the scalar oracle
    got = exp.astype(f.dtype)
    assert O.check_block(op, layout, f, f, m, mc, got, expf) == (0, 0, None), (op, mode, meth)
    rng = np.random.default_rng(layout.n % 1000)
    pos = rng.choice(layout.n, 40, replace=False)
    g2, f2 = got.copy(), expf.copy()
    g2[pos[:20]] ^= 1
    f2[pos[20:]] ^= 4
    k1, k2, code = O.check_block(op, layout, f, f, m, mc, g2, f2)
    s1, s2, scode = _scalar_check(op, layout, f, m, mc, g2, f2)
    assert (k1, k2) == (s1, s2) == (20, 20) and np.array_equal(code, scode), (op, mode, meth)


def _methods(mode):
    return ["host", "ro53"] if mode == "nearest_even" else ["ro53"]


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz"])
def test_simd_rows_match_scalar_fp8_all_pairs(fmt):
    f = sf.get_format(fmt)
    allb = np.arange(256, dtype=np.int64)
    lay = O.Layout.outer(allb, allb)
    for op in O.BINARY_OPS:
        for mode in MODES:
            for meth in _methods(mode):
                _simd_agrees(op, lay, f, mode, meth, "rows")


# rows: subnormals, the smallest and largest normals, one, specials, random
_ROWS = {"fp16": [0x0001, 0x0155, 0x03FF, 0x0400, 0x0401, 0x3C00, 0x3C01, 0x3555, 0x7BFF,
                  0x7C00, 0x7C01, 0x7E00, 0x0000, 0x8000, 0x8001, 0x83FF, 0xBC00, 0xFBFF],
         "bf16": [0x0001, 0x0055, 0x007F, 0x0080, 0x0081, 0x3F80, 0x3F81, 0x3EAB, 0x7F7F,
                  0x7F80, 0x7F81, 0x7FC0, 0x0000, 0x8000, 0x8001, 0x807F, 0xBF80, 0xFF7F]}


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_simd_rows_match_scalar_fp16_bf16(fmt):
    """Rows x every b (2**16): 24 rows per op and mode, every case compared."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(6)
    a = np.unique(np.concatenate([_ROWS[fmt], rng.integers(0, 1 << 16, 6)])).astype(np.int64)
    lay = O.Layout.outer(a, np.arange(1 << 16, dtype=np.int64))
    for op in O.BINARY_OPS:
        for mode in MODES:
            for meth in _methods(mode):
                _simd_agrees(op, lay, f, mode, meth, "rows")


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_simd_flat_match_scalar_and_testfloat_level1(fmt):
    """Flat blocks (sampled sweeps): every TestFloat level-1 case of the four
    binary ops (46,464 each), SIMD twin against the scalar kernel and against
    the library's kernel (bits, flags, NaN patterns); a slice against the
    exact reference."""
    f = sf.get_format(fmt)
    pre = {"fp16": "f16", "bf16": "bf16"}[fmt]
    for op in O.BINARY_OPS:
        total = 0
        for _, (a, b) in _level1(f"{pre}_{op}"):
            total += a.size
            lay = O.Layout.flat(a, b)
            for mode in MODES:
                m = sf.get_rounding(mode)
                for meth in _methods(mode):
                    _simd_agrees(op, lay, f, mode, meth, "flat")
                got, gotf = getattr(sf, op)(a, b, f, mode, return_flags=True)
                assert O.check_block(op, lay, f, f, m, O.method_code("auto", f, m, op),
                                     got, gotf)[:2] == (0, 0), (op, mode)
                bits, flg = O.oracle_binary(op, a[:300], b[:300], f, mode)
                for k in range(300):
                    r = _reference_binary(op, a[k], b[k], f, mode)
                    if r is not None:
                        assert r == (int(bits[k]), int(flg[k])), (op, mode, k)
        assert total == 46464


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_simd_rows_agree_with_mpfr(fmt):
    """Sampled cases of a rows block: the expected results replaced by MPFR's,
    the SIMD check must find no mismatch."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(7)
    a = np.sort(rng.choice(1 << 16, 4, replace=False)).astype(np.int64)
    lay = O.Layout.outer(a, np.arange(1 << 16, dtype=np.int64))
    for op in O.BINARY_OPS:
        for mode in MODES:
            m = sf.get_rounding(mode)
            mc = O.method_code("auto", f, m, op)
            exp, expf = O.oracle_block(op, lay, f, f, m, mc)
            got = exp.astype(f.dtype)
            for k in rng.choice(lay.n, 120, replace=False):
                got[k], expf[k] = O.mpfr_binary(op, int(a[k >> 16]), int(k & 0xFFFF), f, m)
            assert O.check_block(op, lay, f, f, m, mc, got, expf) == (0, 0, None), (op, mode)


def test_simd_switch(monkeypatch):
    """SOFTFLOAT_SWEEP_SIMD=0 turns the SIMD kernels off (read at import)."""
    import subprocess
    import sys
    code = "from softfloat.sweep_oracles import check; print(check.USE_SIMD)"
    env = dict(os.environ, SOFTFLOAT_SWEEP_SIMD="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"
