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
from validation import cuda_emulate as CE  # noqa: E402
from validation import cuda_probe as CP  # noqa: E402
from validation import cuda_units as CU  # noqa: E402


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
    assert CU.arch_of((9, 0)) == "hopper" and CU.arch_of((8, 9)) == "ada"
    assert CU.arch_of((10, 0)) == "blackwell" and CU.arch_of((7, 0)) == "volta"
    assert CU.arch_of((3, 5)) is None


def _small_cases(arch):
    return CU.unit_cases(arch, ks=(32, 96), m=4, n=4, seed=1)


def test_cases_cover_the_plan():
    cases = _small_cases("hopper")
    kinds = {c["kind"] for c in cases}
    assert kinds == set(CU.KINDS)
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
    recs = CU.check_units(_ieee_fp32_device, "hopper", cases)
    assert all(r["mismatches"]["fp32_sequential"] == 0 for r in recs)
    assert all(r["outputs"] == 16 for r in recs)
    meta = {"device_name": "fake", "torch": "x", "date": "d", "arch": "hopper"}
    CU.write_units_report(recs, meta, str(tmp_path))
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
        out = np.array(CU.unit_candidates(arch, c)["chain"], copy=True)
        if c["kind"] == "normal":
            out[1, 2] ^= 1
            out[3, 0] ^= 0x100
        else:
            nan = np.isnan(sf.from_bits(out, "fp32"))
            assert nan.any()
            i, j = np.argwhere(nan)[0]
            out[i, j] = 0x7FC00000
        return out
    recs = CU.check_units(device, arch, cases)
    normal, special = recs
    assert normal["mismatches"]["chain"] == 2
    assert [e[:2] for e in normal["examples"]["chain"]] == [[1, 2], [3, 0]]
    assert special["mismatches"]["chain"] == 0
    assert special["nan_payload_differences"]["chain"] == 1
    assert set(normal["mismatches"]) == {"chain", "promote32", "promote64"}   # 128 >= k: the chain
    CU.write_units_report(recs, {"arch": arch}, str(tmp_path))
    assert "First mismatches" in (tmp_path / "units.md").read_text()


def test_device_errors_are_recorded():
    cases = _small_cases("ampere")[:1]

    def broken(c):
        raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED")
    rec = CU.check_units(broken, "ampere", cases)[0]
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in rec["error"] and "mismatches" not in rec


# ---------------------------------------------------------------------------
# --what emulate: torch programs on the device against sf.emulate
# ---------------------------------------------------------------------------
def _tiny_programs():
    """Two small programs: a bf16 product rounded once, and a cast into e4m3 with
    a NaN and values beyond the range."""
    def scaled(T, dev, rng):
        x = CE._t(T, CE._emu_values(rng, (8, 16)), dev, T.bfloat16)
        return {"mul": x * 0.1, "sum": x.float().sum(0)}

    def cast(T, dev, rng):
        x = CE._t(T, CE._emu_values(rng, (64,), "special") * 100, dev)
        return {"e4m3": x.to(T.float8_e4m3fn)}
    return {"scaled": scaled, "cast": cast}


def test_emulate_device_of_a_gpu():
    assert CE.emulate_device_of("NVIDIA H100 PCIe", (9, 0)) == "h100_pcie"
    assert CE.emulate_device_of("NVIDIA H100 80GB HBM3", (9, 0)) == "h100_sxm"
    assert CE.emulate_device_of("NVIDIA GeForce RTX 4060", (8, 9)) == "rtx4060"
    assert CE.emulate_device_of("NVIDIA A100-SXM4-40GB", (8, 0)) == "a100"
    assert CE.emulate_device_of("Some Future GPU", (10, 0)) == "blackwell"
    assert CE.emulate_device_of("Some Old GPU", (3, 5)) is None
    for name in ("h100_pcie", "h100_sxm", "rtx4060", "a100", "h200", "l40s", "b200", "t4"):
        sf.emulate(name)                       # every name it gives is a device of the mode


def test_emulate_programs_per_architecture():
    full = CE.emulate_programs("hopper")
    assert {"gemm_float32", "gemm_tf32", "gemm_float16", "gemm_bfloat16", "scaled_mm_fp8",
            "elementwise_half", "cast_fp8", "mlp_bf16_forward_backward", "softmax"} == set(full)
    assert "scaled_mm_fp8" not in CE.emulate_programs("ampere")
    assert "gemm_bfloat16" not in CE.emulate_programs("volta")
    # one program on CPU: same inputs from the same seed, outputs of the stated dtypes
    out1 = full["cast_fp8"](torch, "cpu", np.random.default_rng(5))
    out2 = full["cast_fp8"](torch, "cpu", np.random.default_rng(5))
    assert out1["float32_to_float8_e5m2"].dtype == torch.float8_e5m2
    assert all(torch.equal(out1[k].view(torch.uint8) if out1[k].dtype.itemsize == 1
                           else out1[k].float().nan_to_num(7.0),
                           out2[k].view(torch.uint8) if out2[k].dtype.itemsize == 1
                           else out2[k].float().nan_to_num(7.0)) for k in out1)


