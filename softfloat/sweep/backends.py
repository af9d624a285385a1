"""Where shards run: in this process, on a pool of spawned worker processes,
or on Dask (a local cluster, or a scheduler at an address, probed first so that
a silent or foreign server fails at once and clearly); worker processes ignore
Ctrl-C, exit with their parent and share the cores; `run_parallel` runs any
module-level function this way (the shard runner of `softfloat.verify` uses it).
Also the progress line on stderr, and the test of which formats travel to a
worker by name.
"""
from __future__ import annotations

import os
import sys
import time

from ..formats import formats


#: with ``enabled=None``, a run off a terminal shows progress once it has taken this long
AUTO_AFTER = 5.0


class Progress:
    """A one-line progress bar on stderr (a line every 10 s when not a
    terminal). ``enabled``: True, False, or None (automatic: on a terminal
    from the start, elsewhere once the run has taken `AUTO_AFTER` seconds, so
    that long runs are never silent and short ones print nothing)."""

    def __init__(self, label, total, enabled=None):
        self.label, self.total = label, total
        self.done = 0
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()
        self.enabled = (self.tty if enabled is None else bool(enabled))
        self.auto = enabled is None and not self.tty
        self.shown = False
        self.printed = -1

    def add(self, n, force=False):
        self.done += n
        now = time.perf_counter()
        if self.auto and not self.enabled and now - self.t0 >= AUTO_AFTER:
            self.enabled = True
        if not self.enabled:
            return
        if not force and now - self.last < (0.5 if self.tty else 10.0):
            return
        if force and self.shown and self.printed == self.done and not self.tty:
            return                     # that line is already there
        self.shown = True
        self.printed = self.done
        self.last = now
        frac = self.done / self.total if self.total else 1.0
        el = now - self.t0
        eta = el * (1 - frac) / frac if frac > 0 else float("nan")
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"{self.label} [{bar}] {100 * frac:5.1f}% {self.done:,}/{self.total:,} "
                f"{el:6.1f}s ETA {eta:6.1f}s")
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def abandon(self):
        """End the bar after an error: the line in progress on a terminal is
        ended, nothing more is printed."""
        if self.enabled and self.shown and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
        self.enabled = False

    def close(self):
        if self.auto and not self.shown:
            self.enabled = False       # a short run off a terminal: nothing printed
        if self.enabled:
            self.add(0, force=True)
            if self.tty:
                sys.stderr.write("\n")


_Progress = Progress


def builtin_names():
    """The names of the built-in formats: a run on one of them sends its workers
    the name, a run on any other format the `Format` itself."""
    return {x.name for x in formats()}


def die_with_parent(parent_pid):
    """In a worker: exit when the parent dies (Linux prctl PR_SET_PDEATHSIG, and a
    watchdog thread that polls the parent pid where prctl is unavailable or the
    parent died before it was set)."""
    import signal
    import threading
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):       # pragma: no cover (not Linux)
        pass
    if os.getppid() != parent_pid:
        os._exit(3)

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(3)
    threading.Thread(target=watch, daemon=True, name="softfloat-parent-watch").start()


def _worker_init(threads, parent_pid):
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent handles Ctrl-C
    die_with_parent(parent_pid)
    os.environ["SOFTFLOAT_NUM_THREADS"] = str(max(1, threads))
    os.environ["NUMBA_NUM_THREADS"] = str(max(1, threads))


def _stop_pool(ex):
    """Stop a process pool now (Ctrl-C, an error): cancel what has not started,
    terminate the workers, and keep the pool's manager thread from printing
    tracebacks about the futures it can no longer complete."""
    import threading
    old = threading.excepthook
    threading.excepthook = lambda args: None
    try:
        procs = list((getattr(ex, "_processes", None) or {}).values())
        t = getattr(ex, "_executor_manager_thread", None)   # shutdown() forgets both
        ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
        if t is not None:
            t.join(10)
    finally:
        threading.excepthook = old


