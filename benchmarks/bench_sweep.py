"""Where a sweep's time goes, from a real sub-run: the library's kernel, the oracle
+ compare, and the rest (operand blocks, shard bookkeeping), and the projected
time of a whole 2^32 op-mode run (the target: under 60 s wall on 2 cores).

    python benchmarks/bench_sweep.py [--cases-log2 26] [--pieces 16] [--scalar]
                                     [op:format:mode ...]      (mode 'all': six modes)

Each run is `softfloat.sweep.run_sweep` over ``pieces`` shards spread evenly over
the whole operand space (2^cases-log2 cases in all): the kernels' speed depends
on the operands (the library's division takes several times longer on tiny or
huge quotients than on ordinary ones), so a slice of neighbouring cases (what an
earlier version of this script measured: 2^22 cases around a = 1.0)
underestimates whole runs. Prints wall and CPU nanoseconds per case for each
part (CPU over all threads: on a loaded machine the CPU figures are the steadier
ones) and the projections 2^32 x per-case wall and CPU. ``--scalar`` also times
the scalar oracle kernels on the same blocks (the SIMD kernels' slow twins).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from softfloat import sweep as S                 # noqa: E402
from softfloat.sweep import engine as E          # noqa: E402
from softfloat import sweep_oracles as O         # noqa: E402
from softfloat.rounding import DETERMINISTIC_MODES  # noqa: E402
from softfloat.sweep_oracles import check as C   # noqa: E402

DEFAULT = ["div:fp16:all", "div:bf16:all", "mul:fp16:all", "mul:bf16:all"]


class Timer:
    """Wraps a function of a module, adding its wall and CPU seconds to a total."""

    def __init__(self, mod, name, twin=None):
        self.mod, self.name, self.fn = mod, name, getattr(mod, name)
        self.w = self.c = 0.0
        self.twin = twin
        self.tw = self.tc = 0.0

    def __enter__(self):
        def timed(*a, **k):
            w, c = time.perf_counter(), time.process_time()
            r = self.fn(*a, **k)
            self.w += time.perf_counter() - w
            self.c += time.process_time() - c
            if self.twin is not None:
                w, c = time.perf_counter(), time.process_time()
                t = self.twin(*a, **k)
                self.tw += time.perf_counter() - w
                self.tc += time.process_time() - c
                assert tuple(t[:2]) == tuple(r[:2]), ("the twins disagree", t[:2], r[:2])
            return r
        setattr(self.mod, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.mod, self.name, self.fn)


def _scalar_check(*a, **k):
    old = C.USE_SIMD
    C.USE_SIMD = False
    try:
        return C.check_block(*a, **k)
    finally:
        C.USE_SIMD = old


def measure(op, fmt, mode, n_log2, pieces, scalar):
    total = S.total_cases(op, fmt)
    shards = max(pieces, total >> (n_log2 - (pieces.bit_length() - 1)))
    ids = [(2 * i + 1) * shards // (2 * pieces) for i in range(pieces)]
    S.run_sweep(op, fmt, mode, shards=shards, shard_ids=ids[:1])      # compile
    if scalar:
        _scalar_check_warm(op, fmt, mode, shards, ids[0])
    with Timer(E, "_subject") as tk, Timer(O, "check_block",
                                           _scalar_check if scalar else None) as to:
        w0, c0 = time.perf_counter(), time.process_time()
        rep = S.run_sweep(op, fmt, mode, shards=shards, shard_ids=ids)
        w, c = time.perf_counter() - w0, time.process_time() - c0
    w, c = w - to.tw, c - to.tc                  # without the scalar twin's reruns
    n = rep["cases"]
    assert rep["mismatches"] == 0, rep["first_mismatches"][:3]
    ns = lambda t: 1e9 * t / n                               # noqa: E731
    line = (f"{op:4s} {fmt:5s} {mode:12s} {rep['oracle']:4s} kernel {ns(tk.w):5.1f} ns "
            f"({ns(tk.c):5.1f} cpu)  oracle+compare {ns(to.w):5.1f} ({ns(to.c):5.1f} cpu)  "
            f"rest {ns(w - tk.w - to.w):4.1f} ({ns(c - tk.c - to.c):4.1f} cpu)  2^32 run: "
            f"{w / n * 2 ** 32:6.1f} s wall, {c / n * 2 ** 32:6.1f} cpu-s")
    if scalar:
        line += f"  | scalar oracle {ns(to.tc):5.1f} cpu ({to.tc / max(to.c, 1e-9):.2f}x)"
    print(line, flush=True)


def _scalar_check_warm(op, fmt, mode, shards, k):
    old = C.USE_SIMD
    C.USE_SIMD = False
    try:
        S.run_sweep(op, fmt, mode, shards=shards, shard_ids=[k])
    finally:
        C.USE_SIMD = old


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="*", default=DEFAULT)
    p.add_argument("--cases-log2", type=int, default=26,
                   help="cases per run, as a power of two (default 26; 28 is steadier)")
    p.add_argument("--pieces", type=int, default=16,
                   help="shards spread over the space (a power of two, default 16)")
    p.add_argument("--scalar", action="store_true",
                   help="also time the scalar oracle kernels on the same blocks")
    a = p.parse_args()
    if a.pieces < 1 or a.pieces & (a.pieces - 1):
        p.error("--pieces must be a power of two")
    print(f"threads: {os.environ.get('SOFTFLOAT_NUM_THREADS', 'all cores')}, cpus "
          f"{os.cpu_count()}, load {os.getloadavg()[0]:.1f}; 2^{a.cases_log2} cases per run "
          f"in {a.pieces} pieces", flush=True)
    for r in a.runs:
        op, fmt, mode = r.split(":")
        for m in (DETERMINISTIC_MODES if mode == "all" else [mode]):
            measure(op, fmt, m, a.cases_log2, a.pieces, a.scalar)


if __name__ == "__main__":
    main()
