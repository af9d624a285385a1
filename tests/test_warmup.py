"""`python -m softfloat warmup` as a process: bad --jobs, one progress sequence
for several processes, SIGTERM and Ctrl-C stop the worker processes with one
line, tasks of a missing optional extra are skipped with a note."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from procs import alive, children

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warmup(args, **kw):
    return subprocess.run([sys.executable, "-m", "softfloat", "warmup"] + args, cwd=ROOT,
                          capture_output=True, text=True, timeout=3600,
                          env=dict(os.environ, PYTHONPATH=ROOT), **kw)


@pytest.mark.parametrize("args,says", [
    (["--jobs", "0"], "--jobs must be a positive integer"),
    (["--jobs", "-3"], "--jobs must be a positive integer"),
    (["--jobs", "two"], "--jobs must be a positive integer"),
    (["--part", "2/2"], "--part must be i/n"),
    (["--nonsense"], "unrecognized arguments")])
def test_bad_arguments_are_one_line_status_2(args, says, capsys):
    from softfloat import warmup
    assert warmup.main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines


@pytest.mark.slow
def test_bad_jobs_from_the_command_line():
    p = _warmup(["--jobs", "0"])
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


@pytest.mark.slow
def test_jobs_2_prints_one_coherent_progress_sequence():
    p = _warmup(["--jobs", "2", "--times"])
    assert p.returncode == 0, p.stderr
    from softfloat import warmup
    n = len(warmup.tasks())
    counts = re.findall(r"^\[\s*(\d+)/(\d+)\]", p.stderr, re.M)
    assert {int(t) for _, t in counts} == {n}            # one task count, the whole set
    assert [int(k) for k, _ in counts] == list(range(1, n + 1))
    assert "2 processes done" in p.stderr and "FAILED" not in p.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM,
                                 pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_a_signal_stops_the_worker_processes(tmp_path, sig):
    # an empty cache: the children compile for minutes unless stopped
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.Popen([sys.executable, "-m", "softfloat", "warmup", "--all", "--jobs", "2"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.time() + 120
    kids = []
    while time.time() < deadline and len(kids) < 2:
        time.sleep(0.3)
        kids = children(p.pid)
        assert p.poll() is None, p.communicate()
    assert len(kids) == 2
    time.sleep(1.0)
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    deadline = time.time() + 20
    while time.time() < deadline and any(alive(k) for k in kids):
        time.sleep(0.2)
    left = [k for k in kids if alive(k)]
    for k in left:
        os.kill(k, signal.SIGKILL)
    assert not left, "warmup's worker processes outlived it"


def test_a_task_of_a_missing_extra_is_skipped_with_a_note(monkeypatch):
    from softfloat import warmup

    def needs_extra():
        raise ModuleNotFoundError("No module named 'ml_dtypes'", name="ml_dtypes")
    monkeypatch.setattr(warmup, "tasks", lambda everything=False: [
        ("needs an extra", needs_extra), ("fine", lambda: None)])
    import io
    out = io.StringIO()
    assert warmup.run(out=out) == 0
    text = out.getvalue()
    assert "[1/2] needs an extra" in text and "skipped (needs an optional extra" in text
    assert "1 skipped (optional extras missing)" in text and "FAILED" not in text


@pytest.mark.slow
def test_warmup_all_in_a_plain_install(tmp_path):
    """`warmup --all` with the optional extras unimportable (numpy and numba only):
    status 0, no task failed (tasks of a missing extra are skipped with a note)."""
    from test_sweep_cli import BLOCKER
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    p = subprocess.run([sys.executable, "-m", "softfloat", "warmup", "--all"], cwd=ROOT,
                       capture_output=True, text=True, timeout=3600,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT])))
    assert p.returncode == 0, p.stderr
    assert "FAILED" not in p.stderr and "Traceback" not in p.stderr
