"""Error of a length-n dot product against n*u, for each accumulation model.

    python examples/dot_error.py   # writes out/examples/dot_error.png (--out DIR)

Inputs: fp16 values uniform in [0, 1) (all products positive, so errors add up).
Reference: the exact dot product (products of fp16 values are exact in float64 and
the float64 sum's error, <= n * 2**-53 relative, is far below everything plotted).
Models: recursive summation in fp16 (nearest even, stochastic, Kahan, pairwise),
fp32 accumulation, and the V100 and H100 tensor-core models (fp32 output).
The bound n*u holds to first order for recursive summation; pairwise summation
has log2(n)*u; stochastic rounding behaves like sqrt(n)*u.
"""
from __future__ import annotations

import numpy as np

import softfloat as sf
from _common import OUT, outdir_from_argv, pyplot, save

plt = pyplot("examples/dot_error.py")

MODELS = {
    "fp16, sequential, RNE": dict(acc="fp16"),
    "fp16, sequential, stochastic": dict(acc="fp16", rounding="stochastic", seed=1),
    "fp16, pairwise, RNE": dict(acc="fp16", order="pairwise"),
    "fp16, Kahan, RNE": dict(acc="fp16", kahan=True),
    "fp32, sequential, RNE": dict(acc="fp32"),
    "tensor core V100 (fp32 out)": dict(acc="v100"),
    "tensor core H100 (fp32 out)": dict(acc="h100"),
}


def main(trials=5, outdir=OUT):
    rng = np.random.default_rng(0)
    ns = np.unique(np.geomspace(8, 16384, 12).astype(int))
    errs = {k: [] for k in MODELS}
    for n in ns:
        e = {k: [] for k in MODELS}
        a = sf.to_bits(rng.random((trials, n)), "fp16")
        b = sf.to_bits(rng.random((trials, n)), "fp16")
        exact = np.einsum("ij,ij->i", sf.from_bits(a, "fp16"), sf.from_bits(b, "fp16"))
        for name, kw in MODELS.items():
            for t in range(trials):
                r = sf.dot(a[t], b[t], "fp16", **kw)
                fmt = "fp32" if r.dtype == np.uint32 else "fp16"
                e[name].append(abs(float(sf.from_bits(r, fmt)) - exact[t]) / exact[t])
        for k in MODELS:
            errs[k].append(np.mean(e[k]))
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for k, v in errs.items():
        ax.plot(ns, v, "o-", ms=3, label=k)
        print(f"{k:32s} n={ns[-1]}: mean relative error {v[-1]:.2e}")
    ax.plot(ns, ns * 2.0 ** -11, "k:", label="n u (fp16)")
    ax.plot(ns, ns * 2.0 ** -24, "k--", label="n u (fp32)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("mean relative error")
    ax.set_title("Dot products of fp16 vectors in [0, 1)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, outdir, "dot_error.png")


if __name__ == "__main__":
    main(outdir=outdir_from_argv(__doc__))
