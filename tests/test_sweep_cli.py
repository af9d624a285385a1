"""The sweep command's edges: sizes checked against the space they divide, a Dask
scheduler that is silent or speaks another protocol, reports that lack keys,
the default output directory, the committed results table, optional extras
missing, --help and closed pipes."""
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from softfloat import sweep as S
from softfloat.sweep import engine as E

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _one_line_error(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------------
# sizes: a sample, a shard count against the space
def test_shards_are_sized_to_the_sample(tmp_path):
    assert S.default_shards("fma", "fp16") == 1 << 24
    assert S.default_shards("fma", "fp16", sample=10) == 1
    assert S.default_shards("fma", "fp16", sample=(1 << 24) + 1) == 2
    assert S.default_shards("add", "fp16", sample=1 << 40) == 256     # never above the default
    rep = S.run_sweep("fma", "fp8_e4m3", sample=10, out=str(tmp_path))
    assert rep["shards"] == 1 and rep["cases"] == 10
    files = os.listdir(tmp_path / "fma_fp8_e4m3_nearest_even.shards")
    assert files == ["shard_00000.json"]
    assert len(S.shard_cases(0, "fma", "fp8_e4m3", sample=10)[0]) == 10


@pytest.mark.parametrize("args,says", [
    (["fp8_e4m3", "sqrt", "--shards", "1000"], "more than the 256 cases"),
    (["fp8_e4m3", "add", "--sample", "100", "--shards", "101"], "more than the sample"),
    (["fp8_e4m3", "sqrt", "--sample", "257"], "larger than the space"),
    (["fp8_e4m3", "add", "--jobs", "x"], "--jobs must be a positive integer"),
    (["fp8_e4m3", "add", "--timeout", "nan"], "--timeout must be a positive number"),
    (["fp8_e4m3", "add", "--mpfr", "-1"], "--mpfr must be a non-negative integer"),
    (["fp8_e4m3", "add", "--resume"], "--resume needs --out"),
    (["fp8_e4m3"], "give a format and an op"),
])
def test_sizes_and_bad_arguments_are_one_line_status_2(args, says, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(E, "run_shard", lambda *a, **k: pytest.fail("work started"))
    assert S.main(args + ["--quiet"]) == 2
    assert says in _one_line_error(capsys.readouterr().err)
    assert os.listdir(tmp_path) == []                  # nothing written


def test_api_checks_sizes_too():
    with pytest.raises(ValueError, match="more than the 256 cases"):
        S.run_sweep("sqrt", "fp8_e4m3", shards=257)
    with pytest.raises(ValueError, match="larger than the space"):
        S.run_sweep("sqrt", "fp8_e4m3", sample=300)
    with pytest.raises(ValueError, match="timeout"):
        S.run_sweep("sqrt", "fp8_e4m3", timeout=0)


# ---------------------------------------------------------------------------
# a Dask scheduler that accepts and stays silent, or answers HTTP
def _server(answer):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            conns.append(c)
            if answer:
                try:
                    c.sendall(answer)
                except OSError:
                    pass
    threading.Thread(target=serve, daemon=True).start()
    return srv, conns


@pytest.mark.parametrize("answer,says", [
    (b"", "no complete handshake within 1 s"),
    (b"\x10" + b"\0" * 7, "no complete handshake within 1 s"),     # a plausible start, then silence
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "answers in HTTP"),
    (b"\x00" * 8, "answers in another protocol")])
def test_a_scheduler_that_does_not_answer_is_status_2(answer, says, capsys):
    pytest.importorskip("distributed")
    srv, conns = _server(answer)
    try:
        port = srv.getsockname()[1]
        rc = S.main(["fp16", "fma", "--c", "0x3c00", "--a", "0x3c00", "--backend", "dask",
                     "--scheduler", f"tcp://127.0.0.1:{port}", "--timeout", "1", "--out", "",
                     "--quiet"])
    finally:
        srv.close()
        for c in conns:
            c.close()
    assert rc == 2
    assert says in _one_line_error(capsys.readouterr().err)


def test_a_refused_connection_and_a_bad_address_are_clear():
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(RuntimeError, match="cannot connect"):
        S.probe_scheduler(f"tcp://127.0.0.1:{port}", 2)
    with pytest.raises(ValueError, match="expected tcp://HOST:PORT"):
        S.probe_scheduler("tcp://127.0.0.1", 2)


def test_a_real_scheduler_passes_the_probe():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                                  silence_logs=40) as cluster:
        S.probe_scheduler(cluster.scheduler_address, 10)


