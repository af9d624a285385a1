"""The NaN specialization (softfloat/specialize.py, softfloat/_kernels/specialize.py):
one owner for default NaNs, propagation, platform fresh NaNs and the NaN test,
checked against SoftFloat's rules, the Berkeley SoftFloat build in the
``softfloatpy`` package, numpy and ml_dtypes."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import softfloat as sf
from softfloat import specialize as S
from softfloat._kernels import specialize as KS

FP16, BF16, FP32 = sf.get_format("fp16"), sf.get_format("bf16"), sf.get_format("fp32")
E4M3, E5M2FNUZ = sf.get_format("fp8_e4m3"), sf.get_format("fp8_e5m2fnuz")
INVALID = int(sf.Flags.INVALID)


# ---------------------------------------------------------------------------
# The defect: fma(0, inf, qNaN) on x86 SSE
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,qnan,dflt", [(FP16, 0x7D23 | 0x0200, 0xFE00),
                                            (BF16, 0x7FC5, 0xFFC0),
                                            (FP32, 0x7FC01234, 0xFFC00000)])
def test_fma_zero_times_inf_plus_qnan_x86(fmt, qnan, dflt):
    """SoftFloat 3e s_mulAddF16.c: 0 * inf raises invalid and sets uiZ to
    defaultNaN, then propagateNaN(uiZ, uiC) returns the quiet uiZ (8086-SSE
    s_propagateNaNF16UI): the default NaN, 0xFE00 on x86, wins over the addend's
    NaN. Before the fix this gave the format's positive default NaN (0x7E00)."""
    u = fmt.dtype.type
    z, inf = u(0), u(fmt.inf_bits)
    for a, b in ((z, inf), (inf, z), (u(fmt.sign_mask), inf)):
        got = sf.platform_op("fma", np.array([a]), np.array([b]), np.array([u(qnan)]),
                             fmt=fmt, platform="x86_sse")
        assert int(got[0]) == dflt, (hex(int(got[0])), hex(dflt))
    # the library's own kernels with the x86 rule, flags included (sNaN addend too)
    for c in (qnan, qnan & ~(1 << (fmt.mbits - 1)) | 1):
        r, fl = sf.fma(np.array([z]), np.array([inf]), np.array([u(c)]), fmt,
                       nan=S.NanRule("propagate", "negative"), return_flags=True)
        assert int(r[0]) == dflt and int(fl[0]) == INVALID
    # and the IEEE default: the format's positive default NaN
    r = sf.fma(np.array([z]), np.array([inf]), np.array([u(qnan)]), fmt)
    assert int(r[0]) == fmt.default_nan_bits


def test_fresh_nan_of_every_preset_comes_from_the_kernels():
    """0/0, inf - inf, 0 * inf, sqrt(-1) under each preset give the platform's
    fresh NaN (or its canonical/cast pattern) with no operand NaN to copy."""
    h = np.uint16
    z, inf, ninf, m1 = h(0), h(0x7C00), h(0xFC00), h(0xBC00)
    want = {"ieee": 0x7E00, "x86_sse": 0xFE00, "torch_cuda": 0x7FFF, "torch_cpu": 0xFE00,
            "numpy": 0xFE00, "arm_default_nan": 0x7E00, "riscv": 0x7E00}
    for name, w in want.items():
        for op, args in (("div", (z, z)), ("add", (inf, ninf)), ("mul", (z, inf)),
                         ("sqrt", (m1,)), ("fma", (z, inf, h(0x3C00)))):
            got = sf.platform_op(op, *[np.array([x]) for x in args], fmt="fp16", platform=name)
            assert int(got[0]) == w, (name, op, hex(int(got[0])))
    x86 = sf.get_platform("x86_sse")
    assert x86.fresh_nan("fp16") == 0xFE00
    assert S.fresh_nan_bits("fp16") == 0x7E00
    assert S.fresh_nan_bits("fp16", "negative") == 0xFE00
    assert sf.get_platform("torch_cpu").fresh_nan("fp32") == 0xFFC00000
    assert x86.fresh_nan(E4M3) == 0xFF
    assert x86.fresh_nan(E5M2FNUZ) == 0x80
    # the platform's policy per step is a NanRule that specialize carries out
    assert x86.nan_policy("result", "fp16") == S.NanRule("propagate", "negative")
    assert x86.nan_policy("cast", "fp16") == S.NanRule("propagate", None)
    assert sf.get_platform("torch_cuda").nan_policy("cast", "fp16") == S.NanRule("canonical", 0x7FFF)


