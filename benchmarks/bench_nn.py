"""A simulated mixed-precision training epoch against the same MLP in plain float32
NumPy, as a ratio from one run (target: at most 3x).

    python benchmarks/bench_nn.py [--hidden 128] [--batch 64] [--epochs 1] [--threads 1]

Mixed precision here: fp16 parameters/activations/gradients, products exact and
summed in fp32 (sequential order), fp32 master weights, dynamic loss scaling,
every rounding through softfloat. The float32 reference is a hand-written NumPy
forward/backward of the same MLP (BLAS matmuls), and the nn engine at its default
(plain fp32) precision is timed as well. Epoch = one pass over sklearn's digits.
"""
from __future__ import annotations

import argparse
import os
import time

# One BLAS thread, like the one numba thread: on a small shared machine a pool of
# spinning BLAS threads makes the float32 reference slower, not faster.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
           "SOFTFLOAT_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import nn  # noqa: E402
from nn.data import batches, digits  # noqa: E402


def numpy_epoch(params, x, y, lr, batch, rng):
    """Plain float32 NumPy: relu MLP, softmax cross-entropy, SGD."""
    for idx in batches(len(x), batch, rng):
        h, acts = x[idx], []
        for i in range(0, len(params), 2):
            acts.append(h)
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = np.maximum(h, 0)
        z = h - h.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(idx)), y[idx]] -= 1
        g = p / np.float32(len(idx))
        for i in range(len(params) - 2, -1, -2):
            a = acts[i // 2]
            gW, gb = a.T @ g, g.sum(axis=0)
            if i > 0:
                g = (g @ params[i].T) * (a > 0)
            params[i] -= np.float32(lr) * gW
            params[i + 1] -= np.float32(lr) * gb


def nn_epoch(model, opt, scaler, x, y, batch, rng):
    for idx in batches(len(x), batch, rng):
        nn.train_step(model, opt, scaler, x[idx], y[idx])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, nargs="*", default=[128])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    import numba
    numba.set_num_threads(args.threads)
    x, y, _, _ = digits()
    sizes = [64, *args.hidden, 10]
    lr = 0.05

    model = nn.MLP(sizes, seed=0)
    params = [p.data.copy() for p in model.parameters()]
    numpy_epoch([p.copy() for p in params], x, y, lr, args.batch, np.random.default_rng(0))
    t = time.perf_counter()
    for _ in range(args.epochs):
        numpy_epoch(params, x, y, lr, args.batch, np.random.default_rng(0))
    t_np = (time.perf_counter() - t) / args.epochs

    def engine_epochs(policy):
        m = nn.MLP(sizes, seed=0)
        opt = nn.SGD(m.parameters(), lr=lr, precision=policy)
        sc = nn.make_scaler(policy)
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        nn_epoch(m, opt, sc, x, y, args.batch, rng)          # first epoch: may compile
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(args.epochs):
            nn_epoch(m, opt, sc, x, y, args.batch, rng)
        return cold, (time.perf_counter() - t0) / args.epochs

    _, t_fp32 = engine_epochs(nn.Precision())
    mixed = nn.Precision("fp16", accumulate="fp32", master_weights=True,
                         loss_scaling="dynamic")
    cold, t_mixed = engine_epochs(mixed)
    steps = -(-len(x) // args.batch)
    print(f"MLP {sizes}, batch {args.batch}, {steps} steps per epoch, numba threads "
          f"{args.threads}")
    print(f"  plain float32 NumPy         {t_np * 1e3:8.1f} ms/epoch")
    print(f"  nn engine, fp32 (default)   {t_fp32 * 1e3:8.1f} ms/epoch")
    print(f"  nn simulated mixed fp16     {t_mixed * 1e3:8.1f} ms/epoch "
          f"(first epoch {cold:.2f} s, compilation included)")
    print(f"  ratio simulated / NumPy float32: {t_mixed / t_np:.1f}x   "
          f"(simulated / engine fp32: {t_mixed / t_fp32:.1f}x; target <= 3x)")
    return {"numpy": t_np, "engine_fp32": t_fp32, "mixed": t_mixed}


if __name__ == "__main__":
    main()
