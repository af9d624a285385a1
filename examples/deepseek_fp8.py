"""DeepSeek-V3's fp8 accumulation error on the Hopper wgmma model, with and without
promotion to fp32 every 128 products.

    python examples/deepseek_fp8.py [--out DIR] [--k 4096] [--m 64] [--n 64] [--seed 0]

DeepSeek-V3 (arXiv:2412.19437, section 3.3.2): Hopper's fp8 GEMM keeps "about 14
bits" of the aligned products; "the maximum relative error is nearly 2%" for
K = 4096 with fast accumulation, and copying the partial sums into fp32 registers
every 128 elements (4 WGMMAs) removes most of it. The report does not state the
inputs, so three distributions are run, each quantized into e4m3 with per-tensor
current scaling (amax to 448, `softfloat.mx.quantize_per_tensor`):

* ``uniform``: U[0, 1) for both operands: every product positive, so the sum
  grows with K and the accumulator's truncation (13 fraction bits below the
  running sum) drops ever more of each product: the worst case for it;
* ``normal``: N(0, 1) for both: zero-mean products, the sum grows like sqrt(K),
  the accumulator stays near the products' size;
* ``lognormal``: exp(N(0, 1)) for both: positive and heavy-tailed (max / median
  about e**3.5 over 4096 draws), like activations with outliers (the reason
  DeepSeek-V3 scales 1x128 tiles): same-sign sums with a wide exponent spread
  within each 32-product chunk.

The model (`softfloat.mx_gemm`, presets ``hopper_fp8_fast`` and
``hopper_fp8_promote128``) is MMA-Sim's Hopper fp8 wgmma (F = 13, each chunk
truncated to e8m13), validated bit for bit against MMA-Sim in
tests/test_deepseek_example.py. Errors are against the exact product of the
quantized operands (float64 is exact here: products of e4m3 values have at most 8
significant bits and lie within 2**-18 .. 2**18, and 4096 of them sum within 53
bits), so they are the accumulation's alone: norm-wise ||C - C*||_F / ||C*||_F,
the largest |c - c*| / |c*| and the median. Writes DIR/deepseek_fp8.png (the error
against K for both models) and DIR/deepseek_fp8.json; DIR defaults to a new
folder ``out/`` under the current directory.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import softfloat as sf  # noqa: E402
from softfloat import mx, mx_gemm  # noqa: E402

DISTS = ("uniform", "normal", "lognormal")
MODELS = ("hopper_fp8_fast", "hopper_fp8_promote128")


def draw(dist, rng, shape):
    if dist == "uniform":
        return rng.random(shape)
    if dist == "normal":
        return rng.standard_normal(shape)
    if dist == "lognormal":
        return rng.lognormal(0.0, 1.0, shape)
    raise ValueError(f"dist must be one of {DISTS}, got {dist!r}")


def operands(dist, m, k, n, seed=0):
    """e4m3 encodings of A (m, k) and B (k, n), per-tensor current scaling."""
    rng = np.random.default_rng(seed)
    A, _ = mx.quantize_per_tensor(draw(dist, rng, (m, k)), "fp8_e4m3")
    B, _ = mx.quantize_per_tensor(draw(dist, rng, (k, n)), "fp8_e4m3")
    return A, B


def errors(A, B, model):
    """Norm-wise, largest and median relative error of the model's product."""
    exact = sf.from_bits(A, "fp8_e4m3") @ sf.from_bits(B, "fp8_e4m3")
    got = mx_gemm.fp8_matmul(A, B, "fp8_e4m3", model=model)
    rel = np.abs(got - exact)[exact != 0] / np.abs(exact[exact != 0])
    return {"norm": float(np.linalg.norm(got - exact) / np.linalg.norm(exact)),
            "max": float(rel.max()), "median": float(np.median(rel))}


def study(k=4096, m=64, n=64, seed=0, ks=None):
    """{dist: {model: errors at K = k}} and the error-against-K curves."""
    ks = ks or [kk for kk in (128, 256, 512, 1024, 2048, 4096) if kk <= k]
    table, curves = {}, {}
    for i, dist in enumerate(DISTS):
        A, B = operands(dist, m, k, n, seed + i)
        table[dist] = {mdl: errors(A, B, mdl) for mdl in MODELS}
        curves[dist] = {mdl: [errors(A[:, :kk], B[:kk], mdl)["norm"] for kk in ks]
                        for mdl in MODELS}
    return table, curves, ks


def plot(curves, ks, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for dist, c in zip(DISTS, ("C0", "C1", "C2")):
        ax.loglog(ks, curves[dist]["hopper_fp8_fast"], "-o", color=c,
                  label=f"{dist}, fast accumulation")
        ax.loglog(ks, curves[dist]["hopper_fp8_promote128"], "--s", color=c,
                  label=f"{dist}, promotion every 128")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("K")
    ax.set_ylabel("norm-wise relative error")
    ax.set_title("fp8 e4m3 GEMM on the Hopper wgmma model")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="out", help="output folder (default: ./out)")
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    for name in ("k", "m", "n"):
        if getattr(args, name) < 1:
            print(f"error: --{name} must be positive", file=sys.stderr)
            return 2
    if args.k % 32:
        print("error: --k must be a multiple of 32 (the wgmma instruction's k)", file=sys.stderr)
        return 2
    table, curves, ks = study(args.k, args.m, args.n, args.seed)
    print(f"fp8 e4m3 GEMM, {args.m} x {args.k} x {args.n}, Hopper wgmma model "
          f"(errors against the exact product of the quantized operands)")
    print(f"{'inputs':<10} {'model':<22} {'norm-wise':>10} {'max':>10} {'median':>10}")
    for dist in DISTS:
        for mdl in MODELS:
            e = table[dist][mdl]
            print(f"{dist:<10} {mdl:<22} {e['norm']:10.3e} {e['max']:10.3e} {e['median']:10.3e}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "deepseek_fp8.json"), "w") as fh:
        json.dump({"k": args.k, "m": args.m, "n": args.n, "seed": args.seed, "errors": table,
                   "ks": ks, "norm_against_k": curves}, fh, indent=1)
    if not args.no_plot:
        plot(curves, ks, os.path.join(args.out, "deepseek_fp8.png"))
    print(f"written to {args.out}/deepseek_fp8.json" + ("" if args.no_plot else " and .png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
