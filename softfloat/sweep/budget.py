"""Shared time budgets for chunked runs: `run_within_budget` calls a function
over items in order and, once the items done so far project past the budget,
goes on over an evenly strided subset of the rest (and says so in a note);
`Budget` shares a number of seconds among several such runs (each gets what the
earlier ones left divided by the runs still to come); `chunk_ranges` cuts an
index range into chunks by `shard_range` (chunk ``k`` of ``S`` is a pure
function of ``(k, S)``, so a run can be split or resumed anywhere) and
`chunk_starts` gives the starts of fixed-size chunks. `softfloat.budget` and
validation/torch_crosscheck.py use these.
"""
from __future__ import annotations

import math
import time

from .spaces import shard_range


def chunk_starts(lo: int, hi: int, chunk: int) -> list:
    """Starts of the chunks of ``chunk`` items covering [lo, hi) (the last may be short)."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    return list(range(int(lo), int(hi), int(chunk)))


class BudgetResult:
    """What `run_within_budget` did: ``done`` of ``total`` items, a ``note``
    (empty when every item ran), and ``seconds``."""

    def __init__(self, done, total, note, seconds):
        self.done, self.total, self.note, self.seconds = done, total, note, seconds

    @property
    def coverage(self) -> float:
        return round(self.done / self.total, 6) if self.total else 1.0


def run_within_budget(items, work, budget_s: float, *, clock=time.perf_counter) -> BudgetResult:
    """Call ``work(item)`` over ``items`` in order within ``budget_s`` seconds:
    once the items done so far project past the budget, go on over an evenly
    strided subset of the rest (every k-th), or stop when none fits."""
    left = list(items)
    total = len(left)
    t0 = clock()
    done = 0
    note = ""
    while left:
        work(left.pop(0))
        done += 1
        el = clock() - t0
        per = el / done
        if left and el + per * len(left) > budget_s:
            fit = int((budget_s - el) / per)
            if fit <= 0:
                note = f"time budget ({budget_s:.0f} s): stopped after {done} chunks"
                left = []
            elif fit < len(left):
                k = math.ceil(len(left) / fit)
                left = left[::k]
                note = (f"time budget ({budget_s:.0f} s): after {done} chunks, every "
                        f"{k}-th of the remaining chunks was swept")
    return BudgetResult(done, total, note, clock() - t0)


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
