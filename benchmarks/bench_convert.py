"""Conversion throughput as ratios against peers measured in the same run.

    python benchmarks/bench_convert.py [--n 10000000] [--repeat 5] [--threads 2] [--no-cold]

float32 and float64 -> fp16, bf16, fp8_e4m3 and fp8_e5m2 in every rounding
mode against numpy's ``astype(float16)``, ml_dtypes' ``astype(bfloat16 /
float8_e4m3fn / float8_e5m2)`` and torch CPU's ``.to(...)``; float64 -> fp16
against pychop too (where installed); the first-call compile time, cold (empty
numba cache) and warm, each in a fresh process; and the speed targets, each
marked met or not. The modes of one conversion and its peers are timed in
rounds (one call of each per round), so the ratios hold on a loaded machine
too. torch's OpenMP threads are told to sleep when idle (OMP_WAIT_POLICY=PASSIVE
unless set): with libgomp's default they spin for milliseconds after each torch
call, on the cores that the next call in the round needs (float64 -> fp8_e4m3
then measured 4.3x ml_dtypes instead of 7.5x in the same conditions).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile


import numpy as np
from _timing import best, best_interleaved

# the checkout this script lives in, ahead of any installed softfloat
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))




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
    # torch's OpenMP threads (libgomp) otherwise spin for milliseconds after each
    # torch call, on the cores that the next call in the round needs
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import softfloat as sf
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(a.n) * 100).astype(np.float32)
    x64 = x32.astype(np.float64) * (1 + 2.0 ** -30)
    print(f"n = {a.n:,}; {a.threads} threads; best of {a.repeat} rounds (each round: every "
          f"mode and the peers once); ratio = peer time / our time (> 1: we are faster); "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}")
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    try:
        import torch
        torch.set_num_threads(a.threads)
    except ImportError:
        torch = None
    # (source, format): (peer name, its function), torch dtype name
    peers = {}
    for src, xs in (("f32", x32), ("f64", x64)):
        peers[(src, "fp16")] = ("numpy astype(float16)", lambda xs=xs: xs.astype(np.float16))
        if ml_dtypes is not None:
            for fmt, name in (("bf16", "bfloat16"), ("fp8_e4m3", "float8_e4m3fn"),
                              ("fp8_e5m2", "float8_e5m2")):
                peers[(src, fmt)] = (f"ml_dtypes astype({name})",
                                     lambda xs=xs, d=getattr(ml_dtypes, name): xs.astype(d))
    tnames = {"fp16": "float16", "bf16": "bfloat16", "fp8_e4m3": "float8_e4m3fn",
              "fp8_e5m2": "float8_e5m2"}
    print(f"{'conversion':30s} {'ours ms':>8s}  {'peer':>32s} {'ms':>8s} {'ratio':>6s} "
          f"{'torch ms':>9s} {'ratio':>6s} {'vs our RNE':>10s}")
    res = {}
    ratios = {}
    for src, xs in (("f32", x32), ("f64", x64)):
        tx = torch.from_numpy(xs) if torch is not None else None
        for fmt in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
            fns = {m: (lambda m=m: sf.to_bits(xs, fmt, m, seed=1)) for m in sf.ROUNDING_MODES}
            if (src, fmt) in peers:
                fns["peer"] = peers[(src, fmt)][1]
            if tx is not None:
                fns["torch"] = lambda tx=tx, d=getattr(torch, tnames[fmt]): tx.to(d)
            ts = best_interleaved(fns, a.repeat)
            t_rne = ts["nearest_even"]
            for mode in sf.ROUNDING_MODES:
                t = ts[mode]
                res[(src, fmt, mode)] = t
                line = f"{src}->{fmt:8s} {mode:17s} {t * 1e3:8.2f}"
                if "peer" in ts:
                    tp = ts["peer"]
                    line += f"  {peers[(src, fmt)][0]:>32s} {tp * 1e3:8.2f} {tp / t:6.2f}"
                    ratios[(src, fmt)] = ts["peer"] / t_rne
                if "torch" in ts:
                    tq = ts["torch"]
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

    print("\ntargets (ratios measured on a loaded machine are indicative only):")

    def show(name, ok, detail):
        print(f"  [{'met' if ok else 'NOT met'}] {name}: {detail}")

    def ratio(src, fmt):
        return ratios[(src, fmt)]

    show("f32->fp16 >= 1.5x numpy astype", ratio("f32", "fp16") >= 1.5,
         f"{ratio('f32', 'fp16'):.2f}x")
    if ("f32", "bf16") in ratios:
        show("f32->bf16 >= 1x ml_dtypes", ratio("f32", "bf16") >= 1.0,
             f"{ratio('f32', 'bf16'):.2f}x")
    if ("f64", "fp8_e4m3") in ratios:
        show("f64->fp8_e4m3 >= 7x ml_dtypes", ratio("f64", "fp8_e4m3") >= 7.0,
             f"{ratio('f64', 'fp8_e4m3'):.2f}x")
    show("f64->fp16 >= 1x numpy", ratio("f64", "fp16") >= 1.0, f"{ratio('f64', 'fp16'):.2f}x")
    for src in ("f32", "f64"):
        for fmt in ("fp16", "bf16"):
            t0 = res[(src, fmt, "nearest_even")]
            worst = max(res[(src, fmt, m)] / t0 for m in sf.DETERMINISTIC_MODES[1:])
            show(f"{src}->{fmt} directed modes within 1.2x of nearest_even", worst <= 1.2,
                 f"slowest {worst:.2f}x")


if __name__ == "__main__":
    main()
