"""examples/emulate_transformer.py: its fp8 and NVFP4 linear layers against float64
products on inputs that every step represents exactly (so any misplaced transpose,
scale or epilogue shows), the data, and its command line in quick mode."""
import json
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import emulate_transformer as ET  # noqa: E402


def _exact_operands(rng, shape, top, spread):
    """Values in {0, +-top * 2**-j, j < spread}, with +-top present: amax = top, and
    every value times a power-of-two scale is exact in e4m3 / e5m2 (1.75 * 2**e)."""
    v = top * np.exp2(-rng.integers(0, spread, shape)) * rng.choice([-1.0, 1.0], shape)
    v[rng.random(shape) < 0.2] = 0.0
    v.flat[0] = top
    return v


@pytest.mark.parametrize("model", ["hopper_fp8_fast", "hopper_fp8_promote128"])
def test_fp8_layer_forward_backward_exact(model):
    """x in {0, +-7, +-3.5}, w in {0, +-7} (scale 448 / 7 = 64), gradients in {0,
    +-0.875} (scale 57344 / 0.875 = 2**16): quantization is exact, and every sum
    fits in 13 bits of the products' units, within the 1 + 13 bits that fast
    accumulation keeps; so output, input, weight and bias gradients equal the
    float64 results."""
    rng = np.random.default_rng(0)
    T, fin, fout = 48, 64, 32
    x = _exact_operands(rng, (T, fin), 7.0, 2)
    w = _exact_operands(rng, (fout, fin), 7.0, 1)
    b = rng.integers(-4, 5, fout).astype(np.float64)
    g = _exact_operands(rng, (T, fout), 0.875, 1)
    log = ET.GemmLog()
    fn = ET.make_lowp_linear("fp8", log, model=model)
    tx = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    tw = torch.tensor(w, dtype=torch.float32, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float32, requires_grad=True)
    y = fn(tx, tw, tb)
    assert y.dtype == torch.float32
    np.testing.assert_array_equal(y.detach().numpy(), x @ w.T + b)
    y.backward(torch.tensor(g, dtype=torch.float32))
    np.testing.assert_array_equal(tx.grad.numpy(), g @ w)
    np.testing.assert_array_equal(tw.grad.numpy(), g.T @ x)
    np.testing.assert_array_equal(tb.grad.numpy(), g.sum(0))
    assert {k.split(":")[0]: v[0] for k, v in log.calls.items()} == \
        {"fprop": 1, "dgrad": 1, "wgrad": 1}
    assert log.calls[f"wgrad: fp8_e5m2 x fp8_e4m3, {model}"][1] == T * fin * fout


