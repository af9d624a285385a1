"""docs/peers.md is what softfloat.verify.peers computes: a cheap row in the
default suite (an exhaustive fp8 run), every row with -m slow."""
from __future__ import annotations

import os

import pytest

from softfloat.verify import peers

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
