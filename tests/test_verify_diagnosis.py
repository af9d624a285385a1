"""softfloat.verify's diagnosis names the fault of an implementation
(tests/verify_faults.py: an independent fp16 model with fault switches, and
flag faults on the library's results)."""
from __future__ import annotations

import pytest

import softfloat as sf
from softfloat.verification import engine

import verify_faults as VF

SPACE = "level1"          # TestFloat's 46,464 two-operand cases: subnormals, overflow, NaNs


def run(impl, op="add", **kw):
    return sf.verify(impl, op, "fp16", space=kw.pop("space", SPACE), **kw)


def test_independent_model_matches_the_library():
    # the model computes otherwise (float64 exact + NumPy's rounding): no mismatch
    for op in ("add", "mul"):
        for mode in ("nearest_even", "toward_zero", "upward", "downward"):
            rep = run(VF.model(op, mode), op, rounding=mode)
            assert rep.mismatches == 0, (op, mode, rep.summary())
            assert rep.diagnosis["explained"] == 1.0
            assert "on every case" in rep.diagnosis["summary"]


@pytest.mark.parametrize("mode", ["toward_zero", "upward", "downward"])
def test_wrong_rounding_mode(mode):
    rep = run(VF.model("add", mode))
    assert rep.mismatches > 1000
    assert rep.classes.get("rounding_mode", 0) > 0.9 * rep.mismatches
    d = rep.diagnosis
    assert d["best"] == {"rounding": mode}
    assert d["explained"] == 1.0
    assert d["summary"].startswith(f"matches {mode} on every case")


def test_rounding_per_sign():
    rep = run(VF.model("mul", "toward_zero", negative_mode="nearest_even"), "mul")
    d = rep.diagnosis
    assert d["best"] == {"rounding": {"positive": "toward_zero", "negative": "nearest_even"}}
    assert d["explained"] == 1.0
    assert "toward_zero for positive and nearest_even for negative" in d["summary"]


def test_ftz():
    rep = run(VF.model("mul", ftz=True), "mul")
    assert rep.classes.get("flush_to_zero", 0) > 0
    d = rep.diagnosis
    assert d["best"] == {"ftz": True}
    assert d["explained_values"] > 0.999


def test_daz():
    rep = run(VF.model("add", daz=True))
    assert rep.classes.get("subnormal_input_flushed", 0) > 0
    d = rep.diagnosis
    assert d["best"] == {"daz": True}
    assert d["explained"] == 1.0


def test_canonical_nan():
    rep = run(VF.model("add", canonical_nan=True), check_nan=True)
    assert set(rep.classes) == {"nan_payload"}
    assert rep.diagnosis["best"] == {"nan": "canonical"}
    assert rep.diagnosis["explained"] == 1.0
    # by default any NaN is accepted, and the report still names the rule
    rep = run(VF.model("add", canonical_nan=True))
    assert rep.ok and rep.nan_differences > 0
    assert rep.diagnosis["best"] == {"nan": "canonical"}
    assert "NaN results: every NaN result is 0x7e00" in rep.summary()


def test_saturation():
    rep = run(VF.model("mul", saturate=True), "mul")
    assert rep.classes.get("saturation", 0) > 0
    d = rep.diagnosis
    assert d["best"] == {"overflow": "saturate"}
    assert d["explained"] == 1.0


def test_combined_mode_and_ftz_and_canonical_nan():
    rep = run(VF.model("mul", "upward", ftz=True, canonical_nan=True), "mul")
    d = rep.diagnosis
    assert d["best"] == {"rounding": "upward", "ftz": True, "nan": "canonical"}
    assert d["explained_values"] > 0.999


def test_missing_inexact():
    rep = run(VF.missing_inexact("add"))
    assert rep.bits_mismatches == 0 and rep.flag_mismatches > 0
    d = rep.diagnosis
    assert d["best"] == {}
    fl = d["flags"]
    assert set(fl) == {"inexact"}
    assert fl["inexact"]["missing"] == fl["inexact"]["expected"] > 0
    assert fl["inexact"]["got"] == 0 and fl["inexact"]["extra"] == 0
    assert f"inexact missing in {fl['inexact']['missing']:,} of" in d["summary"]
    assert rep.flag_differences == {"inexact missing": fl["inexact"]["missing"]}


def test_toward_zero_without_inexact_as_fpnew_div():
    rep = run(VF.missing_inexact("div", mode="toward_zero"), "div")
    d = rep.diagnosis
    assert d["best"] == {"rounding": "toward_zero"}
    assert d["explained_values"] == 1.0
    assert d["summary"].startswith("matches toward_zero on every case; inexact missing in ")


