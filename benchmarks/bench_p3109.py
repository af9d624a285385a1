"""P3109 formats against OCP fp8 on the same kernels, measured in the same run.

    python benchmarks/bench_p3109.py [--n 2000000] [--repeat 5] [--threads 2]

Each row times one operation on Binary8p4se / Binary8p3se and on the OCP fp8
format of the same shape (fp8_e4m3 / fp8_e5m2), in rounds (one call of each per
round, best of --repeat), and prints the ratio P3109 / OCP; the target is a
ratio of at most 1.5.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from _timing import best_interleaved

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))




def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2 * 10**6)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    os.environ.setdefault("SOFTFLOAT_NUM_THREADS", str(a.threads))
    import softfloat as sf
    from softfloat import p3109
    rng = np.random.default_rng(0)
    x = rng.standard_normal(a.n) * 8
    pairs = (("binary8p4se", "fp8_e4m3"), ("binary8p3se", "fp8_e5m2"))
    rows = []
    for pf, of in pairs:
        bp, bo = sf.to_bits(x, pf), sf.to_bits(x, of)
        cp, co = sf.to_bits(x[::-1].copy(), pf), sf.to_bits(x[::-1].copy(), of)
        ops = {
            "to_bits float64 (nearest_even)": (lambda f=pf: sf.to_bits(x, f),
                                               lambda f=of: sf.to_bits(x, f)),
            "to_bits float64 (toward_zero)": (lambda f=pf: sf.to_bits(x, f, "toward_zero"),
                                              lambda f=of: sf.to_bits(x, f, "toward_zero")),
            "from_bits": (lambda: sf.from_bits(bp, pf), lambda: sf.from_bits(bo, of)),
            "convert -> fp16": (lambda: sf.convert(bp, pf, "fp16"),
                                lambda: sf.convert(bo, of, "fp16")),
            "convert fp16 ->": (lambda h=sf.to_bits(x, "fp16"): sf.convert(h, "fp16", pf),
                                lambda h=sf.to_bits(x, "fp16"): sf.convert(h, "fp16", of)),
            "add": (lambda: sf.add(bp, cp, pf), lambda: sf.add(bo, co, of)),
            "mul": (lambda: sf.mul(bp, cp, pf), lambda: sf.mul(bo, co, of)),
            "fma": (lambda: sf.fma(bp, cp, bp, pf), lambda: sf.fma(bo, co, bo, of)),
            "div": (lambda: sf.div(bp, cp, pf), lambda: sf.div(bo, co, of)),
        }
        for name, (fp, fo) in ops.items():
            t = best_interleaved({"p": fp, "o": fo}, a.repeat)
            rows.append((f"{name}", pf, of, t["p"], t["o"]))
        # the P3109 module's mixed-format add (operands decoded, one rounding) against
        # the same-format kernel add of the OCP format
        t = best_interleaved({"p": lambda: p3109.add(bp, cp, pf, pf, pf),
                              "o": lambda: sf.add(bo, co, of)}, a.repeat)
        rows.append(("p3109.add (module) vs sf.add", pf, of, t["p"], t["o"]))
    print(f"n = {a.n:,}; {a.threads} threads; best of {a.repeat}")
    print(f"{'operation':34s} {'P3109':12s} {'OCP':9s} {'P3109 ms':>9s} {'OCP ms':>8s} "
          f"{'ratio':>6s}  target <= 1.5")
    for name, pf, of, tp, to in rows:
        r = tp / to
        print(f"{name:34s} {pf:12s} {of:9s} {tp * 1e3:9.1f} {to * 1e3:8.1f} {r:6.2f}  "
              f"{'met' if r <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
