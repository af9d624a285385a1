"""Elementwise arithmetic throughput as ratios against peers measured in the same
run: numpy float16, ml_dtypes bfloat16 and torch CPU half / bfloat16.

    python benchmarks/bench_arith.py [--n 10000000] [--repeat 3] [--threads 2]

fp16 and bf16 add, sub, mul, div, sqrt and fma on encodings in every
deterministic mode (peers in nearest_even only; the six modes of an op are
timed in turn, round after round, so that the directed-mode ratios compare
times taken side by side). numpy has no fused multiply-add in float16, so fma
is compared with numpy's ``a * b + c`` (two roundings), which is what a user
would write; torch's with ``addcmul``. sqrt takes |x| (numpy, torch and we all
handle negative inputs, but NaN results go through our general kernel). The
table ends with the speed targets, each marked met or not.
"""
from __future__ import annotations

import argparse
import time
import os

import numpy as np
from _timing import best


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10**7)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    os.environ.setdefault("SOFTFLOAT_NUM_THREADS", str(a.threads))
    import softfloat as sf
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    try:
        import torch
        torch.set_num_threads(a.threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(a.n) * 10 for _ in range(3)]
    vals.append(np.abs(vals[0]))
    print(f"n = {a.n:,}; {a.threads} threads; best of {a.repeat}; ratio = peer time / our time "
          f"(> 1: we are faster)")
    print(f"{'op':22s} {'ours ms':>8s} {'peer':>20s} {'ms':>8s} {'ratio':>6s} "
          f"{'torch ms':>9s} {'ratio':>6s}")
    results = {}
    for fmt in ("fp16", "bf16"):
        x, y, z, w = (sf.to_bits(v, fmt) for v in vals)
        peer = None
        if fmt == "fp16":
            peer = ("numpy float16", [v.astype(np.float16) for v in vals])
        elif ml_dtypes is not None:
            peer = ("ml_dtypes bfloat16", [v.astype(ml_dtypes.bfloat16) for v in vals])
        tt = None
        if torch is not None:
            dt = torch.float16 if fmt == "fp16" else torch.bfloat16
            tt = [torch.from_numpy(v).to(dt) for v in vals]
        ops = {
            "add": (lambda m: sf.add(x, y, fmt, m), lambda P: P[0] + P[1],
                    lambda T: T[0] + T[1]),
            "sub": (lambda m: sf.sub(x, y, fmt, m), lambda P: P[0] - P[1],
                    lambda T: T[0] - T[1]),
            "mul": (lambda m: sf.mul(x, y, fmt, m), lambda P: P[0] * P[1],
                    lambda T: T[0] * T[1]),
            "div": (lambda m: sf.div(x, y, fmt, m), lambda P: P[0] / P[1],
                    lambda T: T[0] / T[1]),
            "sqrt": (lambda m: sf.sqrt(w, fmt, m), lambda P: np.sqrt(P[3]),
                     lambda T: torch.sqrt(T[3])),
            "fma": (lambda m: sf.fma(x, y, z, fmt, m), lambda P: P[0] * P[1] + P[2],
                    lambda T: torch.addcmul(T[2], T[0], T[1])),
        }
        if fmt == "fp16":
            # warm-up round: the first second of timed calls in a process runs about
            # 2x slow (seen on the first row, whichever op it is); spin it off here
            t_end = time.perf_counter() + 2.0
            while time.perf_counter() < t_end:
                ops["add"][0]("nearest_even")
                if tt is not None:
                    ops["add"][2](tt)
        for op, (ours, fpeer, ftorch) in ops.items():
            # the modes are timed in turn, round after round (best of the rounds for
            # each), so that a slow spell of the machine hits them alike
            ts = {}
            for mode in sf.DETERMINISTIC_MODES:
                ours(mode)
            for _ in range(a.repeat):
                for mode in sf.DETERMINISTIC_MODES:
                    t = best(lambda: ours(mode), 1, warmup=False)
                    ts[mode] = min(ts.get(mode, t), t)
            for mode in sf.DETERMINISTIC_MODES:
                t = ts[mode]
                line = f"{fmt} {op:4s} {mode:12s} {t * 1e3:8.2f}"
                rp = rt = None
                if peer is not None and mode == "nearest_even":
                    with np.errstate(all="ignore"):
                        tp = best(lambda: fpeer(peer[1]), a.repeat)
                    rp = tp / t
                    line += f" {peer[0]:>20s} {tp * 1e3:8.2f} {rp:6.2f}"
                else:
                    line += " " * 37
                if tt is not None and mode == "nearest_even":
                    tq = best(lambda: ftorch(tt), a.repeat)
                    rt = tq / t
                    line += f" {tq * 1e3:9.2f} {rt:6.2f}"
                results[(fmt, op, mode)] = (t, rp, rt)
                print(line)
    print("\ntargets (preliminary unless measured on a quiet machine):")

    def show(name, ok, detail):
        print(f"  [{'met' if ok else 'NOT met'}] {name}: {detail}")

    for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
        t, rp, rt = results[("fp16", op, "nearest_even")]
        if rp is not None:
            need = 1.0 if op in ("sqrt", "fma") else 2.0
            show(f"fp16 {op} >= {need:g}x numpy float16", rp >= need, f"{rp:.2f}x")
        if rt is not None:
            show(f"fp16 {op} within 4x torch CPU half", rt >= 0.25, f"{rt:.2f}x (>= 0.25)")
    for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
        t, rp, rt = results[("bf16", op, "nearest_even")]
        if rp is not None:
            show(f"bf16 {op} >= 1x ml_dtypes", rp >= 1.0, f"{rp:.2f}x")
    for fmt in ("fp16", "bf16"):
        for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
            t0 = results[(fmt, op, "nearest_even")][0]
            worst = max(results[(fmt, op, m)][0] / t0 for m in sf.DETERMINISTIC_MODES[1:])
            show(f"{fmt} {op} other modes within 1.2x of nearest_even", worst <= 1.2,
                 f"slowest {worst:.2f}x")


if __name__ == "__main__":
    main()
