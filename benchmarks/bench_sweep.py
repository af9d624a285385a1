"""Where a sweep's time goes: the library's kernel, the oracle + compare, per case,
for 2^22-case slices of 2^32-pair sweeps; and the projected time of a whole 2^32
op-mode run (the target: under 60 s wall on 2 cores).

    python benchmarks/bench_sweep.py [--cases-log2 22] [op:format:mode ...]

Prints wall and CPU nanoseconds per case for each part (CPU over all threads:
on a loaded machine the CPU figures are the steadier ones) and the projection
2^32 x (kernel + oracle) wall.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from softfloat import sweep as S                 # noqa: E402
from softfloat import sweep_oracles as O         # noqa: E402
from softfloat.rounding import get_rounding      # noqa: E402

DEFAULT = ["add:fp16:nearest_even", "add:fp16:toward_zero", "mul:bf16:downward",
           "div:fp16:nearest_even", "div:bf16:odd", "from_float32:fp16:nearest_even",
           "fma:fp16:nearest_even"]


def measure(op, fmt, mode, n_log2):
    sp = S.Space(op, fmt, **({"c": 0x3C00 if fmt == "fp16" else 0x3F80} if op == "fma" else {}))
    m = get_rounding(mode)
    mc = O.method_code("auto", sp.dst, m, S._op_kind(sp), sp.src)
    oop = "convert" if sp.kind in ("convert", "from_float32") else op
    lo = min(sp.total - (1 << n_log2), 0x3C00 << 16)
    blocks = list(sp.blocks(lo, lo + (1 << n_log2)))
    s, ops, lay = blocks[0]
    got, gotf = S._subject(sp, m, ops)                       # compile both
    O.check_block(oop, lay, sp.src, sp.dst, m, mc, got, gotf)
    tk = to = ck = co = 0.0
    n = 0
    for s, ops, lay in blocks:
        w0, c0 = time.perf_counter(), time.process_time()
        got, gotf = S._subject(sp, m, ops)
        w1, c1 = time.perf_counter(), time.process_time()
        k1, k2, _ = O.check_block(oop, lay, sp.src, sp.dst, m, mc, got, gotf)
        w2, c2 = time.perf_counter(), time.process_time()
        assert k1 == k2 == 0, (op, fmt, mode)
        tk += w1 - w0
        to += w2 - w1
        ck += c1 - c0
        co += c2 - c1
        n += lay.n
    ns = lambda t: 1e9 * t / n                               # noqa: E731
    print(f"{op:12s} {fmt:5s} {mode:12s} kernel {ns(tk):6.2f} ns ({ns(ck):6.2f} cpu)  "
          f"oracle+compare {ns(to):6.2f} ns ({ns(co):6.2f} cpu)  "
          f"2^32 run: {(tk + to) / n * 2 ** 32:6.1f} s wall, {(ck + co) / n * 2 ** 32:6.1f} "
          f"cpu-s", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="*", default=DEFAULT)
    p.add_argument("--cases-log2", type=int, default=22)
    a = p.parse_args()
    print(f"threads: {os.environ.get('SOFTFLOAT_NUM_THREADS', 'all cores')}, cpus "
          f"{os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    for r in a.runs:
        measure(*r.split(":"), a.cases_log2)


if __name__ == "__main__":
    main()
