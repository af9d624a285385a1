"""softfloat.verify's throughput: cases per second through each kind of
implementation, on the same cases in one run (ratios, not absolute figures).

    python benchmarks/bench_verify.py [--log2-cases 21] [--repeat 3]

* ``library``: a Python callable returning the library's own results and flags
  (what verify itself costs: operands, the library's operation, comparison);
* ``numpy``: `numpy_impl(np.add, np.float16)` (no flags);
* ``exec``: the SFV1 reference program of examples/ (NumPy float16 in a child
  process: the protocol's pipe and batching on top);
* ``exec --library``: the reference program answering with softfloat (flags).

fp16 add, seeded random cases (no diagnosis), best of ``repeat``; every run must
give the same mismatch count as its first.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log2-cases", type=int, default=21)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    import softfloat as sf
    ref = os.path.join(ROOT, "examples", "sfv1_reference.py")
    impls = {
        "library": lambda x, y: sf.add(x, y, "fp16", return_flags=True),
        "numpy": sf.verification.numpy_impl(np.add, np.float16),
        "exec": f"exec:{sys.executable} {ref}",
        "exec --library": f"exec:{sys.executable} {ref} --library",
    }
    n = 1 << a.log2_cases
    best = {k: float("inf") for k in impls}
    count = {}
    for _ in range(a.repeat):
        for name, impl in impls.items():
            t0 = time.perf_counter()
            rep = sf.verify(impl, "add", "fp16", space=n, check_nan=False, diagnose=False)
            best[name] = min(best[name], time.perf_counter() - t0)
            assert count.setdefault(name, rep.mismatches) == rep.mismatches
    base = n / best["library"]
    print(f"fp16 add, {n:,} random cases, best of {a.repeat}:")
    for name, t in best.items():
        print(f"  {name:15s} {n / t:12,.0f} cases/s  ({n / t / base:.2f} x library)  "
              f"mismatches {count[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
