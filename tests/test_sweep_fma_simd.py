"""The SIMD fma oracle (softfloat.sweep_oracles.simd_fma) against the scalar
ro53 fma oracle (check.one_case), MPFR and TestFloat's level-1 cases.

How a comparison works (`_agrees`): the scalar oracle computes the expected
bits and flags of every case of a block (`oracle_block`); fed to the sweep
engine's check (`check_block`, which runs the SIMD kernel) as the results
"under test", it must report no mismatch at all: the SIMD oracle then agrees
with the scalar one at every case, bits, flags and NaN patterns (a difference
at any case is a reported mismatch). Then results with flipped bits and flags
must give the same counts and per-case codes as the scalar check kernel (so
the fused compare is not blind). Each comparison also checks that the SIMD
path ran, and which operand access kinds it used (constant, consecutive,
gathered; values or encodings), so that every kernel variant is covered.
"""
import numpy as np
import pytest

import softfloat as sf
from sweep_faults import inject
from softfloat import sweep_oracles as O
from softfloat.sweep import Space
from softfloat.sweep.spaces import _family
from softfloat.sweep_oracles import check as C
from softfloat.sweep_oracles import simd_fma as SF

MODES = list(sf.DETERMINISTIC_MODES)
CONST, LIN, GATHER = SF.CONST, SF.LIN, SF.GATHER


def _scalar_check(layout, f, m, mc, got, gotf):
    old = C.USE_SIMD
    C.USE_SIMD = False
    try:
        return O.check_block("fma", layout, f, f, m, mc, got, gotf)
    finally:
        C.USE_SIMD = old


def _simd_check(layout, f, m, mc, got, gotf):
    """check_block, asserting that it went through the SIMD fma kernel."""
    calls = []
    real = C._check_simd_fma

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    C._check_simd_fma = spy
    try:
        r = O.check_block("fma", layout, f, f, m, mc, got, gotf)
    finally:
        C._check_simd_fma = real
    assert calls, "the SIMD fma kernel did not run"
    return r


def _kinds(layout):
    return tuple(SF.access(s, m) for s, m in zip(layout.shifts, layout.masks))


def _agrees(layout, f, mode, kinds=None, flips=True, expected=None):
    """The SIMD check finds no mismatch against the scalar oracle's results
    (or ``expected`` = (bits, flags) given), and, with ``flips``, the same
    counts and codes as the scalar check on corrupted results."""
    m = sf.get_rounding(mode)
    mc = O.method_code("auto", f, m, "fma")
    if kinds is not None:
        assert _kinds(layout) == kinds
    exp, expf = O.oracle_block("fma", layout, f, f, m, mc) if expected is None else expected
    got = np.asarray(exp).astype(f.dtype)
    assert _simd_check(layout, f, m, mc, got, expf) == (0, 0, None), (f.name, mode)
    if not flips:
        return exp, expf
    rng = np.random.default_rng(layout.n % 1009)
    # half the corrupted cases at random, half among those the scalar special
    # pass computes (an infinite or NaN operand) or with an exact zero result
    arrs = [x[(np.arange(layout.n) >> s) & mk] for x, s, mk in
            zip(layout.arrays, layout.shifts, layout.masks)]
    tabc = C.decode_tables(*f.params)[0]
    hard = np.flatnonzero((tabc[arrs[0]] >= 2) | (tabc[arrs[1]] >= 2) | (tabc[arrs[2]] >= 2)
                          | ((exp & (f.sign_mask - 1)) == 0))
    pos = rng.choice(layout.n, 20, replace=False)
    if hard.size:
        pos = np.unique(np.concatenate([pos, rng.choice(hard, min(20, hard.size),
                                                         replace=False)]))
    g2, f2 = got.copy(), np.asarray(expf).copy()
    half = pos.size // 2
    g2[pos[:half]] ^= 1
    f2[pos[half:]] ^= 4
    k1, k2, code = _simd_check(layout, f, m, mc, g2, f2)
    s1, s2, scode = _scalar_check(layout, f, m, mc, g2, f2)
    assert (k1, k2) == (s1, s2) == (half, pos.size - half), (f.name, mode)
    assert np.array_equal(code, scode)
    return exp, expf


# ---------------------------------------------------------------------------
# every fp8 (and fp6, fp4) triple, every mode, in several layouts

