"""examples/deepseek_fp8.py: DeepSeek-V3's fp8 accumulation error on the Hopper wgmma
model. A small case of its numbers against MMA-Sim's Hopper WGMMA (the optional
``mmasim`` test extra), its command line, and (slow) the figures quoted in
examples/README.md."""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import softfloat as sf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import deepseek_fp8 as ds  # noqa: E402

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        from mmasim.nv_ptx import WGMMA
    HAVE_MMASIM = True
except Exception:
    HAVE_MMASIM = False


@pytest.mark.skipif(not HAVE_MMASIM, reason="mmasim (test extra) not importable")
@pytest.mark.parametrize("dist", ds.DISTS)
def test_small_case_against_mmasim(dist):
    """K = 512, 8 x 8 outputs: the example's errors are those of MMA-Sim's results
    (its WGMMA over the whole K; and per 128-interval from 0, float32 additions)."""
    A, B = ds.operands(dist, 8, 512, 8, seed=3)
    op = WGMMA("Hopper", "m64n8k32.f32.e4m3.e4m3")
    ta = torch.from_numpy(A).view(torch.float8_e4m3fn)
    tb = torch.from_numpy(B).view(torch.float8_e4m3fn)
    fast = op(ta, tb, torch.zeros(8, 8)).double().numpy()
    acc = torch.zeros(8, 8)
    for k0 in range(0, 512, 128):
        acc = acc + op(ta[:, k0:k0 + 128], tb[k0:k0 + 128], torch.zeros(8, 8))
    prom = acc.double().numpy()
    exact = sf.from_bits(A, "fp8_e4m3") @ sf.from_bits(B, "fp8_e4m3")
    for model, theirs in (("hopper_fp8_fast", fast), ("hopper_fp8_promote128", prom)):
        ours = ds.errors(A, B, model)
        nz = exact != 0
        rel = np.abs(theirs - exact)[nz] / np.abs(exact[nz])
        assert ours["norm"] == np.linalg.norm(theirs - exact) / np.linalg.norm(exact)
        assert ours["max"] == rel.max() and ours["median"] == np.median(rel)


def test_promotion_helps_and_the_cli(tmp_path):
    out = tmp_path / "o"
    assert ds.main(["--out", str(out), "--k", "256", "--m", "4", "--n", "4", "--no-plot"]) == 0
    rec = json.loads((out / "deepseek_fp8.json").read_text())
    e = rec["errors"]
    for dist in ("uniform", "lognormal"):        # same-sign sums: promotion wins
        assert e[dist]["hopper_fp8_promote128"]["norm"] < e[dist]["hopper_fp8_fast"]["norm"]
    assert rec["ks"] == [128, 256]
    assert ds.main(["--out", str(out), "--k", "100"]) == 2
    assert ds.main(["--out", str(out), "--m", "0"]) == 2


@pytest.mark.slow
def test_quoted_figures():
    """The figures examples/README.md quotes (K = 4096, 64 x 64 outputs, seed 0), to
    the digits shown."""
    table, _, _ = ds.study(4096, 64, 64, 0, ks=[4096])
    want = {("uniform", "hopper_fp8_fast"): (7.5e-2, 7.8e-2),
            ("uniform", "hopper_fp8_promote128"): (5.5e-4, 6.5e-4),
            ("normal", "hopper_fp8_fast"): (1.3e-3, None),
            ("normal", "hopper_fp8_promote128"): (1.3e-4, None),
            ("lognormal", "hopper_fp8_fast"): (7.0e-2, 8.8e-2),
            ("lognormal", "hopper_fp8_promote128"): (7.6e-4, 1.9e-3)}
    for (dist, model), (norm, mx) in want.items():
        e = table[dist][model]
        assert float(f"{e['norm']:.1e}") == norm, (dist, model, e)
        if mx is not None:
            assert float(f"{e['max']:.1e}") == mx, (dist, model, e)