def test_underflow_on_exact_subnormal_results():
    rep = run(VF.underflow_on_exact_tiny("mul"), "mul")
    d = rep.diagnosis
    assert d["best"] == {}
    assert set(d["flags"]) == {"underflow"}
    assert d["flags"]["underflow"]["extra"] > 0 and d["flags"]["underflow"]["missing"] == 0
    assert "underflow raised in" in d["summary"]


def test_tininess_before_rounding():
    rep = run(VF.library("mul", tininess="before"), "mul")
    assert rep.bits_mismatches == 0 and rep.flag_mismatches > 0
    assert rep.classes == {"tininess": rep.mismatches}
    assert rep.diagnosis["best"] == {"tininess": "before"}
    assert rep.diagnosis["explained"] == 1.0


def test_random_wrong_values():
    rep = run(VF.random_wrong("add"))
    assert 0 < rep.bits_mismatches < 100
    d = rep.diagnosis
    assert d["best"] == {}
    assert "wrong_value" in d["unexplained"]
    ex = d["unexplained"]["wrong_value"]["example"]
    assert set(ex) >= {"case", "operands", "expected", "got", "class"}
    assert 0.997 < d["explained"] < 1.0
    assert d["summary"].startswith(f"matches nearest_even except {rep.bits_mismatches} cases")


def test_sampled_material_is_confirmed_on_every_case(monkeypatch):
    # a space larger than the material: candidates are chosen on a sample and
    # counted on every case by a second pass
    monkeypatch.setattr(engine, "KEEP_ALL", 1000)
    monkeypatch.setattr(engine, "KEEP_MISMATCHES", 800)
    monkeypatch.setattr(engine, "KEEP_MATCHES", 300)
    calls = []
    base = VF.model("add", "toward_zero", ftz=True)

    def impl(a, b):
        calls.append(a.size)
        return base(a, b)
    rep = run(impl, shards=3)
    assert rep.passes == 2 and sum(calls) == 2 * rep.cases
    d = rep.diagnosis
    assert d["best"] == {"rounding": "toward_zero", "ftz": True}
    assert not d["estimated"]
    assert d["explained_values"] > 0.999
    full = run(base)
    assert full.diagnosis["best"] == d["best"]
    assert full.diagnosis["explained"] == d["explained"]


def test_no_flags_compares_results_only():
    impl = VF.library("add", "fp16", "upward")
    rep = run(lambda a, b: impl(a, b)[0])
    assert not rep.flags_checked and rep.flag_mismatches == 0
    assert rep.diagnosis["best"] == {"rounding": "upward"}
    assert "no flags reported" in rep.diagnosis["summary"]


def test_confirmation_pass_keeps_nan_rules(monkeypatch):
    # x86's fresh NaN (negative) as a candidate of the second pass
    from softfloat.specialize import NanRule
    monkeypatch.setattr(engine, "KEEP_ALL", 1000)
    monkeypatch.setattr(engine, "KEEP_MISMATCHES", 500)
    monkeypatch.setattr(engine, "KEEP_MATCHES", 200)
    rule = NanRule("propagate", "negative")
    rep = sf.verify(VF.library("sqrt", nan=rule), "sqrt", "fp16")
    assert rep.passes == 2
    assert rep.diagnosis["best"] == {"nan": rule} and rep.diagnosis["explained"] == 1.0


@pytest.mark.parametrize("sat", ["satfinite", "satpropagate"])
def test_p3109_saturation_mode_is_named(sat):
    """A P3109 adder that saturates otherwise than the requested SatNone: the
    device is a table built from the exact reference written from the report
    (tests/p3109_reference.py), not from the library."""
    import numpy as np
    import p3109_reference as R
    name = "binary6p3se"
    spec = R.parse_name(name)
    n = 1 << spec[0]
    vals = [R.decode(c, *spec) for c in range(n)]
    table = np.array([[R.project(R.op_add(x, y), spec, "nearest_even", sat) for y in vals]
                      for x in vals], np.uint8)

    def device(a, b):
        return table[a.astype(np.int64), b.astype(np.int64)]
    rep = sf.verify(device, "add", name, space="exhaustive", progress=False)
    assert rep.mismatches > 0
    d = rep.diagnosis
    assert d["best"] == {"saturation": sat}, d
    assert d["explained"] == 1.0
    assert f"saturation='{sat}'" in d["summary"]
