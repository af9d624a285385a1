"""Recursive summation of ones stalls at 2048 in fp16 and 256 in bf16 (round to
nearest even), and keeps going, in expectation, with stochastic rounding.

    python examples/sum_stagnation.py   # writes out/examples/sum_stagnation.png (--out DIR)

Why: once the running sum s reaches 2**(p), p the precision (11 for fp16, 8 for
bf16), the spacing of the format at s is 2, and s + 1 is a tie that rounds to the
even neighbour, s itself. Stochastic rounding rounds s + 1 up with probability 1/2
there (1/4 one binade higher, ...), so its expected value is the exact sum.
"""
from __future__ import annotations

import numpy as np

import softfloat as sf
from _common import OUT, outdir_from_argv, pyplot, save

plt = pyplot("examples/sum_stagnation.py")


def recursive_sum_of_ones(n, fmt, **kw):
    x = sf.to_bits(np.ones(n), fmt)
    return float(sf.from_bits(sf.sum(x, fmt, **kw), fmt))


def main(outdir=OUT):
    ns = np.unique(np.geomspace(16, 20000, 40).astype(int))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(ns, ns, "k:", label="exact")
    for fmt, color in (("fp16", "C0"), ("bf16", "C1")):
        rne = [recursive_sum_of_ones(n, fmt) for n in ns]
        ax.plot(ns, rne, color=color, label=f"{fmt}, round to nearest even")
        sr = np.array([[recursive_sum_of_ones(n, fmt, rounding="stochastic", seed=s)
                        for n in ns] for s in range(8)])
        ax.plot(ns, sr.mean(axis=0), "--", color=color,
                label=f"{fmt}, stochastic rounding (mean of 8)")
        ax.fill_between(ns, sr.min(axis=0), sr.max(axis=0), color=color, alpha=0.15)
        print(f"{fmt}: RNE stalls at {rne[-1]:.0f}; SR after {ns[-1]} ones: "
              f"mean {sr[:, -1].mean():.0f}, range [{sr[:, -1].min():.0f}, "
              f"{sr[:, -1].max():.0f}]")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of ones added")
    ax.set_ylabel("computed sum")
    ax.set_title("Recursive summation of ones")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, outdir, "sum_stagnation.png")


if __name__ == "__main__":
    main(outdir=outdir_from_argv(__doc__))
