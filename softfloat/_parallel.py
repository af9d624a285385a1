"""Run a serial, GIL-free numba chunk kernel over an array on several threads.

Kernels here are plain ``@njit(nogil=True, cache=True)`` loops over ``[lo, hi)``
that return the OR of the flags they raised. Splitting the work in Python keeps
compilation cheap (numba's ``parallel=True`` lowering costs seconds per kernel)
and lets each chunk kernel be specialised and compiled only when it is used.
The number of chunks depends on the thread count, but results never do: each
element depends only on its inputs and its index (stochastic rounding draws its
bits from the element index).
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from . import config

_pool: ThreadPoolExecutor | None = None
_pool_size = 0

#: arrays shorter than this run in the calling thread
MIN_PARALLEL = 1 << 16

#: work (elements x cost) below which the calling thread takes every chunk alone
#: while other tasks already fill every CPU (`_cpus_busy`): a helper thread
#: would wait for a core for milliseconds, longer than the work takes
#: (float32 -> bf16 of 4e6 elements: 0.9 ms median on one thread, 2.8 ms on two,
#: on a machine whose 2 CPUs other processes kept busy)
BUSY_LIMIT = 1 << 23

_loadavg = None
_busy_seen = [-1.0, False]          # (monotonic time read, answer)


def _cpus_busy() -> bool:
    """Whether other runnable tasks fill every CPU now: the count of running and
    runnable tasks in /proc/loadavg (this thread one of them) above the CPU
    count, read at most every 5 ms (a read costs about 15 us). False where
    that file cannot be read."""
    global _loadavg
    now = time.monotonic()
    if now - _busy_seen[0] < 0.005:
        return _busy_seen[1]
    try:
        if _loadavg is None:
            _loadavg = os.open("/proc/loadavg", os.O_RDONLY)
        running = int(os.pread(_loadavg, 64, 0).split()[3].split(b"/")[0])
        busy = running > (os.cpu_count() or 1)
    except (OSError, ValueError, IndexError):
        busy = False
    _busy_seen[:] = [now, busy]
    return busy


def num_threads() -> int:
    """Threads used for large arrays (`softfloat.config.num_threads`:
    $SOFTFLOAT_NUM_THREADS, else $NUMBA_NUM_THREADS, else the CPUs available)."""
    return config.num_threads()


def _get_pool(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size != n:
        _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="softfloat")
        _pool_size = n
    return _pool


def run_chunks(kernel, n: int, *args) -> int:
    """``kernel(lo, hi, *args)`` over [0, n) in chunks; returns the OR of the results."""
    if n < MIN_PARALLEL:                         # small: one call, nothing else to decide
        return int(kernel(0, n, *args))
    return run_chunks_weighted(kernel, n, 1, *args)


def _spans(n: int, cost: int):
    """[(lo, hi)] chunks of [0, n) for elements costing ``cost`` steps each, or
    None when the work is too small to split (or one thread is configured). The
    size is looked at first: small work costs no look at the thread settings."""
    work = n * max(int(cost), 1)
    if n < 2 or work < MIN_PARALLEL:
        return None
    nt = num_threads()
    if nt == 1:
        return None
    nchunks = min(4 * nt, n, (work + MIN_PARALLEL - 1) // MIN_PARALLEL)
    step = (n + nchunks - 1) // nchunks
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def run_chunks_weighted(kernel, n: int, cost: int, *args) -> int:
    """`run_chunks` for kernels whose elements each cost about ``cost`` simple steps
    (a dot product of length K: cost K): the work, not the element count, decides
    whether and how finely to split. Results never depend on the split (each
    element depends only on its inputs and its index)."""
    r = 0
    for _, v in run_chunks_each(kernel, n, *args, cost=cost):
        r |= v
    return r


def run_chunks_each(kernel, n: int, *args, cost: int = 1, chunk_args=None) -> list:
    """``kernel(lo, hi, *args)`` over [0, n) in chunks; returns [(lo, result)] for
    every chunk, in order (for kernels whose results are not flags to OR, such
    as a count of elements listed). ``chunk_args(k, lo, hi)``, when given, makes
    chunk k's arguments instead of ``args`` (e.g. an output of its own);
    `chunk_count` says how many chunks there will be."""
    spans = _spans(n, cost)
    if spans is None or len(spans) == 1:
        return [(0, int(kernel(0, n, *(args if chunk_args is None else
                                         chunk_args(0, 0, n)))))]
    if chunk_args is None:
        chunk_args = lambda k, lo, hi: args  # noqa: E731
    # The calling thread and num_threads() - 1 pool threads take the chunks in
    # turn: the calling thread starts at once, so a pool thread that is slow to
    # wake (an idle core, a virtual CPU the host has halted, or a core another
    # process holds) costs only the chunks it would have taken. The calling
    # thread then waits for the chunks taken, not for the pool threads: one
    # that wakes after the last chunk was taken finds nothing to do, and no
    # call waits for it. With every CPU busy, small work stays in this thread.
    results = [0] * len(spans)
    todo = iter(range(len(spans)))
    lock = threading.Lock()
    left = [len(spans)]
    finished = threading.Event()
    errors = []

    def work():
        while True:
            with lock:
                k = next(todo, None)
            if k is None:
                return
            lo, hi = spans[k]
            try:
                results[k] = int(kernel(lo, hi, *chunk_args(k, lo, hi)))
            except BaseException as e:  # noqa: BLE001 (raised in the calling thread)
                errors.append(e)
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    finished.set()

    helpers = min(num_threads(), len(spans)) - 1
    if n * max(int(cost), 1) < BUSY_LIMIT and _cpus_busy():
        helpers = 0                         # the same chunks, in this thread
    if helpers:
        pool = _get_pool(num_threads())
        for _ in range(helpers):
            pool.submit(work)
    work()
    finished.wait()
    if errors:
        raise errors[0]
    return [(lo, results[k]) for k, (lo, _) in enumerate(spans)]


def chunk_count(n: int, cost: int = 1) -> int:
    """The number of chunks `run_chunks_each` splits [0, n) into."""
    spans = _spans(n, cost)
    return 1 if spans is None else len(spans)
