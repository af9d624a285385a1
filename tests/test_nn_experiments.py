"""The experiments reproduce each effect (short runs here; the full --quick run is
marked slow): lost updates and a worse loss without master weights, stochastic
rounding closing most of the gap, underflow and a worse loss without loss
scaling, larger errors and a higher loss floor with low-precision accumulation."""
import json

import pytest

pytest.importorskip("sklearn")

from nn.experiments import RunConfig, accumulation_error, main, run  # noqa: E402

REQUIRED = {"name", "params_format", "master_weights", "loss_scaling", "accumulate",
            "rounding", "final_loss", "final_accuracy", "lost_update_fraction",
            "underflow_fraction", "skipped_steps", "seconds"}


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # the library's chunk pool (no kernel uses numba's own threads)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOFTFLOAT_NUM_THREADS", "1")
        yield


def test_master_weights_and_stochastic_rounding():
    kw = dict(optimizer="adam", lr=1e-4, epochs=4)
    r = {name: run(RunConfig(name, 2, **cfg, **kw)) for name, cfg in {
        "fp32": {},
        "bf16": {"params": "bf16"},
        "bf16 master": {"params": "bf16", "master_weights": True},
        "bf16 sr": {"params": "bf16", "update_rounding": "stochastic"},
    }.items()}
    for rec in r.values():
        assert REQUIRED <= rec.keys()
    assert r["bf16"]["lost_update_fraction"] > 0.8
    assert r["bf16 master"]["lost_update_fraction"] < 0.01
    gap = r["bf16"]["final_loss"] - r["fp32"]["final_loss"]
    assert gap > 0.05                                       # no master copy: worse
    assert abs(r["bf16 master"]["final_loss"] - r["fp32"]["final_loss"]) < 0.1 * gap
    assert r["bf16 sr"]["final_loss"] - r["fp32"]["final_loss"] < 0.5 * gap   # SR closes it
    assert r["bf16"]["rounding"] == "nearest_even" and r["bf16 sr"]["rounding"] == "stochastic"


def test_loss_scaling_prevents_underflow():
    small = dict(params="fp16", master_weights=True, lr=0.05, epochs=2, loss_factor=2.0 ** -20)
    none = run(RunConfig("none", 4, **small))
    static = run(RunConfig("static", 4, loss_scaling="static", loss_scale=2.0 ** 16, **small))
    dyn = run(RunConfig("dynamic", 4, loss_scaling="dynamic", loss_scale=2.0 ** 40,
                        scaler_options={"growth_interval": 20}, **small))
    assert none["underflow_fraction"] > 0.9
    assert static["underflow_fraction"] < 0.05
    assert none["final_loss"] > static["final_loss"] + 0.2
    assert dyn["skipped_steps"] >= 3                         # calibrating down from 2^40
    assert dyn["scale_history"][0] == 2.0 ** 40 and min(dyn["scale_history"]) < 2.0 ** 40
    assert dyn["final_loss"] < none["final_loss"] - 0.2


def test_low_precision_accumulation_is_worse():
    rows = accumulation_error(quick=True)
    by = {(r["K"], r["inputs"], r["format"], r["accumulate"]): r["relative_error"] for r in rows}
    for fmt in ("fp16", "bf16"):
        assert by[(1024, "positive", fmt, fmt)] > 5 * by[(1024, "positive", fmt, "fp32")]
        assert by[(1024, "positive", fmt, fmt)] > by[(256, "positive", fmt, fmt)]
    reg = dict(task="regress", optimizer="adam", lr=1e-4, epochs=1, hidden=())
    f32 = run(RunConfig("fp32 acc", 5, params="bf16", master_weights=True, **reg))
    f16 = run(RunConfig("bf16 acc", 5, params="bf16", master_weights=True, accumulate="bf16",
                        **reg))
    assert f16["relative_floor_loss"] > 10 * f32["relative_floor_loss"]
    assert f16["final_loss"] > f32["final_loss"]
    assert f16["final_accuracy"] is None


@pytest.mark.slow
def test_quick_command_writes_json_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    out = main(["--quick", "--json", str(tmp_path / "runs.json"), "--plots", str(tmp_path)])
    recs = json.loads((tmp_path / "runs.json").read_text())
    assert isinstance(recs, list) and len(recs) >= 20
    assert all(REQUIRED <= r.keys() for r in recs)
    for png in ("loss_curves.png", "grad_histogram.png", "loss_scale.png",
                "accumulation_error.png", "lost_updates.png"):
        assert (tmp_path / png).stat().st_size > 1000
    by = {r["name"]: r for r in recs}
    # baselines converge with an ordinary schedule
    assert by["fp32 baseline"]["final_accuracy"] >= 0.95
    assert by["Adam fp32"]["final_accuracy"] >= 0.95
    # lost updates arise late, and cost bf16 without a master copy
    nm, m = by["bf16, no master"], by["bf16 + fp32 master"]
    assert nm["lost_update_curve"][-1] > 0.9 > nm["lost_update_curve"][0]
    assert nm["final_loss"] > 1.2 * m["final_loss"]
    assert by["bf16, no master, SR update"]["final_loss"] < 1.1 * m["final_loss"]
    # natural underflow: present without scaling, mostly gone with the default scaler,
    # which grows once after 2000 clean steps
    ns, dyn = by["fp16 long, no scaling"], by["fp16 long, dynamic (torch default)"]
    assert ns["underflow_fraction"] > 5 * dyn["underflow_fraction"] > 0
    h = dyn["scale_history"]
    assert h[0] == 2.0 ** 16 and h[1999] == 2.0 ** 16 and h[2000] == 2.0 ** 17
    assert by["fp32 baseline"]["gradient_magnitudes"]["weight"]["below_2^-24"] > 0.005
    # the labelled scaled-loss case
    assert by["fp16 small loss, no scaling"]["underflow_fraction"] > 0.9
    # tensor cores train like IEEE fp32 accumulation here
    seq, tc = by["fp16 + master, fp32 sequential"], by["fp16 + master, h100 tensor core"]
    assert tc["accumulate"] == "h100" and abs(tc["final_loss"] - seq["final_loss"]) < \
        0.1 * seq["final_loss"]
    assert out["order"] == "blas" and by["fp32 baseline"]["order"] == "blas"


def test_schedule_and_tensor_core_run():
    from nn.experiments import _lr_factor
    cfg = RunConfig("x", 1, schedule="cosine", warmup_epochs=1, epochs=3)
    f = [_lr_factor(cfg, s, 10, 30) for s in range(30)]
    assert f[0] == 0.1 and f[9] == 1.0 and f[10] == 1.0
    assert all(a >= b for a, b in zip(f[10:], f[11:])) and f[-1] < 0.01
    assert _lr_factor(RunConfig("y", 1), 5, 10, 30) == 1.0
    kw = dict(params="fp16", master_weights=True, epochs=1, lr=0.1, momentum=0.9)
    seq = run(RunConfig("seq", 6, order="sequential", **kw))
    tc = run(RunConfig("tc", 6, accumulate="h100", **kw))
    assert seq["order"] == "sequential" and tc["accumulate"] == "h100" and tc["order"] is None
    assert abs(tc["final_loss"] - seq["final_loss"]) < 0.05 * seq["final_loss"]


def test_bad_command_lines_exit_2_before_running(tmp_path, capsys):
    """An unknown experiment number or an unwritable --json path
    stops the command at once with status 2 and a message."""
    for argv in (["--only", "9"], ["--only"],
                 ["--only", "1", "--json", str(tmp_path / "no" / "such" / "dir.json")]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert "no experiment numbered [9]" in err and "cannot write" in err