def test_nvfp4_layer_forward_backward():
    """e2m1 values with a 6 in every 16-block along each GEMM's K: block scales and
    elements exact, the per-tensor scale 6 / 2688 rounded to fp32 (its rounding the
    only error), gradients likewise (stochastic rounding of exact values changes
    nothing): the results within a few fp32 ulps of the float64 products, 3-D input
    shape kept, the output in the input's dtype."""
    rng = np.random.default_rng(1)
    e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])

    def ops(shape):
        v = rng.choice(e2m1, shape) * rng.choice([-1.0, 1.0], shape)
        v[..., ::16] = 6.0                 # a 6 in every 16-block along the last axis
        v[::16, ...] = 6.0                 # and along the first
        return v
    B, T, fin, fout = 2, 16, 32, 48
    x = ops((B * T, fin))
    w = ops((fout, fin))
    g = ops((B * T, fout))
    fn = ET.make_lowp_linear("nvfp4", ET.GemmLog(), seed=3)
    tx = torch.tensor(x.reshape(B, T, fin), dtype=torch.float32, requires_grad=True)
    tw = torch.tensor(w, dtype=torch.float32, requires_grad=True)
    y = fn(tx, tw, None)
    assert y.shape == (B, T, fout)
    np.testing.assert_allclose(y.detach().numpy().reshape(-1, fout), x @ w.T, rtol=1e-6, atol=1e-4)
    y.backward(torch.tensor(g.reshape(B, T, fout), dtype=torch.float32))
    np.testing.assert_allclose(tx.grad.numpy().reshape(-1, fin), g @ w, rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(tw.grad.numpy(), g.T @ x, rtol=1e-6, atol=1e-4)
    assert tx.grad.shape == tx.shape


def test_fast_accumulation_loses_what_promotion_keeps():
    """The study's mechanism on a weight gradient's long K (T = 2048 same-sign
    products): fast accumulation's error is many times promotion's."""
    rng = np.random.default_rng(2)
    a, b = rng.random((8, 2048)).astype(np.float32), rng.random((2048, 8)).astype(np.float32)
    errs = {}
    for mdl in ("hopper_fp8_fast", "hopper_fp8_promote128"):
        log = ET.GemmLog()
        log.probe = True
        ET._fp8_gemm(a, "fp8_e5m2", b, "fp8_e4m3", mdl, log, "wgrad")
        errs[mdl] = log.errors["wgrad"]["accumulation"][0]
    assert errs["hopper_fp8_fast"] > 10 * errs["hopper_fp8_promote128"] > 0


def test_corpus_and_model():
    c = ET.load_corpus()
    assert 100_000 < len(c.train) + len(c.val) < 400_000 and 60 <= c.vocab <= 100
    x, y = c.batch(np.random.default_rng(0), "train", 3, 16)
    assert x.shape == y.shape == (3, 16) and torch.equal(x[:, 1:], y[:, :-1])
    with pytest.raises(ValueError):
        ET.Corpus("short")
    m = ET.build_model(c.vocab, 16, 2, 1, 16, seed=0)
    assert m(x).shape == (3, 16, c.vocab)


def test_quick_cli(tmp_path):
    out = tmp_path / "o"
    assert ET.main(["--quick", "--steps", "3", "--runs", "fp32,fp8_promote_h100",
                    "--out", str(out), "--no-plot"]) == 0
    rec = json.loads((out / "emulate_transformer.json").read_text())
    runs = {r["name"]: r for r in rec["runs"]}
    assert set(runs) == {"fp32", "fp8_promote_h100"}
    f32, f8 = runs["fp32"], runs["fp8_promote_h100"]
    assert len(f32["losses"]) == len(f8["losses"]) == 3
    # one initialisation, one batch: the first losses near ln(vocab), close to each other
    assert abs(f32["losses"][0] - np.log(94)) < 0.5
    assert abs(f32["losses"][0] - f8["losses"][0]) < 0.05
    assert f32["modelled_gemms"] == {}
    calls = {k.split(":")[0]: v["calls"] for k, v in f8["modelled_gemms"].items()}
    # 4 linears per block, 1 block; 3 training steps and 1 validation batch per evaluation
    assert calls == {"fprop": 4 * (3 + 1), "dgrad": 4 * 3, "wgrad": 4 * 3}
    assert set(f8["gemm_errors_last_step"]) == {"fprop", "dgrad", "wgrad"}
    assert ET.main(["--runs", "fp64", "--out", str(out)]) == 2
    assert ET.main(["--quick", "--data", str(tmp_path / "missing.txt"), "--out", str(out)]) == 2
    assert ET.main(["--quick", "--steps", "0", "--out", str(out)]) == 2


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    recs = [{"name": n, "losses": [4.0, 3.5, None if n == "nvfp4_b200" else 3.0],
             "validation": [[2, 3.6 + i / 10]]} for i, n in enumerate(ET.RUNS)]
    path = tmp_path / "p.png"
    ET.plot(recs, str(path), 3)
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize("fast", [True, False])
def test_fp8_layer_is_scaled_mm_under_the_mode(fast):
    """The layer's forward GEMM (softfloat.mx_gemm and its own epilogue) gives the
    bits of torch._scaled_mm under sf.emulate("h100") on the same codes and
    inverse scales (softfloat.cublas): K = 512 crosses the promotion interval."""
    import softfloat as sf
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((16, 512)) * np.exp2(rng.integers(-6, 6, (16, 512)))).astype(
        np.float32)
    w = rng.standard_normal((32, 512)).astype(np.float32)
    model = "hopper_fp8_fast" if fast else "hopper_fp8_promote128"
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = ET.make_lowp_linear("fp8", ET.GemmLog(), model=model)(
            torch.from_numpy(x), torch.from_numpy(w), None)
    assert y.dtype == torch.bfloat16
    qx, sx = ET.fp8_scaling.quantize_per_tensor(x, "fp8_e4m3")
    qw, sw = ET.fp8_scaling.quantize_per_tensor(w, "fp8_e4m3")
    inv = [torch.tensor(np.float32(1) / np.float32(s)) for s in (sx, sw)]
    a = torch.from_numpy(qx).view(torch.float8_e4m3fn)
    b = torch.from_numpy(qw).view(torch.float8_e4m3fn).t()
    with sf.emulate("h100") as run:
        ref = torch._scaled_mm(a, b, inv[0], inv[1], out_dtype=torch.bfloat16,
                               use_fast_accum=fast)
    assert run.report().calls("aten._scaled_mm") == 1
    assert torch.equal(y.view(torch.int16), ref.view(torch.int16))


def test_benchmark_refuses_bad_arguments(capsys):
    """benchmarks/bench_emulate.py: a bad argument or device is one line, status 2."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import bench_emulate as BE
    assert BE.main(["--threads", "0"]) == 2
    assert BE.main(["--device", "no_such_gpu", "--no-first-call"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)
