"""Conversion throughput as ratios against peers measured in the same run.

    python benchmarks/bench_convert.py [--n 10000000] [--repeat 5]

float32 -> fp16 and -> bf16 in every rounding mode against numpy's
``astype(float16)`` and ml_dtypes' ``astype(bfloat16)``; float64 -> fp16 against
numpy and pychop (where installed); and the first-call compile time, cold (empty
numba cache) and warm (cache filled), each in a fresh process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from _timing import best




def first_call_seconds(cache_dir: str) -> float:
    code = ("import time; t=time.perf_counter(); import numpy as np, softfloat as sf; "
            "sf.to_bits(np.float32([1.5]), 'fp16'); print(time.perf_counter()-t)")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10**7)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    import softfloat as sf
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(a.n) * 100).astype(np.float32)
    x64 = x32.astype(np.float64) * (1 + 2.0 ** -30)
    print(f"n = {a.n:,}; numba threads = {__import__('numba').get_num_threads()}; best of {a.repeat}")
    t_np = best(lambda: x32.astype(np.float16), a.repeat)
    print(f"{'numpy f32->float16':34s} {t_np * 1e3:8.2f} ms")
    peers = {"fp16": ("numpy astype(float16)", t_np)}
    try:
        import ml_dtypes
        t_ml = best(lambda: x32.astype(ml_dtypes.bfloat16), a.repeat)
        print(f"{'ml_dtypes f32->bfloat16':34s} {t_ml * 1e3:8.2f} ms")
        peers["bf16"] = ("ml_dtypes astype(bfloat16)", t_ml)
    except ImportError:
        peers["bf16"] = ("numpy astype(float16)", t_np)
    print()
    print(f"{'ours':34s} {'ms':>8s}  {'ratio vs peer (peer time / ours)':s}")
    for fmt in ("fp16", "bf16"):
        t_rne = None
        for mode in sf.ROUNDING_MODES:
            t = best(lambda: sf.to_bits(x32, fmt, mode, seed=1), a.repeat)
            t_rne = t_rne or t
            name, tp = peers[fmt]
            print(f"f32->{fmt} {mode:24s} {t * 1e3:8.2f}  {tp / t:5.2f}x {name}; "
                  f"{t / t_rne:4.2f}x our nearest_even")
    t64 = best(lambda: sf.to_bits(x64, "fp16"), a.repeat)
    t64np = best(lambda: x64.astype(np.float16), a.repeat)
    print(f"f64->fp16 nearest_even               {t64 * 1e3:8.2f}  {t64np / t64:5.2f}x numpy astype(float16)")
    try:
        from pychop import Chop
        ch = Chop(exp_bits=5, sig_bits=10, rmode=1, chunk_size=a.n)
        tpc = best(lambda: ch(x64), 1)
        print(f"f64->fp16 pychop Chop(5,10)          {tpc * 1e3:8.2f}  ours is {tpc / t64:5.1f}x faster")
    except Exception as e:  # pychop is optional
        print(f"pychop not measured ({type(e).__name__}: {e})")
    with tempfile.TemporaryDirectory() as d:
        cold = first_call_seconds(d)
        warm = first_call_seconds(d)
    print(f"\nfirst call (import + to_bits), cold cache: {cold:.2f} s; warm cache: {warm:.2f} s")


if __name__ == "__main__":
    main()
