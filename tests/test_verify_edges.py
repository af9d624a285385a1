"""softfloat.verify at its edges: implementations that write into their operands,
absurd shard counts, signals while an SFV1 program is stuck, corrupt or odd
inputs of the command line, programs that write more than they were asked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import softfloat as sf
from softfloat.verification import ImplError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable


def cli(*args, capsys):
    from softfloat.verification.cli import main
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def program(tmp_path, body, name="prog.py"):
    p = tmp_path / name
    p.write_text("import os, struct, sys, time\n" + textwrap.dedent(body))
    return f"exec:{PY} {p}"


def _one_line_error(rc, err, status=2):
    assert rc == status, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# ---------------------------------------------------------------------------
def test_implementation_computing_in_place_on_its_operands():
    def in_place(a, b):
        x = a.view(np.float16)
        with np.errstate(all="ignore"):
            np.add(x, b.view(np.float16), out=x)
        return a
    rep = sf.verify(in_place, "add", "fp16", space=20000, check_nan=False, diagnose=False)
    assert rep.cases == 20000 and rep.ok, rep.summary()
    # the operands of a tuple space are the caller's arrays: left as they were
    a = np.arange(0x3c00, 0x3c00 + 500, dtype=np.uint16)
    b = np.full(500, 0x3c00, np.uint16)
    keep = a.copy()
    rep = sf.verify(in_place, "add", "fp16", space=(a, b), diagnose=False)
    assert rep.ok and (a == keep).all()


def test_more_shards_than_cases_is_refused_at_once():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="shards is more than the 4,096 cases"):
        sf.verify(lambda a, b: a, "add", "fp16", space=4096, shards=10**9)
    assert time.perf_counter() - t0 < 5


def test_corrupt_npz_and_infinite_timeout_exit_2(tmp_path, capsys):
    bad = tmp_path / "res.npz"
    bad.write_bytes(b"PK\x03\x04 this is not a zip archive")
    rc, _, err = cli("fp16", "sqrt", "--results", str(bad), "--quiet", capsys=capsys)
    _one_line_error(rc, err)
    assert "res.npz" in err
    bad.write_bytes(b"")
    rc, _, err = cli("fp16", "sqrt", "--results", str(bad), "--quiet", capsys=capsys)
    _one_line_error(rc, err)
    rc, _, err = cli("fp16", "add", "--impl", f"exec:{PY} -c pass", "--timeout", "inf",
                     "--space", "10", capsys=capsys)
    _one_line_error(rc, err)
    assert "timeout" in err
    with pytest.raises(ValueError, match="timeout"):
        sf.verification.exec_impl("true", timeout=float("nan"))


def test_json_to_stdout_is_json_only(tmp_path, capsys):
    r = sf.sqrt(np.arange(1 << 16, dtype=np.uint16), "fp16")
    np.save(tmp_path / "r.npy", r)
    rc, out, err = cli("fp16", "sqrt", "--results", str(tmp_path / "r.npy"), "--json", "-",
                       "--quiet", capsys=capsys)
    assert rc == 0, err
    d = json.loads(out)
    assert d["cases"] == 65536 and d["ok"] is True
    assert "65,536 cases, 0 mismatches" in err


_ECHO = """
    sys.stdin.buffer.readline()
    sys.stdout.buffer.write(b"OK\\n"); sys.stdout.flush()
    k = 0
    while True:
        n, = struct.unpack("<I", sys.stdin.buffer.read(4))
        if n == 0:
            {at_end}
            sys.stdout.flush()
            sys.exit(0)
        data = sys.stdin.buffer.read(n * 2)
        extra = {extra}
        sys.stdout.buffer.write(data + bytes([0xFF] * n) + extra); sys.stdout.flush()
        k += 1
"""


def test_program_writing_extra_bytes_at_the_end(tmp_path):
    prog = program(tmp_path, _ECHO.format(at_end='sys.stdout.buffer.write(b"bye\\n")',
                                          extra='b""'))
    with pytest.raises(ImplError, match="4 bytes after the end of the stream"):
        sf.verify(prog, "sqrt", "fp16", space=20, diagnose=False)


def test_program_writing_extra_bytes_after_a_batch(tmp_path):
    prog = program(tmp_path, _ECHO.format(at_end="pass", extra='b"\\0\\0\\0" if k == 1 else b""'))
    with pytest.raises(ImplError, match=r"3 bytes more than the 7 answers .* batch of 7 "
                                        r"cases \(case 7\)"):
        sf.verify(sf.verification.exec_impl(prog[5:], batch=7), "sqrt", "fp16", space=30,
                  diagnose=False)


def test_help_texts_of_every_option(capsys):
    from softfloat.verification.cli import _parser
    p = _parser()
    for a in p._actions:
        if a.option_strings and a.dest != "help" and a.help is not argparse_suppress():
            assert a.help, a.option_strings


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


# ---------------------------------------------------------------------------
# signals: the stuck program is killed, the command exits 130 at once
_STUCK = """
    open({pidfile!r}, "w").write(str(os.getpid()))
    sys.stdin.buffer.readline()
    sys.stdout.buffer.write(b"OK\\n"); sys.stdout.flush()
    n, = struct.unpack("<I", sys.stdin.buffer.read(4))
    open({pidfile!r} + ".stuck", "w").write("1")
    time.sleep(120)
"""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_the_program_is_stuck(tmp_path, sig):
    pidfile = str(tmp_path / "prog.pid")
    prog = program(tmp_path, _STUCK.format(pidfile=pidfile))
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.Popen([PY, "-m", "softfloat", "verify", "fp16", "add", "--impl", prog,
                          "--space", "10", "--timeout", "100", "--quiet"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not os.path.exists(pidfile + ".stuck"):
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()
            time.sleep(0.1)
        child = int(open(pidfile).read())
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
    try:
        assert p.returncode == 130, err
        assert took < 10, took
        err = err.decode()
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        for _ in range(50):
            if not _alive(child):
                break
            time.sleep(0.1)
        assert not _alive(child)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def test_progress_is_shown_by_default_on_long_runs(monkeypatch, capsys):
    from softfloat.sweep import backends
    impl = lambda a, b: sf.add(a, b, "fp16", return_flags=True)     # noqa: E731
    sf.verify(impl, "add", "fp16", space=3000, progress=False)       # compiled, warm
    sf.verify(impl, "add", "fp16", space=3000, shards=3)
    assert capsys.readouterr().err == ""          # short run, not a terminal: silent
    monkeypatch.setattr(backends, "AUTO_AFTER", 0.0)
    sf.verify(impl, "add", "fp16", space=3000)
    err = capsys.readouterr().err
    assert "verify add fp16 nearest_even" in err and err.count("3,000/3,000") == 1
    sf.verify(impl, "add", "fp16", space=3000, shards=3, progress=False)
    assert capsys.readouterr().err == ""
