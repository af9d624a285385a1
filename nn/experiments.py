"""The three techniques of mixed-precision training, each against its absence.

    python -m nn.experiments [--quick] [--json PATH] [--plots DIR] [--order ORDER]

Every classification run uses an ordinary schedule (linear warm-up, then cosine
decay to 0; SGD with momentum 0.9 at peak lr 0.1, or Adam at peak lr 2e-3) and
trains the digits MLP to convergence; the effects below arise on their own.
Matrix products accumulate in fp32 in the fast bounded order (``"blas"``, see
`softfloat.accumulate`) unless a run says otherwise; ``--order sequential`` reruns
everything on the exact k-order model.

1. fp32 baselines (digits, MLP 64-64-10; SGD with momentum, and Adam).
2. fp16 and bf16 weights updated in place (no master copy) against fp32 master
   weights: loss, accuracy, the share of lost updates per epoch (they appear late,
   as the learning rate decays).
3. bf16 weights updated with stochastic rounding, no master copy.
4. Loss scaling. (a) Natural underflow: late in training a converged classifier's
   gradients fall below fp16's range (the fp32 baseline's histogram against 2**-24
   and 2**-14); a long fp16 run without scaling against torch's default dynamic
   scaler (2**16, growth every 2000 steps), whose trajectory it records.
   (b) The labelled scaled-loss demonstration: the loss multiplied by 2**-20 (the
   learning rate by 2**20), no scaling, static, dynamic.
5. Matrix products with fp16 and bf16 accumulation against fp32 accumulation on a
   wide teacher-student regression: error of the products against float64, and
   the final loss.
6. Tensor-core accumulation: training with the H100 (and V100) block-FMA model
   against IEEE fp32 accumulation (sequential and blas); matmul errors of each.
7. fp8 and fp4 training recipes (`nn.fp8`): fp32, bf16 + fp32 master, and the
   GEMM operands in e4m3/e5m2 with per-tensor current and delayed scaling, MXFP8,
   NVFP4 (gradients rounded to nearest or stochastically), the per-tensor recipe
   with Hopper's fp8 accumulation with and without promotion, on the same network,
   data and schedule; and the matmul error against K of e4m3 products summed by
   Hopper's fast accumulation, with promotion every 128, and in fp32.

Prints a table, writes JSON records (``--json``) and PNG plots (``--plots``,
needs matplotlib).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time

import numpy as np

import softfloat as sf

from . import data as _data
from .layers import MLP
from .optim import SGD, Adam
from .precision import Precision, lp_matmul
from .report import TABLE_HEAD, grad_stats, plots, print_table, table_rows  # noqa: F401
from .train import evaluate, make_scaler, train_step

__all__ = ["RunConfig", "run", "experiments", "main"]


@dataclasses.dataclass
class RunConfig:
    name: str
    experiment: int
    task: str = "classify"                # or "regress"
    params: str = "fp32"
    master_weights: bool = False
    loss_scaling: str = "none"
    loss_scale: float = 2.0 ** 16
    scaler_options: dict = dataclasses.field(default_factory=dict)
    accumulate: str = "fp32"
    rounding: str = "nearest_even"        # casts
    update_rounding: str | None = None    # weight update without master copy
    optimizer: str = "sgd"
    lr: float = 0.01
    momentum: float = 0.0
    epochs: int = 10
    batch: int = 32
    loss_factor: float = 1.0              # multiplies the loss (lr is divided by it)
    hidden: tuple = (64,)
    seed: int = 0
    collect_grads: bool = False           # keep a sample of gradient magnitudes
    init_near_teacher: float = 0.1        # regression: start at teacher + this relative noise
    schedule: str = "constant"            # or "cosine": linear warm-up, then cosine to 0
    warmup_epochs: float = 2.0
    order: str = "blas"                   # fp32 accumulation order ("sequential": exact)
    recipe: str | None = None             # an nn.fp8 recipe (experiment 7)
    fp8_gemm: str = "fp32"
    grad_rounding: str = "nearest_even"
    activation: str = "relu"
    collect_from: float = 0.0             # collect gradients from this fraction of training on


def _dataset(cfg, quick):
    if cfg.task == "classify":
        return _data.digits(seed=cfg.seed) + (None,)
    return _data.teacher_student(n_train=256, n_test=128, d_in=1024 if quick else 4096,
                                 d_out=4, seed=cfg.seed, return_teacher=True)


def _all_grads(loss):
    """Gradients of every tensor in the graph (activations and weights)."""
    seen, stack, weights, acts = set(), [loss], [], []
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v.grad is not None and v is not loss and v.data.size > 1:
            (acts if v._prev else weights).append(np.ravel(v.grad))
        stack.extend(v._prev)
    return weights, acts


def run(cfg: RunConfig, quick=True):
    """Train one configuration; returns its JSON record."""
    xtr, ytr, xte, yte, teacher = _dataset(cfg, quick)
    # recipes sum in BLAS order (or on a matrix unit): they take no order
    order = None if cfg.recipe is not None else (
        cfg.order if cfg.accumulate == "fp32" else "sequential")
    policy = Precision(cfg.params, rounding=cfg.rounding, update_rounding=cfg.update_rounding,
                       accumulate=cfg.accumulate, master_weights=cfg.master_weights,
                       loss_scaling=cfg.loss_scaling, loss_scale=cfg.loss_scale,
                       scaler_options=cfg.scaler_options, seed=cfg.seed, order=order,
                       recipe=cfg.recipe,
                       **({} if cfg.recipe is None else
                          dict(fp8_gemm=cfg.fp8_gemm, grad_rounding=cfg.grad_rounding)))
    n_out = 10 if cfg.task == "classify" else ytr.shape[1]
    model = MLP([xtr.shape[1], *cfg.hidden, n_out], seed=cfg.seed, activation=cfg.activation)
    floor = None
    if teacher is not None:
        # The loss at the optimum (the teacher's weights) under this policy: the
        # floor that the rounding of the products and sums puts under training.
        wrng = np.random.default_rng(cfg.seed + 2)
        for layer, w in zip(model.layers, teacher):
            layer.W.data = w.copy()
            layer.b.data = np.zeros_like(layer.b.data)
        floor, _ = evaluate(model, policy, xtr, ytr, cfg.task)
        for layer, w in zip(model.layers, teacher):
            noise = wrng.standard_normal(w.shape) * float(np.std(w)) * cfg.init_near_teacher
            layer.W.data = (w + noise).astype(np.float32)
    lr = cfg.lr / cfg.loss_factor
    opt = (SGD(model.parameters(), lr=lr, momentum=cfg.momentum, precision=policy)
           if cfg.optimizer == "sgd" else Adam(model.parameters(), lr=lr, precision=policy))
    scaler = make_scaler(policy)
    rng = np.random.default_rng(cfg.seed + 1)
    curve, lost_curve, lr_curve, skipped, steps = [], [], [], 0, 0
    wsample, asample = [], []
    per_epoch = -(-len(xtr) // cfg.batch)
    total = cfg.epochs * per_epoch
    t0 = time.perf_counter()
    for epoch in range(cfg.epochs):
        losses = []
        lost0, nz0 = opt.lost, opt.nonzero
        for idx in _data.batches(len(xtr), cfg.batch, rng):
            opt.lr = lr * _lr_factor(cfg, steps, per_epoch, total)
            collect = (cfg.collect_grads and steps % 10 == 0
                       and steps >= cfg.collect_from * total)
            res = train_step(model, opt, scaler, xtr[idx], ytr[idx], cfg.task, cfg.loss_factor)
            if collect:
                w, a = _all_grads(res.graph)
                wsample.extend(w)
                asample.extend(a)
            skipped += bool(res.found_inf and scaler.skips)
            steps += 1
            losses.append(res.loss / cfg.loss_factor)
        curve.append(float(np.mean(losses)))
        lr_curve.append(float(opt.lr))
        nz = opt.nonzero - nz0
        lost_curve.append((opt.lost - lost0) / nz if nz else 0.0)
    seconds = time.perf_counter() - t0
    train_loss, _ = evaluate(model, policy, xtr, ytr, cfg.task)
    test_loss, acc = evaluate(model, policy, xte, yte, cfg.task)
    rec = {
        "name": cfg.name, "experiment": cfg.experiment, "task": cfg.task,
        "params_format": policy.params_name, "master_weights": policy.master_weights,
        "loss_scaling": cfg.loss_scaling, "accumulate": policy.accumulate_name,
        "rounding": policy.update_rounding if not policy.master_weights else policy.rounding,
        "cast_rounding": policy.rounding, "optimizer": cfg.optimizer, "lr": cfg.lr,
        "loss_factor": cfg.loss_factor, "epochs": cfg.epochs, "steps": steps,
        "final_loss": _finite(train_loss), "test_loss": _finite(test_loss),
        "final_accuracy": acc,
        "lost_update_fraction": opt.lost_update_fraction,
        "underflow_fraction": policy.underflow_fraction,
        "weight_grad_underflow_fraction": policy.weight_underflow_fraction,
        "skipped_steps": skipped, "seconds": round(seconds, 3),
        "loss_curve": [_finite(c) for c in curve],
        "scale_history": [s for s, _ in scaler.history] if cfg.loss_scaling != "none" else None,

        "order": policy.order if policy.tensor_core is None else None,
        "schedule": cfg.schedule, "hidden": list(cfg.hidden), "activation": cfg.activation,
        "batch": cfg.batch, "test_accuracy": acc, "lost_update_curve": lost_curve,
        "lr_curve": lr_curve,
        "final_scale": scaler.scale if cfg.loss_scaling != "none" else None,
    }
    if cfg.recipe is not None:            # experiment 7
        rec["recipe"] = cfg.recipe
        rec["fp8_gemm"] = cfg.fp8_gemm
        rec["grad_rounding"] = cfg.grad_rounding
    if cfg.task == "regress":
        var = float(np.mean(ytr.astype(np.float64) ** 2))
        rec["relative_final_loss"] = _finite(train_loss / var)
        rec["floor_loss"] = _finite(floor)
        rec["relative_floor_loss"] = _finite(floor / var)
    if cfg.collect_grads:
        rec["_grads"] = (np.concatenate(wsample) if wsample else np.zeros(0),
                         np.concatenate(asample) if asample else np.zeros(0))
    return rec


def _lr_factor(cfg, step, per_epoch, total):
    """The schedule's multiplier of the peak learning rate at ``step``: constant, or
    linear warm-up over ``warmup_epochs`` then cosine decay to 0 at the last step."""
    if cfg.schedule == "constant":
        return 1.0
    warm = max(1, int(cfg.warmup_epochs * per_epoch))
    if step < warm:
        return (step + 1) / warm
    t = (step - warm) / max(1, total - warm)
    return 0.5 * (1 + math.cos(math.pi * min(1.0, t)))


def _finite(x):
    return float(x) if x is not None and math.isfinite(x) else None


def accumulation_error(quick=True, seed=0):
    """Relative error (Frobenius) of x @ W with each accumulation, against float64
    on the same low-precision inputs: x uniform in [0, 1) (same-sign sums) and
    N(0, 1) (zero-mean), K = the inner dimension. ``relative_error``: the result
    rounded into the input format (as a layer's output is); ``..._accumulator``: the
    accumulator's value itself (where fp32 orders and tensor cores differ)."""
    rng = np.random.default_rng(seed)
    rows = []
    for K in ((256, 1024) if quick else (256, 1024, 4096)):
        for dist in ("positive", "zero-mean"):
            x = rng.random((16, K)) if dist == "positive" else rng.standard_normal((16, K))
            w = rng.standard_normal((K, 8)) / np.sqrt(K)
            for fmt in ("fp16", "bf16"):
                f = sf.get_format(fmt)
                xq = sf.quantize(x, f).astype(np.float32)
                wq = sf.quantize(w, f).astype(np.float32)
                ref = xq.astype(np.float64) @ wq.astype(np.float64)
                for acc in ("fp32", fmt, "fp32-blas", "v100", "h100"):
                    if acc == "v100" and fmt == "bf16":
                        continue                     # V100 has no bf16 tensor cores
                    if acc == "fp32-blas":
                        P = Precision(fmt, order="blas")
                    else:
                        P = Precision(fmt, accumulate=acc)
                    acc_out = lp_matmul(xq, wq, f, None, P, final=False).astype(np.float64)
                    out = P.round(acc_out, f).astype(np.float64)     # then into fmt
                    nref = np.linalg.norm(ref)
                    rows.append({"K": K, "inputs": dist, "format": fmt, "accumulate": acc,
                                 "relative_error": float(np.linalg.norm(out - ref) / nref),
                                 "relative_error_accumulator":
                                     float(np.linalg.norm(acc_out - ref) / nref)})
    return rows


def fp8_accumulation_error(quick=True, seed=0):
    """Relative error (Frobenius) of x @ W on e4m3 operands (16 x K times K x 8,
    quantized with per-tensor current scaling) against the exact float64 sum of
    the same products: fp32 accumulation (BLAS order), Hopper's fast fp8
    accumulation (no promotion) and promotion to fp32 every 128 products
    (`softfloat.mx_gemm`), for K = 256 .. 4096, inputs uniform in [0, 1)
    (same-sign sums: the truncated accumulator loses most) and N(0, 1)."""
    from softfloat import mx as _mx
    from .fp8 import fp8_gemm
    rng = np.random.default_rng(seed)
    rows = []
    for K in (256, 1024, 4096) if quick else (256, 512, 1024, 2048, 4096):
        for dist in ("positive", "zero-mean"):
            x = rng.random((16, K)) if dist == "positive" else rng.standard_normal((16, K))
            w = rng.random((K, 8)) if dist == "positive" else rng.standard_normal((K, 8))
            ca, sa = _mx.quantize_per_tensor(x, "fp8_e4m3")
            cb, sb = _mx.quantize_per_tensor(w, "fp8_e4m3")
            qa = sf.from_bits(ca, "fp8_e4m3").astype(np.float32)
            qb = sf.from_bits(cb, "fp8_e4m3").astype(np.float32)
            ref = qa.astype(np.float64) @ qb.astype(np.float64)   # exact: <= 2**-18 apart
            nref = np.linalg.norm(ref)
            for acc in ("fp32", "hopper_fp8_fast", "hopper_fp8_promote128"):
                out = fp8_gemm(qa, qb, np.float32(1.0), None if acc == "fp32" else acc)
                rows.append({"K": K, "inputs": dist, "format": "fp8_e4m3", "accumulate": acc,
                             "relative_error": float(np.linalg.norm(out - ref) / nref)})
    return rows


def experiments(quick=True, order="blas"):
    """The list of run configurations (``order``: the fp32 accumulation order of
    every run that does not name its own)."""
    E = 20 if quick else 60                  # epochs of the classification runs
    long = 47 if quick else 100              # 43 steps an epoch: 2021 / 4300 steps
    cos = dict(schedule="cosine", order=order)
    sgd = dict(optimizer="sgd", lr=0.1, momentum=0.9, epochs=E, **cos)
    adam = dict(optimizer="adam", lr=2e-3, epochs=E, **cos)
    adam_runs = [
        RunConfig("Adam fp32", 1, **adam),
        RunConfig("Adam bf16, no master", 2, params="bf16", **adam),
        RunConfig("Adam bf16 + fp32 master", 2, params="bf16", master_weights=True, **adam),
        RunConfig("Adam bf16, no master, SR update", 3, params="bf16",
                  update_rounding="stochastic", **adam)]
    # (a) natural underflow, a long run: no scaling against torch's default scaler
    nat = dict(sgd, params="fp16", master_weights=True, epochs=long)
    natural = [
        RunConfig("fp16 long, no scaling", 4, **nat),
        RunConfig("fp16 long, dynamic (torch default)", 4, loss_scaling="dynamic",
                  loss_scale=2.0 ** 16, **nat)]
    if not quick:                            # a deeper tanh net: vanishing gradients too
        deep = dict(nat, hidden=(64,) * 6, activation="tanh", epochs=E)
        natural += [
            RunConfig("deep tanh fp32", 4, **{**deep, "params": "fp32",
                                               "master_weights": False},
                      collect_grads=True, collect_from=0.75),
            RunConfig("deep tanh fp16, no scaling", 4, **deep),
            RunConfig("deep tanh fp16, dynamic", 4, loss_scaling="dynamic",
                      loss_scale=2.0 ** 16, **deep)]
    # (b) the scaled-loss demonstration (constant lr, as before)
    c = 2.0 ** -20
    small = dict(params="fp16", master_weights=True, optimizer="sgd", lr=0.05,
                 epochs=6 if quick else 20, loss_factor=c, order=order)
    reg = dict(task="regress", optimizer="adam", lr=1e-4, epochs=8 if quick else 30,
               batch=32, hidden=(), order=order)
    too_big = [] if quick else [    # every step overflows and is skipped (slow: inf paths)
        RunConfig("fp16 small loss, static 2^40", 4, loss_scaling="static",
                  loss_scale=2.0 ** 40, **small)]
    tc = dict(sgd, master_weights=True)
    tensor = [
        RunConfig("fp16 + master, fp32 sequential", 6, params="fp16",
                  **{**tc, "order": "sequential"}),
        RunConfig("fp16 + master, fp32 blas", 6, params="fp16", **{**tc, "order": "blas"}),
        RunConfig("fp16 + master, h100 tensor core", 6, params="fp16", accumulate="h100", **tc),
    ]
    if not quick:
        tensor += [RunConfig("bf16 + master, h100 tensor core", 6, params="bf16",
                             accumulate="h100", **tc),
                   RunConfig("fp16 + master, v100 tensor core", 6, params="fp16",
                             accumulate="v100", **tc)]
    # 7: fp8/fp4 recipes against fp32 and bf16 on one network, data and schedule
    f8 = dict(sgd, epochs=4 if quick else E)
    fp8_runs = [
        RunConfig("exp7 fp32", 7, **f8),
        RunConfig("exp7 bf16 + fp32 master", 7, params="bf16", master_weights=True, **f8),
        RunConfig("exp7 fp8 current scaling", 7, recipe="fp8_current", **f8),
        RunConfig("exp7 fp8 delayed scaling", 7, recipe="fp8_delayed", **f8),
        RunConfig("exp7 mxfp8", 7, recipe="mxfp8", **f8),
        RunConfig("exp7 nvfp4", 7, recipe="nvfp4", **f8),
    ]
    if not quick:
        fp8_runs += [
            RunConfig("exp7 nvfp4, SR gradients", 7, recipe="nvfp4",
                      grad_rounding="stochastic", **f8),
            RunConfig("exp7 fp8 delayed, hopper promote128", 7, recipe="fp8_delayed",
                      fp8_gemm="hopper_fp8_promote128", **f8),
            RunConfig("exp7 fp8 delayed, hopper fast acc", 7, recipe="fp8_delayed",
                      fp8_gemm="hopper_fp8_fast", **f8)]
    return [
        RunConfig("fp32 baseline", 1, collect_grads=True, collect_from=0.75, **sgd),
        RunConfig("fp16, no master", 2, params="fp16", **sgd),
        RunConfig("fp16 + fp32 master", 2, params="fp16", master_weights=True, **sgd),
        RunConfig("bf16, no master", 2, params="bf16", **sgd),
        RunConfig("bf16 + fp32 master", 2, params="bf16", master_weights=True, **sgd),
        RunConfig("bf16, no master, SR update", 3, params="bf16",
                  update_rounding="stochastic", **sgd),
        *adam_runs,
        *natural,
        RunConfig("fp32, small loss (ref)", 4, **{**small, "params": "fp32",
                                                  "master_weights": False},
                  collect_grads=True),
        RunConfig("fp16 small loss, no scaling", 4, **small),
        RunConfig("fp16 small loss, static 2^16", 4, loss_scaling="static",
                  loss_scale=2.0 ** 16, **small),
        RunConfig("fp16 small loss, dynamic", 4, loss_scaling="dynamic", loss_scale=2.0 ** 40,
                  scaler_options={"growth_interval": 20 if quick else 100}, **small),
        *too_big,
        RunConfig("regression fp32", 5, **reg),
        RunConfig("regression fp16, fp32 acc", 5, params="fp16", master_weights=True, **reg),
        RunConfig("regression fp16, fp16 acc", 5, params="fp16", master_weights=True,
                  accumulate="fp16", **reg),
        RunConfig("regression bf16, fp32 acc", 5, params="bf16", master_weights=True, **reg),
        RunConfig("regression bf16, bf16 acc", 5, params="bf16", master_weights=True,
                  accumulate="bf16", **reg),
        *tensor,
        *fp8_runs,
    ]


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The description as written; ``(default: X)`` after each option whose
    default is a value (not None or False) its help does not state."""

    def _get_help_string(self, action):
        h = action.help or ""
        if ("default" in h.lower() or action.default in (None, False, argparse.SUPPRESS)
                or not action.option_strings):
            return h
        return h + " (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``prog: error: message (see --help)``, exit
    status 2) and each option's default in ``--help``."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kw)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _require_matplotlib():
    """ImportError naming the extra that installs matplotlib, when it is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise ImportError("--plots needs matplotlib, which is not installed: pip install "
                          "'softfloat-lab[plots]'") from e


def order_note(order: str) -> str:
    """The closing line on the matrix products' accumulation order."""
    note = (f"matrix products: fp32 accumulation in order {order!r} unless a run names a "
            f"tensor core or a narrow accumulator")
    if order == "sequential":
        return note + " (the exact model)"
    return note + " (rerun with --order sequential for the exact model)"


def main(argv=None):
    """The command line (module docstring); returns the run's summary. A bad
    argument is one line on stderr and exit status 2; a closed stdout ends quietly."""
    try:
        return _main(argv)
    except BrokenPipeError:                 # (... | head): the reader had what it wanted
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0


def _main(argv):
    ap = _Parser(prog="python -m nn.experiments", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer epochs (under a minute on 2 cores)")
    ap.add_argument("--json", metavar="PATH", help="write the run records here")
    ap.add_argument("--plots", metavar="DIR",
                    help="write PNG plots here (needs matplotlib: the [plots] extra)")
    ap.add_argument("--only", type=int, nargs="*", help="experiment numbers to run (default: all of them)")
    ap.add_argument("--order", choices=("blas", "sequential"), default="blas",
                    help="fp32 accumulation order of the runs (default: the fast bounded "
                         "model; 'sequential': the exact k-order model)")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the library's chunk pool (default 1: these arrays "
                         "are small, and a parallel launch costs more than it saves)")
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error(f"--threads: expected a positive number, got {args.threads}")
    if args.plots:                       # fail now, not after minutes of training
        try:
            _require_matplotlib()
        except ImportError as e:
            ap.error(str(e))
    try:
        _data.digits()
    except ImportError as e:
        ap.error(str(e))
    known = sorted({cfg.experiment for cfg in experiments(args.quick)} | {5})
    if args.only is not None:
        bad = [e for e in args.only if e not in known]
        if bad or not args.only:
            ap.error(f"--only: no experiment numbered {bad or '(none given)'}; "
                     f"the experiments are {known}")
    if args.json:                        # fail now, not after minutes of training
        for path in (args.json, args.json.rsplit(".", 1)[0] + ".extra.json"):
            existed = os.path.exists(path)
            try:
                with open(path, "a"):
                    pass
            except OSError as e:
                ap.error(f"--json: cannot write {path}: {e}")
            if not existed:
                os.remove(path)              # leave nothing behind if the run fails
    os.environ.setdefault("SOFTFLOAT_NUM_THREADS", str(max(1, args.threads)))
    t0 = time.perf_counter()
    progress = sys.stderr.isatty()       # the table below has every run once
    records, grads = [], {}
    for cfg in experiments(args.quick, args.order):
        if args.only and cfg.experiment not in args.only:
            continue
        rec = run(cfg, quick=args.quick)
        g = rec.pop("_grads", None)
        if g is not None:
            st = grad_stats(*g)
            rec["gradient_magnitudes"] = st
            if cfg.loss_factor != 1.0:
                grads["scaled loss x 2^-20 (fp32 reference run)"] = g
            elif cfg.experiment == 1:
                grads["natural: fp32 baseline, last quarter of training"] = g
        records.append(rec)
        if progress:                     # on a terminal: one line, overwritten
            print(f"\r  {cfg.name}: loss {_fmt(rec['final_loss'], '.4g')}, "
                  f"{rec['seconds']:.1f} s".ljust(79), end="", file=sys.stderr, flush=True)
    if progress:
        print("\r" + " " * 79 + "\r", end="", file=sys.stderr, flush=True)
    acc_rows = accumulation_error(args.quick) if not args.only or 5 in args.only else []
    fp8_rows = fp8_accumulation_error(args.quick) if not args.only or 7 in args.only else []
    print()
    print_table(records)
    if acc_rows:
        print("\nmatmul error against float64 (products exact; the result rounded into the "
              "input format / the accumulator itself):")
        for r in acc_rows:
            print(f"  K={r['K']:5d} {r['inputs']:<9} {r['format']} inputs, "
                  f"{r['accumulate']:>9} accumulation: {r['relative_error']:.2e} / "
                  f"{r['relative_error_accumulator']:.2e}")
    if fp8_rows:
        print("\nfp8 (e4m3) matmul error against the exact sum of the same products:")
        for r in fp8_rows:
            print(f"  K={r['K']:5d} {r['inputs']:<9} {r['accumulate']:>21}: "
                  f"{r['relative_error']:.2e}")
    reg = [r for r in records if r["task"] == "regress"]
    if reg:
        print("\nregression (linear teacher, inputs in [0, 1)): relative loss "
              "(MSE / mean y^2) at the teacher's weights (the floor) and after training:")
        for r in reg:
            print(f"  {r['name']:<30} floor {_fmt(r['relative_floor_loss'], '.2e')}   "
                  f"final {_fmt(r['relative_final_loss'], '.2e')}")
    base = [r for r in records if r["name"] == "fp32 baseline"]
    if base and "gradient_magnitudes" in base[0]:
        w = base[0]["gradient_magnitudes"]["weight"]
        a = base[0]["gradient_magnitudes"]["activation"]
        print(f"\nfp32 baseline (test accuracy {base[0]['final_accuracy']:.3f}), last quarter "
              f"of training: {w['below_2^-24']:.1%} of nonzero weight gradients and "
              f"{a['below_2^-24']:.1%} of activation gradients are below 2^-24 "
              f"({w['below_2^-14']:.1%} / {a['below_2^-14']:.1%} below 2^-14; "
              f"Micikevicius et al. 2018 report about 5% of weight gradients below 2^-24)")
    print("\n" + order_note(args.order))
    total = time.perf_counter() - t0
    print(f"\ntotal {total:.1f} s")
    sys.stdout.flush()                   # a closed pipe shows here, not at exit
    out = {"records": records, "accumulation_error": acc_rows, "quick": args.quick,
           "seconds": round(total, 2), "order": args.order,
           "fp8_accumulation_error": fp8_rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        with open(args.json.rsplit(".", 1)[0] + ".extra.json", "w") as f:
            json.dump({"accumulation_error": acc_rows, "quick": args.quick,
                       "seconds": out["seconds"], "order": args.order,
                       "fp8_accumulation_error": fp8_rows}, f, indent=1)
    if args.plots:
        try:
            paths = plots(records, acc_rows, grads, args.plots)
            print("plots: " + ", ".join(paths))
        except ImportError:
            print("plots skipped: matplotlib is not installed", file=sys.stderr)
    return out


if __name__ == "__main__":
    rc = main()
    sys.exit(rc if isinstance(rc, int) else 0)
