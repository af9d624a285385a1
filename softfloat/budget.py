"""Chunked runs under a shared time budget (used by validation/torch_crosscheck.py).

An index space ``[0, total)`` is cut into chunks with the sweep engine's
`softfloat.sweep.shard_range` (chunk ``k`` of ``S`` is a pure function of
``(k, S)``, so a run can be resumed or split anywhere). `Budget` shares a number
of seconds among several runs: each run gets what the earlier runs left divided
by the runs still to come; a run whose first chunks project past its share goes
on over an evenly strided subset of its remaining chunks and reports its
coverage (< 1) and a note, so the whole job ends in time instead of being killed.
"""
from __future__ import annotations

import time

from .sweep import run_within_budget, shard_range

__all__ = ["Budget", "chunk_ranges"]


def chunk_ranges(total: int, chunk: int, offset: int = 0) -> list:
    """``[(lo, hi), ...]``: ``[0, total)`` cut into ``ceil(total / chunk)`` ranges
    (by `softfloat.sweep.shard_range`), shifted by ``offset``."""
    if total < 0 or chunk < 1:
        raise ValueError(f"chunk_ranges needs total >= 0 and chunk >= 1, got {total}, {chunk}")
    shards = max(1, -(-int(total) // int(chunk)))
    return [tuple(offset + v for v in shard_range(k, shards, int(total))) for k in range(shards)]


class Budget:
    """``seconds`` shared by ``runs`` runs (see the module docstring).

    ``run(chunks, do_chunk, max_chunks=0)`` calls ``do_chunk(c)`` for the chunks
    in order within this run's share and returns ``(coverage, note)``: the
    fraction of chunks done and a note (None when all were done without thinning).
    ``max_chunks`` > 0 takes only that many evenly spaced chunks (for tests).
    """

    def __init__(self, seconds: float, runs: int = 1, clock=time.perf_counter):
        self.seconds = float(seconds)
        self.runs = max(1, int(runs))
        self.done_runs = 0
        self.spent = 0.0
        self.clock = clock

    def share(self) -> float:
        left = max(1, self.runs - self.done_runs)
        return max(1.0, (self.seconds - self.spent) / left)

    def run(self, chunks, do_chunk, max_chunks: int = 0):
        chunks = list(chunks)
        total = len(chunks)
        note = None
        left = chunks
        if max_chunks and total:
            k = max(1, total // max_chunks)
            left = left[::k][:max_chunks]
            note = f"--max-chunks {max_chunks}: {len(left)} of {total} chunks"
        r = run_within_budget(left, do_chunk, self.share(), clock=self.clock)
        note = r.note or note
        self.done_runs += 1
        self.spent += r.seconds
        return (round(r.done / total, 6) if total else 1.0), note
