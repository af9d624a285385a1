"""The FPnew hardware check (validation/hardware/fpnew): the SFV1 client, the plan
runner and the report against a small Python SFV1 program (no Verilator needed), and
the Verilated harness itself where `verilator` is on the PATH and a harness is built
(`python -m validation.hardware.fpnew build`); the build from scratch is `slow`."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import softfloat as sf
from validation.hardware.fpnew import build as B
from validation.hardware.fpnew import runner as R
from validation.hardware.fpnew.report import render
from validation.hardware.fpnew.sfv1 import ProtocolError, run

REPO = Path(__file__).resolve().parents[1]
FAKE = [sys.executable, "-m", "validation.hardware.fpnew.fake_fpu"]


def _fake(fault="none"):
    return FAKE + ["--fault", fault]


def _pairs(n=3000, seed=3):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 1 << 16, n).astype(np.uint16) for _ in range(2)]


# --- the SFV1 client against the Python program ------------------------------------
def test_client_round_trip_matches_library():
    a, b = _pairs()
    res, flg = run(_fake(), "mul", "fp16", "upward", [a, b], 2, batch=1000)
    exp, ef = sf.mul(a, b, "fp16", "upward", return_flags=True)
    assert res.dtype == np.uint16 and res.shape == a.shape
    assert np.array_equal(res, exp) and np.array_equal(flg, ef)
    assert (flg != 0).any()             # the flags travel, not just zeros


def test_client_reports_refusal_death_and_bad_input():
    a, b = _pairs(10)
    with pytest.raises(ProtocolError, match="refused.*not offered"):
        run(_fake("refuse"), "add", "fp16", "nearest_even", [a, b], 2)
    with pytest.raises(ProtocolError, match="ended after 0 of"):
        run(_fake("die"), "add", "fp16", "nearest_even", [a, b], 2)
    with pytest.raises(ValueError, match="one length"):
        run(_fake(), "add", "fp16", "nearest_even", [a, b[:5]], 2)
    with pytest.raises(TypeError, match="integer arrays"):
        run(_fake(), "add", "fp16", "nearest_even", [a.astype(float), b], 2)


# --- the runner and the report: a planted fault is named -----------------------------
def test_runner_names_a_planted_rounding_fault(tmp_path):
    job = R.Job("fake", "fp8_e5m2", "add", "exhaustive", ("nearest_even",))
    r = R.run_job(job, None, "nearest_even", exe_argv=_fake("toward_zero"))
    assert r["cases"] == 65536 and r["mismatches"] > 0
    assert r["diagnosis"]["best"].get("rounding") == "toward_zero"
    assert r["first_mismatches"] and "operands" in r["first_mismatches"][0]
    md = render({"meta": {"plan": "test"}, "runs": [r]})
    assert "toward_zero" in md and "Reproducers" in md and r["first_mismatches"][0]["got"] in md


def test_runner_records_a_refusal_and_a_clean_run():
    job = R.Job("fake", "fp16", "sqrt", 100, ("nearest_even",))
    r = R.run_job(job, None, "nearest_even", exe_argv=_fake())
    assert "refused" in r and "not offered" in r["refused"]
    ok = R.run_job(R.Job("fake", "bf16", "sub", 2000, ("downward",)), None, "downward",
                   exe_argv=_fake())
    assert ok["cases"] == 2000 and ok["mismatches"] == 0
    md = render({"meta": {}, "runs": [r, ok]})
    assert "not run" in md and "bit-exact" in md and "No other disagreement" in md


def test_runner_missing_inexact_is_a_flag_difference():
    r = R.run_job(R.Job("fake", "fp16", "div", 3000, ("nearest_even",)), None,
                  "nearest_even", exe_argv=_fake("no_inexact"))
    assert r["mismatches"] > 0 and r["bits_mismatches"] == 0
    assert r["flag_differences"].get("inexact missing", 0) > 0


def test_cli_bad_argument_exits_2(capsys):
    from validation.hardware.fpnew.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["--plan", "nope"])
    assert e.value.code == 2
    assert main(["build", "--rtl", "/nonexistent/cvfpu"]) == 2
    assert "not found" in capsys.readouterr().err


def test_report_merges_the_other_units_runs(tmp_path):
    from validation.hardware.fpnew.__main__ import main
    r = R.run_job(R.Job("fake", "fp16", "add", 500, ("upward",)), None, "upward",
                  exe_argv=_fake())
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    ra, rb = dict(r, unit="thmulti"), dict(r, unit="pulp")
    (a / "fpnew.json").write_text(json.dumps({"meta": {"build_s": {"thmulti": 1.0}},
                                              "throughput": {}, "runs": [ra]}))
    (b / "fpnew.json").write_text(json.dumps({"meta": {"build_s": {"pulp": 2.0}},
                                              "throughput": {"pulp add fp16": {
                                                  "cases": 1, "ops_per_s_wall": 1,
                                                  "ops_per_s_cpu": 1}}, "runs": [rb, ra]}))
    assert main(["report", "--out", str(a), "--merge", str(b)]) == 0
    data = json.loads((a / "fpnew.json").read_text())
    assert [x["unit"] for x in data["runs"]] == ["thmulti", "pulp"]     # no duplicate
    assert data["meta"]["build_s"] == {"thmulti": 1.0, "pulp": 2.0}
    md = (a / "fpnew.md").read_text()
    assert "| pulp | add | fp16 |" in md and "pulp add fp16" in md


def test_plans_are_well_formed():
    for name, plan in R.PLANS.items():
        jobs = plan()
        assert jobs, name
        for j in jobs:
            assert j.unit in B.UNITS and set(j.modes) <= set(R.MODES)
            sf.verification.get_op(j.op, j.fmt)        # every op is one verify knows


# --- the build recipe ----------------------------------------------------------------
def test_verilator_command_avoids_the_optimiser_bug():
    rtl = B.default_rtl()
    if not (rtl / "src" / "fpnew_top.sv").is_file():
        pytest.skip(f"the FPnew sources are not at {rtl} (set FPNEW_RTL)")
    cmd = B.verilator_command(rtl, Path("/tmp/x"), "pulp")
    assert "-O0" in cmd and "-fno-dfg" in cmd and "-GDIVSQRT=0" in cmd
    names = [Path(c).name for c in cmd if c.endswith((".sv", ".v"))]
    assert names.index("cf_math_pkg.sv") < names.index("fpnew_pkg.sv") < names.index(
        "fpnew_top.sv")
    assert names.index("defs_div_sqrt_mvp.sv") < names.index("div_sqrt_top_mvp.sv")


# --- the Verilated harness ----------------------------------------------------------
def _harness(unit):
    if shutil.which("verilator") is None:
        pytest.skip("verilator is not on the PATH (Debian: apt-get install verilator)")
    exe = B.executable(B.DEFAULT_BUILD, unit)
    if not exe.is_file():
        pytest.skip(f"no {unit} harness built (python -m validation.hardware.fpnew build)")
    return exe


def _one(exe, op, fmt, mode, operands, nbytes, out_bytes=None):
    dt = np.dtype(f"u{nbytes}")
    return run([str(exe)], op, fmt, mode, [np.array(o, dt) for o in operands],
               out_bytes or nbytes)


def test_harness_multiplier_is_not_miscompiled():
    exe = _harness("thmulti")
    res, flg = _one(exe, "mul", "fp32", "nearest_even", [[0x3F800000], [0x40000000]], 4)
    assert hex(int(res[0])) == "0x40000000" and flg[0] == 0      # 1.0 * 2.0 = 2.0


def test_harness_fp8_add_exhaustive_matches_with_canonical_nan():
    exe = _harness("thmulti")
    rep = sf.verify(sf.verification.exec_impl([str(exe)]), "add", "fp8_e5m2", "toward_zero",
                    space="exhaustive", nan="canonical")
    assert rep.cases == 65536 and rep.mismatches == 0, rep.summary()


def test_harness_refuses_what_fpnew_lacks():
    exe = _harness("thmulti")
    with pytest.raises(ProtocolError, match="no fp8"):
        _one(exe, "div", "fp8_e5m2", "nearest_even", [[0x3C], [0x40]], 1)
    with pytest.raises(ProtocolError, match="not supported"):
        run([str(exe)], "add", "fp16", "nearest_even", [np.zeros(1, np.uint16)] * 2, 2,
            policies={"ftz": 1})


def test_harness_thmulti_div_misses_underflow_as_reported():
    # 0x07ff / 2: the exact quotient 1.1111111111b * 2^-15 is tiny (below 2^-14 with an
    # unbounded exponent) and rounds up to 0x0400: underflow and inexact in IEEE 754's
    # tininess after rounding. THMULTI raises inexact only (the report's reproducer).
    exe = _harness("thmulti")
    exp, ef = sf.div(np.uint16(0x07FF), np.uint16(0x4000), "fp16", return_flags=True)
    assert int(exp) == 0x0400 and sf.flag_names(ef) == ["underflow", "inexact"]
    res, flg = _one(exe, "div", "fp16", "nearest_even", [[0x07FF], [0x4000]], 2)
    assert int(res[0]) == 0x0400 and int(flg[0]) == 1


def test_harness_pulp_div_defects_as_reported():
    # The PULP unit's fp16 division, two of the report's reproducers: 0/0 raises
    # divide-by-zero with invalid; 0xc95b / 0xbbc1 is rounded toward zero under RNE.
    exe = _harness("pulp")
    a, b = np.array([0x0000, 0xC95B], np.uint16), np.array([0x0000, 0xBBC1], np.uint16)
    exp, ef = sf.div(a, b, "fp16", "nearest_even", return_flags=True)
    assert exp.tolist() == [0x7E00, 0x4987] and ef.tolist() == [16, 1]
    res, flg = _one(exe, "div", "fp16", "nearest_even", [a, b], 2)
    assert res.tolist() == [0x7E00, 0x4986] and flg.tolist() == [16 | 8, 1]
    assert int(sf.div(a[1:], b[1:], "fp16", "toward_zero")[0]) == 0x4986  # what PULP gave


@pytest.mark.slow
def test_build_and_quick_plan_from_scratch(tmp_path):
    if shutil.which("verilator") is None:
        pytest.skip("verilator is not on the PATH (Debian: apt-get install verilator)")
    rtl = B.default_rtl()
    if not (rtl / "src" / "fpnew_top.sv").is_file():
        pytest.skip(f"the FPnew sources are not at {rtl} (set FPNEW_RTL)")
    out = tmp_path / "report"
    # THMULTI only: the PULP build is the long one (up to half an hour on 2 shared cores)
    proc = subprocess.run([sys.executable, "-m", "validation.hardware.fpnew", "run",
                           "--plan", "quick", "--units", "thmulti", "--build-dir",
                           str(tmp_path / "build"), "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    data = json.loads((out / "fpnew.json").read_text())
    assert data["runs"] and all("cases" in r for r in data["runs"])
    assert data["meta"]["build_s"]["thmulti"] > 0 and data["throughput"]
    assert (out / "fpnew.md").read_text().startswith("# FPnew")
