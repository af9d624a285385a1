"""validation/cuda_probe.py's matrix-unit check (``--what units``) without a GPU:
the exit status and one-line reason when no device is there, and its CPU-side
logic (cases, candidate models, comparison, report) with fake device functions:
one that computes the answer another way (exact float64 products summed with
nearest-even roundings: the IEEE fp32 model, which the truncating tensor cores are
not) and ones that return a model's answer with outputs altered, whose mismatches
the check must count and locate exactly."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import softfloat as sf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
torch = pytest.importorskip("torch")
from validation import cuda_probe as CP  # noqa: E402


def test_no_gpu_exits_2_with_one_line(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "validation", "cuda_probe.py"),
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 2
    err = [ln for ln in r.stderr.splitlines() if ln.strip() and "CUDA runtime" not in ln]
    assert len(err) == 1 and "no CUDA device" in err[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()
    assert CP.main(["--out", str(tmp_path / "o"), "--what", "bogus"]) == 2
    assert CP.main(["--out", str(tmp_path / "o"), "--device", "cpu", "--what", "units"]) == 2


def test_arch_of_compute_capability():
    assert CP.arch_of((9, 0)) == "hopper" and CP.arch_of((8, 9)) == "ada"
    assert CP.arch_of((10, 0)) == "blackwell" and CP.arch_of((7, 0)) == "volta"
    assert CP.arch_of((3, 5)) is None


def _small_cases(arch):
    return CP.unit_cases(arch, ks=(32, 96), m=4, n=4, seed=1)


def test_cases_cover_the_plan():
    cases = _small_cases("hopper")
    kinds = {c["kind"] for c in cases}
    assert kinds == set(CP.KINDS)
    combos = {(c["op"], c["fmt"], c["out"], c.get("fast_accum")) for c in cases}
    assert ("scaled_mm", "fp8_e4m3", "fp32", True) in combos
    assert ("scaled_mm", "fp8_e4m3", "fp32", False) in combos
    assert ("mm", "tf32", "fp32", None) in combos and ("mm", "bf16", "bf16", None) in combos
    sp = [c for c in cases if c["kind"] == "special" and c["fmt"] == "fp16"][0]
    v = sf.from_bits(sp["A"], "fp16")
    assert np.isnan(v).any() and np.isinf(v).any() and (v == 0).any()
    assert not any(c["op"] == "scaled_mm" for c in _small_cases("ampere"))
    assert {c["fmt"] for c in _small_cases("volta")} == {"fp16"}


def _ieee_fp32_device(c):
    """A fake device that sums in IEEE fp32, sequentially, nearest even: products
    exact in float64, each addition rounded to float32 (numpy)."""
    if c["fmt"] == "tf32":
        va = sf.from_bits(c["A"], "fp32")
        vb = sf.from_bits(c["B"], "fp32")
    else:
        va, vb = sf.from_bits(c["A"], c["fmt"]), sf.from_bits(c["B"], c["fmt"])
    m, k = va.shape
    acc = np.zeros((m, vb.shape[1]), np.float32)
    with np.errstate(all="ignore"):
        for j in range(k):
            acc = (acc + np.outer(va[:, j], vb[j]).astype(np.float32)).astype(np.float32)
        out = sf.to_bits(acc.astype(np.float64), "fp32")
        if c["out"] != "fp32":
            out = sf.to_bits(acc.astype(np.float64), c["out"])
    return out


def test_check_counts_an_ieee_device_against_the_models(tmp_path):
    """An IEEE-fp32 device: the fp32_sequential candidate (softfloat.matmul, fp32
    nearest even) matches it everywhere on fp16 -> fp16 cases; the truncating Hopper
    chain does not on some (normal inputs at k = 96: truncation shows)."""
    cases = [c for c in _small_cases("hopper") if c["op"] == "mm" and c["fmt"] == "fp16"
             and c["out"] == "fp16" and c["kind"] in ("normal", "wide")]
    recs = CP.check_units(_ieee_fp32_device, "hopper", cases)
    assert all(r["mismatches"]["fp32_sequential"] == 0 for r in recs)
    assert all(r["outputs"] == 16 for r in recs)
    meta = {"device_name": "fake", "torch": "x", "date": "d", "arch": "hopper"}
    CP.write_units_report(recs, meta, str(tmp_path))
    rep = json.loads((tmp_path / "units.json").read_text())
    assert len(rep["cases"]) == len(recs)
    md = (tmp_path / "units.md").read_text()
    assert "| mm | float16 | fp16 |  | fp32_sequential | 0 |" in md


def test_check_locates_altered_outputs(tmp_path):
    """A device that returns the Hopper chain's answer with two outputs altered, and
    one NaN with another payload: the chain candidate has exactly those two
    mismatches, at those places, and one NaN-payload difference."""
    arch = "hopper"
    cases = [c for c in _small_cases(arch) if c["op"] == "scaled_mm" and c["fast_accum"]
             and c["k"] == 96 and c["kind"] in ("normal", "special")]
    assert len(cases) == 2

    def device(c):
        out = np.array(CP.unit_candidates(arch, c)["chain"], copy=True)
        if c["kind"] == "normal":
            out[1, 2] ^= 1
            out[3, 0] ^= 0x100
        else:
            nan = np.isnan(sf.from_bits(out, "fp32"))
            assert nan.any()
            i, j = np.argwhere(nan)[0]
            out[i, j] = 0x7FC00000
        return out
    recs = CP.check_units(device, arch, cases)
    normal, special = recs
    assert normal["mismatches"]["chain"] == 2
    assert [e[:2] for e in normal["examples"]["chain"]] == [[1, 2], [3, 0]]
    assert special["mismatches"]["chain"] == 0
    assert special["nan_payload_differences"]["chain"] == 1
    assert set(normal["mismatches"]) == {"chain", "promote32", "promote64"}   # 128 >= k: the chain
    CP.write_units_report(recs, {"arch": arch}, str(tmp_path))
    assert "First mismatches" in (tmp_path / "units.md").read_text()


def test_device_errors_are_recorded():
    cases = _small_cases("ampere")[:1]

    def broken(c):
        raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED")
    rec = CP.check_units(broken, "ampere", cases)[0]
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in rec["error"] and "mismatches" not in rec
