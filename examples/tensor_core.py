"""The tensor-core (block FMA) model: non-monotonicity and truncation bias.

    python examples/tensor_core.py   # writes out/examples/tensor_core.png (--out DIR)

Left: d = c + sum of four products 1.5 * 2**-24 on the V100 model, as c runs
over the binary32 numbers around 1. Every product is aligned to the largest
exponent among the products and c, and the bits shifted out are dropped. When c
crosses 1 its exponent grows by one, the products lose their last bit each, and
d drops by 2**-23 although c grew: the multi-operand adder without intermediate
normalisation is not monotonic (Fasi, Higham, Mikaitis & Pranesh 2021; Mikaitis
2023). IEEE fp32 accumulation (nearest even) is monotonic.

Right: signed relative error of 2000 dot products of length 256 with fp16 entries
uniform in [0, 1): truncation (toward zero, of every aligned term and of each
block's result) biases the tensor-core results downwards; the wider alignment of
A100/H100 (1 and 2 extra bits, 8 and 16 products per block) shrinks the bias.
IEEE fp32 accumulation with nearest even is unbiased.
"""
from __future__ import annotations

import numpy as np

import softfloat as sf
from _common import OUT, outdir_from_argv, pyplot, save

plt = pyplot("examples/tensor_core.py")


def non_monotonic():
    a = sf.to_bits(np.full((1, 4), 3 * 2.0 ** -13), "fp16")
    b = sf.to_bits(np.full((4, 1), 2.0 ** -12), "fp16")
    # binary32 numbers from 1 - 8 * 2^-24 to 1 + 8 * 2^-23, in order
    one = int(sf.to_bits(1.0, "fp32"))
    cb = np.arange(one - 8, one + 9, dtype=np.uint32)
    cvals = sf.from_bits(cb, "fp32")
    tc, ieee = [], []
    for c in cb:
        cc = np.array([[c]], np.uint32)
        tc.append(float(sf.from_bits(sf.matmul(a, b, "fp16", acc="v100", c=cc), "fp32")[0, 0]))
        ieee.append(float(sf.from_bits(sf.matmul(a, b, "fp16", acc="fp32", c=cc), "fp32")[0, 0]))
    return cvals, np.array(tc), np.array(ieee)


def bias(n=256, trials=2000):
    rng = np.random.default_rng(0)
    a = sf.to_bits(rng.random((trials, n)), "fp16")
    b = sf.to_bits(rng.random((n, trials)), "fp16")
    exact = np.einsum("ij,ji->i", sf.from_bits(a, "fp16"), sf.from_bits(b, "fp16"))
    out = {}
    for name, acc in (("IEEE fp32 (RNE)", "fp32"), ("V100", "v100"), ("A100", "a100"),
                      ("H100", "h100")):
        # the diagonal of A @ B holds the trials' dot products
        d = np.array([float(sf.from_bits(sf.dot(a[t], np.ascontiguousarray(b[:, t]), "fp16",
                                                acc=acc), "fp32")) for t in range(trials)])
        out[name] = (d - exact) / exact
    return out


def main(outdir=OUT):
    cvals, tc, ieee = non_monotonic()
    steps = np.nonzero(np.diff(tc) < 0)[0]
    for s in steps:
        print(f"V100 model: c = {cvals[s]!r} -> d = {tc[s]!r}; c = {cvals[s + 1]!r} -> "
              f"d = {tc[s + 1]!r} (smaller)")
    assert np.all(np.diff(ieee) >= 0)
    errs = bias()
    for k, v in errs.items():
        print(f"{k:16s} mean relative error {v.mean(): .3e}, std {v.std():.3e}")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = (cvals - 1) / 2.0 ** -24
    ax1.step(x, (tc - 1) / 2.0 ** -24, where="post", label="V100 model")
    ax1.step(x, (ieee - 1) / 2.0 ** -24, where="post", ls="--", label="IEEE fp32, RNE")
    ax1.set_xlabel("c - 1   [units of 2^-24]")
    ax1.set_ylabel("d - 1   [units of 2^-24]")
    ax1.set_title("d = c + 4 x (1.5 * 2^-24): non-monotonic in c")
    ax1.legend()
    for k, v in errs.items():
        ax2.hist(v, bins=60, histtype="step", label=k)
    ax2.axvline(0, color="k", lw=0.5)
    ax2.set_xlabel("signed relative error")
    ax2.set_title("dot products, n = 256, fp16 in [0, 1)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    save(fig, outdir, "tensor_core.png")


if __name__ == "__main__":
    main(outdir=outdir_from_argv(__doc__))
