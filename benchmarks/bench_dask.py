"""The Dask backend's overhead against the process backend on the same shards.

    python benchmarks/bench_dask.py [--log2-cases 32] [--repeat 2] [--jobs 2]

Runs one fma sweep sub-space (fp16, c fixed to 1.0: 2**log2-cases triples
taken from the start of the space, 2**24 per shard) with

* ``process``: ``run_sweep(..., jobs=J)``, a pool of J spawned worker processes;
* ``dask local``: ``backend="dask"``, a local cluster of J one-thread workers,
  started and stopped by the run (cluster start included in the time);
* ``dask scheduler``: ``backend="dask", scheduler=ADDRESS`` against a local
  cluster of J workers started beforehand (what a real cluster looks like:
  the scheduler and workers already run; their start is not in the time),

interleaved, ``repeat`` times, and prints the best wall time of each and the
overhead of each Dask variant relative to the process backend. Every run's
report must have 0 mismatches and the same case count. Worker processes of
all three load the kernels from the numba cache (run ``python -m softfloat
warmup`` first); run it on a quiet machine.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log2-cases", type=int, default=32)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--fmt", default="fp16")
    p.add_argument("--rounding", default="nearest_even")
    a = p.parse_args(argv)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("needs the dask extra: pip install -e '.[dask]'", file=sys.stderr)
        return 2
    import numpy as np
    import softfloat as sf
    from softfloat.sweep import run_sweep

    one = int(sf.to_bits(np.array([1.0]), a.fmt)[0])
    shards = 1 << 8                       # c fixed: 2**32 pairs, 2**24 per shard
    n = max(1, min(shards, (1 << a.log2_cases) >> 24))
    kw = dict(c=one, shards=shards, shard_ids=list(range(n)), jobs=a.jobs)
    threads = max(1, (os.cpu_count() or 1) // a.jobs)
    cluster = LocalCluster(n_workers=a.jobs, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40,
                           env={"SOFTFLOAT_NUM_THREADS": str(threads)})
    addr = cluster.scheduler_address
    # first task on each pre-started worker loads the kernels, as the process and
    # local-cluster variants do in their timed runs: not warmed here on purpose
    variants = {
        "process": dict(backend="process"),
        "dask local (start included)": dict(backend="dask"),
        "dask scheduler (pre-started)": dict(backend="dask", scheduler=addr),
    }
    times = {k: [] for k in variants}
    cases = set()
    try:
        for r in range(a.repeat):
            for name, extra in variants.items():
                if name.startswith("dask scheduler") and r > 0:
                    # fresh workers each repeat, so that every variant starts cold
                    with Client(addr) as c:
                        c.restart()
                t = time.perf_counter()
                rep = run_sweep("fma", a.fmt, a.rounding, **kw, **extra)
                dt = time.perf_counter() - t
                if rep["mismatches"]:
                    print(f"{name}: {rep['mismatches']} mismatches", file=sys.stderr)
                    return 1
                cases.add(rep["cases"])
                times[name].append(dt)
                print(f"  repeat {r}: {name:30s} {dt:7.2f} s", flush=True)
    finally:
        cluster.close()
    if len(cases) != 1:
        print(f"case counts differ: {cases}", file=sys.stderr)
        return 1
    base = min(times["process"])
    print(f"fma {a.fmt} {a.rounding}, c = 1.0, {cases.pop():,} triples in {n} shards, "
          f"{a.jobs} workers; best of {a.repeat} wall seconds")
    for name, ts in times.items():
        b = min(ts)
        print(f"{name:30s} {b:7.2f} s  overhead {100 * (b / base - 1):+6.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
