"""softfloat.Policy: one frozen value for the policies of a call, built once from
keywords and the context, accepted as ``policy=`` by the public functions."""
import dataclasses

import numpy as np
import pytest

import softfloat as sf
from softfloat._kernels import codes
from softfloat.context import get_tininess
from softfloat.specialize import NanRule

X = np.array([1.0, 2.5, 1e-7, -3.0e-5, 65504.0, np.inf, np.nan, 0.1])


def test_fields_hold_parsed_values():
    p = sf.Policy(rounding="rtz", nan=0x7E01, tininess="-tininessbefore")
    assert p.rounding is sf.Rounding.TOWARD_ZERO
    assert p.nan == NanRule("canonical", 0x7E01)
    assert p.tininess == "before"
    assert p.saturation is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.ftz = True


@pytest.mark.parametrize("kw,err", [
    (dict(rounding="nearest"), None), (dict(rounding="bogus"), ValueError),
    (dict(ftz="yes"), TypeError), (dict(tininess="during"), ValueError),
    (dict(nan="quiet"), ValueError), (dict(overflow="wrap"), ValueError),
    (dict(saturation="satclip"), ValueError), (dict(sr_bits=0), ValueError),
    (dict(seed=-1), ValueError), (dict(fast_paths=1), TypeError),
    (dict(saturation="satfinite"), None)])
def test_each_field_is_validated_by_the_one_check(kw, err):
    if err is None:
        sf.Policy(**kw)
    else:
        with pytest.raises(err):
            sf.Policy(**kw)


def test_resolve_merges_keywords_over_the_context():
    with sf.localcontext(rounding="upward", subnormals=False, nan="canonical"):
        p = sf.Policy.resolve(daz=False)
        assert (p.rounding, p.ftz, p.daz) == (sf.Rounding.UPWARD, True, False)
        assert p.nan == NanRule("canonical")
        assert p.context is sf.getcontext()
    q = sf.Policy.resolve("rna", ftz=True)
    assert q == sf.Policy("nearest_away", ftz=True, fast_paths=q.fast_paths)
    assert q.replace(ftz=False) == sf.Policy("nearest_away", fast_paths=q.fast_paths)


def test_testfloat_option_names_are_aliases():
    from softfloat.rounding import TESTFLOAT_NAMES, testfloat_rounding
    # TestFloat 3e's options, as its help lists them, and the spellings it accepts
    opts = {"rnear_even": "nearest_even", "rneareven": "nearest_even",
            "rnearest_even": "nearest_even", "rnear_maxMag": "nearest_away",
            "rnearmaxmag": "nearest_away", "rnearest_maxMag": "nearest_away",
            "rminMag": "toward_zero", "rmin": "downward", "rmax": "upward", "rodd": "odd"}
    for opt, mode in opts.items():
        assert sf.get_rounding(opt).label == mode
        assert sf.get_rounding("-" + opt).label == mode
        assert testfloat_rounding("-" + opt).label == mode
    for r, name in TESTFLOAT_NAMES.items():
        assert testfloat_rounding("-r" + name) == r
    assert testfloat_rounding("-rne") is None and testfloat_rounding("-level") is None
    assert get_tininess("tininessAfter") == "after"
    with pytest.raises(ValueError):
        sf.get_rounding("-rfoo")


def test_kernel_tuple_is_built_in_one_place():
    p = sf.Policy("upward", ftz=True, tininess="before", overflow="saturate")
    t = p.kernel_tuple(sf.FP16)
    assert t[codes.P_MODE] == int(sf.Rounding.UPWARD) and t[codes.P_FTZ] == 1
    assert t[codes.P_OVF] == codes.OVF_SATURATE and t[codes.P_TINB] == 1
    assert t == sf.context.kernel_policy(p, sf.FP16)
    with pytest.raises(ValueError, match="P3109"):
        sf.Policy(saturation="satfinite").kernel_tuple(sf.FP16)
    with pytest.raises(ValueError, match="without infinity"):
        sf.Policy(overflow="nan").kernel_tuple(sf.FP16)


KW = dict(rounding="toward_zero", ftz=True, nan="canonical")


@pytest.mark.parametrize("call", [
    lambda **k: sf.to_bits(X, "fp16", return_flags=True, **k),
    lambda **k: sf.quantize(X, "fp8_e4m3", return_flags=True, **k),
    lambda **k: sf.convert(sf.to_bits(X, "fp32"), "fp32", "bf16", return_flags=True, **k),
    lambda **k: sf.add(sf.to_bits(X, "fp16"), sf.to_bits(X[::-1].copy(), "fp16"), "fp16",
                       return_flags=True, **k),
    lambda **k: sf.fma(sf.to_bits(X, "bf16"), sf.to_bits(X, "bf16"),
                       sf.to_bits(X[::-1].copy(), "bf16"), "bf16", return_flags=True, **k),
    lambda **k: sf.sqrt(sf.to_bits(X, "fp16"), "fp16", return_flags=True, **k),
    lambda **k: sf.matmul(sf.to_bits(X[None], "fp16"), sf.to_bits(X[:, None], "fp16"),
                          "fp16", return_flags=True, **k),
])
def test_policy_keyword_equals_the_keywords(call):
    want = call(**KW)
    got = call(policy=sf.Policy.resolve(**KW))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(w, g)
    with pytest.raises(TypeError, match="not both"):
        call(policy=sf.Policy.resolve(**KW), ftz=True)


def test_policy_flags_go_to_the_current_context():
    p = sf.Policy()
    with sf.localcontext() as ctx:
        sf.to_bits([0.1], "fp16", policy=p)
        assert ctx.flags == sf.Flags.INEXACT


def test_policy_must_be_a_policy():
    with pytest.raises(TypeError, match="softfloat.Policy"):
        sf.to_bits([1.0], "fp16", policy={"rounding": "rtz"})


def test_resolved_policies_follow_the_context():
    # resolve keeps the policy of the same keywords per context; a changed context
    # field, or a keyword of another type (ftz=1), is resolved anew
    with sf.localcontext() as ctx:
        p = sf.Policy.resolve("rtz")
        assert sf.Policy.resolve("rtz") is p
        ctx.nan = "canonical"
        assert sf.Policy.resolve("rtz").nan == NanRule("canonical")
        sf.Policy.resolve(ftz=True)
        with pytest.raises(TypeError):
            sf.Policy.resolve(ftz=1)