def probe_scheduler(address, timeout=30.0) -> None:
    """Check that a ``tcp://host:port`` Dask scheduler answers like one, within
    ``timeout`` seconds: it must accept a connection and send its handshake (a
    length-prefixed message of reasonable size). Raises RuntimeError saying what
    went wrong (refused, silent, another protocol such as HTTP). Other address
    schemes are left to distributed's own connection timeout."""
    import socket
    import struct
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler must be an address such as tcp://host:8786, "
                         f"got {address!r}")
    addr = address.strip()
    if "://" not in addr:
        addr = "tcp://" + addr
    scheme, rest = addr.split("://", 1)
    if scheme != "tcp":
        return
    host, sep, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"scheduler address {address!r}: expected tcp://HOST:PORT")
    t0 = time.monotonic()
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except socket.timeout:
        raise RuntimeError(f"Dask scheduler {address}: no connection within {timeout:g} s") \
            from None
    except OSError as exc:
        raise RuntimeError(f"Dask scheduler {address}: cannot connect "
                           f"({exc.strerror or exc})") from None
    def recv(k):
        got = b""
        while len(got) < k:
            sock.settimeout(max(0.05, timeout - (time.monotonic() - t0)))
            chunk = sock.recv(k - len(got))
            if not chunk:
                raise RuntimeError(f"Dask scheduler {address}: the connection was closed "
                                   f"during the handshake (not a Dask scheduler?)")
            got += chunk
        return got
    try:
        head = recv(8)
        (n,) = struct.unpack("<Q", head)
        if not 0 < n < (1 << 26):
            what = "HTTP" if head.startswith(b"HTTP") else "another protocol"
            raise RuntimeError(f"Dask scheduler {address}: the server answers in {what} "
                               f"({head!r}...), not as a Dask scheduler")
        recv(n)                                # the whole handshake message, in time
    except socket.timeout:
        raise RuntimeError(f"Dask scheduler {address}: connected, but no complete handshake "
                           f"within {timeout:g} s (not a Dask scheduler, or it is stuck)") \
            from None
    except OSError as exc:
        raise RuntimeError(f"Dask scheduler {address}: {exc.strerror or exc}") from None
    finally:
        sock.close()


def _run_dask(fn, tasks, scheduler, jobs, on_result, timeout=30.0):
    """Run ``fn(*args)`` for every ``(key, args)`` of ``tasks`` on Dask: the
    scheduler at ``scheduler`` (probed first, see `probe_scheduler`; at least one
    worker within ``timeout``) or a local cluster of ``jobs`` workers; call
    ``on_result(r)`` as each finishes. A scheduler that cannot be reached raises
    RuntimeError saying so."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError("--backend dask needs distributed: pip install "
                          "'softfloat-lab[dask]'") from None
    cluster = None
    try:
        if scheduler:
            probe_scheduler(scheduler, timeout)
            client = Client(scheduler, timeout=timeout)
        else:
            threads = max(1, (os.cpu_count() or 1) // jobs)
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40,
                                   env={"SOFTFLOAT_NUM_THREADS": str(threads)})
            client = Client(cluster, timeout=timeout)
    except (OSError, TimeoutError, MemoryError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        where = scheduler or "the local cluster"
        raise RuntimeError(f"Dask scheduler {where}: {type(exc).__name__}: {exc}") from None
    try:
        if scheduler:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (TimeoutError, OSError) as exc:
                raise RuntimeError(f"Dask scheduler {scheduler}: no worker joined within "
                                   f"{timeout:g} s ({exc})") from None
        futs = [client.submit(fn, *args, pure=False, key=key) for key, args in tasks]
        for fu in as_completed(futs):
            on_result(fu.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _run_pool(fn, arglist, jobs, on_result):
    """Run ``fn(*args)`` for every ``args`` of ``arglist`` on a pool of ``jobs``
    spawned worker processes (each gets an equal share of the cores as its
    SOFTFLOAT_NUM_THREADS, ignores Ctrl-C and exits with its parent); call
    ``on_result(r)`` as each finishes. Ctrl-C or an error stops the pool at once."""
    import concurrent.futures as cf
    import multiprocessing as mp
    threads = max(1, (os.cpu_count() or 1) // jobs)
    ex = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                initializer=_worker_init, initargs=(threads, os.getpid()))
    try:
        futs = [ex.submit(fn, *args) for args in arglist]
        for fu in cf.as_completed(futs):
            on_result(fu.result())
    except BaseException:
        _stop_pool(ex)
        raise
    ex.shutdown(wait=True)


def run_parallel(fn, arglist, *, jobs=1, backend="process", scheduler=None,
                 on_result=None) -> list:
    """Call ``fn(*args)`` for every ``args`` of ``arglist``: in this process
    (jobs=1), on a pool of ``jobs`` spawned worker processes, or on Dask (a
    local cluster of ``jobs`` workers, or the one at ``scheduler``); call
    ``on_result(r)`` as each finishes. Returns the results in completion order.
    ``fn`` must be a module-level function when it runs elsewhere (the shard
    runner of `softfloat.verify` uses this)."""
    out = []

    def got(r):
        out.append(r)
        if on_result is not None:
            on_result(r)
    if backend == "dask":
        try:
            from distributed import Client, LocalCluster, as_completed
        except ImportError:
            raise RuntimeError("--backend dask needs the optional extra: pip install "
                               "'softfloat-lab[dask]' (dask and distributed)") from None
        cluster = None
        if scheduler:
            client = Client(scheduler)
        else:
            threads = max(1, (os.cpu_count() or 1) // jobs)
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40,
                                   env={"SOFTFLOAT_NUM_THREADS": str(threads)})
            client = Client(cluster)
        try:
            futs = [client.submit(fn, *args, pure=False) for args in arglist]
            for fu in as_completed(futs):
                got(fu.result())
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    elif jobs == 1 or len(arglist) <= 1:
        for args in arglist:
            got(fn(*args))
    else:
        _run_pool(fn, arglist, jobs, got)
    return out


_builtin_names = builtin_names
