"""validation/torch_crosscheck.py (its parts in validation/crosscheck/) on the CPU:
the --tiny run passes with zero mismatches on every exact check; the 2^32-sweep
code path (used on CUDA) runs on a few chunks; a wrong platform model is caught
and its mismatches classified."""
import json
import os
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from validation import torch_crosscheck as tc  # noqa: E402
from validation.crosscheck.compare import Result, ulp_distance  # noqa: E402

import softfloat as sf  # noqa: E402


def _run(tmp_path, *argv):
    out = str(tmp_path / "out")
    rc = tc.main(["--device", "cpu", "--out", out, *argv])
    with open(os.path.join(out, "report.json")) as fh:
        rep = json.load(fh)
    assert os.path.getsize(os.path.join(out, "report.md")) > 200
    return rc, rep


def test_tiny_run_all_exact_checks_pass(tmp_path):
    rc, rep = _run(tmp_path, "--tiny")
    checks = rep["checks"]
    names = {c["name"] for c in checks}
    for n in ("from_float32", "from_float64", "to_float32", "add_tensor", "div_tensor", "sqrt",
              "relu", "mul_scalar", "div_scalar", "fused_lerp_w0.3", "fused_addcmul_value0.3",
              "exp", "gelu", "sum_exact_data", "mean_exact_data", "sum_general", "matmul",
              "gradscaler_step", "model_sum", "model_mean", "model_cumsum", "model_matmul"):
        assert n in names, n
    for c in checks:
        assert c["dtype"] in ("float16", "bfloat16") or (
            c["name"].startswith("model_") and c["dtype"] == "float32")
        if c.get("skipped"):
            continue
        assert "error" not in c, (c["name"], c.get("traceback"))
        assert c["cases"] > 0, c["name"]
        if c["exact"]:
            assert c["mismatches"] == 0, (c["name"], c["dtype"], c["causes"], c["examples"])
        else:
            assert "max_ulp" in c and sum(c["ulp_histogram"].values()) > 0, c["name"]
    assert rc == 0
    assert rep["meta"]["failed"] == 0 and rep["meta"]["platform"] == "torch_cpu"
    # transcendentals on the CPU are within a few ulps of the float64 reference, except
    # where float32 intermediates overflow (bf16 sigmoid(-90): exp(90) = inf in float32)
    for c in checks:
        if c["name"] in ("exp", "tanh") or (c["name"] == "sigmoid" and c["dtype"] == "float16"):
            assert c["max_ulp"] <= 2, (c["name"], c["dtype"], c["max_ulp"])
        if c["name"] == "sigmoid" and c["dtype"] == "bfloat16":
            assert set(c["causes"]) <= {"subnormal_flush", "one_ulp_other", "other"}
    scal = {c["dtype"]: c for c in checks if c["name"] == "gradscaler_step"}
    for c in scal.values():
        if not c.get("skipped"):
            assert c["scale_trajectory_ours"] == c["scale_trajectory_torch"]
            assert c["weights_within_bound"]


def test_sweep_code_path_on_cpu(tmp_path):
    rc, rep = _run(tmp_path, "--sweep", "--chunk-log2", "16", "--max-chunks", "3",
                   "--only", "from_float32", "binary")
    assert rc == 0
    for c in rep["checks"]:
        assert c["cases"] == 3 << 16 and c["coverage"] == pytest.approx(3 / (1 << 16), abs=1e-6)
        assert c["mismatches"] == 0


def test_sweep_time_budget_thins_chunks(tmp_path):
    # a budget far too small for 2^32: the sweep stops early and says so
    rc, rep = _run(tmp_path, "--sweep", "--chunk-log2", "16", "--budget-s", "1",
                   "--only", "binary", "--dtypes", "bfloat16")
    assert rc == 0
    for c in rep["checks"]:
        assert 0 < c["coverage"] < 0.01 and "time budget" in c["note"]
        assert c["mismatches"] == 0


def test_wrong_model_is_caught_and_classified(tmp_path):
    # the CUDA model on the CPU: add's scalar is narrowed on the CPU, kept float32 on CUDA
    rc, rep = _run(tmp_path, "--tiny", "--platform", "torch_cuda", "--only", "scalar",
                   "--dtypes", "float16")
    assert rc == 1
    add = next(c for c in rep["checks"] if c["name"] == "add_scalar")
    assert add["mismatches"] > 0 and not add["passed"]
    # (the CUDA model also claims NaN 0x7FFF, which the CPU does not give: nan_pattern)
    other = add["mismatches"] - add["causes"].get("nan_pattern", 0)
    assert other > 0 and add["causes"].get("scalar_narrowing", 0) > 0.9 * other
    div = next(c for c in rep["checks"] if c["name"] == "div_scalar")
    assert div["causes"].get("reciprocal_division", 0) > 0


def test_classification_of_causes():
    f = sf.get_format("fp16")
    r = Result("t", "float16", True, False, "synthetic")
    exp = np.array([0x0000, 0x7E00, 0x0001, 0x3C00, 0x3C00, 0x3C00], np.uint16)
    got = np.array([0x8000, 0x7FFF, 0x0000, 0x3C01, 0x3C05, 0x3C00], np.uint16)
    r.add(got, exp, f, [exp], {"tie_rule": lambda m: np.where(got[m] == 0x3C01, 0x3C01, 0)})
    d = r.finish()
    assert d["causes"] == {"signed_zero": 1, "nan_pattern": 1, "subnormal_flush": 1,
                           "tie_rule": 1, "other": 1}
    assert d["mismatches"] == 4 and d["nan_pattern_mismatches"] == 1 and not d["passed"]
    b = Result("u", "float16", False, False, "bounded", bounded=True)
    b.add(got, exp, f)
    assert b.finish()["max_ulp"] == 5
    assert ulp_distance(np.array([0x8001], np.uint16), np.array([0x0001], np.uint16), f)[0] == 2