def _all_triples_layouts(n):
    """Every triple of n-bit encodings in two or three layouts (c consecutive;
    b consecutive; fp8: a flat one of encodings), and for fp8 a layout that
    gathers c (2**24 triples, not all)."""
    v = np.arange(1 << n, dtype=np.int64)
    full = (1 << n) - 1
    lays = [O.Layout.outer(v, v, v),
            O.Layout([v, v, v], [2 * n, 0, n], [-1, full, full], 1 << (3 * n))]
    if n == 8:
        k = np.arange(1 << 24, dtype=np.int64)
        lays.append(O.Layout.flat(k >> 16, (k >> 8) & 255, k & 255))
        # c = (k >> 3) & 255: read by a gather (not every triple; 2**24 of them)
        lays.append(O.Layout([v, v, v], [12, 0, 3], [255, 255, 255], 1 << 24))
    return lays


@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp6_e2m3", "fp6_e3m2",
                                 "fp4_e2m1"])
def test_every_small_triple_every_mode(fmt):
    f = sf.get_format(fmt)
    lays = _all_triples_layouts(f.nbits)
    every = lays[:3]                      # the layouts of every triple
    for i, mode in enumerate(MODES):
        # (the corrupted-results pass costs a scalar check: two modes of fp8)
        _agrees(every[i % len(every)], f, mode, flips=f.nbits < 8 or i < 2)
        if len(lays) == 4 and i == 4:
            _agrees(lays[3], f, mode, kinds=(CONST, LIN, GATHER), flips=False)
        if f.nbits < 8:
            for lay in lays:
                _agrees(lay, f, mode, flips=False)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp8_e4m3fnuz", "fp8_e5m2fnuz"])
def test_every_fnuz_triple_every_mode(fmt):
    f = sf.get_format(fmt)
    for mode in MODES:
        for lay in _all_triples_layouts(8):
            _agrees(lay, f, mode, flips=False)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2"])
def test_every_fp8_triple_every_layout_slow(fmt):
    f = sf.get_format(fmt)
    for mode in MODES:
        for lay in _all_triples_layouts(8):
            _agrees(lay, f, mode, flips=False)


def test_kernel_variants_seen():
    """The layouts above and the sweep's own cover every access kind."""
    v = np.arange(256, dtype=np.int64)
    assert _kinds(O.Layout.outer(v, v, v)) == (CONST, CONST, LIN)
    assert _kinds(O.Layout([v, v, v], [16, 0, 8], [-1, 255, 255], 1 << 24)) == \
        (CONST, LIN, CONST)
    assert _kinds(O.Layout([v, v, v], [12, 0, 3], [255, 255, 255], 1 << 24)) == \
        (CONST, LIN, GATHER)
    x = np.arange(16, dtype=np.int64)
    assert _kinds(O.Layout.outer(x, x, x)) == (CONST, GATHER, GATHER)    # fp4: masks < 63


# ---------------------------------------------------------------------------
# fp16 and bf16: structured slices in the sweep's own layouts

# rows (a): subnormals, the smallest and largest normals, one, near one, zeros,
# infinities and NaNs, negative ones
_ROWS = {"fp16": [0x0001, 0x0155, 0x03FF, 0x0400, 0x0401, 0x3C00, 0x3C01, 0x3555, 0x7BFF,
                  0x7C00, 0x7E00, 0x7D01, 0x0000, 0x8000, 0x8001, 0x83FF, 0xBC00, 0xFBFF,
                  0x2400, 0x5800],
         "bf16": [0x0001, 0x0055, 0x007F, 0x0080, 0x0081, 0x3F80, 0x3F81, 0x3EAB, 0x7F7F,
                  0x7F80, 0x7FC0, 0x7F81, 0x0000, 0x8000, 0x8001, 0x807F, 0xBF80, 0xFF7F,
                  0x1F80, 0x5F00]}
# fixed addends: zeros, extremes, the smallest subnormal, one, the largest
# subnormal, the smallest normal, a NaN
_CS = {"fp16": [0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x3C00, 0x03FF, 0x0400, 0x7E00],
       "bf16": [0x0000, 0x8000, 0x7F7F, 0xFF7F, 0x0001, 0x8001, 0x3F80, 0x007F, 0x0080, 0x7FC0]}


