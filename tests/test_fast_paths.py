"""Every fast path against its slow twin, exhaustively where the space allows.

The fast kernels (hardware conversions in softfloat._kernels.convert_hw, float32
+ error-free-transformation arithmetic in softfloat._kernels.eft, the
branch-free integer passes) must give the general integer kernels' bits and
flags (the general kernels are checked against independent oracles in
test_conversions.py and test_arith.py, which also run with the fast paths on
and off). Here, per case: the default call (fast paths, no per-element flags),
the call with per-element flags, the same with the hardware kernels forced off
(hw.FORCE_INTEGER: the integer fallback), all compared with
``fast_paths=False``; plus the sticky flags. RNE results are also compared with
numpy / ml_dtypes casts (an oracle that shares no code).
"""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from numba import njit

import softfloat as sf
from softfloat._kernels import hw


# these tests check the fast paths themselves: they stay on even in a run with
# SOFTFLOAT_FAST_PATHS=0 (conftest.fast_paths_on)
pytestmark = pytest.mark.usefixtures("fast_paths_on")


MODES = list(sf.DETERMINISTIC_MODES)
# policy sets: the default, and each non-default policy the fast paths must
# either honour or hand to the general kernel
POLICIES = [dict(), dict(ftz=True), dict(daz=True), dict(subnormals=False),
            dict(overflow="saturate"), dict(tininess="before"), dict(nan="canonical")]
POL_IDS = ["default", "ftz", "daz", "no_subnormals", "saturate", "tin_before", "nan_canon"]


@pytest.fixture
def integer_only(monkeypatch):
    monkeypatch.setattr(hw, "FORCE_INTEGER", True)


def _both(fn, *args, **kw):
    """(bits, sticky flags) of fn(*args, **kw) in a fresh local context."""
    with sf.localcontext() as ctx:
        r = fn(*args, **kw)
    return r, int(ctx.flags)


def _at(args, i):
    """The array arguments' elements at flat index i (broadcast), as hex bit patterns."""
    arrs = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
    out = []
    for a in np.broadcast_arrays(*arrs):
        v = a.reshape(-1)[i]
        out.append(hex(int(v.view(f"u{v.itemsize}"))) if v.dtype.kind == "f" else hex(int(v)))
    return tuple(out)


def assert_fast_equals_general(fn, args, what, **kw):
    """fn(*args, **kw) with the fast paths (default call, with flags, hardware off)
    equals the general kernels' result, bits and flags, element for element."""
    with sf.localcontext(fast_paths=False) as ctx:
        want, wflags = fn(*args, return_flags=True, **kw)
    wsticky = int(ctx.flags)
    assert wsticky == int(np.bitwise_or.reduce(wflags.reshape(-1), initial=0))
    variants = []
    for force in (False, True):
        old = hw.FORCE_INTEGER
        hw.FORCE_INTEGER = force
        try:
            got, sticky = _both(fn, *args, **kw)
            (got2, flags2), sticky2 = _both(fn, *args, return_flags=True, **kw)
        finally:
            hw.FORCE_INTEGER = old
        variants.append(("integer" if force else "hw", got, sticky, got2, flags2, sticky2))
    for name, got, sticky, got2, flags2, sticky2 in variants:
        for g, label in ((got, "no flags"), (got2, "flags")):
            bad = np.flatnonzero(g != want)
            assert bad.size == 0, (f"{what} [{name}, {label}]: {bad.size} mismatches, first at "
                                   f"{[_at(args, i) for i in bad[:4]]}: "
                                   f"{[hex(int(g.reshape(-1)[i])) for i in bad[:4]]} want "
                                   f"{[hex(int(want.reshape(-1)[i])) for i in bad[:4]]}")
        badf = np.flatnonzero(flags2 != wflags)
        assert badf.size == 0, (f"{what} [{name}]: {badf.size} flag mismatches, e.g. "
                                f"{_at(args, badf[0])}: "
                                f"{flags2.reshape(-1)[badf[0]]} want {wflags.reshape(-1)[badf[0]]}")
        assert sticky == wsticky and sticky2 == wsticky, (what, name, sticky, sticky2, wsticky)
    return want


# ---------------------------------------------------------------------------
# conversions: float32 inputs that cover every fp16 / bf16 rounding boundary
# ---------------------------------------------------------------------------
def _f32_around_fp16_grid():
    """float32 bit patterns: every (sign, exponent, top 10 fraction bits) prefix
    (2^19) with the 13 dropped bits at 0, 1, half - 1, half, half + 1 and all
    ones: every fp16 value, midpoint and their neighbours, in every binade
    (subnormal targets, overflow, infinities and NaNs included)."""
    top = np.arange(1 << 19, dtype=np.uint32) << 13
    low = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF], np.uint32)
    return (top[:, None] | low[None, :]).reshape(-1).view(np.float32)


def _f32_around_bf16_grid():
    top = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    return (top[:, None] | low[None, :]).reshape(-1).view(np.float32)


