"""MX and NVFP4 quantize + dequantize of N float32 values (default 10^7):
softfloat.mx against torchao's CPU implementation (torchao.prototype.mx_formats:
MXTensor.to_mx / dequantize, nvfp4_quantize) and gfloat (quantize_block, one
block at a time; timed on a slice and scaled, since it is a per-block Python loop),
all in the same run. Prints seconds and the ratios; exit status 0 if the targets
(>= torchao's speed, >= 10x gfloat's) hold, 1 if not, 2 if it could not run.

    python benchmarks/bench_mx.py [--n 10000000] [--repeat 3] [--threads 1] [--json out.json]
"""
import argparse
import json
import sys
import time

import os

import numpy as np


# the checkout this script lives in, ahead of any installed softfloat
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gfloat-blocks", type=int, default=500)
    ap.add_argument("--threads", type=int, default=0,
                    help="threads for both softfloat and torch (default: each one's own "
                         "default); 1 gives a steadier comparison on a loaded machine")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.threads > 0:
        os.environ["SOFTFLOAT_NUM_THREADS"] = str(args.threads)
    try:
        from softfloat import mx
    except Exception as e:  # pragma: no cover
        print("cannot import softfloat.mx:", e)
        return 2
    n = args.n - args.n % 32
    x = np.random.default_rng(0).standard_normal((n // 1024, 1024)).astype(np.float32)
    res = {"n": n}
    cases = [("mxfp8_e4m3", 32), ("mxfp8_e5m2", 32), ("mxfp6_e2m3", 32), ("mxfp6_e3m2", 32),
             ("mxfp4", 32), ("mxint8", 32), ("nvfp4", 16)]
    ours = {}
    for fmt, _ in cases:
        def run(fmt=fmt):
            c, s = mx.quantize(x, fmt)
            return mx.dequantize(c, s, fmt)
        ours[fmt] = run
    theirs = {}
    try:
        import torch
        from torchao.prototype.mx_formats.mx_tensor import MXTensor
        from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize
        from torchao.prototype.mx_formats.kernels import unpack_uint4, f4_unpacked_to_f32
        import torchao
        res["torchao_version"] = torchao.__version__
        if args.threads > 0:
            torch.set_num_threads(args.threads)
        res["torch_threads"] = torch.get_num_threads()
        xt = torch.from_numpy(x)
        dt = {"mxfp8_e4m3": torch.float8_e4m3fn, "mxfp8_e5m2": torch.float8_e5m2,
              "mxfp4": torch.float4_e2m1fn_x2, "mxfp6_e2m3": "fp6_e2m3",
              "mxfp6_e3m2": "fp6_e3m2"}
        try:
            from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
            dt["mxfp6_e2m3"] = DTYPE_FP6_E2M3
            dt["mxfp6_e3m2"] = DTYPE_FP6_E3M2
        except ImportError:
            pass
        for fmt, _ in cases:
            if fmt == "mxint8":
                continue                    # torchao has no MXINT8
            if fmt == "nvfp4":
                def th():
                    s, d = nvfp4_quantize(xt, 16)
                    v = f4_unpacked_to_f32(unpack_uint4(d)).reshape(-1, 16)
                    return v * s.float().reshape(-1, 1)
            else:
                def th(fmt=fmt):
                    t = MXTensor.to_mx(xt, dt[fmt], 32)
                    return t.dequantize(torch.float32)
            theirs[fmt] = th
    except Exception as e:
        res["torchao_error"] = f"{type(e).__name__}: {e}"
    # interleaved: per format, softfloat and torchao alternate, best of --repeat each
    # (a shared machine's load then weighs on both alike)
    for fmt, _ in cases:
        fns = [("softfloat", ours[fmt])] + ([("torchao", theirs[fmt])] if fmt in theirs else [])
        ts = {name: [] for name, _ in fns}
        for name, f in fns:
            f()                                  # warm-up (compilation, allocations)
        for _ in range(args.repeat):
            for name, f in fns:
                t = time.perf_counter()
                f()
                ts[name].append(time.perf_counter() - t)
        for name in ts:
            res[f"{name}_{fmt}"] = min(ts[name])
    try:
        import gfloat
        from gfloat.formats import format_info_mxfp8_e4m3, format_info_mxfp4_e2m1, \
            format_info_mxfp6_e2m3, format_info_mxfp8_e5m2, format_info_mxfp6_e3m2, \
            format_info_mxint8
        from gfloat.block import quantize_block, compute_scale_amax
        res["gfloat_version"] = getattr(gfloat, "__version__", "?")
        et = {"mxfp8_e4m3": format_info_mxfp8_e4m3, "mxfp8_e5m2": format_info_mxfp8_e5m2,
              "mxfp6_e2m3": format_info_mxfp6_e2m3, "mxfp6_e3m2": format_info_mxfp6_e3m2,
              "mxfp4": format_info_mxfp4_e2m1, "mxint8": format_info_mxint8}
        nb = args.gfloat_blocks
        blocks = x.reshape(-1, 32)[:nb].astype(np.float64)
        for fmt in et:
            bfi = et[fmt]

            def g():
                for b in blocks:
                    quantize_block(bfi, b, compute_scale_amax)
            t = time.perf_counter()
            g()
            res[f"gfloat_{fmt}"] = (time.perf_counter() - t) * (n // 32) / nb
    except Exception as e:
        res["gfloat_error"] = f"{type(e).__name__}: {e}"
    ok = True
    print(f"quantize + dequantize of {n} float32 values (seconds; preliminary, loaded machine)")
    for fmt, _ in cases:
        line = f"  {fmt:12s} softfloat {res[f'softfloat_{fmt}']:.3f}"
        if f"torchao_{fmt}" in res:
            r = res[f"torchao_{fmt}"] / res[f"softfloat_{fmt}"]
            res[f"speedup_vs_torchao_{fmt}"] = r
            ok &= r >= 1.0
            line += f"  torchao {res[f'torchao_{fmt}']:.3f} ({r:.2f}x)"
        if f"gfloat_{fmt}" in res:
            r = res[f"gfloat_{fmt}"] / res[f"softfloat_{fmt}"]
            res[f"speedup_vs_gfloat_{fmt}"] = r
            ok &= r >= 10.0
            line += f"  gfloat {res[f'gfloat_{fmt}']:.1f} (est., {r:.0f}x)"
        print(line)
    for k in ("torchao_error", "gfloat_error"):
        if k in res:
            print(k, res[k])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
