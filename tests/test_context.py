"""Context: localcontext applies and restores, keywords override the context,
sticky flags accumulate, bad policy values raise."""
import threading

import numpy as np
import pytest

import softfloat as sf
from softfloat import Flags, getcontext, localcontext, setcontext, to_bits

# 1 + 2^-11 + 2^-12 = 1.000732421875: between fp16 1.0 and 1.0009765625, above the midpoint
X = np.array([1 + 2.0 ** -11 + 2.0 ** -12])
UP, DOWN = 0x3C01, 0x3C00


def test_default_context():
    ctx = getcontext()
    assert ctx.rounding == "nearest_even" and ctx.subnormals is True
    assert ctx.tininess == "after" and ctx.nan == "propagate" and ctx.sr_bits == 32
    assert ctx.overflow is None and ctx.ftz is None and ctx.daz is None
    assert to_bits(X, "fp16").tolist() == [UP]


def test_localcontext_applies_and_restores():
    before = getcontext()
    with localcontext(rounding="toward_zero") as ctx:
        assert getcontext() is ctx and ctx.rounding == "toward_zero"
        assert to_bits(X, "fp16").tolist() == [DOWN]
        with localcontext(rounding="upward"):
            assert to_bits(-X, "fp16").tolist() == [0x8000 | DOWN]
            assert to_bits(X, "fp16").tolist() == [UP]
        assert to_bits(X, "fp16").tolist() == [DOWN]
    assert getcontext() is before and before.rounding == "nearest_even"
    assert to_bits(X, "fp16").tolist() == [UP]


def test_localcontext_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with localcontext(rounding="rtz"):
            raise RuntimeError("boom")
    assert getcontext().rounding == "nearest_even"


def test_keywords_override_the_context():
    with localcontext(rounding="toward_zero", subnormals=False, overflow="saturate",
                      tininess="before"):
        assert to_bits(X, "fp16", "nearest_even").tolist() == [UP]
        # the context's ftz applies unless a keyword says otherwise
        assert to_bits(np.array([2.0 ** -20]), "fp16").tolist() == [0]
        assert to_bits(np.array([2.0 ** -20]), "fp16", ftz=False).tolist() == [0x0010]
        assert to_bits(np.array([1e6]), "fp16").tolist() == [0x7BFF]
        assert to_bits(np.array([1e6]), "fp16", "rne", overflow="ieee").tolist() == [0x7C00]
        # tininess from the context: before -> underflow for a value that rounds to 2^-14
        x = np.array([float.fromhex("0x1.ffep-15")])
        assert to_bits(x, "fp16", "rne", return_flags=True)[1].tolist() == [3]
        assert to_bits(x, "fp16", "rne", tininess="after", return_flags=True)[1].tolist() == [1]


def test_context_policies_reach_the_kernel():
    x = np.array([2.0 ** -20, 5e-324])
    with localcontext(ftz=True):
        assert to_bits(x, "fp16", "upward").tolist() == [0, 0]     # 5e-324 -> sub -> flushed
    with localcontext(daz=True):
        assert to_bits(x, "fp16", "upward").tolist() == [0x0010, 0]
    with localcontext(nan="canonical"):
        nan = np.array([0xFFF0_0000_0000_0123], np.uint64).view(np.float64)
        assert to_bits(nan, "fp16").tolist() == [0x7E00]
    with localcontext(nan=0x7FFF):
        assert to_bits(nan, "fp16").tolist() == [0x7FFF]
    with localcontext(rounding="stochastic", seed=3, sr_bits=8):
        a = to_bits(np.linspace(1, 2, 999), "fp16")
    assert np.array_equal(a, to_bits(np.linspace(1, 2, 999), "fp16", "sr", seed=3, sr_bits=8))