def _f64_from(x32):
    """float64 values: the float32 ones, and each nudged by 2^-30 and 2^-45
    relative up and down (inexact in float32: the round-to-odd step)."""
    x = x32.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.concatenate([x, x * (1 + 2.0 ** -30), x * (1 - 2.0 ** -45)])


GRIDS = {"fp16": _f32_around_fp16_grid, "bf16": _f32_around_bf16_grid}


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_to_bits_f32_fast_equals_general(fmt, mode):
    x = GRIDS[fmt]()
    assert_fast_equals_general(sf.to_bits, (x, fmt, mode), f"f32->{fmt} {mode}")


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_to_bits_f64_fast_equals_general(fmt, mode):
    x = _f64_from(GRIDS[fmt]()[::3])
    assert_fast_equals_general(sf.to_bits, (x, fmt, mode), f"f64->{fmt} {mode}")


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("pol", POLICIES, ids=POL_IDS)
def test_to_bits_policies_fast_equals_general(fmt, pol):
    x = GRIDS[fmt]()[::5]
    for mode in MODES:
        assert_fast_equals_general(sf.to_bits, (x, fmt, mode), f"f32->{fmt} {mode} {pol}", **pol)
        assert_fast_equals_general(sf.to_bits, (_f64_from(x[::7]), fmt, mode),
                                   f"f64->{fmt} {mode} {pol}", **pol)


def test_to_bits_nearest_even_equals_numpy_and_ml_dtypes():
    """An oracle sharing no code: numpy's float32/float64 -> float16 and
    ml_dtypes' float32 -> bfloat16 casts (nearest-even), NaNs aside."""
    x = _f32_around_fp16_grid()
    with np.errstate(over="ignore", invalid="ignore"):
        for xs in (x, _f64_from(x[::9])):
            want = xs.astype(np.float16).view(np.uint16)
            got = sf.to_bits(xs, "fp16")
            keep = ~np.isnan(xs)
            assert np.array_equal(got[keep], want[keep])
        xb = _f32_around_bf16_grid()
        want = xb.astype(ml_dtypes.bfloat16).view(np.uint16)
        keep = ~np.isnan(xb)
        assert np.array_equal(sf.to_bits(xb, "bf16")[keep], want[keep])


@pytest.mark.parametrize("src, dst", [("fp16", "bf16"), ("bf16", "fp16"), ("fp16", "fp8_e4m3"),
                                      ("bf16", "fp8_e5m2"), ("fp16", "fp8_e5m2")])
def test_convert_every_encoding_fast_equals_general(src, dst):
    """All 2^16 encodings of a 16-bit format into another format, every mode and policy."""
    b = np.arange(1 << 16, dtype=np.uint16)
    for pol in POLICIES:
        for mode in MODES:
            assert_fast_equals_general(sf.convert, (b, src, dst, mode), f"{src}->{dst} {mode}",
                                       **pol)


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("pol", POLICIES, ids=POL_IDS)
def test_sqrt_every_encoding_fast_equals_general(fmt, pol):
    b = np.arange(1 << 16, dtype=np.uint16)
    for mode in MODES:
        assert_fast_equals_general(sf.sqrt, (b, fmt, mode), f"sqrt {fmt} {mode}", **pol)


