"""Where an fma sweep shard's time goes: the kernel under test, the SIMD fma
oracle + compare (`sweep_oracles.simd_fma`) and the scalar one, per case.

    python benchmarks/bench_fma_oracle.py [--fmt fp16] [--log2-cases 24] [--repeat 3]
                                          [--rounding nearest_even]

For three sub-spaces of the sweep engine (c fixed to 1.0 as in bench_dask.py;
the cancel4 family; the whole space), one shard's blocks (2**log2-cases
cases, from the middle of the space) are timed on ONE thread
(SOFTFLOAT_NUM_THREADS=1 is set here): ``sf.fma`` on the block's operands
(the engine's `_subject`), ``check_block`` with the SIMD kernels and with
the scalar ones (SOFTFLOAT_SWEEP_SIMD=0's path). Best of ``repeat`` per
block, summed. Prints ns per case of each, the ratio scalar / SIMD, the
share of a shard's time in the oracle, and the projected throughput of J
single-thread workers (--jobs, default 2) with no other overhead:
J / (kernel + oracle) cases per second. Ratios taken in the same run are
the figures to quote on a loaded machine.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ["SOFTFLOAT_NUM_THREADS"] = "1"


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--fmt", default="fp16")
    p.add_argument("--rounding", default="nearest_even")
    p.add_argument("--log2-cases", type=int, default=24)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args(argv)
    import numpy as np
    import softfloat as sf
    from softfloat import sweep as S
    from softfloat.sweep.engine import _subject
    from softfloat import sweep_oracles as O
    from softfloat.sweep_oracles import check as C

    f = sf.get_format(a.fmt)
    mode = sf.get_rounding(a.rounding)
    mc = O.method_code("auto", f, mode, "fma")
    one = int(sf.to_bits(np.array([1.0]), f)[0])
    n = 1 << a.log2_cases

    def best(fn):
        t = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            r = fn()
            t.append(time.perf_counter() - t0)
        return min(t), r

    print(f"fma {f.name} {mode.label}, one thread, {n:,} cases per sub-space, best of "
          f"{a.repeat}")
    print(f"{'sub-space':10s} {'kernel':>8s} {'simd':>8s} {'scalar':>8s}  ns/case   "
          f"scalar/simd  oracle share  {a.jobs}-worker M cases/s (simd / scalar)")
    for name, kw in (("c=1.0", dict(c=one)), ("cancel4", dict(c_family="cancel4")),
                     ("full", {})):
        sp = S.Space("fma", f, **kw)
        lo = (sp.total // 2) // n * n if name != "c=1.0" else 0
        tk = ts = tc = 0.0
        for s, ops, lay in sp.blocks(lo, lo + n):
            dk, (got, gotf) = best(lambda: _subject(sp, mode, ops))
            C.USE_SIMD = True
            d1, r1 = best(lambda: O.check_block("fma", lay, f, f, mode, mc, got, gotf))
            C.USE_SIMD = False
            d2, r2 = best(lambda: O.check_block("fma", lay, f, f, mode, mc, got, gotf))
            C.USE_SIMD = True
            if r1[:2] != r2[:2]:
                print(f"{name}: SIMD and scalar checks disagree: {r1[:2]} {r2[:2]}",
                      file=sys.stderr)
                return 1
            tk += dk
            ts += d1
            tc += d2
        k, s1, s2 = (x / n * 1e9 for x in (tk, ts, tc))
        print(f"{name:10s} {k:8.2f} {s1:8.2f} {s2:8.2f}            {s2 / s1:5.2f}x"
              f"      {s1 / (k + s1):5.1%} / {s2 / (k + s2):5.1%}     "
              f"{a.jobs / (k + s1) * 1e3:6.1f} / {a.jobs / (k + s2) * 1e3:6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
