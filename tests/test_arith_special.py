"""Arithmetic on encodings: a table of special cases with their flags (written
out by hand from IEEE 754 and SoftFloat's 8086-SSE rules), custom formats,
broadcasting, sticky flags and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import softfloat as sf
from softfloat import get_format

from test_arith import ARITH, MODES, Pol, _same, operand_lists

NX, UF, OF, DZ, NV = 1, 2, 4, 8, 16


def h(v):
    """fp16 encoding of a float (exact)."""
    return int(sf.to_bits(np.array(float(v)), "fp16"))


PZ, NZ, ONE, TWO, INF, NINF = 0x0000, 0x8000, 0x3C00, 0x4000, 0x7C00, 0xFC00
QNAN, SNAN, NQNAN = 0x7E01, 0x7D00, 0xFE05
DNAN = 0x7E00                     # fp16's default NaN
MAXH, MINSUB, MINNORM = 0x7BFF, 0x0001, 0x0400

# (function, operands, mode, policies, expected bits, expected flags)
TABLE = [
    # exact zeros: x + (-x) is +0 except rounding downward
    ("add", (PZ, PZ), "nearest_even", {}, PZ, 0),
    ("add", (PZ, NZ), "nearest_even", {}, PZ, 0),
    ("add", (PZ, NZ), "downward", {}, NZ, 0),
    ("add", (NZ, NZ), "upward", {}, NZ, 0),
    ("add", (ONE, 0xBC00), "nearest_even", {}, PZ, 0),
    ("add", (ONE, 0xBC00), "toward_zero", {}, PZ, 0),
    ("add", (ONE, 0xBC00), "upward", {}, PZ, 0),
    ("add", (ONE, 0xBC00), "odd", {}, PZ, 0),
    ("add", (ONE, 0xBC00), "downward", {}, NZ, 0),
    ("sub", (ONE, ONE), "downward", {}, NZ, 0),
    ("sub", (ONE, ONE), "nearest_away", {}, PZ, 0),
    ("sub", (NZ, PZ), "nearest_even", {}, NZ, 0),
    ("sub", (PZ, PZ), "downward", {}, NZ, 0),
    # infinities
    ("add", (INF, NINF), "nearest_even", {}, DNAN, NV),
    ("sub", (INF, INF), "nearest_even", {}, DNAN, NV),
    ("add", (INF, MAXH), "nearest_even", {}, INF, 0),
    ("mul", (PZ, INF), "nearest_even", {}, DNAN, NV),
    ("mul", (NINF, TWO), "nearest_even", {}, NINF, 0),
    ("mul", (NZ, TWO), "nearest_even", {}, NZ, 0),
    ("div", (ONE, PZ), "nearest_even", {}, INF, DZ),
    ("div", (0xBC00, PZ), "nearest_even", {}, NINF, DZ),
    ("div", (ONE, NZ), "toward_zero", {}, NINF, DZ),
    ("div", (PZ, PZ), "nearest_even", {}, DNAN, NV),
    ("div", (INF, INF), "nearest_even", {}, DNAN, NV),
    ("div", (INF, PZ), "nearest_even", {}, INF, 0),
    ("div", (ONE, NINF), "nearest_even", {}, NZ, 0),
    ("sqrt", (NZ,), "nearest_even", {}, NZ, 0),
    ("sqrt", (0xBC00,), "nearest_even", {}, DNAN, NV),
    ("sqrt", (NINF,), "nearest_even", {}, DNAN, NV),
    ("sqrt", (INF,), "nearest_even", {}, INF, 0),
    ("sqrt", (h(4),), "nearest_even", {}, h(2), 0),
    ("sqrt", (TWO,), "nearest_even", {}, h(1.4140625), NX),
    ("sqrt", (TWO,), "upward", {}, h(1.4150390625), NX),
    # NaN operands: first NaN wins, quieted, sign and payload kept (8086-SSE)
    ("add", (SNAN, ONE), "nearest_even", {}, 0x7F00, NV),
    ("add", (ONE, SNAN), "nearest_even", {}, 0x7F00, NV),
    ("add", (QNAN, ONE), "nearest_even", {}, QNAN, 0),
    ("add", (ONE, NQNAN), "nearest_even", {}, NQNAN, 0),
    ("sub", (ONE, NQNAN), "nearest_even", {}, NQNAN, 0),       # a NaN b keeps its sign
    ("add", (QNAN, SNAN), "nearest_even", {}, QNAN, NV),
    ("mul", (NQNAN, QNAN), "nearest_even", {}, NQNAN, 0),
    ("div", (INF, QNAN), "nearest_even", {}, QNAN, 0),
    ("sqrt", (0xFD23,), "nearest_even", {}, 0xFF23, NV),
    ("add", (QNAN, ONE), "nearest_even", dict(nan="canonical"), DNAN, 0),
    ("add", (SNAN, ONE), "nearest_even", dict(nan=0x7FFF), 0x7FFF, NV),
    ("add", (INF, NINF), "nearest_even", dict(nan=0x7FFF), 0x7FFF, NV),
    # fma: one rounding; SoftFloat's NaN order; zero signs
    ("fma", (PZ, INF, QNAN), "nearest_even", {}, DNAN, NV),     # default NaN beats c
    ("fma", (INF, PZ, SNAN), "nearest_even", {}, DNAN, NV),
    ("fma", (QNAN, ONE, SNAN), "nearest_even", {}, QNAN, NV),
    ("fma", (ONE, NQNAN, QNAN), "nearest_even", {}, NQNAN, 0),
    ("fma", (ONE, ONE, NQNAN), "nearest_even", {}, NQNAN, 0),
    ("fma", (INF, ONE, QNAN), "nearest_even", {}, QNAN, 0),
    ("fma", (INF, ONE, NINF), "nearest_even", {}, DNAN, NV),
    ("fma", (INF, 0xBC00, NINF), "nearest_even", {}, NINF, 0),
    ("fma", (ONE, ONE, NINF), "nearest_even", {}, NINF, 0),
    ("fma", (PZ, 0xBC00, PZ), "nearest_even", {}, PZ, 0),
    ("fma", (PZ, 0xBC00, PZ), "downward", {}, NZ, 0),
    ("fma", (NZ, ONE, NZ), "upward", {}, NZ, 0),
    ("fma", (ONE, ONE, 0xBC00), "nearest_even", {}, PZ, 0),
    ("fma", (ONE, ONE, 0xBC00), "downward", {}, NZ, 0),
    ("fma", (PZ, ONE, MINSUB), "nearest_even", {}, MINSUB, 0),
    ("fma", (MAXH, TWO, 0xFBFF), "nearest_even", {}, MAXH, 0),  # no overflow in between
    # overflow
    ("add", (MAXH, h(16)), "nearest_even", {}, INF, OF | NX),   # 65520: the tie goes up
    # 65520 rounds (unbounded exponent) to 65504 toward zero: no overflow there
    ("add", (MAXH, h(16)), "toward_zero", {}, MAXH, NX),
    ("add", (MAXH, h(16)), "downward", {}, MAXH, NX),
    ("add", (MAXH, h(16)), "upward", {}, INF, OF | NX),
    ("add", (MAXH, h(16)), "odd", {}, MAXH, NX),
    ("add", (MAXH, h(32)), "toward_zero", {}, MAXH, OF | NX),      # 65536: overflow
    ("add", (MAXH, h(32)), "odd", {}, MAXH, OF | NX),
    ("add", (MAXH, h(8)), "nearest_even", {}, MAXH, NX),
    ("mul", (0xFBFF, TWO), "nearest_even", {}, NINF, OF | NX),
    ("mul", (0xFBFF, TWO), "upward", {}, 0xFBFF, OF | NX),
    ("mul", (MAXH, TWO), "nearest_even", dict(overflow="saturate"), MAXH, OF | NX),
    # underflow and flushing
    ("mul", (MINNORM, h(0.5)), "nearest_even", {}, 0x0200, 0),        # exact subnormal
    ("mul", (MINSUB, h(0.5)), "nearest_even", {}, PZ, UF | NX),        # tie -> 0
    ("mul", (MINSUB, h(0.75)), "nearest_even", {}, MINSUB, UF | NX),
    ("mul", (0x8001, h(0.5)), "upward", {}, NZ, UF | NX),
    ("mul", (0x8001, h(0.5)), "downward", {}, 0x8001, UF | NX),
    ("mul", (MINNORM, h(0.5)), "nearest_even", dict(ftz=True), PZ, UF | NX),
    ("mul", (0x8400, h(0.5)), "nearest_even", dict(ftz=True), NZ, UF | NX),
    ("add", (MINSUB, PZ), "nearest_even", dict(daz=True), PZ, 0),
    ("mul", (0x8001, h(1024)), "nearest_even", dict(daz=True), NZ, 0),
    # (1 - 2**-10) 2**-14 * (1 + 2**-10) = 2**-14 (1 - 2**-20): tiny before rounding,
    # not after (11 bits with an unbounded exponent round it to 2**-14)
    ("mul", (0x03FF, h(1 + 2**-10)), "nearest_even", {}, MINNORM, NX),
    ("mul", (0x03FF, h(1 + 2**-10)), "nearest_even", dict(tininess="before"), MINNORM, UF | NX),
]


@pytest.mark.parametrize("name,ops,mode,pol,want,wflags", TABLE)
def test_special_table(name, ops, mode, pol, want, wflags):
    args = [np.uint16(x) for x in ops]
    bits, flags = getattr(sf, name)(*args, "fp16", mode, return_flags=True, **pol)
    assert (int(bits), int(flags)) == (want, wflags), (hex(int(bits)), int(flags))
    # the same case through the plain-Python reference
    ref = ARITH[name][1]
    p = Pol(mode=mode, **pol)
    assert ref(get_format("fp16"), ops, p) == (want, wflags)


def test_tininess_after_vs_before():
    """A result that rounds up to the smallest normal: tiny before rounding, not
    after (with an unbounded exponent it rounds to 2**-14 too): underflow only
    with tininess='before'. Here (2**-14 - 2**-24) * (1 + 2**-11)... built in bf16:
    x = (1 - 2**-9) * 2**-126 * (1 + 2**-8) -- exact value 2**-126 (1 - 2**-17 ...)."""
    b = lambda v: int(sf.to_bits(np.array(v), "bf16"))                # noqa: E731
    # (2**-126 - 2**-134)... use the largest subnormal 0x007F = 2**-126 (1 - 2**-7)
    # times (1 + 2**-7): 2**-126 (1 - 2**-14): rounds (8 bits) to 2**-126 either way.
    a, c = 0x007F, b(1 + 2**-7)
    after = sf.mul(np.uint16(a), np.uint16(c), "bf16", return_flags=True)
    before = sf.mul(np.uint16(a), np.uint16(c), "bf16", return_flags=True, tininess="before")
    assert int(after[0]) == int(before[0]) == 0x0080
    assert int(after[1]) == NX
    assert int(before[1]) == UF | NX


FN_TABLE = [
    # fp8 e4m3 (fn: no infinity, NaN 0x7F/0xFF, max 448 = 0x7E)
    ("div", (0x38, 0x00), {}, 0x7F, DZ | NV),                   # 1/0 -> NaN
    ("div", (0xB8, 0x00), {}, 0xFF, DZ | NV),
    ("div", (0x38, 0x00), dict(overflow="saturate"), 0x7E, DZ),  # -> 448
    ("mul", (0x7E, 0x40), {}, 0x7F, OF | NX),                   # 448 * 2 -> NaN
    ("mul", (0x7E, 0x40), dict(overflow="saturate"), 0x7E, OF | NX),
    ("add", (0x7F, 0x38), {}, 0x7F, 0),                          # NaN operand
    ("sub", (0x38, 0x38), {}, 0x00, 0),
    ("mul", (0x00, 0x38), {}, 0x00, 0),
]


@pytest.mark.parametrize("name,ops,pol,want,wflags", FN_TABLE)
def test_fn_format_table(name, ops, pol, want, wflags):
    bits, flags = getattr(sf, name)(*[np.uint8(x) for x in ops], "fp8_e4m3",
                                    return_flags=True, **pol)
    assert (int(bits), int(flags)) == (want, wflags)


def test_fnuz_has_no_negative_zero():
    f = "fp8_e4m3fnuz"
    one = int(sf.to_bits(np.array(1.0), f))
    for mode in MODES:
        r, fl = sf.sub(np.uint8(one), np.uint8(one), f, mode, return_flags=True)
        assert (int(r), int(fl)) == (0, 0)
    assert int(sf.mul(np.uint8(0), np.uint8(one | 0x80), f)) == 0    # 0 * -1 = 0
    assert int(sf.sqrt(np.uint8(0x80), f)) == 0x80                    # NaN stays NaN
    r, fl = sf.div(np.uint8(one), np.uint8(0), f, return_flags=True)
    assert (int(r), int(fl)) == (0x80, DZ | NV)


def test_minmax_and_compare_table():
    a = np.array([PZ, NZ, ONE, ONE, QNAN, SNAN, ONE, NINF], np.uint16)
    b = np.array([NZ, PZ, QNAN, SNAN, ONE, QNAN, TWO, INF], np.uint16)
    r, fl = sf.minimum(a, b, "fp16", return_flags=True)
    assert r.tolist() == [NZ, NZ, QNAN, 0x7D00 | 0x200, QNAN, 0x7F00, ONE, NINF]
    assert fl.tolist() == [0, 0, 0, NV, 0, NV, 0, 0]
    r, fl = sf.maximum(a, b, "fp16", return_flags=True)
    assert r.tolist()[:2] == [PZ, PZ] and r[6] == TWO and r[7] == INF
    r, fl = sf.minimum_number(a, b, "fp16", return_flags=True)
    assert r.tolist() == [NZ, NZ, ONE, ONE, ONE, 0x7F00, ONE, NINF]
    assert fl.tolist() == [0, 0, 0, NV, 0, NV, 0, 0]
    r, fl = sf.maximum_number(a, b, "fp16", return_flags=True)
    assert r.tolist() == [PZ, PZ, ONE, ONE, ONE, 0x7F00, TWO, INF]
    e, fl = sf.eq(a, b, "fp16", return_flags=True)
    assert e.tolist() == [True, True, False, False, False, False, False, False]
    assert fl.tolist() == [0, 0, 0, NV, 0, NV, 0, 0]
    _, fl = sf.lt(a, b, "fp16", return_flags=True)
    assert fl.tolist() == [0, 0, 0, NV, 0, NV, 0, 0]
    lt, fl = sf.lt_signaling(a, b, "fp16", return_flags=True)
    assert lt.tolist() == [False, False, False, False, False, False, True, True]
    assert fl.tolist() == [0, 0, NV, NV, NV, NV, 0, 0]
    assert sf.ne(a, b, "fp16").tolist() == [False, False, True, True, True, True, True, True]
    assert sf.unordered(a, b, "fp16").tolist() == [False] * 2 + [True] * 4 + [False] * 2
    assert sf.le(a, b, "fp16").tolist() == [True, True, False, False, False, False, True, True]
    assert sf.ge(a, b, "fp16").tolist() == [True, True, False, False, False, False, False, False]
    # DAZ: a subnormal compares equal to zero
    assert bool(sf.eq(np.uint16(MINSUB), np.uint16(PZ), "fp16", daz=True))
    assert not bool(sf.eq(np.uint16(MINSUB), np.uint16(PZ), "fp16"))


def test_round_to_integral_and_int_table():
    x = np.array([h(2.5), h(-2.5), h(-0.5), h(0.5), h(1.5), h(-1.75), h(1023.5), INF,
                  QNAN, h(65504)], np.uint16)
    want = {
        "nearest_even": [2, -2, -0.0, 0.0, 2, -2, 1024, np.inf, None, 65504],
        "nearest_away": [3, -3, -1, 1, 2, -2, 1024, np.inf, None, 65504],
        "toward_zero": [2, -2, -0.0, 0.0, 1, -1, 1023, np.inf, None, 65504],
        "upward": [3, -2, -0.0, 1, 2, -1, 1024, np.inf, None, 65504],
        "downward": [2, -3, -1, 0.0, 1, -2, 1023, np.inf, None, 65504],
        "odd": [3, -3, -1, 1, 1, -1, 1023, np.inf, None, 65504],
    }
    for mode, w in want.items():
        r, fl = sf.round_to_integral(x, "fp16", mode, return_flags=True)
        v = sf.from_bits(r, "fp16")
        for got, exp in zip(v, w):
            if exp is None:
                assert np.isnan(got)
            else:
                assert got == exp and np.signbit(got) == np.signbit(exp), (mode, got, exp)
        assert fl.tolist() == [0] * 10
        r, fl = sf.round_to_integral(x, "fp16", mode, exact=True, return_flags=True)
        assert fl.tolist() == [NX] * 7 + [0, 0, 0]
        n, fl = sf.to_int32(x, "fp16", mode, exact=True, return_flags=True)
        assert n.tolist()[:7] == [int(v) for v in w[:7]]
        assert n.tolist()[7:9] == [-2**31, -2**31] and n[9] == 65504
        assert fl.tolist() == [NX] * 7 + [NV, NV, 0]
    f32 = lambda v: sf.to_bits(np.array(v, np.float64), "fp32")      # noqa: E731
    big = np.array([f32(2.0**31), f32(-2.0**31), f32(1e10), f32(-2.0**63), f32(2.0**63),
                    f32(-3.5)])
    n, fl = sf.to_int32(big, "fp32", return_flags=True)
    assert n.tolist() == [-2**31, -2**31, -2**31, -2**31, -2**31, -4]
    assert fl.tolist() == [NV, 0, NV, NV, NV, 0]
    n, fl = sf.to_int64(big, "fp32", return_flags=True)
    assert n.tolist() == [2**31, -2**31, 10000000000 - 10000000000 % 1024, -2**63, -2**63, -4]
    assert fl.tolist() == [0, 0, 0, 0, NV, 0]
    r, fl = sf.from_int(np.array([2049, 2051, 65519, 65520, -2**63, 0, -1], np.int64), "fp16",
                        return_flags=True)
    assert sf.from_bits(r, "fp16").tolist() == [2048, 2052, 65504, np.inf, -np.inf, 0, -1]
    assert fl.tolist() == [NX, NX, NX, OF | NX, OF | NX, 0, 0]
    r = sf.from_int(np.array([-2**63, 2**63 - 1], np.int64), "bf16")
    assert sf.from_bits(r, "bf16").tolist() == [-2.0**63, 2.0**63]
    assert int(sf.from_int(7, "fp16")) == h(7)


def test_sign_operations():
    a = np.array([PZ, NZ, ONE, SNAN, NQNAN, INF], np.uint16)
    r, fl = sf.neg(a, "fp16", return_flags=True)
    assert r.tolist() == [NZ, PZ, 0xBC00, SNAN | 0x8000, NQNAN & 0x7FFF, NINF]
    assert not fl.any()
    assert sf.abs(a, "fp16").tolist() == [PZ, PZ, ONE, SNAN, NQNAN & 0x7FFF, INF]
    assert sf.copysign(a, np.uint16(0x8000), "fp16").tolist() == [x | 0x8000 for x in a.tolist()]
    with sf.localcontext() as ctx:
        sf.neg(np.uint16(SNAN), "fp16")
        assert ctx.flags == 0
    z = np.array([0x00, 0x80, 0x38, 0xB8], np.uint8)          # fnuz: 0, NaN, 1, -1
    assert sf.neg(z, "fp8_e4m3fnuz").tolist() == [0x00, 0x80, 0xB8, 0x38]
    assert sf.abs(z, "fp8_e4m3fnuz").tolist() == [0x00, 0x80, 0x38, 0x38]
    assert sf.copysign(z, np.uint8(0xB8), "fp8_e4m3fnuz").tolist() == [0x00, 0x80, 0xB8, 0xB8]
    assert sf.abs is not abs and abs(-1) == 1                     # builtins untouched


CUSTOM = ["e3m2", "e6m9", "e4m2fnuz", "e5m4fn", "e2m1", "e8m15"]


@pytest.mark.parametrize("fmt", CUSTOM)
@pytest.mark.parametrize("name", list(ARITH))
@settings(max_examples=8)
@given(data=st.data())
def test_custom_formats_against_reference(fmt, name, data):
    arity, ref = ARITH[name]
    f = get_format(fmt)
    mode = data.draw(st.sampled_from(MODES))
    p = Pol(mode=mode)
    ops = data.draw(operand_lists(fmt, arity))
    cols = [np.array(c, f.dtype) for c in zip(*ops)]
    bits, flags = getattr(sf, name)(*cols, f, mode, return_flags=True)
    for i, x in enumerate(ops):
        wb, wf = ref(f, x, p)
        assert _same(fmt, p, int(bits[i]), wb) and int(flags[i]) == wf, (name, fmt, x, mode)


def test_broadcasting_and_shapes():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 0x7C00, (3, 1, 4)).astype(np.uint16)
    b = rng.integers(0, 0x7C00, (5, 1)).astype(np.uint16)
    c = rng.integers(0, 0x7C00, (4,)).astype(np.uint16)
    r, fl = sf.add(a, b, "fp16", return_flags=True)
    assert r.shape == fl.shape == (3, 5, 4) and r.dtype == np.uint16
    A, B = np.broadcast_arrays(a, b)
    assert np.array_equal(r, sf.add(A.copy(), B.copy(), "fp16"))
    want = (a.view(np.float16) + b.view(np.float16)).view(np.uint16)
    assert np.array_equal(r, want)
    r3 = sf.fma(a, b, c, "fp16")
    assert r3.shape == (3, 5, 4)
    assert np.array_equal(sf.fma(np.uint16(ONE), b, c, "fp16"),
                          sf.add(np.broadcast_to(b, (5, 4)).copy(), np.broadcast_to(c, (5, 4)).copy(), "fp16"))
    s = sf.mul(np.uint16(ONE), np.uint16(TWO), "fp16")
    assert s.shape == () and int(s) == TWO
    assert sf.add(np.zeros((0, 3), np.uint16), np.uint16(1), "fp16").shape == (0, 3)
    assert sf.lt(a, b, "fp16").shape == (3, 5, 4)
    assert sf.minimum(a, c, "fp16").shape == (3, 1, 4)
    assert sf.sqrt(a[:, :, ::2], "fp16").shape == (3, 1, 2)          # non-contiguous
    with pytest.raises(ValueError, match="broadcast"):
        sf.add(np.zeros(3, np.uint16), np.zeros(4, np.uint16), "fp16")


def test_sticky_flags():
    with sf.localcontext() as ctx:
        sf.add(np.uint16(MAXH), np.uint16(MAXH), "fp16")
        assert ctx.flags == sf.Flags.OVERFLOW | sf.Flags.INEXACT
        sf.div(np.uint16(ONE), np.uint16(PZ), "fp16")
        assert ctx.flags & sf.Flags.INFINITE
        sf.lt_signaling(np.uint16(QNAN), np.uint16(ONE), "fp16")
        assert ctx.flags & sf.Flags.INVALID
    with sf.localcontext(rounding="toward_zero") as ctx:
        assert int(sf.add(np.uint16(MAXH), np.uint16(MAXH), "fp16")) == MAXH


def test_bad_input():
    a = np.ones(3, np.uint16)
    with pytest.raises(TypeError, match="uint16"):
        sf.add(np.ones(3, np.float16), a, "fp16")
    with pytest.raises(TypeError):
        sf.add(np.ones(3, np.int32), a, "fp16")
    with pytest.raises(TypeError):
        sf.mul(a, a.astype(np.uint32), "fp16")
    with pytest.raises(ValueError, match="format"):
        sf.add(a, a, "fp17")
    with pytest.raises(ValueError, match="rounding"):
        sf.add(a, a, "fp16", "sideways")
    with pytest.raises(ValueError):
        sf.add(np.uint8(0xFF), np.uint8(0), "e3m2")               # 6-bit format
    with pytest.raises(ValueError):
        sf.sqrt(0x10000, "fp16")
    with pytest.raises(TypeError):
        sf.from_int(np.arange(3, dtype=np.uint16), "fp16")
    with pytest.raises(TypeError):
        sf.from_int(np.ones(3), "fp16")
    with pytest.raises(TypeError):
        sf.to_int32(a, "fp16", exact="yes")
    with pytest.raises(TypeError):
        sf.add(a, a, "fp16", bogus=1)
    with pytest.raises(ValueError):
        sf.add(a, a, "fp16", nan=0x3C00)                           # not a NaN of fp16