def _boundary_pairs(n, seed):
    """n pairs of 16-bit encodings biased to the hard cases: random patterns,
    near-cancellation (b within 64 encodings of +-a), exponents far apart,
    operands near 1 (products and quotients near the rounding boundaries),
    and specials/subnormals."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 16, n).astype(np.uint16)
    b = rng.integers(0, 1 << 16, n).astype(np.uint16)
    k = n // 6
    b[:k] = ((a[:k].astype(np.int64) + rng.integers(-64, 64, k)) & 0xFFFF).astype(np.uint16)
    b[k:2 * k] = ((a[k:2 * k].astype(np.int64) + rng.integers(-64, 64, k)) ^ 0x8000).clip(
        0, 0xFFFF).astype(np.uint16)
    ones = np.array([0x3C00, 0x3F80], np.uint16)          # 1.0 in fp16 / bf16 (either)
    a[2 * k:3 * k] = ones[rng.integers(0, 2, k)] + rng.integers(0, 64, k).astype(np.uint16)
    b[2 * k:3 * k] = ones[rng.integers(0, 2, k)] + rng.integers(0, 64, k).astype(np.uint16)
    sp = np.array([0, 0x8000, 1, 0x8001, 0x3FF, 0x400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7D00,
                   0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x7FA0, 0x80, 0x7F], np.uint16)
    a[3 * k:3 * k + k // 2] = sp[rng.integers(0, sp.size, k // 2)]
    b[3 * k + k // 2:4 * k] = sp[rng.integers(0, sp.size, k - k // 2)]
    return a, b


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma"])
def test_binary_sampled_fast_equals_general(fmt, op):
    """2^18 boundary-biased pairs (triples for fma), every mode."""
    a, b = _boundary_pairs(1 << 18, 1)
    c = _boundary_pairs(1 << 18, 2)[1]
    fn = getattr(sf, op)
    args = (a, b, c) if op == "fma" else (a, b)
    for mode in MODES:
        assert_fast_equals_general(fn, args + (fmt, mode), f"{op} {fmt} {mode}")


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("pol", POLICIES[1:], ids=POL_IDS[1:])
def test_binary_policies_fast_equals_general(fmt, pol):
    a, b = _boundary_pairs(1 << 14, 3)
    c = _boundary_pairs(1 << 14, 4)[1]
    for op in ("add", "sub", "mul", "div", "fma"):
        args = (a, b, c) if op == "fma" else (a, b)
        for mode in MODES:
            assert_fast_equals_general(getattr(sf, op), args + (fmt, mode),
                                       f"{op} {fmt} {mode} {pol}", **pol)


def test_binary_broadcast_scalars():
    a = np.arange(1 << 16, dtype=np.uint16)
    for fmt in ("fp16", "bf16"):
        assert_fast_equals_general(sf.mul, (a, np.uint16(0x3E00), fmt), "mul by 1.5")
        assert_fast_equals_general(sf.fma, (a, np.uint16(0x3E00), a[::-1].copy(), fmt), "fma")


def test_fp16_nearest_even_equals_numpy():
    """fp16 + - * / sqrt in nearest-even against numpy's float16 (which computes
    in float32 and rounds once: correct by Figueroa's theorem), NaNs aside."""
    a, b = _boundary_pairs(1 << 18, 5)
    x, y = a.view(np.float16), b.view(np.float16)
    with np.errstate(all="ignore"):
        for op, ref in (("add", x + y), ("sub", x - y), ("mul", x * y), ("div", x / y)):
            got = getattr(sf, op)(a, b, "fp16")
            keep = ~np.isnan(ref)
            assert np.array_equal(got[keep], ref.view(np.uint16)[keep]), op
        ref = np.sqrt(x)
        keep = ~np.isnan(ref)
        assert np.array_equal(sf.sqrt(a, "fp16")[keep], ref.view(np.uint16)[keep])


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_exact_zeros_every_mode(fmt):
    """Exact zero results stay in the fast kernels (softfloat._kernels.eft): x + (-x)
    (+0, but -0 downward), signed zeros added and subtracted, products and
    quotients with a zero operand, sqrt(+-0); every encoding against its negation
    and against both zeros."""
    a = np.arange(1 << 16, dtype=np.uint16)
    z = np.array([0, 0x8000], np.uint16)
    A = np.concatenate([a, np.repeat(z, a.size), a])
    B = np.concatenate([a ^ 0x8000, np.tile(a, 2), a])
    for mode in MODES:
        for op in ("add", "sub", "mul", "div"):
            assert_fast_equals_general(getattr(sf, op), (A, B, fmt, mode), f"{op} {fmt} {mode}")
        assert_fast_equals_general(sf.fma, (A, B, B[::-1].copy(), fmt, mode), f"fma {fmt} {mode}")
        assert_fast_equals_general(sf.fma, (A, z[0], B, fmt, mode), f"fma 0 {fmt} {mode}")
        assert_fast_equals_general(sf.sqrt, (z, fmt, mode), f"sqrt 0 {fmt} {mode}")


def _fma_midpoint_triples(fmt, n, seed):
    """(a, b, c) where a * b + c lies at or next to a rounding boundary of the
    format: c = -RN(a*b) and its neighbours (cancellation), c tiny against a*b (a
    product that is itself a midpoint, or one ulp from one, then nudged by less
    than an ulp: the case where rounding the float32 sum to nearest first would
    land on the midpoint), c at +-2^k near the product's ulp."""
    rng = np.random.default_rng(seed)
    one = 0x3C00 if fmt == "fp16" else 0x3F80
    M = 10 if fmt == "fp16" else 7
    a = (one + rng.integers(0, 1 << M, n)).astype(np.uint16)       # [1, 2)
    b = (one + rng.integers(0, 1 << M, n)).astype(np.uint16)
    e = rng.integers(-3, 4, n)
    a = (a.astype(np.int64) + (e << M)).astype(np.uint16)           # other binades
    sgn = (rng.integers(0, 2, n) << 15).astype(np.uint16)
    a ^= sgn
    p = sf.mul(a, b, fmt, "toward_zero")
    k = n // 4
    c = np.empty(n, np.uint16)
    c[:k] = ((p[:k] ^ 0x8000).astype(np.int64) + rng.integers(-2, 3, k)).astype(np.uint16)
    # tiny addends: magnitudes from the smallest subnormal up to about the
    # product's ulp, either sign
    tiny = rng.integers(1, (M + 4) << M, n - k).astype(np.uint16)
    c[k:] = tiny ^ (rng.integers(0, 2, n - k) << 15).astype(np.uint16)
    return a, b, c


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_fma_midpoints_every_mode(fmt):
    """fma's fast kernel rounds RTO32(a*b + c), never RN_24 first: triples whose
    exact result sits on or next to a midpoint or a format value."""
    a, b, c = _fma_midpoint_triples(fmt, 1 << 17, 11)
    for mode in MODES:
        assert_fast_equals_general(sf.fma, (a, b, c, fmt, mode), f"fma {fmt} {mode}")


