"""Every worked example of the tutorial the project grew from
(/work/shared/seed-notes.md), corrected where the tutorial slipped; each is
checked against the library AND against numpy / ml_dtypes / the oracle."""
import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat import from_bits, get_format, quantize, to_bits

import exact_reference as O


def bits16(x, fmt="fp16", **kw):
    return int(to_bits(np.array(x, dtype=np.float64), fmt, **kw))


# ---- the format table ----------------------------------------------------
TABLE = [
    # name, exponent bits, fraction bits, bias, max finite, smallest normal,
    # smallest subnormal, eps
    ("fp16", 5, 10, 15, 65504.0, 2.0 ** -14, 2.0 ** -24, 2.0 ** -10),
    ("bf16", 8, 7, 127, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -133, 2.0 ** -7),
    ("fp32", 8, 23, 127, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 2.0 ** -149, 2.0 ** -23),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_format_table(row):
    name, E, M, bias, mx, normal, sub, eps = row
    f = get_format(name)
    assert (f.ebits, f.mbits, f.bias, f.nbits) == (E, M, bias, 1 + E + M)
    assert f.max == mx == float(O.max_value(f))
    assert f.smallest_normal == normal and f.smallest_subnormal == sub and f.eps == eps
    assert abs(f.max - 3.39e38) < 0.01e38 if name == "bf16" else True
    # normal exponents run from emin to emax; all-zeros and all-ones fields are special
    assert (f.emin, f.emax) == (1 - bias, (1 << E) - 2 - bias)
    # the 5-bit exponent field holds 0..31 (the tutorial wrote 0..2^6-1)
    if name == "fp16":
        assert (1 << E) - 1 == 31 and (f.emin, f.emax) == (-14, 15)
    # a binade has 2^M steps (fp32: 2^23, not 2^24)
    lo = to_bits(np.array([1.0]), f)
    hi = to_bits(np.array([2.0]), f)
    assert int(hi[0]) - int(lo[0]) == 1 << M


# ---- 43008.111 in fp16 ----------------------------------------------------
def test_43008_111():
    b = bits16(43008.111)
    assert b == 0x7940 == 0b0_11110_0101000000
    assert float(from_bits(np.uint16(b), "fp16")) == 43008.0
    assert np.float16(43008.111).view(np.uint16) == b
    # the step in [2^15, 2^16) is 32; the next value up is 43040 (0x7941)
    assert float(from_bits(np.uint16(0x7941), "fp16")) == 43040.0
    assert get_format("fp16").eps * 2 ** 15 == 32
    # the error is as large as 16: the midpoint 43024 is a tie -> even 43008
    assert bits16(43024.0) == 0x7940
    assert bits16(np.nextafter(43024.0, np.inf)) == 0x7941
    assert bits16(43024.0, rounding="nearest_away") == 0x7941
    assert quantize(np.array([43039.0]), "fp16").tolist() == [43040.0]
    # in fp32 the step in that binade is 2^-8: 43008.111 keeps far more digits
    assert get_format("fp32").eps * 2 ** 15 == 2.0 ** -8
    q32 = quantize(np.array([43008.111]), "fp32")[0]
    assert q32 == float(np.float32(43008.111)) and abs(q32 - 43008.111) <= 2.0 ** -9


# ---- 1.111 --------------------------------------------------------------
def test_1_111():
    assert bits16(1.111) == 0x3C72 == 0b0_01111_0001110010
    assert float(quantize(np.array([1.111]), "fp16")[0]) == 1.111328125
    # the tutorial's fraction 0001110000 is 1.109375: a slip
    assert float(from_bits(np.uint16(0b0_01111_0001110000), "fp16")) == 1.109375
    assert bits16(1.111, "bf16") == 0x3F8E
    assert float(quantize(np.array([1.111]), "bf16")[0]) == 1.109375
    assert ml_dtypes.bfloat16(np.float32(1.111)).view(np.uint16) == 0x3F8E
    for fmt in ("fp16", "bf16"):
        assert bits16(1.111, fmt) == O.round_value(1.111, get_format(fmt), "rne")[0]


# ---- overflow and the top of the range -----------------------------------------
def test_fp16_overflow_at_65520():
    b, fl = to_bits(np.array([65520.0, 65519.99, 65504.0]), "fp16", return_flags=True)
    assert b.tolist() == [0x7C00, 0x7BFF, 0x7BFF]
    assert fl.tolist() == [sf.Flags.OVERFLOW | sf.Flags.INEXACT, sf.Flags.INEXACT, 0]
    with np.errstate(over="ignore"):
        ref = np.array([65520.0, 65519.99, 65504.0]).astype(np.float16).view(np.uint16)
    assert b.tolist() == ref.tolist()


def test_bf16_holds_65520():
    assert bits16(65520.0, "bf16") == 0x4780
    assert float(quantize(np.array([65520.0]), "bf16")[0]) == 65536.0
    assert get_format("bf16").precision == 8


# ---- the bottom of the range ---------------------------------------------
def test_fp16_half_the_smallest_subnormal():
    tie = 2.0 ** -25
    b, fl = to_bits(np.array([tie, np.nextafter(tie, 1.0), -tie]), "fp16", return_flags=True)
    assert b.tolist() == [0x0000, 0x0001, 0x8000]
    assert fl.tolist() == [3, 3, 3]             # underflow | inexact
    assert float(from_bits(np.uint16(1), "fp16")) == 2.0 ** -24
    assert np.array([tie, np.nextafter(tie, 1.0)]).astype(np.float16).view(np.uint16).tolist() \
        == [0, 1]


def test_binade_picture():
    """The further out the binade, the wider the step: fp16's step in
    [2^e, 2^(e+1)) is 2^(e-10) for every normal exponent e = -14..15."""
    for e in range(-14, 16):
        lo = from_bits(to_bits(np.array([2.0 ** e]), "fp16"), "fp16")
        nxt = from_bits(to_bits(np.array([2.0 ** e]), "fp16") + np.uint16(1), "fp16")
        assert nxt - lo == 2.0 ** (e - 10)


# ---- the mixed-precision motivations ----------------------------------------
def test_lost_update_without_master_weights():
    """w16 + lr*g rounds back to w16 when lr*g is below half an fp16 step."""
    w = 1.0
    upd = 2.0 ** -12                        # half a step at 1.0 is 2^-11
    assert quantize(np.array([w + upd]), "fp16").tolist() == [w]
    assert quantize(np.array([w + upd]), "fp32").tolist() == [w + upd]
    # bf16 loses far larger updates
    assert quantize(np.array([w + 2.0 ** -9]), "bf16").tolist() == [w]


def test_small_gradients_underflow_and_loss_scaling():
    g = np.array([1e-8, 3e-9])
    assert quantize(g, "fp16").tolist() == [0.0, 0.0]        # below 2^-25: lost
    scaled = quantize(g * 1024, "fp16")
    assert (scaled > 0).all()
    assert np.allclose(scaled / 1024, g, rtol=2.0 ** -5)