@pytest.mark.slow
def test_a_sweep_through_a_real_scheduler():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None, silence_logs=40) as cluster:
        rep = S.run_sweep("sqrt", "fp8_e4m3", "upward", backend="dask", shards=2,
                          scheduler=cluster.scheduler_address, timeout=20)
        assert rep["cases"] == 256 and rep["mismatches"] == 0 and rep["shards_done"] == 2


# ---------------------------------------------------------------------------
# --summarize
@pytest.mark.parametrize("report", [{"op": "add", "cases": 5},
                                    {"op": "add", "format": "fp16", "mode": "upward",
                                     "oracle": "ro53", "cases": "many", "mismatches": 0,
                                     "bits_mismatches": 0, "flag_mismatches": 0,
                                     "seconds": 1.0}])
def test_summarize_a_report_with_missing_keys_is_status_2(report, tmp_path, capsys):
    (tmp_path / "add_fp16_upward.json").write_text(json.dumps(report))
    (tmp_path / "notes.json").write_text("[1, 2]")          # not a report: skipped
    assert S.main(["--summarize", str(tmp_path)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "add_fp16_upward.json" in line
    assert S.main(["--summarize", str(tmp_path / "nowhere")]) == 2


def test_committed_results_table_matches_the_committed_reports():
    with open(os.path.join(ROOT, "sweeps", "RESULTS.md")) as fh:
        committed = fh.read()
    table = S.summarize(os.path.join(ROOT, "sweeps"))
    assert committed.endswith(table), "regenerate: python -m softfloat sweep --summarize sweeps"
    with open(os.path.join(ROOT, "sweeps", S.REPORTS)) as fh:
        lines = fh.read().splitlines()
    assert table.count("\n") == 2 + len(S.load_reports(os.path.join(ROOT, "sweeps")))
    assert lines == sorted(lines, key=lambda ln: S.report_name(json.loads(ln)))


def test_a_rerun_replaces_its_own_line_only(tmp_path):
    S.run_sweep("sqrt", "fp8_e4m3", "upward", out=str(tmp_path))
    S.run_sweep("sqrt", "fp8_e5m2", "upward", out=str(tmp_path))
    path = tmp_path / S.REPORTS
    first = path.read_text().splitlines()
    assert [S.report_name(json.loads(ln)) for ln in first] == [
        "sqrt_fp8_e4m3_upward", "sqrt_fp8_e5m2_upward"]
    S.run_sweep("sqrt", "fp8_e4m3", "upward", out=str(tmp_path))
    again = path.read_text().splitlines()
    assert again[1] == first[1] and len(again) == 2          # the other run untouched
    assert json.loads(again[0])["cases"] == 256
    (tmp_path / "old_layout.json").write_text(json.dumps(json.loads(first[1])))
    assert set(S.load_reports(tmp_path)) == {"sqrt_fp8_e4m3_upward", "sqrt_fp8_e5m2_upward"}
    path.write_text(again[0] + "\n[1]\n")
    with pytest.raises(ValueError, match="line 2: not a JSON object"):
        S.load_reports(tmp_path)


# ---------------------------------------------------------------------------
# where results go
def test_default_out_is_a_new_directory_named_by_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert S.main(["fp8_e4m3", "sqrt", "--quiet"]) == 0
    assert S.main(["fp8_e4m3", "sqrt", "--quiet"]) == 0
    made = sorted(os.listdir(tmp_path))
    assert len(made) == 2 and all(d.startswith("sweep-fp8_e4m3-sqrt-") for d in made)
    for d in made:
        assert list(S.load_reports(tmp_path / d)) == ["sqrt_fp8_e4m3_nearest_even"]
    assert "writing to sweep-fp8_e4m3-sqrt-" in capsys.readouterr().err


def test_help_shows_every_option_with_its_default(capsys):
    assert S.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for opt in ("--a SET", "--b SET", "--c SET", "--c-family", "--backend", "--scheduler",
                "--timeout", "--out", "--mpfr", "--sample", "--shards", "--seed"):
        assert opt in text, opt
    assert "(default: nearest_even)" in text and "(default: 30.0)" in text
    assert "sweeps/ are written only when asked" in text


def test_a_closed_pipe_ends_quietly():
    p = subprocess.Popen([sys.executable, "-m", "softfloat", "sweep", "table", "--list"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    p.stdout.readline()
    p.stdout.close()                                     # `| head -1`
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and err == "", err


# ---------------------------------------------------------------------------
# a plain install: the extras made unimportable
BLOCKER = '''import importlib.abc, sys
BLOCKED = {"gmpy2", "torch", "ml_dtypes", "softfloatpy", "dask", "distributed",
           "hypothesis"}
class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None
sys.meta_path.insert(0, _Blocker())
'''


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    d = tmp_path_factory.mktemp("plain")
    (d / "sitecustomize.py").write_text(BLOCKER)
    return {"PYTHONPATH": str(d)}


PLAIN_RUNS = r"""
import json, sys
from softfloat import sweep
runs = [["fp16", "add", "--sample", "100", "--mpfr", "5", "--out", ""],
        ["bf16", "fma", "--c-family", "cancel4", "--sample", "100"],
        ["fp16", "add", "--backend", "dask", "--sample", "100"],
        ["table", "--mpfr", "3", "--only", "sqrt fp8_e4m3"],
        ["fp8_e4m3", "sqrt", "--out", "", "--quiet"]]
print("RCS " + json.dumps([sweep.main(a) for a in runs]))
"""


def test_plain_install_sweeps_name_the_missing_extra(plain, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([plain["PYTHONPATH"], ROOT]))
    p = subprocess.run([sys.executable, "-c", PLAIN_RUNS], capture_output=True, text=True,
                       env=env, cwd=str(tmp_path), timeout=600)
    rcs = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("RCS ")][-1][4:])
    assert rcs == [2, 2, 2, 2, 0], p.stderr
    assert "Traceback" not in p.stderr
    errs = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errs) == 4, p.stderr
    assert "needs gmpy2: pip install 'softfloat-lab[test]'" in errs[0]
    assert "needs ml_dtypes" in errs[1] and "needs distributed" in errs[2]
    assert "needs gmpy2" in errs[3]
    assert "0 mismatches" in p.stdout
    assert os.listdir(tmp_path) == []                    # checked before anything is made


# ---------------------------------------------------------------------------
# the thread-count switch
@pytest.mark.parametrize("junk", ["abc", "0", "-3", "2.5"])
def test_junk_softfloat_num_threads_is_refused_naming_the_variable(junk, monkeypatch):
    from softfloat import _parallel
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", junk)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    with pytest.raises(ValueError, match="SOFTFLOAT_NUM_THREADS"):
        _parallel.num_threads()
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", "")          # empty: the default
    assert _parallel.num_threads() == 3
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", " 2 ")
    assert _parallel.num_threads() == 2


def test_summarize_a_folder_without_reports_is_status_2(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("nothing here")
    assert S.main(["--summarize", str(tmp_path)]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "no sweep reports" in line
    assert not (tmp_path / "RESULTS.md").exists()          # no empty table written


def test_sweep_help_states_each_default_once(capsys):
    for argv in (["--help"], ["table", "--help"]):
        try:
            assert S.main(argv) == 0
        except SystemExit as e:
            assert e.code == 0
        out = capsys.readouterr().out
        assert "--quiet" in out and "(default: None)" not in out and "(default: False)" not in out
        assert "(default 1: this process, on threads) (default: 1)" not in " ".join(out.split())