def test_fma_double_rounding_is_avoided():
    """fp16: 1.5 * (1 + 2^-10) = 1.5 + 2^-10 + 2^-11, the midpoint between 0x3E01
    and 0x3E02. Plus c = -+2^-24, the exact sum lies just below / above it, but
    its float32 rounding is the midpoint itself (a tie, to the even float32),
    which nearest-even would then round to 0x3E02 either way. The fast kernel
    must give 0x3E01 below and 0x3E02 above, in both nearest modes, either sign."""
    for sgn in (0, 0x8000):
        a, b = np.uint16(0x3E00 | sgn), np.uint16(0x3C01)
        for c, want in ((np.uint16(0x0001 | (0x8000 ^ sgn)), 0x3E01),
                        (np.uint16(0x0001 | sgn), 0x3E02)):
            for mode in ("nearest_even", "nearest_away"):
                got = sf.fma(np.full(64, a), np.full(64, b), np.full(64, c), "fp16", mode)
                assert (got == (want | sgn)).all(), (hex(sgn), hex(c), mode, hex(got[0]))


def _midpoint_pairs(fmt, n, seed):
    """(a, b) whose sum lies on a midpoint of the format or next to one: b is a
    power of two at half an ulp of a (a quarter below a power of two, for a
    difference), or that plus or minus a few units of far lower weight, either
    sign; a ranges over the normal binades."""
    rng = np.random.default_rng(seed)
    E, M = (5, 10) if fmt == "fp16" else (8, 7)
    emax = (1 << E) - 2
    ea = rng.integers(M + 2, emax - 1, n)                       # biased exponents
    a = ((ea << M) | rng.integers(0, 1 << M, n)).astype(np.uint16)
    eb = ea - M - 1 - rng.integers(0, 2, n)                     # half / quarter ulp
    b = (eb << M).astype(np.int64)
    nudge = rng.integers(-3, 4, n) * (rng.integers(0, 2, n) == 1)
    b = np.clip(b + nudge, 1, None).astype(np.uint16)          # a few ulps of b off
    a ^= (rng.integers(0, 2, n) << 15).astype(np.uint16)
    b ^= (rng.integers(0, 2, n) << 15).astype(np.uint16)
    return a, b


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_sums_at_midpoints_every_mode(fmt):
    """Sums exactly on a midpoint (nearest-away and nearest-even differ there; the
    nearest-away kernel rounds s = RN_24(r) half away, which needs RN_24(r) to be a
    midpoint only when r is) and just beside one, added and subtracted."""
    a, b = _midpoint_pairs(fmt, 1 << 16, 21)
    for mode in MODES:
        for op in ("add", "sub"):
            assert_fast_equals_general(getattr(sf, op), (a, b, fmt, mode), f"{op} {fmt} {mode}")
    one = np.uint16(0x3C00 if fmt == "fp16" else 0x3F80)
    half_ulp = np.uint16(0x1000 if fmt == "fp16" else 0x3B80)    # 2^-11, 2^-8
    got = [sf.add(np.full(8, one), np.full(8, half_ulp), fmt, m)[0] for m in
           ("nearest_even", "nearest_away")]
    assert got == [one, one + 1], [hex(g) for g in got]


def test_eft_kernel_per_op_format_mode():
    """One pass-1 kernel per (format, op, mode), made once; bad keys are refused."""
    from softfloat._kernels import eft
    ks = {m: eft.kernel(eft.FP16, eft.OP_ADD, m) for m in range(6)}
    assert len({id(k) for k in ks.values()}) == 6
    assert eft.kernel(eft.FP16, eft.OP_ADD, 3) is ks[3]
    assert eft.kernel(eft.BF16, eft.OP_ADD, 3) is not ks[3]
    for bad in ((eft.FP16, eft.OP_ADD, 6), ((5, 10, 16, 0), eft.OP_ADD, 0), (eft.BF16, 4, 0)):
        with pytest.raises(ValueError, match="no EFT kernel"):
            eft.kernel(*bad)


@pytest.mark.parametrize("n", [1, 15, 16, 511, 512, 513, 1023, 1025, 65535, 65536, 65537,
                               200001])
