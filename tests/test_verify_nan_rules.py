"""The NaN rules and the double rounding the diagnosis names: the operand-order
NaN choice (NumPy's float16 arithmetic on x86 propagates the second NaN
operand), the NaN rule stated in every report, and a multiply rounded to
nearest even in float32 and then truncated."""
from __future__ import annotations

import numpy as np
import pytest

import softfloat as sf
from softfloat.specialize import NanRule, describe_nan

import verify_faults as VF

A = np.array([0x7F6F, 0x7D00, 0x3C00, 0x7D00, 0xFC00], np.uint16)
B = np.array([0x7D00, 0x7F6F, 0x7D01, 0x3C00, 0x7C00], np.uint16)


def test_propagate_last_takes_the_last_nan_operand():
    assert sf.add(A, B, "fp16").tolist() == [0x7F6F, 0x7F00, 0x7F01, 0x7F00, 0x7E00]
    r = sf.add(A, B, "fp16", nan="propagate_last")
    assert r.tolist() == [0x7F00, 0x7F6F, 0x7F01, 0x7F00, 0x7E00]
    r = sf.add(A, B, "fp16", nan=NanRule("propagate_last", "negative"))
    assert r.tolist() == [0x7F00, 0x7F6F, 0x7F01, 0x7F00, 0xFE00]
    # fma: c, then b, then a
    n1, n2, n3 = (np.array([x], np.uint16) for x in (0x7E01, 0x7E02, 0x7E03))
    assert sf.fma(n1, n2, n3, "fp16", nan="propagate_last").tolist() == [0x7E03]
    assert sf.fma(n1, n2, np.array([0x3C00], np.uint16), "fp16",
                  nan="propagate_last").tolist() == [0x7E02]
    assert sf.fma(n1, n2, n3, "fp16").tolist() == [0x7E01]
    # bf16 through the 16-bit fast paths and the general kernel alike
    a = np.array([0x7FA1, 0x3F80], np.uint16)
    b = np.array([0x7FC2, 0x7F81], np.uint16)
    assert sf.mul(a, b, "bf16", nan="propagate_last").tolist() == [0x7FC2, 0x7FC1]


def test_numpy_float16_follows_propagate_last_on_every_nan_pair():
    nans = np.concatenate([np.arange(0x7C01, 0x7E10), np.arange(0xFDF0, 0xFE10)]).astype(np.uint16)
    a = np.repeat(nans, 64)
    b = np.tile(nans[::nans.size // 64][:64], nans.size)
    got = VF.numpy_float16("add")(a, b)
    assert (got == sf.add(a, b, "fp16", nan="propagate_last")).all()
    assert not (got == sf.add(a, b, "fp16")).all()


def test_describe_nan():
    assert describe_nan("propagate_last", "fp16") == (
        "the last NaN operand in argument order (b before a), quieted; an invalid operation "
        "gives 0x7e00")
    assert describe_nan(NanRule("propagate", "negative"), "bf16").endswith("gives 0xffc0")
    assert describe_nan("canonical", "fp16") == "every NaN result is 0x7e00"
    assert describe_nan(0x7FFF, "fp16") == "every NaN result is 0x7fff"


def test_platform_can_name_propagate_last():
    import dataclasses
    p = dataclasses.replace(sf.get_platform("numpy"), nan_result={"*": "propagate_last"})
    assert p.nan_policy("result", "fp16") == NanRule("propagate_last", "negative")


# ---------------------------------------------------------------------------
# the diagnosis
def test_diagnosis_names_the_second_operand_nan_choice():
    rep = sf.verify(VF.model("add", nan_order="last"), "add", "fp16", space="level1",
                    check_nan=True)
    assert set(rep.classes) == {"nan_payload"}
    d = rep.diagnosis
    assert d["best"] == {"nan": "propagate_last"} and d["explained"] == 1.0
    assert "last NaN operand" in d["nan_rule"]["description"]
    assert "last NaN operand" in rep.summary()


def test_numpy_float16_add_is_explained_on_every_case():
    # TestFloat's default: any NaN for a NaN; the report still names the NaN rule
    rep = sf.verify(VF.numpy_float16("add"), "add", "fp16", space="level1")
    assert rep.ok and not rep.check_nan and rep.nan_differences > 0
    d = rep.diagnosis
    assert d["best"] == {"nan": NanRule("propagate_last", "negative")}, d["best"]
    assert d["explained"] == 1.0
    assert d["nan_rule"]["differs"] == rep.nan_differences
    s = rep.summary()
    assert "NaN results: the last NaN operand in argument order (b before a), quieted; " \
           "an invalid operation gives 0xfe00" in s
    assert "not counted" in s
    # with NaN bits compared they are mismatches, and the same rule explains them
    strict = sf.verify(VF.numpy_float16("add"), "add", "fp16", space="level1",
                       check_nan=True)
    assert strict.mismatches == rep.nan_differences
    assert strict.diagnosis["best"] == d["best"]


@pytest.mark.slow
def test_numpy_float16_add_over_level2():
    rep = sf.verify(VF.numpy_float16("add"), "add", "fp16", space="level2", check_nan=True)
    assert rep.cases == 1_254_528
    assert rep.diagnosis["best"] == {"nan": NanRule("propagate_last", "negative")}
    assert rep.diagnosis["explained"] == 1.0


def test_double_rounding_through_float32():
    rep = sf.verify(VF.bf16_mul_via_fp32_truncated, "mul", "bf16", "toward_zero",
                    space="level1")
    assert rep.mismatches > 0
    d = rep.diagnosis
    # float32's invalid NaN on x86 is negative: 0xffc0 once truncated
    best = {"rounding": "toward_zero", "nan": NanRule("propagate", "negative"),
            "via": {"format": "fp32", "rounding": "nearest_even"}}
    assert d["best"] == best, d
    assert d["explained"] == 1.0
    assert "double rounding: nearest_even in fp32, then toward_zero" in d["summary"]
    # asked for nearest_even, the diagnosis finds both steps
    rep = sf.verify(VF.bf16_mul_via_fp32_truncated, "mul", "bf16", space="level1")
    assert rep.diagnosis["best"] == best