def _rows(fmt, extra, seed):
    rng = np.random.default_rng(seed)
    return np.unique(np.concatenate([_ROWS[fmt], rng.integers(0, 1 << 16, extra)]))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_cancel_family_rows(fmt):
    """The 'cancel' family (c = -RN(a*b) + d ulps for d = -5..5, RN(a*b), +-0,
    +-max) for 24 rows a x every b, in the sweep's block layout (b gathered,
    the addend grid read as encodings): 2**24 cases per row set and mode."""
    f = sf.get_format(fmt)
    sp = Space("fma", f, c_family="cancel")
    for i, mode in enumerate(MODES):
        for t, a in enumerate(_rows(fmt, 4, 1)):
            lo = int(a) << 20                         # one row: 2**16 b x 16 addends
            (s, ops, lay), = list(sp.blocks(lo, lo + (1 << 20)))
            _agrees(lay, f, mode, kinds=(CONST, GATHER, LIN), flips=(t == i))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_cancel4_and_fixed_c_and_full_blocks(fmt):
    """cancel4 rows; c fixed (zeros, extremes, subnormals, one, a NaN) over 16
    rows x every b; blocks of the whole space (a, 16 b values, every c)."""
    f = sf.get_format(fmt)
    sp4 = Space("fma", f, c_family="cancel4")
    rng = np.random.default_rng(2)
    for i, mode in enumerate(MODES):
        for a in _rows(fmt, 0, 0)[i::6]:
            lo = int(a) << 18                         # 2**16 b x 4 addends
            (s, ops, lay), = list(sp4.blocks(lo, lo + (1 << 18)))
            _agrees(lay, f, mode, kinds=(CONST, GATHER, LIN), flips=False)
        for c in _CS[fmt][i % 2::2]:
            spc = Space("fma", f, c=int(c))
            a0 = [0x0000, 0x3C00, 0x7BF0, 0x8000, 0xFC00, int(rng.integers(0, 4096)) * 16][i]
            (s, ops, lay), = list(spc.blocks(a0 << 16, (a0 << 16) + (1 << 20)))
            _agrees(lay, f, mode, kinds=(CONST, LIN, CONST), flips=(c == _CS[fmt][i % 2]))
        spf = Space("fma", f)
        for a, b0 in ((0x3C00, 0x3C00), (0x0001, 0x8000), (0x7BFF, 0x7BF0),
                      (int(rng.integers(0, 1 << 16)), int(rng.integers(0, 4096)) * 16)):
            lo = (a << 32) + (b0 << 16)
            (s, ops, lay), = list(spf.blocks(lo, lo + (1 << 20)))
            _agrees(lay, f, mode, kinds=(CONST, CONST, LIN), flips=(a == 0x3C00))


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_random_flat_samples(fmt):
    """Uniform random triples (a sampled sweep's flat layout), and triples near
    cancellation (c = -RN(a*b) and neighbours for random a, b), as encodings
    (2**18 cases) and as values (2**12 cases)."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(3)
    for i, mode in enumerate(MODES):
        a, b, c = (rng.integers(0, 1 << 16, 1 << 18).astype(np.int64) for _ in range(3))
        _agrees(O.Layout.flat(a, b, c), f, mode, kinds=(LIN, LIN, LIN), flips=i < 2)
        a, b = a[:1 << 12], b[:1 << 12]
        cc = _family(a.astype(f.dtype), b.astype(f.dtype), rng.integers(0, 16, 1 << 12), f,
                     "cancel").astype(np.int64)
        _agrees(O.Layout.flat(a, b, cc), f, mode, kinds=(LIN, LIN, LIN), flips=i < 2)


# ---------------------------------------------------------------------------
# against MPFR, and TestFloat's level-1 cases

@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_agrees_with_mpfr_on_samples(fmt):
    """Expected results from MPFR (mpfr_fma) at sampled cases of a cancel block
    and of random triples; the SIMD check must find no mismatch there."""
    pytest.importorskip("gmpy2")
    f = sf.get_format(fmt)
    rng = np.random.default_rng(4)
    sp = Space("fma", f, c_family="cancel")
    for mode in MODES:
        m = sf.get_rounding(mode)
        a = int(rng.integers(0, 1 << 16))
        (s, ops, lay), = list(sp.blocks(a << 20, (a + 1) << 20))
        r = np.random.default_rng(5)
        ra, rb, rc = (r.integers(0, 1 << 16, 4096).astype(np.int64) for _ in range(3))
        for lay in (lay, O.Layout.flat(ra, rb, rc)):
            mc = O.method_code("auto", f, m, "fma")
            exp, expf = O.oracle_block("fma", lay, f, f, m, mc)
            exp, expf = exp.copy(), expf.copy()
            picks = rng.choice(lay.n, 150, replace=False)
            for k in picks:
                ops3 = [int(x[(k >> s_) & mk]) for x, s_, mk in
                        zip(lay.arrays, lay.shifts, lay.masks)]
                exp[k], expf[k] = O.mpfr_fma(*ops3, f, m)
            _agrees(lay, f, mode, flips=False, expected=(exp, expf))


def _level1(function):
    from softfloat import testfloat as T
    return T.operands(function, level=1, chunk=1 << 22)


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_testfloat_level1(fmt):
    """Every TestFloat level-1 case of f16_mulAdd / bf16_mulAdd (6,133,248
    each) in all six modes: the SIMD check against the scalar oracle (bits,
    flags, NaN patterns); on the library's kernel results in nearest_even
    (test_sweep_oracles compares the scalar oracle with the kernel in every
    mode)."""
    f = sf.get_format(fmt)
    name = {"fp16": "f16_mulAdd", "bf16": "bf16_mulAdd"}[fmt]
    total = 0
    for _, (a, b, c) in _level1(name):
        total += a.size
        lay = O.Layout.flat(*(x.astype(np.int64) for x in (a, b, c)))
        for i, mode in enumerate(MODES):
            _agrees(lay, f, mode, kinds=(LIN, LIN, LIN), flips=(i == 0))
            if i:
                continue
            m = sf.get_rounding(mode)
            got, gotf = sf.fma(a, b, c, f, mode, return_flags=True)
            assert _simd_check(lay, f, m, O.method_code("auto", f, m, "fma"), got,
                               gotf)[:2] == (0, 0), (fmt, mode)
    assert total == 6133248


# ---------------------------------------------------------------------------
# the engine with the SIMD fma kernel

def test_engine_reports_fma_faults(monkeypatch):
    """Injected faults in an fma sweep (c fixed): a flipped result bit on
    finite operands (the vector kernel), a flipped flag, a wrong NaN payload
    (a NaN operand: the scalar special pass) are all reported."""
    from softfloat import sweep as S
    from softfloat.sweep import engine
    inject(monkeypatch, engine)
    for mode in ("nearest_even", "downward"):
        rep = S.run_sweep("fma", "fp16", mode, c=0x3C00, shards=1 << 16,
                          shard_ids=[0x3C00, 0x3C01])
        assert (rep["bits_mismatches"], rep["flag_mismatches"]) == (2, 1), rep
        ex = {e["case"]: e for e in rep["first_mismatches"]}
        e0 = ex[0x3C00 * 65536 + 0x4000]
        assert e0["operands"] == ["0x3c00", "0x4000", "0x3c00"]
        assert e0["expected"] == "0x4200"                               # 1 * 2 + 1
        assert ex[0x3C00 * 65536 + 0x4001]["kind"] == "flags"
        nan = ex[0x3C01 * 65536 + 0x7E05]
        assert nan["expected"] == "0x7e05" and nan["got"] == "0x7e07"  # b's payload


def test_exact_zero_signs():
    """Exact zero sums in every mode: +0 except downward (-0), same-signed
    zero addends keep their sign; a fnuz format's single zero."""
    for fmt in ("fp16", "fp8_e4m3fnuz"):
        f = sf.get_format(fmt)
        S_ = f.sign_mask
        one = int(sf.to_bits(np.array([1.0]), f)[0])
        # (a, b, c): 1*1 + -1, -1*1 + 1, 0*1 + 0, -0*1 + -0, 0*1 + -0, -0*-1 + -0,
        # 0*-1 + 0 (fnuz: no -0, 0x80 is its NaN: the first four without -0)
        a = np.array([one, one | S_, 0, S_, 0, S_, 0], np.int64)
        b = np.array([one, one, one, one, one, one | S_, one | S_], np.int64)
        c = np.array([one | S_, one, 0, S_, S_, S_, 0], np.int64)
        if f.kind == "fnuz":
            a, b, c = a[[0, 1, 2, 6]], b[[0, 1, 2, 6]], c[[0, 1, 2, 6]]
        for mode in MODES:
            z = S_ if mode == "downward" else 0
            want = [0] * 4 if f.kind == "fnuz" else [z, z, 0, S_, z, z, z]
            lay = O.Layout.flat(a, b, c)
            want_f = np.zeros(len(want), np.uint8)
            exp, expf = _agrees(lay, f, mode, flips=False,
                                expected=(np.array(want, np.int64), want_f))
            bits, flg = O.oracle_fma(a.astype(f.dtype), b.astype(f.dtype), c.astype(f.dtype),
                                     f, mode)
            assert bits.tolist() == want and not flg.any(), (fmt, mode)


# ---------------------------------------------------------------------------
# larger runs

@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_cancel4_many_rows_slow(fmt):
    """cancel4 for 512 random rows a x every b (2**27 cases) per mode, and the
    'cancel' family for 64 more rows (2**26)."""
    f = sf.get_format(fmt)
    rng = np.random.default_rng(11)
    sp4 = Space("fma", f, c_family="cancel4")
    sp = Space("fma", f, c_family="cancel")
    for mode in MODES:
        for a in rng.choice(1 << 16, 512, replace=False):
            lo = int(a) << 18
            (s, ops, lay), = list(sp4.blocks(lo, lo + (1 << 18)))
            _agrees(lay, f, mode, flips=False)
        for a in rng.choice(1 << 16, 64, replace=False):
            lo = int(a) << 20
            (s, ops, lay), = list(sp.blocks(lo, lo + (1 << 20)))
            _agrees(lay, f, mode, flips=False)
