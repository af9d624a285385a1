"""Conversion throughput as ratios against peers measured in the same run.

    python benchmarks/bench_convert.py [--n 10000000] [--repeat 5] [--threads 2] [--no-cold]

float32 -> fp16 and -> bf16, float64 -> fp16 and -> bf16 in every
deterministic mode (and stochastic) against numpy's ``astype(float16)``,
ml_dtypes' ``astype(bfloat16)`` and torch CPU's ``.to(half / bfloat16)``;
float64 -> fp16 against pychop too (where installed); the first-call compile
time, cold (empty numba cache) and warm, each in a fresh process; and the
speed targets, each marked met or not. The rounding modes of one conversion
are timed in rounds (one call of each per round), so the "vs our RNE" ratios
hold on a loaded machine too.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import time

import numpy as np
from _timing import best

# the checkout this script lives in, ahead of any installed softfloat
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def best_interleaved(fns: dict, repeat: int) -> dict:
    """{name: fastest of `repeat` calls} with the calls taken in rounds (one of
    each per round, after one warm-up round), so that a loaded machine slows
    every variant alike and their ratios stay meaningful."""
    for fn in fns.values():
        fn()
    out = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            out[k] = min(out[k], time.perf_counter() - t)
    return out


_FIRST_CALLS = (
    "import time; t=time.perf_counter(); import numpy as np, softfloat as sf; "
    "x = np.float32([1.5] * 20); r = [];\n"
    "for src, m in (('f32', 'nearest_even'), ('f32', 'toward_zero'), ('f64', 'nearest_even'), "
    "('f64', 'upward')):\n"
    "    sf.to_bits(x.astype(src.replace('f', 'float')), 'fp16', m); "
    "r.append(time.perf_counter() - t); t = time.perf_counter()\n"
    "print(*r)")


def first_call_seconds(cache_dir: str) -> list:
    """Seconds, in a fresh process: import + the first f32 -> fp16 nearest-even
    call, then the first toward_zero call (the other modes' kernel), the first
    f64 nearest-even and the first f64 upward call."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir,
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _FIRST_CALLS], env=env, capture_output=True,
                         text=True, check=True)
    return [float(v) for v in out.stdout.strip().splitlines()[-1].split()]


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10**7)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-cold", action="store_true", help="skip the cold-start measurement")
    a = p.parse_args(argv)
    os.environ.setdefault("SOFTFLOAT_NUM_THREADS", str(a.threads))
    import softfloat as sf
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(a.n) * 100).astype(np.float32)
    x64 = x32.astype(np.float64) * (1 + 2.0 ** -30)
    print(f"n = {a.n:,}; {a.threads} threads; best of {a.repeat}; "
          f"ratio = peer time / our time (> 1: we are faster)")
    peers = {}
    peers[("f32", "fp16")] = ("numpy astype(float16)", best(lambda: x32.astype(np.float16),
                                                            a.repeat))
    peers[("f64", "fp16")] = ("numpy astype(float16)", best(lambda: x64.astype(np.float16),
                                                            a.repeat))
    try:
        import ml_dtypes
        peers[("f32", "bf16")] = ("ml_dtypes astype(bfloat16)",
                                  best(lambda: x32.astype(ml_dtypes.bfloat16), a.repeat))
        peers[("f64", "bf16")] = ("ml_dtypes astype(bfloat16)",
                                  best(lambda: x64.astype(ml_dtypes.bfloat16), a.repeat))
    except ImportError:
        pass
    torch_t = {}
    try:
        import torch
        torch.set_num_threads(a.threads)
        t32, t64 = torch.from_numpy(x32), torch.from_numpy(x64)
        for src, tx in (("f32", t32), ("f64", t64)):
            torch_t[(src, "fp16")] = best(lambda: tx.to(torch.float16), a.repeat)
            torch_t[(src, "bf16")] = best(lambda: tx.to(torch.bfloat16), a.repeat)
    except ImportError:
        pass
    print(f"{'conversion':30s} {'ours ms':>8s}  {'peer':>26s} {'ms':>8s} {'ratio':>6s} "
          f"{'torch ms':>9s} {'ratio':>6s} {'vs our RNE':>10s}")
    res = {}
    for src, xs in (("f32", x32), ("f64", x64)):
        for fmt in ("fp16", "bf16"):
            ts = best_interleaved({m: (lambda m=m: sf.to_bits(xs, fmt, m, seed=1))
                                   for m in sf.ROUNDING_MODES}, a.repeat)
            t_rne = ts["nearest_even"]
            for mode in sf.ROUNDING_MODES:
                t = ts[mode]
                res[(src, fmt, mode)] = t
                line = f"{src}->{fmt} {mode:20s} {t * 1e3:8.2f}"
                if (src, fmt) in peers:
                    name, tp = peers[(src, fmt)]
                    line += f"  {name:>26s} {tp * 1e3:8.2f} {tp / t:6.2f}"
                if (src, fmt) in torch_t:
                    tq = torch_t[(src, fmt)]
                    line += f" {tq * 1e3:9.2f} {tq / t:6.2f}"
                line += f" {t / t_rne:9.2f}x"
                print(line)
    try:
        from pychop import Chop
        ch = Chop(exp_bits=5, sig_bits=10, rmode=1, chunk_size=a.n)
        tpc = best(lambda: ch(x64), 1)
        t64 = res[("f64", "fp16", "nearest_even")]
        print(f"f64->fp16 pychop Chop(5,10) {tpc * 1e3:8.2f} ms: ours is {tpc / t64:5.1f}x faster")
    except Exception as e:  # pychop is optional
        print(f"pychop not measured ({type(e).__name__})")
    if not a.no_cold:
        with tempfile.TemporaryDirectory() as d:
            cold = first_call_seconds(d)
            warm = first_call_seconds(d)
        names = ("import + f32->fp16 nearest_even", "then f32->fp16 toward_zero",
                 "then f64->fp16 nearest_even", "then f64->fp16 upward")
        print("\nfirst calls in a fresh process, cold cache / warm cache (s):")
        for name, c, w in zip(names, cold, warm):
            print(f"  {name:34s} {c:6.2f} {w:6.2f}")

    print("\ntargets (preliminary unless measured on a quiet machine):")

    def show(name, ok, detail):
        print(f"  [{'met' if ok else 'NOT met'}] {name}: {detail}")

    def ratio(src, fmt):
        return peers[(src, fmt)][1] / res[(src, fmt, "nearest_even")]

    show("f32->fp16 >= 1.5x numpy astype", ratio("f32", "fp16") >= 1.5,
         f"{ratio('f32', 'fp16'):.2f}x")
    if ("f32", "bf16") in peers:
        show("f32->bf16 >= 1x ml_dtypes", ratio("f32", "bf16") >= 1.0,
             f"{ratio('f32', 'bf16'):.2f}x")
    show("f64->fp16 >= 1x numpy", ratio("f64", "fp16") >= 1.0, f"{ratio('f64', 'fp16'):.2f}x")
    for src in ("f32", "f64"):
        for fmt in ("fp16", "bf16"):
            t0 = res[(src, fmt, "nearest_even")]
            worst = max(res[(src, fmt, m)] / t0 for m in sf.DETERMINISTIC_MODES[1:])
            show(f"{src}->{fmt} directed modes within 1.2x of nearest_even", worst <= 1.2,
                 f"slowest {worst:.2f}x")


if __name__ == "__main__":
    main()
