"""Shared timing helper for the benchmark scripts (run them as
``python benchmarks/<script>.py``; this directory is then on sys.path)."""
import time


def best(fn, repeat=5, warmup=True):
    """The fastest of ``repeat`` calls of ``fn`` (after one warm-up call), in seconds."""
    if warmup:
        fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def best_interleaved(fns: dict, repeat: int) -> dict:
    """{name: fastest of ``repeat`` calls} with the calls taken in rounds (one of
    each per round, after one warm-up round), so that a loaded machine slows
    every variant alike and their ratios stay meaningful."""
    for fn in fns.values():
        fn()
    out = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            out[k] = min(out[k], time.perf_counter() - t)
    return out