def test_propagation_keeps_first_operand_payload_under_x86():
    """With a NaN operand the x86 rule propagates it (quieted), it does not make
    the fresh NaN: first NaN in argument order, SoftFloat 8086-SSE."""
    a = np.array([0x7D01, 0x3C00, 0xFD02, 0x7C00], np.uint16)
    b = np.array([0xFD02, 0x7D03, 0x7C00, 0x7E04], np.uint16)
    for plat in ("x86_sse", "ieee"):
        got = sf.platform_op("add", a, b, fmt="fp16", platform=plat)
        assert [int(x) for x in got] == [0x7F01, 0x7F03, 0xFF02, 0x7E04]


# ---------------------------------------------------------------------------
# Policies
# ---------------------------------------------------------------------------
def test_nan_rule_validation_and_kernel_entries():
    from softfloat._kernels.codes import NAN_CANONICAL, NAN_KEEP, NAN_PROPAGATE
    assert S.kernel_nan("propagate", FP16) == (NAN_PROPAGATE, 0x7E00)
    assert S.kernel_nan("canonical", BF16) == (NAN_CANONICAL, 0x7FC0)
    assert S.kernel_nan(0x7FFF, FP16) == (NAN_CANONICAL, 0x7FFF)
    assert S.kernel_nan(S.NanRule("propagate", "negative"), FP16) == (NAN_PROPAGATE, 0xFE00)
    assert S.kernel_nan(S.NanRule("keep"), FP32) == (NAN_KEEP, 0x7FC00000)
    with pytest.raises(ValueError, match="mode"):
        S.NanRule("quiet")
    with pytest.raises(ValueError, match="pattern"):
        S.NanRule("canonical", 1.5)
    with pytest.raises(ValueError, match="not a NaN encoding"):
        sf.add(np.uint16([1]), np.uint16([1]), "fp16", nan=S.NanRule("propagate", 0x7C00))
    with pytest.raises(ValueError, match="unknown NaN policy"):
        sf.add(np.uint16([1]), np.uint16([1]), "fp16", nan="quiet")


def test_keep_rule_widens_without_quieting():
    b = np.array([0x7F81, 0xFFA0, 0x7FC1], np.uint16)          # sNaN, qNaN, qNaN (bf16)
    got = sf.convert(b, "bf16", "fp32", nan=S.NanRule("keep"))
    assert [int(x) for x in got] == [0x7F810000, 0xFFA00000, 0x7FC10000]
    # narrowing a payload away: quieted rather than an infinity
    got = sf.convert(np.array([0x7F800001], np.uint32), "fp32", "fp16", nan=S.NanRule("keep"))
    assert int(got[0]) == 0x7E00


def test_invalid_integer_results():
    assert S.invalid_int_bits("i32") == 0x80000000 and S.invalid_int_bits("ui64") == 2**64 - 1
    x = np.array([0x7E00, 0x7C00, 0xFC00, 0x7BFF], np.uint16)
    r, fl = sf.to_int32(x, "fp16", return_flags=True)
    assert list(r[:3]) == [-2**31] * 3 and list(fl[:3]) == [INVALID] * 3


# ---------------------------------------------------------------------------
# The NaN test, Python and kernel side, against numpy / ml_dtypes (exhaustive)
# ---------------------------------------------------------------------------
def test_is_nan_bits_exhaustive():
    from numba import njit

    @njit
    def kernel_isnan(xs, E, M, kind):
        out = np.empty(xs.size, np.bool_)
        for i in range(xs.size):
            out[i] = KS.is_nan_bits(xs[i], E, M, kind)
        return out

    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    cases = [(FP16, np.isnan(h.view(np.float16))),
             (BF16, np.isnan(h.view(ml_dtypes.bfloat16).astype(np.float32)))]
    b8 = np.arange(256, dtype=np.uint16).astype(np.uint8)
    cases += [(E4M3, np.isnan(b8.view(ml_dtypes.float8_e4m3fn).astype(np.float32)), b8),
              (E5M2FNUZ, np.isnan(b8.view(ml_dtypes.float8_e5m2fnuz).astype(np.float32)), b8)]
    for c in cases:
        f, ref = c[0], c[1]
        bits = c[2] if len(c) > 2 else h
        assert np.array_equal(S.is_nan_bits(f, bits.astype(np.int64)), ref), f.name
        assert np.array_equal(f.is_nan_bits(bits.astype(np.int64)), ref), f.name
        assert np.array_equal(kernel_isnan(bits.astype(np.int64), f.ebits, f.mbits,
                                           f.kind_code), ref), f.name
    snan = S.is_snan_bits(FP16, h.astype(np.int64))
    assert snan.sum() == 2 * (2**9 - 1) and not snan[0x7E00] and snan[0x7D00]