def test_slow_element_lists_at_block_and_chunk_edges(n):
    """The fast kernels list the elements they leave (subnormal results here) per
    block of 512 and per thread chunk (up to arith._EFT_LIST per chunk, then the
    caller scans); slow elements at every block edge, at the array's ends, in runs
    and in a half of all elements, for lengths around the block and chunk sizes."""
    rng = np.random.default_rng(n)
    a = sf.to_bits(rng.standard_normal(n) * 8, "fp16")
    b = sf.to_bits(rng.standard_normal(n) * 8, "fp16")
    tiny = np.uint16(0x0001)                                  # smallest subnormal
    marks = np.zeros(n, bool)
    marks[::512] = True
    marks[511::512] = True
    marks[-1] = True
    marks[n // 3: n // 3 + 40] = True
    if n == 200001:
        marks[n // 2:] = True          # more than a chunk's list holds: the scan fallback
    a = np.where(marks, tiny, a)
    b = np.where(marks, np.uint16(0x3C00), b)                 # tiny * 1: subnormal result
    for mode in ("nearest_even", "upward"):
        assert_fast_equals_general(sf.mul, (a, b, "fp16", mode), f"mul n={n} {mode}")
        assert_fast_equals_general(sf.add, (a, np.where(marks, tiny, b), "bf16", mode),
                                   f"add n={n} {mode}")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("op", ["add", "mul", "div"])
@pytest.mark.parametrize("mode", ["nearest_even", "upward"])
def test_binary_all_pairs_fast_equals_general(fmt, op, mode):
    """All 2^32 pairs (in blocks of 2^24): fast path vs general kernel, bits and flags."""
    a_all = np.arange(1 << 16, dtype=np.uint16)
    fn = getattr(sf, op)
    for hi in range(0, 1 << 16, 256):
        a = np.repeat(a_all[hi:hi + 256], 1 << 16)
        b = np.tile(a_all, 256)
        got, gf = fn(a, b, fmt, mode, return_flags=True)
        with sf.localcontext(fast_paths=False):
            want, wf = fn(a, b, fmt, mode, return_flags=True)
        assert np.array_equal(got, want) and np.array_equal(gf, wf), (op, fmt, mode, hi)
        assert np.array_equal(fn(a, b, fmt, mode), want), (op, fmt, mode, hi)


# ---------------------------------------------------------------------------
# the switch, the MXCSR guard, the fallback
# ---------------------------------------------------------------------------
def test_fast_paths_switch_context_and_environment():
    assert sf.getcontext().fast_paths in (True, False)
    with sf.localcontext(fast_paths=False) as ctx:
        assert ctx.fast_paths is False
        assert sf.getcontext().fast_paths is False
    with pytest.raises(TypeError):
        with sf.localcontext(fast_paths="no"):
            sf.to_bits(1.0, "fp16")
    code = "import softfloat as sf; print(sf.getcontext().fast_paths, sf.Context().fast_paths)"
    for val, want in (("0", "False False"), ("off", "False False"), ("1", "True True")):
        env = dict(os.environ, SOFTFLOAT_FAST_PATHS=val)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True, cwd=os.path.dirname(os.path.dirname(
                                 os.path.abspath(__file__))))
        assert out.stdout.split()[-2:] == want.split()


def test_flush_denormal_set_by_another_library_changes_nothing():
    """torch.set_flush_denormal(True) sets FTZ/DAZ in this thread's MXCSR; the
    hardware kernels must notice and give the same results (integer path)."""
    torch = pytest.importorskip("torch")
    x32 = _f32_around_fp16_grid()[::37].copy()            # small: runs in this thread
    xs = x32[:60000]
    with np.errstate(invalid="ignore"):
        x64 = xs.astype(np.float64)        # made here: numpy's cast flushes under DAZ too
    sub = (np.arange(1 << 16, dtype=np.uint16))[:60000]
    rev = sub[::-1].copy()
    calls = [lambda: sf.to_bits(xs, "fp16"), lambda: sf.to_bits(x64, "fp16"),
             lambda: sf.to_bits(x64, "bf16", "upward"), lambda: sf.to_bits(xs, "fp16", "odd"),
             lambda: sf.to_bits(xs, "fp16", "nearest_away"),
             lambda: sf.to_bits(x64, "fp16", "upward"),
             lambda: sf.to_bits(x64, "fp16", "nearest_away"),
             lambda: sf.add(sub, rev, "bf16"), lambda: sf.sqrt(sub, "bf16"),
             lambda: sf.mul(sub, rev, "fp16", "toward_zero"), lambda: sf.div(rev, sub, "bf16"),
             lambda: sf.fma(sub, sub, rev, "bf16")]
    want = [c() for c in calls]
    assert hw.process_fp_env_ok() or not hw.HAVE_F16C
    was = torch.set_flush_denormal(True)
    try:
        if hw.HAVE_F16C:
            assert was is True and not hw.process_fp_env_ok()
        got = [c() for c in calls]
    finally:
        torch.set_flush_denormal(False)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
    # and the hardware result itself: fp16 subnormals from float32 (F16C under
    # FTZ would flush them)
    assert sf.to_bits(np.float32([2.0 ** -20]), "fp16")[0] == 0x0010


def test_hw_kernels_are_used_and_compile_to_f16c():
    """The dispatch reaches the hardware kernel on an F16C host (so the tests
    above compare it, not the integer path twice)."""
    if not (hw.use_hw() and hw.HAVE_F16C_AVX):
        pytest.skip("no F16C/AVX on this host, or SOFTFLOAT_HW=0")
    from softfloat._kernels import convert_hw
    x = np.float32([1.0, 2.0 ** -20, 65520.0])
    assert sf.to_bits(x, "fp16").tolist() == [0x3C00, 0x0010, 0x7C00]
    assert any(str(sig[2].dtype) == "float32" for sig in convert_hw.fp16_rne_chunk.signatures)
    for src in (np.float32, np.float64):
        assert sf.to_bits(x.astype(src), "fp16", "toward_zero").tolist() == [0x3C00, 0x0010, 0x7BFF]
        assert any(str(sig[2].dtype) == np.dtype(src).name for sig in convert_hw.fp16_chunk.signatures)


# ---------------------------------------------------------------------------
# the fp16 block kernels (hw.cvt16_block, 16 elements per call): every lane,
# the zero-padded tail, lengths, layouts, the dispatch and its fallback
# ---------------------------------------------------------------------------
_needs_block = pytest.mark.skipif(not (hw.use_hw() and hw.HAVE_F16C_AVX),
                                  reason="no F16C/AVX on this host, or SOFTFLOAT_HW=0")

_FP16 = (5, 10, 15, 0)
_MODE_CODE = {m: i for i, m in enumerate(MODES)}      # softfloat's rounding codes 0-5


def _block_args(mode):
    from softfloat._kernels import convert_hw as HW
    code = _MODE_CODE[mode]
    kernel = HW.fp16_rne_chunk if code == 0 else HW.fp16_chunk
    return kernel, code, HW.signed_thresholds(code, *HW.thresholds(_FP16, code))


@njit
def _each_alone(kernel, x, mode, po, no, pt, nt, bits, fl, tail):
    """bits[i], fl[i]: the kernel's result and return value for x[i] alone among
    zeros: in lane i % 16 of one block (tail False), or (tail True) in a range
    of 16 + r elements, r = 1 + i % 15, whose last block overlaps the first: at
    position 15 (converted by both blocks) for even i, at the end for odd i."""
    blk = np.zeros(32, x.dtype)
    o = np.empty(32, np.uint16)
    for i in range(x.size):
        blk[:] = 0
        if tail:
            r = 1 + i % 15
            p = 15 if i % 2 == 0 else 15 + r
            blk[p] = x[i]
            fl[i] = kernel(0, 16 + r, blk, o, mode, po, no, pt, nt)
        else:
            p = i % 16
            blk[p] = x[i]
            fl[i] = kernel(0, 16, blk, o, mode, po, no, pt, nt)
        bits[i] = o[p]


def _check_each_alone(x, mode):
    kernel, code, th = _block_args(mode)
    with sf.localcontext(fast_paths=False):
        want, wf = sf.to_bits(x, "fp16", mode, return_flags=True)
    nan = np.isnan(x)
    for tail in (False, True):
        bits = np.empty(x.size, np.uint16)
        fl = np.empty(x.size, np.int64)
        _each_alone(kernel, x, code, *th, bits, fl, tail)
        bad = np.flatnonzero(~nan & ((bits != want) | (fl != wf)))
        assert bad.size == 0, (mode, x.dtype, tail, bad.size, [
            (float(x[i]), hex(int(bits[i])), hex(int(want[i])), int(fl[i]), int(wf[i]))
            for i in bad[:4]])
        assert np.all(fl[nan] == 256), (mode, tail)          # a NaN lane raises nothing


@_needs_block
@pytest.mark.parametrize("mode", MODES)
def test_fp16_block_kernel_flags_per_element(mode):
    """The block kernel's own bits and flags for each element of the boundary
    grids alone (in every lane, and in overlapping last blocks), against the general kernel's
    per-element results (the dispatch only ever asks the block kernel for sticky
    flags, so this is where its per-element flags are checked)."""
    x = _f32_around_fp16_grid()
    _check_each_alone(x, mode)
    _check_each_alone(_f64_from(x[::9]), mode)


@_needs_block
@pytest.mark.parametrize("mode", MODES)
def test_fp16_block_kernel_lengths_and_layouts(mode):
    """Lengths around the 16-element block (shorter arrays are padded by the
    dispatch, longer ones end with an overlapping block) and the thread chunks,
    strided, reversed, 2-d Fortran-order and misaligned inputs; the kernel
    declines ranges shorter than a block."""
    kernel, code, th = _block_args(mode)
    o = np.empty(16, np.uint16)
    for n in range(16):
        assert kernel(0, n, np.ones(16, np.float32), o, code, *th) == -1
    rng = np.random.default_rng(_MODE_CODE[mode])
    grid = _f32_around_fp16_grid()
    pool = grid[rng.integers(0, grid.size, 1 << 18)]
    for n in list(range(0, 41)) + [255, 256, 257, (1 << 16) + 17, 3 * (1 << 16) + 5,
                                   (1 << 18) - 1]:
        x = pool[:n].copy()
        assert_fast_equals_general(sf.to_bits, (x, "fp16", mode), f"f32 n={n} {mode}")
        assert_fast_equals_general(sf.to_bits, (_f64_from(x)[:n], "fp16", mode),
                                   f"f64 n={n} {mode}")
    x = pool[: 3 * 4099]
    buf = np.zeros(x.nbytes + 1, np.uint8)
    mis = buf[1:].view(np.float32)                     # writable, not 4-byte aligned
    mis[:] = x
    assert not mis.flags.aligned
    for v, what in ((x[::3], "strided"), (x[::-1], "reversed"),
                    (np.asfortranarray(x.reshape(3, -1)), "fortran"), (mis, "misaligned"),
                    (x.astype(np.float64)[::2], "f64 strided")):
        assert_fast_equals_general(sf.to_bits, (v, "fp16", mode), f"{what} {mode}")


def test_fp16_dispatch_and_fallback(monkeypatch):
    """Which kernel converts: the block kernels on an F16C + AVX host, the
    integer path without AVX (same results)."""
    from softfloat import conversions as C
    from softfloat._kernels import convert_hw as HW
    from softfloat.context import kernel_policy, resolve
    from softfloat.formats import FP16, FP32, FP64
    for mode in MODES:
        res = resolve(mode)
        pol = kernel_policy(res, FP16)
        for src in (FP32, FP64):
            k = C._hw_kernel(src, FP16, res, False, pol)
            if hw.use_hw() and hw.HAVE_F16C_AVX:
                assert k is (HW.fp16_rne_chunk if mode == "nearest_even" else HW.fp16_chunk)
            else:
                assert k is None
            assert C._hw_kernel(src, FP16, res, True, pol) is None      # per-element flags
    monkeypatch.setattr(hw, "HAVE_F16C_AVX", False)
    x = _f32_around_fp16_grid()[::11]
    for mode in MODES:
        res = resolve(mode)
        assert C._hw_kernel(FP32, FP16, res, False, kernel_policy(res, FP16)) is None
        assert_fast_equals_general(sf.to_bits, (x, "fp16", mode), f"no AVX {mode}")


_AVX256_SCRIPT = """
import sys
import numpy as np
from numba import njit
import softfloat as sf
from softfloat._kernels import convert_hw as HW, hw

assert hw.HAVE_F16C_AVX and not hw.HAVE_AVX512F
x32 = np.load(sys.argv[1])
out = {}


@njit
def each(kernel, x, mode, po, no, pt, nt, bits, fl):
    blk = np.zeros(16, x.dtype)
    o = np.empty(16, np.uint16)
    for i in range(x.size):
        blk[:] = 0
        blk[i % 16] = x[i]
        fl[i] = kernel(0, 16, blk, o, mode, po, no, pt, nt)
        bits[i] = o[i % 16]


for code, mode in enumerate(sf.DETERMINISTIC_MODES):
    k = HW.fp16_rne_chunk if code == 0 else HW.fp16_chunk
    th = HW.signed_thresholds(code, *HW.thresholds((5, 10, 15, 0), code))
    for name, x in (("f32", x32), ("f64", x32.astype(np.float64) * (1 + 2.0 ** -30))):
        bits = np.empty(x.size, np.uint16)
        fl = np.empty(x.size, np.int64)
        each(k, x, code, *th, bits, fl)
        out[f"{mode}_{name}_bits"] = bits
        out[f"{mode}_{name}_fl"] = fl
        out[f"{mode}_{name}_call"] = sf.to_bits(x, "fp16", mode)
np.savez(sys.argv[2], **out)
"""


@_needs_block
def test_fp16_block_kernel_256_bit_form(tmp_path):
    """The two-halves 256-bit `vcvtps2ph` form (hosts without AVX-512F): a fresh
    process with SOFTFLOAT_AVX512=0 and its own numba cache, per element and
    through the dispatch, against the general kernel here."""
    if not hw.HAVE_AVX512F:
        pytest.skip("this host compiles the 256-bit form already (tested above)")
    x = _f32_around_fp16_grid()[::7].copy()
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, SOFTFLOAT_AVX512="0", NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-c", _AVX256_SCRIPT, str(tmp_path / "x.npy"),
                    str(tmp_path / "out.npz")], env=env, cwd=root, check=True)
    got = np.load(tmp_path / "out.npz")
    for mode in MODES:
        for name, xs in (("f32", x), ("f64", x.astype(np.float64) * (1 + 2.0 ** -30))):
            with sf.localcontext(fast_paths=False):
                want, wf = sf.to_bits(xs, "fp16", mode, return_flags=True)
            nan = np.isnan(xs)
            bits, fl = got[f"{mode}_{name}_bits"], got[f"{mode}_{name}_fl"]
            assert np.array_equal(bits[~nan], want[~nan]), (mode, name)
            assert np.array_equal(fl[~nan], wf[~nan]) and np.all(fl[nan] == 256), (mode, name)
            assert np.array_equal(got[f"{mode}_{name}_call"], want), (mode, name)


