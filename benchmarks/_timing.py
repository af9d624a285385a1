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
