"""The shard engine shared by sweeps and `softfloat.verify`: the checks of a
run's job, backend and shard arguments (`check_run_args`), and `run_shards`,
which reuses the shard files of an earlier run that verify (``resume``), runs
the other shards in this process, on worker processes or on Dask
(`softfloat.sweep.run_parallel`), seals each result with its checksum, writes
it to its shard file and shows progress.
"""
from __future__ import annotations

import numpy as np

from .backends import Progress, run_parallel
from .files import seal, split_resumed, write_json
from .spaces import check_sizes

__all__ = ["check_run_args", "run_shards", "sealed_call"]

BACKENDS = ("process", "dask")


def _positive_int(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def check_run_args(*, jobs=1, backend="process", shards=None, total=None, sample=None,
                   what="the run") -> int | None:
    """Raise ValueError unless ``jobs`` is a positive integer, ``backend`` one
    of ``"process"``/``"dask"`` and ``shards`` (when given) a positive integer
    that fits a space of ``total`` cases (`softfloat.sweep.check_sizes`: at
    most one shard per case, or per sampled case). Returns ``shards`` as an int."""
    _positive_int(jobs, "jobs")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be 'process' or 'dask', got {backend!r}")
    if shards is None:
        return None
    shards = _positive_int(shards, "shards")
    if total is not None:
        check_sizes(total, shards, sample, what)
    return shards


def sealed_call(fn, args, path):
    """``fn(*args)`` sealed with its checksum (`softfloat.sweep.files.seal`)
    and written to ``path`` when given; runs wherever the shard runs."""
    r = seal(fn(*args))
    if path:
        write_json(path, r)
    return r


def run_shards(fn, shard_ids, args_of, *, expected, out=None, name=None, cfg=None,
               resume=False, jobs=1, backend="process", scheduler=None, progress=None,
               label="shards") -> tuple:
    """Run ``fn(*args_of(k))`` for every shard ``k`` of ``shard_ids``; returns
    ``(results, notes)``.

    ``expected(k)`` gives shard k's ``(lo, hi, cases)``; with ``out`` each
    result is sealed and written to its file (``OUT/<name>.shards/``), and
    with ``resume`` the files that verify against ``cfg`` are reused (the
    others are recomputed, with a note; a file of other settings raises
    `softfloat.sweep.ShardFileError`). ``fn`` must be a module-level function
    for ``jobs > 1`` and Dask. ``progress``: True, False or None (automatic,
    see `softfloat.sweep.backends.Progress`), counted in cases."""
    results, todo, notes = split_resumed(out if out else None, name, list(shard_ids), cfg,
                                         resume and bool(out), expected)
    bar = Progress(label, int(sum(expected(k)[2] for k, _ in todo)), progress)

    def done(r):
        bar.add(r["cases"])
        results.append(r)
    try:
        if todo:
            run_parallel(sealed_call, [(fn, args_of(k), path) for k, path in todo],
                         jobs=min(jobs, len(todo)), backend=backend, scheduler=scheduler,
                         on_result=done)
    except BaseException:
        bar.abandon()              # no final line: the error is the last word
        raise
    bar.close()
    return results, notes
