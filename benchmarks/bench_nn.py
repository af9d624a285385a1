"""A simulated mixed-precision training epoch against the same MLP in plain float32
NumPy, as ratios from one run (targets: batch 128, networks 64-512-512-10
and a wider/deeper one: fast order <= 2x, exact sequential order <= 10x).

    python benchmarks/bench_nn.py [--nets 512,512 1024,1024,1024] [--batch 128]
                                  [--epochs 2] [--threads 1] [--policies ...]
                                  [--clock wall|cpu] [--quick]

``--quick``: one network (64-256-256-10), 3 epochs, CPU clock (about 20 s; to compare
two checkouts, run it from each in turn, alternating).

Mixed precision here: fp16 or bf16 parameters/activations/gradients, products exact
and summed in fp32 (``order="blas"``: the fast bounded model; ``"sequential"``: the
exact k-order model; or a tensor-core block-FMA model), fp32 master weights, dynamic
loss scaling, every rounding through softfloat. The float32 reference is a hand-written NumPy
forward/backward of the same MLP (BLAS matmuls), and the nn engine at its default
(plain fp32) precision is timed as well. Epoch = one pass over sklearn's digits.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

# the checkout this script lives in, ahead of any installed softfloat / nn
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# One BLAS thread, like the library's one chunk-pool thread: on a small shared machine
# a pool of spinning BLAS threads makes the float32 reference slower, not faster.
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


POLICIES = {
    "fp16 mixed, fp32 acc blas": dict(params="fp16", order="blas"),
    "bf16 mixed, fp32 acc blas": dict(params="bf16", order="blas"),
    "fp16 mixed, fp32 acc sequential": dict(params="fp16", order="sequential"),
    "bf16 mixed, fp32 acc sequential": dict(params="bf16", order="sequential"),
    "fp16 mixed, h100 block-FMA": dict(params="fp16", accumulate="h100"),
    # fp8/fp4 recipes (fp32 master weights and elementwise ops, GEMM operands
    # quantized by softfloat.mx, fp32 accumulation; no loss scaling, as Transformer
    # Engine); target: no slower than "bf16 mixed, fp32 acc blas"
    "fp8 current scaling": dict(recipe="fp8_current"),
    "fp8 delayed scaling": dict(recipe="fp8_delayed"),
    "mxfp8": dict(recipe="mxfp8"),
    "nvfp4": dict(recipe="nvfp4"),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", nargs="*", default=["512,512", "1024,1024,1024"],
                    help="hidden layer sizes per network, comma-separated")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=3,
                    help="timed epochs per configuration; the fastest counts (a shared "
                         "machine's load only ever adds time)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--policies", nargs="*", default=list(POLICIES),
                    help=f"which of {list(POLICIES)}")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter (default); cpu: time.process_time, the "
                         "process's CPU time (all its threads): on a shared, loaded machine "
                         "it leaves out the time spent waiting for a core")
    ap.add_argument("--quick", action="store_true",
                    help="--nets 256,256 --epochs 3 --clock cpu (about 20 s)")
    args = ap.parse_args(argv)
    if args.quick:
        args.nets, args.epochs, args.clock = ["256,256"], 3, "cpu"
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    os.environ["SOFTFLOAT_NUM_THREADS"] = str(args.threads)   # the library's chunk pool
    x, y, _, _ = digits()
    lr = 0.05
    table = {}
    for net in args.nets:
        sizes = [64, *[int(h) for h in net.split(",")], 10]
        model = nn.MLP(sizes, seed=0)
        params = [p.data.copy() for p in model.parameters()]
        numpy_epoch([p.copy() for p in params], x, y, lr, args.batch,
                    np.random.default_rng(0))
        ts = []
        for _ in range(args.epochs):
            t = clock()
            numpy_epoch(params, x, y, lr, args.batch, np.random.default_rng(0))
            ts.append(clock() - t)
        t_np = min(ts)

        def engine_setup(policy):
            """(run one epoch, cold time): the first epoch (it may compile) is run here."""
            m = nn.MLP(sizes, seed=0)
            opt = nn.SGD(m.parameters(), lr=lr, precision=policy)
            sc = nn.make_scaler(policy)
            rng = np.random.default_rng(0)

            def epoch():
                nn_epoch(m, opt, sc, x, y, args.batch, rng)
            t0 = clock()
            epoch()
            return epoch, clock() - t0

        # every configuration is set up first, then the timed epochs are interleaved
        # (one epoch of each in turn, --epochs rounds, the fastest counts): the
        # ratios then come from the same stretch of a shared machine's load
        names = ["engine_fp32"] + list(args.policies)
        runs, colds = {}, {}
        for name in names:
            if name == "engine_fp32":
                pol = nn.Precision()
            else:
                kw = dict(POLICIES[name])
                if "recipe" in kw:
                    pol = nn.Precision(**kw)
                else:
                    pol = nn.Precision(kw.pop("params"), master_weights=True,
                                       loss_scaling="dynamic", **kw)
            runs[name], colds[name] = engine_setup(pol)
        times = {name: [] for name in names}
        for _ in range(args.epochs):
            for name in names:
                t0 = clock()
                runs[name]()
                times[name].append(clock() - t0)
        best_t = {name: min(v) for name, v in times.items()}
        t_fp32 = best_t["engine_fp32"]
        steps = -(-len(x) // args.batch)
        print(f"MLP {sizes}, batch {args.batch}, {steps} steps per epoch, threads "
              f"{args.threads}, {args.clock} clock")
        print(f"  {'plain float32 NumPy':<34} {t_np * 1e3:8.1f} ms/epoch")
        print(f"  {'nn engine, fp32 (default)':<34} {t_fp32 * 1e3:8.1f} ms/epoch   "
              f"{t_fp32 / t_np:5.2f}x")
        row = {"numpy": t_np, "engine_fp32": t_fp32}
        for name in args.policies:
            kw = POLICIES[name]
            t_m = best_t[name]
            row[name] = t_m
            target = "" if "h100" in name else (
                "  (target <= 2x)" if "blas" in name else "  (target <= 10x)")
            bf16 = best_t.get("bf16 mixed, fp32 acc blas")
            if "recipe" in kw:
                target = (f"  {t_m / bf16:5.2f}x bf16 blas (target <= 1x)" if bf16
                          else "")
            print(f"  {name:<34} {t_m * 1e3:8.1f} ms/epoch   {t_m / t_np:5.2f}x{target}"
                  f"   first epoch {colds[name]:.2f} s")
        table["-".join(map(str, sizes))] = row
    return table


if __name__ == "__main__":
    main()