def test_sticky_flags_accumulate():
    saved = getcontext().flags
    with localcontext() as ctx:
        ctx.clear_flags()
        assert ctx.flags == Flags.NONE
        to_bits(np.array([1.0, 2.0]), "fp16")
        assert ctx.flags == Flags.NONE                       # exact: nothing
        to_bits(X, "fp16")
        assert ctx.flags == Flags.INEXACT
        to_bits(np.array([1e-10]), "fp16")
        assert ctx.flags == Flags.INEXACT | Flags.UNDERFLOW
        to_bits(np.array([1e10]), "bf16")                    # no overflow in bf16
        assert ctx.flags == Flags.INEXACT | Flags.UNDERFLOW
        to_bits(np.array([1e10]), "fp16")
        assert ctx.flags == Flags.INEXACT | Flags.UNDERFLOW | Flags.OVERFLOW
        snan = np.array([0x7FF0_0000_0000_0001], np.uint64).view(np.float64)
        sf.convert(np.array([0x7D00], np.uint16), "fp16", "bf16")
        assert ctx.flags & Flags.INVALID
        assert sf.flag_names(int(ctx.flags)) == ["invalid", "overflow", "underflow", "inexact"]
        ctx.clear_flags()
        to_bits(snan, "fp16")
        assert ctx.flags == Flags.INVALID
    # the flags were raised in the local copy, not in the outer context
    assert getcontext().flags == saved


def test_flags_in_outer_context_are_sticky_too():
    outer = getcontext()
    saved = outer.flags
    try:
        outer.clear_flags()
        to_bits(np.array([70000.0]), "fp16")
        assert outer.flags == Flags.OVERFLOW | Flags.INEXACT
        to_bits(np.array([1.0]), "fp16")
        assert outer.flags == Flags.OVERFLOW | Flags.INEXACT   # not cleared by later calls
    finally:
        outer.flags = saved


@pytest.mark.parametrize("kw, exc, words", [
    (dict(rounding="bankers"), ValueError, "rounding"),
    (dict(overflow="wrap"), ValueError, "overflow"),
    (dict(tininess="sometimes"), ValueError, "tininess"),
    (dict(nan="loud"), ValueError, "NaN"),
    (dict(sr_bits=0), ValueError, "sr_bits"),
    (dict(sr_bits=64), ValueError, "sr_bits"),
    (dict(subnormals="no"), TypeError, "subnormals"),
    (dict(rounding="stochastic", seed=1.5), TypeError, "seed"),
])
def test_invalid_policy_values_raise(kw, exc, words):
    """Refused where written (localcontext, Context(...)), or at the latest when used."""
    with pytest.raises(exc, match=words):
        with localcontext(**kw):
            to_bits(X, "fp16")
    with pytest.raises(exc, match=words):
        sf.Context(**kw)
    with pytest.raises(exc, match=words):
        to_bits(X, "fp16", **kw)


@pytest.mark.parametrize("name", ["subnormals", "ftz", "daz"])
@pytest.mark.parametrize("value", ["yes", "no", "", 1, 0, 1.0, [True]])
def test_boolean_options_must_be_booleans(name, value):
    """ftz="yes" / subnormals="no" were read by their truthiness."""
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        to_bits(X, "fp16", **{name: value})
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        with localcontext(**{name: value}):
            pass
    ctx = sf.Context()
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        setattr(ctx, name, value)
    assert to_bits(X, "fp16", **{name: np.True_}).shape == np.shape(X)


def test_localcontext_unknown_attribute():
    with pytest.raises(TypeError, match="no attribute"):
        with localcontext(roundng="rtz"):
            pass


def test_setcontext():
    with pytest.raises(TypeError, match="Context"):
        setcontext({"rounding": "rtz"})
    result = {}

    def worker():
        # a fresh thread gets its own default context
        result["r"] = getcontext().rounding
        setcontext(sf.Context(rounding="upward"))
        result["bits"] = to_bits(X, "fp16").tolist()

    with localcontext(rounding="toward_zero"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert getcontext().rounding == "toward_zero"
    assert result == {"r": "nearest_even", "bits": [UP]}


def test_context_copy_is_independent():
    ctx = sf.Context(rounding="odd")
    c2 = ctx.copy()
    c2.rounding = "upward"
    assert ctx.rounding == "odd"
    with localcontext(ctx) as inner:
        assert inner.rounding == "odd" and inner is not ctx
        assert to_bits(np.array([1 + 2.0 ** -12]), "fp16").tolist() == [0x3C01]
