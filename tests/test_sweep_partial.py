"""A sweep run shard by shard: the report says which shards are missing, and
a later run of the other shards merges the earlier shard files."""
from __future__ import annotations

import json

from softfloat.sweep import load_reports, run_sweep, summarize


def test_partial_runs_say_what_is_missing_and_merge(tmp_path):
    out = str(tmp_path)
    rep = run_sweep("add", "fp8_e4m3", shards=4, shard_ids=[0, 1], out=out)
    assert rep["cases"] == 32768 and rep["shards_done"] == 2
    assert rep["missing_shards"] == [2, 3] and rep["exhaustive"] is False
    (line,) = load_reports(out).values()
    assert line["missing_shards"] == [2, 3]
    assert "no (2 of 4 shards)" in summarize(out)
    rep = run_sweep("add", "fp8_e4m3", shards=4, shard_ids=[2, 3], out=out, resume=True)
    assert rep["cases"] == 65536 and rep["shards_done"] == 4
    assert "missing_shards" not in rep and rep["exhaustive"] is True
    (line,) = load_reports(out).values()
    assert line["cases"] == 65536
    table = summarize(out)
    assert "shards)" not in table and "| 65,536 | yes |" in table
    # the merged report's line is what a full run writes (cases, counts)
    full = run_sweep("add", "fp8_e4m3", shards=4, out=str(tmp_path / "full"))
    assert json.dumps({k: full[k] for k in ("cases", "mismatches", "exhaustive")}) == \
        json.dumps({k: rep[k] for k in ("cases", "mismatches", "exhaustive")})
