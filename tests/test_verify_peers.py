"""docs/peers.md is what softfloat.verification.peers computes: a cheap row in the
default suite (an exhaustive fp8 run), every row with -m slow."""
from __future__ import annotations

import os

import pytest

from softfloat.verification import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "docs", "peers.md")


def _table_lines():
    with open(TABLE) as fh:
        return [ln.rstrip("\n") for ln in fh if ln.startswith("| ")]


def _check(only, quick=False):
    rows = peers.run_peers(only=only, quick=quick, log=lambda *a: None)
    assert rows, only
    have = _table_lines()
    for line in peers.table_rows(rows):
        assert line in have, line


def test_an_exhaustive_row_reproduces():
    pytest.importorskip("ml_dtypes")
    _check("ml_dtypes float8_e5m2 mul")


def test_every_peer_is_in_the_table():
    text = open(TABLE).read()
    for p in ("numpy", "ml_dtypes", "torch", "softfloatpy", "pychop", "gfloat", "apytypes"):
        assert f"| {p} " in text, p


@pytest.mark.slow
@pytest.mark.parametrize("peer", ["numpy", "ml_dtypes", "torch", "softfloatpy", "pychop",
                                  "gfloat", "apytypes"])
def test_every_row_reproduces(peer):
    _check(peer)


def _rows_stub(monkeypatch, rows):
    monkeypatch.setattr(peers, "run_peers", lambda only=None, quick=False, log=print: rows)


_MEASURED = dict(peer="pychop", version="0.4", what="fp16 add", op="add", fmt="fp16",
                 mode="nearest_even", space="level1", cases=46464, mismatches=0, flags=False,
                 diagnosis={}, example=None)
_MISSING = dict(peer="pychop", version=None, what="fp16 add", op="add", fmt="fp16",
                mode="nearest_even", space="level1", error="pychop not installed")


def test_main_writes_no_file_unless_told(monkeypatch, capsys, tmp_path):
    # the committed table is written only to a path given with --out
    before = open(TABLE).read()
    monkeypatch.chdir(tmp_path)
    _rows_stub(monkeypatch, [_MEASURED])
    assert peers.main([]) == 0
    out = capsys.readouterr().out
    assert "| pychop 0.4 | fp16 add |" in out and open(TABLE).read() == before
    assert os.listdir(tmp_path) == []
    with pytest.raises(SystemExit):
        peers.main(["--help"])
    assert "--out" in capsys.readouterr().out.replace("\n", " ")


@pytest.mark.parametrize("merge", [False, True])
def test_a_missing_peer_keeps_its_measured_row(monkeypatch, capsys, tmp_path, merge):
    path = tmp_path / "peers.md"
    _rows_stub(monkeypatch, [_MEASURED])
    assert peers.main(["--out", str(path)]) == 0
    measured = [ln for ln in path.read_text().splitlines() if ln.startswith("| pychop")]
    assert len(measured) == 1 and "agrees" in measured[0]
    _rows_stub(monkeypatch, [_MISSING])
    for _ in range(2):
        assert peers.main(["--out", str(path)] + (["--only", "pychop", "--merge"] if merge
                                                  else [])) == 0
        kept = [ln for ln in path.read_text().splitlines() if ln.startswith("| pychop")]
        assert len(kept) == 1 and "agrees" in kept[0] and "not installed" in kept[0]
        assert kept[0].count("not re-run") == 1
    assert "kept" in capsys.readouterr().out
