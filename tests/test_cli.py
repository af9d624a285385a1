"""The command lines and reprs a newcomer meets first: bad arguments are one line
and exit status 2, a closed pipe ends quietly, --help shows the defaults, a
missing optional package names its extra, reprs show every option."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nn
from nn import experiments as E
from nn import report as R
from softfloat import demo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.mark.parametrize("argv, words", [
    (["--format", "fp99"], "unknown format 'fp99'"),
    (["--rounding", "sideways"], "unknown rounding mode 'sideways'"),
    (["--format", "e8m0"], "scale format"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["abc"], "invalid float value: 'abc'"),
])
def test_demo_bad_argument_is_one_line_and_status_2(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        raise SystemExit(demo.main(argv))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert err.startswith("python -m softfloat demo: error: ")


def test_demo_runs_and_help_shows_defaults(capsys):
    assert demo.main(["1.111", "--format", "bf16", "--rounding", "rtz"]) == 0
    out = capsys.readouterr().out
    # 1.111 toward zero in bf16: 0x3f8e = 1.109375 (the README's example, nearest even,
    # gives the same: 1.111 lies below the midpoint)
    assert "rounding: toward_zero" in out and "0x3f8e" in out and "1.109375" in out
    assert demo.main(["1.0009765625", "--rounding", "stochastic", "--seed", "3"]) == 0
    with pytest.raises(SystemExit):
        demo.main(["--help"])
    h = capsys.readouterr().out
    assert "(default: nearest_even)" in h and "(default: 0)" in h and "--format FMT" in h


def test_demo_into_a_closed_pipe_ends_quietly():
    """``demo | head -1``: more output than a pipe buffer, the reader gone after
    one line: exit status 0 and nothing on stderr."""
    values = [str(1.0 + k / 4096) for k in range(3000)]
    p = subprocess.Popen([sys.executable, "-m", "softfloat", "demo", *values], cwd=ROOT,
                         env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=120) == 0, err
    assert first.startswith(b"rounding: ") and err == b""


@pytest.mark.parametrize("argv, words", [
    (["--only", "99"], "no experiment numbered [99]"),
    (["--threads", "0"], "--threads"),
    (["--order", "random"], "invalid choice: 'random'"),
    (["--json", "/nonexistent-dir/x.json"], "cannot write"),
])
def test_experiments_bad_argument_is_one_line_and_status_2(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        E.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_experiments_help_lists_the_documented_options(capsys):
    with pytest.raises(SystemExit):
        E.main(["--help"])
    h = " ".join(capsys.readouterr().out.split())
    for opt in ("--quick", "--json", "--plots", "--only", "--order", "--threads"):
        assert opt in h
    assert "(default 1:" in h and "default: the fast bounded" in h


def _record(name, exp, **kw):
    r = {"name": name, "experiment": exp, "params_format": "fp32", "master_weights": False,
         "loss_scaling": "none", "accumulate": "fp32", "rounding": "nearest_even",
         "final_loss": 0.01, "final_accuracy": 0.97, "lost_update_fraction": 0.1,
         "underflow_fraction": 0.0, "skipped_steps": 0, "seconds": 1.5}
    r.update(kw)
    return r


def test_experiments_table_aligns_long_names_and_names_recipes(capsys):
    recs = [_record("fp32 baseline", 1),
            _record("a much longer run name than the table ever had, 48 chars", 2,
                    params_format="bf16", master_weights=True),
            _record("exp7 nvfp4, SR gradients", 7, recipe="nvfp4", fp8_gemm="fp32",
                    grad_rounding="stochastic"),
            _record("exp7 fp8 delayed, hopper fast acc", 7, recipe="fp8_delayed",
                    fp8_gemm="hopper_fp8_fast", grad_rounding="nearest_even")]
    E.print_table(recs)
    lines = capsys.readouterr().out.splitlines()
    head, rows = lines[0], lines[2:]
    # every column starts where its header does
    for col in ("weights", "accumulate", "loss", "sec"):
        starts = {head.index(col)}
        for row, cells in zip(rows, E.table_rows(recs)):
            cell = cells[E.TABLE_HEAD.index(col)]
            i = row.index(cell, head.index(col) - 2 if col in R._LEFT else 0)
            starts.add(i if col in R._LEFT else i + len(cell) - len(col))
        assert len(starts) == 1, (col, starts)
    assert "nvfp4" in rows[2] and "grad stochastic" in rows[2] and " False" not in rows[2]
    assert "hopper_fp8_fast" in rows[3]
    cells = E.table_rows(recs)
    assert cells[1][3] == "yes" and cells[0][3] == "-"


def test_accumulation_and_lost_update_plots(tmp_path):
    pytest.importorskip("matplotlib")
    recs = [dict(_record("fp32 baseline", 1), loss_curve=[1.0, 0.5], lost_update_curve=[0.1, 0.6]),
            dict(_record("fp16, no master", 2), loss_curve=[1.0, 0.6], lost_update_curve=[0.2, 1.0])]
    acc = [{"K": K, "inputs": d, "format": f, "accumulate": a,
            "relative_error": 1e-3, "relative_error_accumulator": e * K}
           for K in (256, 1024) for d in ("positive", "zero-mean") for f in ("fp16", "bf16")
           for a, e in (("fp32", 1e-9), ("fp32-blas", 5e-10), ("h100", 3e-9), (f, 1e-5))]
    paths = E.plots(recs, acc, {}, str(tmp_path))
    names = {os.path.basename(p) for p in paths}
    assert {"lost_updates.png", "accumulation_error.png"} <= names
    assert all(os.path.getsize(p) > 10000 for p in paths)


def test_precision_and_scaler_reprs_show_every_option():
    p = nn.Precision("fp16", accumulate="fp32", order="blas", master_weights=True,
                     loss_scaling="dynamic", loss_scale=2.0 ** 10,
                     scaler_options={"growth_interval": 100}, seed=3)
    r = repr(p)
    for part in ("params='fp16'", "order='blas'", "master_weights=True",
                 "loss_scaling='dynamic'", "loss_scale=1024.0",
                 "scaler_options={'growth_interval': 100}", "seed=3"):
        assert part in r
    q = eval(r, {"Precision": nn.Precision})
    assert repr(q) == r
    f = nn.Precision(recipe="fp8_delayed", amax_history_len=16, fp8_gemm="hopper_fp8_fast")
    assert "amax_history_len=16" in repr(f) and "fp8_gemm='hopper_fp8_fast'" in repr(f)
    assert repr(eval(repr(f), {"Precision": nn.Precision})) == repr(f)
    d = nn.DynamicLossScaler(2.0 ** 8, growth_interval=5, hysteresis=2)
    assert repr(d) == ("DynamicLossScaler(init_scale=256.0, growth_factor=2.0, "
                       "backoff_factor=0.5, growth_interval=5, hysteresis=2)")
    d.update(True)
    d.update(True)
    assert repr(d).endswith(": scale 128.0 after 2 steps, 2 skipped>")
    assert repr(nn.StaticLossScaler(2.0 ** 16)) == "StaticLossScaler(65536.0)"
    assert repr(nn.NoLossScaler()) == "NoLossScaler()"


def test_probe_plot_tree_takes_the_probe_result(tmp_path):
    pytest.importorskip("matplotlib")
    from softfloat import probe
    res = probe.probe_sum(lambda v: np.add.reduce(v), 8, "fp32")
    path = probe.plot_tree(res, str(tmp_path / "tree.png"))
    assert os.path.getsize(path) > 1000


# Optional packages made unimportable in a child process, as in a plain install
# (numpy and numba only).
_BLOCK = textwrap.dedent("""
    import sys, importlib.abc
    BLOCKED = {"ml_dtypes", "hypothesis", "matplotlib", "sklearn", "torch", "gmpy2",
               "softfloatpy", "dask", "distributed", "torchao", "gfloat", "scipy"}
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Block())
    """)


def test_plain_install_names_the_extra():
    code = _BLOCK + textwrap.dedent("""
        import io, contextlib, numpy as np
        import softfloat as sf
        from softfloat import probe
        from softfloat._extras import MissingExtra
        def raises(fn, extra):
            try:
                fn()
            except MissingExtra as e:
                assert f"[{extra}]" in str(e) and "pip install" in str(e), e
                return
            raise AssertionError(f"{fn} did not raise MissingExtra")
        raises(lambda: probe.numpy_dtype("bf16"), "test")
        raises(lambda: probe.plot_tree((0, 1), "t.png"), "plots")
        raises(lambda: probe.torch_adapter(None), "torch")
        raises(lambda: __import__("softfloat.strategies"), "test")
        assert probe.probe_sum(lambda v: np.add.reduce(v), 4, "fp16").n == 4
        from softfloat import demo
        with contextlib.redirect_stdout(io.StringIO()):
            assert demo.main([]) == 0
        from nn import experiments
        err = io.StringIO()
        for argv, extra in ((["--plots", "p", "--only", "1"], "plots"), (["--only", "1"], "data")):
            with contextlib.redirect_stderr(err):
                try:
                    experiments.main(argv)
                except SystemExit as e:
                    assert e.code == 2
            line = err.getvalue().splitlines()[-1]
            assert f"[{extra}]" in line and line.startswith("python -m nn.experiments: error"), line
        print("OK")
        """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("OK"), p.stdout + p.stderr


def test_warmup_warns_when_the_cache_is_not_persistent(monkeypatch, capsys):
    import io
    from softfloat import _jitcache, warmup
    monkeypatch.setattr(warmup, "tasks", lambda everything=False: [])
    out = io.StringIO()
    monkeypatch.setattr(_jitcache, "_tmpdir", [])
    assert warmup.run(out=out) == 0
    assert "warning" not in capsys.readouterr().err
    monkeypatch.setattr(_jitcache, "_tmpdir", ["/tmp/softfloat-jit-x"])
    assert warmup.run(out=out) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no writable cache directory" in err


def test_warmup_common_set_covers_the_documented_calls():
    """The common set has the tasks for what the README's tour, the examples and
    nn.experiments call beyond conversions and fp16/bf16 arithmetic (that they
    then compile nothing was measured with a fresh cache: see the benchmarks)."""
    from softfloat import warmup
    names = " | ".join(n for n, _ in warmup.tasks())
    for words in ("stochastic", "block-FMA presets", "MXFP8/MXFP4/NVFP4", "nn training"):
        assert words in names
    assert warmup.group_of("nn training steps (fp16, bf16, stochastic, fp8, MX, NVFP4)") == "nn"


# ---------------------------------------------------------------------------
# every command ends in one line and 0/1/2/130
def _cmd(args, env_extra=None, **kw):
    env = dict(ENV, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m"] + args, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, **kw)


@pytest.mark.parametrize("var", ["SOFTFLOAT_HW", "SOFTFLOAT_SWEEP_SIMD"])
def test_a_junk_switch_is_one_line_and_status_2(var):
    p = _cmd(["softfloat", "demo", "1.0"], {var: "maybe"})
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and var in p.stderr and "Traceback" not in p.stderr


def test_demo_refuses_a_negative_seed(capsys):
    assert demo.main(["1.1", "--rounding", "stochastic", "--seed", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--seed" in err


@pytest.mark.parametrize("loaded", ["_multiarray_umath", "llvmlite", None])
def test_ctrl_c_early_in_a_command_is_one_line_and_status_130(loaded):
    """SIGINT while the package imports numpy, while it imports numba/llvmlite, and
    half a second later (the interpreter's own start-up, before the package runs,
    is Python's: the signal is sent once a library shows in the process's maps)."""
    import signal
    import time
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("needs /proc")
    p = subprocess.Popen([sys.executable, "-m", "softfloat", "demo"], cwd=ROOT, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while time.time() - t0 < 120:
        try:
            with open(f"/proc/{p.pid}/maps") as fh:
                maps = fh.read()
        except OSError:
            break
        if ("_multiarray_umath" if loaded is None else loaded) in maps:
            break
        time.sleep(0.005)
    if loaded is None:
        time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=600)
    if p.returncode == 0 and "rounding:" in out:
        pytest.skip("the command finished before the signal")
    assert p.returncode == 130, err
    assert "Traceback" not in err and err.strip().count("\n") == 0 and "interrupted" in err


def test_demo_help_is_plain_text(capsys):
    with pytest.raises(SystemExit):
        demo.main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "`" not in out and "worked examples" in out


def test_experiments_advise_sequential_order_only_when_not_already_used():
    assert "rerun with --order sequential" in E.order_note("blas")
    assert "rerun" not in E.order_note("sequential")


def test_loss_curves_and_gradient_histogram_are_readable(tmp_path):
    # a grid, not a 5:1 strip; coinciding curves drawn with distinct dashes and
    # markers; the fp16 limits of the histogram named above the axes, not in it
    pytest.importorskip("matplotlib")
    import matplotlib.image as mpimg
    recs = [dict(_record(n, e), loss_curve=[1.0, 0.5, 0.25]) for n, e in
            (("fp32 baseline", 1), ("fp16, no master", 2), ("bf16, no master", 2),
             ("dynamic", 4), ("fp32 acc", 5), ("h100", 6))]
    g = np.exp2(np.random.default_rng(0).uniform(-30, 0, 5000))
    paths = E.plots(recs, [], {"fp32 baseline": (g, g * 0.01)}, str(tmp_path))
    for name in ("loss_curves.png", "grad_histogram.png"):
        h, w = mpimg.imread(os.path.join(tmp_path, name)).shape[:2]
        assert w / h < 2.6, (name, w, h)
    assert len(paths) >= 2


def test_warmup_common_set_asks_for_the_kernels_of_the_tour_and_verify(monkeypatch,
                                                                       fast_paths_on):
    """Every fp16/bf16 pass-1 kernel (format, op, mode) that the README tour's
    arithmetic and sf.array line and docs/verify.md's first call ask for is asked
    for by the common set too (spied, with a kernel that refuses: the calls then
    take the general kernels, and nothing new is compiled)."""
    import softfloat as sf
    from softfloat import warmup
    from softfloat._kernels import eft
    seen = set()

    def spy(params, op, mode):
        seen.add((tuple(params), int(op), int(mode)))
        return lambda lo, hi, *a: -1

    monkeypatch.setattr(eft, "kernel", spy)
    x = sf.array(np.linspace(0, 1, 5), "bf16")
    repr(np.sqrt(x * x + 1.0))
    a = sf.to_bits(np.array([1.0, 65504.0, 0.0]), "fp16")
    sf.add(a, a, "fp16"), sf.add(a, a, "fp16", "upward"), sf.fma(a, a, a, "fp16")
    warmup._verify()
    tour, seen = set(seen), set()
    for name, fn in warmup.tasks():
        if warmup.group_of(name) in ("arith", "verify"):
            fn()
    assert tour and tour <= seen, sorted(tour - seen)


def test_an_interrupt_dropped_in_a_ctypes_callback_is_delivered_again(monkeypatch):
    # numba compiles through llvmlite's ctypes callbacks, where a KeyboardInterrupt
    # is printed and dropped: the command's hook sends SIGINT again
    import time
    import types
    from softfloat import _cli_start
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    _cli_start.restore_sigint()
    assert sys.unraisablehook is _cli_start._unraisable
    with pytest.raises(KeyboardInterrupt):
        sys.unraisablehook(types.SimpleNamespace(exc_type=KeyboardInterrupt,
                                                 exc_value=KeyboardInterrupt(),
                                                 exc_traceback=None, err_msg=None,
                                                 object=None))
        time.sleep(5)