@njit
def _block_flags(kernel, x, mode, po, no, pt, nt, bits, fl):
    """fl[j] = the kernel's return value for the 16 elements x[16j:16j+16]."""
    for j in range(x.size // 16):
        fl[j] = kernel(16 * j, 16 * j + 16, x, bits, mode, po, no, pt, nt)


@pytest.mark.slow
@_needs_block
@pytest.mark.parametrize("mode", MODES)
def test_f32_to_fp16_all_inputs_fast_equals_general(mode):
    """All 2^32 float32 inputs to fp16 (in blocks of 2^24): the dispatched fast
    path's bits and sticky flags, and the block kernel's bits and flags per
    16-element block, against the general integer kernel (fast paths off)."""
    kernel, code, th = _block_args(mode)
    n = 1 << 24
    for k in range(1 << 8):
        x = np.arange(k * n, (k + 1) * n, dtype=np.uint32).view(np.float32)
        with sf.localcontext(fast_paths=False) as c0:
            want, wf = sf.to_bits(x, "fp16", mode, return_flags=True)
        with sf.localcontext() as c1:
            got = sf.to_bits(x, "fp16", mode)
        assert np.array_equal(got, want), (mode, k, np.flatnonzero(got != want)[:4])
        assert int(c1.flags) == int(c0.flags), (mode, k)
        bits = np.empty(n, np.uint16)
        fl = np.empty(n // 16, np.int64)
        _block_flags(kernel, x, code, *th, bits, fl)
        nan = np.isnan(x)
        wf = np.where(nan, 0, wf)
        blk = np.bitwise_or.reduceat(wf, np.arange(0, n, 16)).astype(np.int64)
        blk |= np.where(np.logical_or.reduceat(nan, np.arange(0, n, 16)), 256, 0)
        assert np.array_equal(fl, blk), (mode, k, np.flatnonzero(fl != blk)[:4])
        assert np.array_equal(bits[~nan], want[~nan]), (mode, k)


def test_matmul_nan_addend_keeps_its_nan():
    """The float32 accumulation fast path once replaced every NaN by the
    default NaN; a NaN c must give the same result with and without flags
    (the addend's NaN, quieted, as the general kernel's rules say)."""
    A = sf.to_bits(np.ones((4, 5)), "fp16")
    B = sf.to_bits(np.ones((5, 3)), "fp16")
    for cbits in (0x7FC00123, 0xFFC00000, 0x7F800001):
        c = np.full((4, 3), cbits, np.uint32)
        r1 = sf.matmul(A, B, "fp16", acc="fp32", c=c)
        r2, _ = sf.matmul(A, B, "fp16", acc="fp32", c=c, return_flags=True)
        with sf.localcontext(fast_paths=False):
            r3 = sf.matmul(A, B, "fp16", acc="fp32", c=c)
        assert np.array_equal(r1, r2) and np.array_equal(r1, r3), (hex(cbits), r1, r2)
        assert int(r1[0, 0]) == cbits | 0x00400000


# ---------------------------------------------------------------------------
# float32 / float64 -> fp8, fp6, fp4: kernels with the formats and nearest-even as constants
# (softfloat._kernels.convert._ne_chunk) against the general kernel
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp6_e2m3", "fp6_e3m2", "fp4_e2m1"])
def test_to_bits_small_formats_fast_equals_general(fmt):
    """Every float32 top-16-bit prefix with the dropped bits at 0, 1, half - 1,
    half, half + 1 and all ones holds every value of the format, midpoint and
    their neighbours, in every binade (the rounding bit of an 8-bit or smaller
    target lies in the top 16 bits, subnormal targets included); float64 nudged
    off each one.
    Every mode, then every policy in nearest-even."""
    from softfloat._kernels import convert
    from softfloat.formats import get_format
    x = _f32_around_bf16_grid()
    F = get_format(fmt)
    for src in (x, _f64_from(x[::3])):
        key = {4: (8, 23, 127), 8: (11, 52, 1023)}[src.itemsize] + F.params
        assert key in convert.NE_SPECS          # the path under test is the specialised one
        for mode in MODES:
            assert_fast_equals_general(sf.to_bits, (src, fmt, mode), f"{src.dtype}->{fmt} {mode}")
        for pol in POLICIES[1:]:
            assert_fast_equals_general(sf.to_bits, (src[::5], fmt), f"{src.dtype}->{fmt} {pol}",
                                       **pol)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["fp8_e4m3", "fp8_e5m2", "fp6_e2m3", "fp6_e3m2", "fp4_e2m1"])
def test_f32_to_small_formats_all_inputs_fast_equals_general(fmt, blocks=range(1 << 8)):
    """All 2^32 float32 inputs in nearest-even (in blocks of 2^24): the
    default call's bits and sticky flags against the general kernel's."""
    n = 1 << 24
    for k in blocks:
        x = np.arange(k * n, (k + 1) * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        with sf.localcontext(fast_paths=False) as c0:
            want = sf.to_bits(x, fmt)
        with sf.localcontext() as c1:
            got = sf.to_bits(x, fmt)
        assert np.array_equal(got, want), (fmt, k, np.flatnonzero(got != want)[:4])
        assert int(c1.flags) == int(c0.flags), (fmt, k)
