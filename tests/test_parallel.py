"""softfloat._parallel: the chunk driver's results never depend on who runs the
chunks (pool threads, or the calling thread alone when every CPU is busy), a
kernel's error reaches the caller, and the chunk count is what chunk_count says."""
import threading

import numpy as np
import pytest

import softfloat as sf
from softfloat import _parallel as P


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", "2")


def _record(lo, hi, seen, out):
    seen.append((lo, hi, threading.get_ident()))
    out[lo:hi] = np.arange(lo, hi)
    return lo


@pytest.mark.parametrize("busy", [False, True])
def test_chunks_cover_the_range_once_in_order(two_threads, monkeypatch, busy):
    monkeypatch.setattr(P, "_cpus_busy", lambda: busy)
    n = 5 * P.MIN_PARALLEL + 3
    seen, out = [], np.full(n, -1)
    r = P.run_chunks_each(_record, n, seen, out)
    assert len(r) == P.chunk_count(n) > 1
    spans = sorted((lo, hi) for lo, hi, _ in seen)
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))     # no gap, no overlap
    assert [lo for lo, _ in r] == [lo for lo, _ in spans] == [v for _, v in r]
    assert np.array_equal(out, np.arange(n))
    if busy:            # every CPU busy: the calling thread takes every chunk
        assert {t for _, _, t in seen} == {threading.get_ident()}


def test_busy_reads_the_running_count(monkeypatch):
    """/proc/loadavg's running count against the CPU count (read again after 5 ms)."""
    P._busy_seen[:] = [-1.0, False]
    assert P._cpus_busy() in (True, False)
    P._busy_seen[:] = [-1.0, False]
    monkeypatch.setattr(P.os, "pread", lambda fd, n, off: b"0.10 0.20 0.30 999/200 123\n")
    assert P._cpus_busy() is True
    P._busy_seen[:] = [-1.0, False]
    monkeypatch.setattr(P.os, "pread", lambda fd, n, off: b"0.10 0.20 0.30 1/200 123\n")
    assert P._cpus_busy() is False
    monkeypatch.setattr(P.os, "pread", lambda fd, n, off: b"junk")
    P._busy_seen[:] = [-1.0, False]
    assert P._cpus_busy() is False
    P._busy_seen[:] = [-1.0, False]


@pytest.mark.parametrize("busy", [False, True])
def test_a_kernel_error_reaches_the_caller(two_threads, monkeypatch, busy):
    monkeypatch.setattr(P, "_cpus_busy", lambda: busy)
    n = 8 * P.MIN_PARALLEL

    def bad(lo, hi):
        if lo > 0:
            raise ZeroDivisionError(f"chunk at {lo}")
        return 0
    with pytest.raises(ZeroDivisionError, match="chunk at"):
        P.run_chunks_each(bad, n)
    assert P.run_chunks(lambda lo, hi: 1 << (lo % 3), n) in range(1, 8)   # pool still works


@pytest.mark.parametrize("src, fmt", [(np.float32, "bf16"), (np.float32, "fp16"),
                                      (np.float64, "fp8_e4m3"), (np.float64, "fp6_e2m3")])
def test_conversions_alike_busy_idle_and_one_thread(monkeypatch, src, fmt):
    """The same bits and sticky flags with pool threads, with the calling thread
    alone (every CPU busy) and with one thread configured."""
    x = (np.random.default_rng(0).standard_normal(1 << 19) * 300).astype(src)
    x[::1001] = np.nan
    got = []
    for nt, busy in (("2", False), ("2", True), ("1", False)):
        monkeypatch.setenv("SOFTFLOAT_NUM_THREADS", nt)
        monkeypatch.setattr(P, "_cpus_busy", lambda b=busy: b)
        with sf.localcontext() as ctx:
            b = sf.to_bits(x, fmt)
        got.append((b, int(ctx.flags)))
    for b, f in got[1:]:
        assert np.array_equal(b, got[0][0]) and f == got[0][1]
