"""Elementwise arithmetic throughput as ratios against numpy's float16 (and
ml_dtypes' bfloat16) arithmetic measured in the same run.

    python benchmarks/bench_arith.py [--n 10000000] [--repeat 3]

fp16 and bf16 add, mul, div and fma on encodings, nearest_even and the other
modes for add; numpy has no fused multiply-add in float16, so fma is compared
with numpy's ``a * b + c`` (two roundings), which is what a user would write.
"""
from __future__ import annotations

import argparse

import numpy as np
from _timing import best




def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10**7)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    import softfloat as sf
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(a.n) * 10 for _ in range(3)]
    print(f"n = {a.n:,}; best of {a.repeat}; ratio = peer time / our time (> 1: we are faster)")
    peers = {"fp16": [v.astype(np.float16) for v in vals]}
    try:
        import ml_dtypes
        peers["bf16"] = [v.astype(ml_dtypes.bfloat16) for v in vals]
    except ImportError:
        pass
    for fmt in ("fp16", "bf16"):
        x, y, z = (sf.to_bits(v, fmt) for v in vals)
        if fmt in peers:
            px, py, pz = peers[fmt]
            peer_ops = {"add": lambda: px + py, "mul": lambda: px * py, "div": lambda: px / py,
                        "fma": lambda: px * py + pz}
            peer_name = "numpy float16" if fmt == "fp16" else "ml_dtypes bfloat16"
        ours = {"add": lambda: sf.add(x, y, fmt), "mul": lambda: sf.mul(x, y, fmt),
                "div": lambda: sf.div(x, y, fmt), "fma": lambda: sf.fma(x, y, z, fmt)}
        for op, f in ours.items():
            t = best(f, a.repeat)
            line = f"{fmt} {op:4s} nearest_even {t * 1e3:8.2f} ms"
            if fmt in peers:
                tp = best(peer_ops[op], a.repeat)
                line += f"   {peer_name} {tp * 1e3:8.2f} ms   ratio {tp / t:5.2f}x"
            print(line)
        t0 = best(lambda: sf.add(x, y, fmt), a.repeat)
        for mode in sf.ROUNDING_MODES[1:]:
            t = best(lambda: sf.add(x, y, fmt, mode, seed=1), a.repeat)
            print(f"{fmt} add  {mode:12s} {t * 1e3:8.2f} ms   {t / t0:4.2f}x our nearest_even")


if __name__ == "__main__":
    main()