# ---------------------------------------------------------------------------
# Berkeley SoftFloat itself (softfloatpy: a build whose NaN results are all the
# default NaN 0x7E00, i.e. our nan="canonical"), special operands, bits and flags
# ---------------------------------------------------------------------------
SPECIALS16 = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7D00, 0xFC01, 0x3C00,
              0xBC00, 0x0001, 0x83FF, 0x7BFF, 0x0400]


def test_specials_against_softfloat_canonical_build():
    sfp = pytest.importorskip("softfloatpy")

    def f16(b):
        return sfp.Float16.from_bytes(int(b).to_bytes(2, "big"))

    def bits(x):
        return int.from_bytes(x.to_bytes(), "big")

    sfp.set_rounding_mode(sfp.RoundingMode.NEAR_EVEN)
    sfp.set_tininess_mode(sfp.TininessMode.AFTER_ROUNDING)
    # the build's rule, as used below: every NaN result is 0x7E00
    sfp.set_exception_flags(0)
    assert bits(sfp.f16_add(f16(0x7D01), f16(0x3C00))) == 0x7E00
    trip = list(itertools.product(SPECIALS16, repeat=3))
    a, b, c = (np.array(t, np.uint16) for t in zip(*trip))
    got, gfl = sf.fma(a, b, c, "fp16", nan="canonical", return_flags=True)
    ref, rfl = [], []
    for x, y, z in trip:
        sfp.set_exception_flags(0)
        ref.append(bits(sfp.f16_mul_add(f16(x), f16(y), f16(z))))
        rfl.append(int(sfp.get_exception_flags()))
    assert np.array_equal(got, np.array(ref, np.uint16))
    assert np.array_equal(gfl, np.array(rfl, np.uint8))
    pair = list(itertools.product(SPECIALS16, repeat=2))
    a, b = (np.array(t, np.uint16) for t in zip(*pair))
    for name, fn in (("add", sfp.f16_add), ("sub", sfp.f16_sub), ("mul", sfp.f16_mul),
                     ("div", sfp.f16_div)):
        got, gfl = getattr(sf, name)(a, b, "fp16", nan="canonical", return_flags=True)
        for i, (x, y) in enumerate(pair):
            sfp.set_exception_flags(0)
            r = bits(fn(f16(x), f16(y)))
            assert (int(got[i]), int(gfl[i])) == (r, int(sfp.get_exception_flags())), \
                (name, hex(x), hex(y))


def test_accumulation_propagates_like_conversion():
    """A NaN term of an fn format keeps its sign in a wider accumulator, as the
    conversion does (before: the accumulation kernels read fn NaNs as fresh NaNs
    and gave the positive default NaN)."""
    x = np.array([[0x38, 0xFF, 0x38]], np.uint8)                # 1, -NaN, 1 (e4m3)
    want = sf.convert(np.array([0xFF], np.uint8), E4M3, FP32)[0]
    assert int(want) == 0xFFC00000
    assert int(sf.sum(x, E4M3, axis=1, acc="fp32", return_flags=True)[0][0]) == int(want)
    # a fresh NaN in the accumulation (inf - inf) is the policy's fresh NaN
    y = np.array([[0x7C00, 0xFC00]], np.uint16)
    for nan, w in (("propagate", 0x7FC00000), (S.NanRule("propagate", "negative"), 0xFFC00000)):
        r, fl = sf.sum(y, FP16, axis=1, acc="fp32", nan=nan, return_flags=True)
        assert int(r.reshape(-1)[0]) == w and int(fl.reshape(-1)[0]) == INVALID


def test_testfloat_expected_x86_fresh_nan():
    """TestFloat vectors for an x86 build: f16_mulAdd(0, inf, qNaN) is 0xFE00 with
    invalid (SoftFloat 8086-SSE), from the same kernels, no patch."""
    from softfloat.testfloat import expected
    a = np.array([0x0000, 0x7C00, 0x7E00, 0x3C00], np.uint16)
    b = np.array([0x7C00, 0x0000, 0x3C00, 0x7C00], np.uint16)
    c = np.array([0x7E55, 0x7D00, 0x3C00, 0xFC00], np.uint16)
    r, fl = expected("f16_mulAdd", a, b, c, platform="x86_sse")
    assert [int(x) for x in r] == [0xFE00, 0xFE00, 0x7E00, 0xFE00]
    assert [int(x) for x in fl] == [INVALID, INVALID, 0, INVALID]
    r, _ = expected("f16_mulAdd", a, b, c)                         # library default
    assert [int(x) for x in r] == [0x7E00, 0x7E00, 0x7E00, 0x7E00]