def test_emulate_check_a_device_that_is_the_model(tmp_path):
    """A fake device computing exactly what the mode computes: 0 mismatches,
    status 0, the report files with the claim levels."""
    emu = CE.emulated_fn(torch, "h100")
    recs = CE.check_emulate(emu, emu, _tiny_programs())
    assert [r["program"] for r in recs] == ["scaled", "cast"]
    assert all(r["mismatches"] == 0 for r in recs) and CE.emulate_status(recs) == 0
    assert recs[0]["outputs"]["mul"]["outputs"] == 128
    assert recs[1]["report"]["totals"]["modelled"] + recs[1]["report"]["totals"]["proof"] >= 1
    CE.write_emulate_report(recs, {"device_name": "fake", "emulated": "h100"}, str(tmp_path))
    rep = json.loads((tmp_path / "emulate.json").read_text())
    assert rep["status"] == 0 and len(rep["programs"]) == 2
    md = (tmp_path / "emulate.md").read_text()
    assert "| scaled | mul | bfloat16 | 0 | 128 |" in md and "All outputs the same bits." in md


def test_emulate_check_locates_altered_outputs(tmp_path):
    """A device returning the model's outputs with two bits flipped in one output
    and a NaN with another payload in another: exactly those two mismatches, at
    those indices with both encodings; the NaN counted as a payload difference,
    not a mismatch; status 1."""
    emu = CE.emulated_fn(torch, "h100")

    def device(prog, seed):
        out, _ = emu(prog, seed)
        out = {k: v.clone() for k, v in out.items()}
        if "mul" in out:
            b = out["mul"].view(torch.int16).reshape(-1)
            b[3] ^= 1
            b[77] ^= 0x40
        if "e4m3" in out:
            u = out["e4m3"].view(torch.uint8)
            nan = (u & 0x7F) == 0x7F
            assert nan.any()
            u[nan.nonzero()[0]] ^= 0x80            # -NaN for +NaN: another NaN
        return out, None
    recs = CE.check_emulate(device, emu, _tiny_programs())
    mul = recs[0]["outputs"]["mul"]
    assert mul["mismatches"] == 2 and [e[0] for e in mul["examples"]] == [3, 77]
    exp_bits = emu(_tiny_programs()["scaled"], 0)[0]["mul"].view(torch.int16).reshape(-1)
    assert mul["examples"][0][2] == f"{int(exp_bits[3]) & 0xFFFF:#06x}"
    assert recs[0]["outputs"]["sum"]["mismatches"] == 0
    cast = recs[1]["outputs"]["e4m3"]
    assert cast["mismatches"] == 0 and cast["nan_payload_differences"] == 1
    assert CE.emulate_status(recs) == 1
    CE.write_emulate_report(recs, {"device_name": "fake"}, str(tmp_path))
    assert json.loads((tmp_path / "emulate.json").read_text())["status"] == 1


def test_emulate_check_records_errors():
    emu = CE.emulated_fn(torch, "h100")

    def refuses(prog, seed):
        raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED")

    def wrong_dtype(prog, seed):
        out, _ = emu(prog, seed)
        return {k: v.float() for k, v in out.items()}, None
    recs = CE.check_emulate(refuses, emu, _tiny_programs())
    assert all("CUBLAS_STATUS_NOT_SUPPORTED" in r["error"] for r in recs)
    assert CE.emulate_status(recs) == 0           # a refused program is no mismatch
    recs = CE.check_emulate(emu, refuses, _tiny_programs())
    assert CE.emulate_status(recs) == 1 and recs[0]["error"].startswith("emulate")
    recs = CE.check_emulate(wrong_dtype, emu, _tiny_programs())
    assert "error" in recs[0]["outputs"]["mul"] and CE.emulate_status(recs) == 1


def test_emulate_needs_cuda(tmp_path):
    assert CP.main(["--out", str(tmp_path / "o"), "--device", "cpu", "--what", "emulate"]) == 2
    assert CP.main(["--out", str(tmp_path / "o"), "--what", "orders,bogus"]) == 2
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_every_emulate_program_runs_under_the_mode(tmp_path):
    """Every program under sf.emulate("h100") on CPU tensors, twice: the mode
    runs them all and is deterministic."""
    emu = CE.emulated_fn(torch, "h100")
    recs = CE.check_emulate(emu, emu, CE.emulate_programs("hopper"))
    assert all("error" not in r for r in recs), [r.get("error") for r in recs]
    assert CE.emulate_status(recs) == 0
