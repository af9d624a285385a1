#!/usr/bin/env python
"""Probe torch's accumulation orders on a device and check the GPU matrix-unit models.

    python validation/cuda_probe.py --out validation/reports/cuda/probe [--device cuda|cpu]
                                    [--what orders,units,emulate] [--emulate-as DEVICE]

Two parts, for the GPU machine:

``orders``: `softfloat.probe` on torch ``sum``, ``mean`` (as ``sum`` of the same
data: the order), and ``mm`` for float16 and bfloat16, with
``torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction`` /
``allow_bf16_reduced_precision_reduction`` on and off, records the trees and the
partial-sum widths, and compares torch's results on random data with the
simplest candidate models (sequential float32 accumulation, and the probed tree
evaluated in float32 via `softfloat.accumulate`; ``mean`` as that sum divided by N
or multiplied by RN(1/N); ``mm`` against sequential float32 accumulation and the
device's matrix-unit model). Writes ``OUT/probe.json`` and ``OUT/probe.md``.

``units`` (CUDA only; validation/cuda_units.py): the matrix-unit models of
`softfloat.mma` for the device's architecture against cuBLAS GEMMs through torch
(fp16, bf16, tf32 ``mm`` and fp8 ``torch._scaled_mm``, on normal, wide, cancelling,
tiny and special inputs), every candidate model's mismatches. Writes
``OUT/units.json`` and ``OUT/units.md``.

``emulate`` (CUDA only; validation/cuda_emulate.py): small torch programs run on
CUDA and on CPU tensors under ``sf.emulate(DEVICE)``, DEVICE detected from the
GPU's name and compute capability (``--emulate-as`` to choose), compared output by
output, bit for bit. Writes ``OUT/emulate.json`` and ``OUT/emulate.md``; exit
status 1 when an output differs or the mode fails on a program.

``--device cpu`` runs the ``orders`` part on the CPU (tests). Exit status: 0 done,
1 (``emulate``) mismatches, 2 could not run (no torch, or no GPU for ``--device
cuda``: one line on stderr). The CUDA parts wait for hardware: they have not been
run on a GPU yet.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import softfloat as sf  # noqa: E402
from softfloat import probe as P  # noqa: E402
from validation.cuda_emulate import run_emulate  # noqa: E402
from validation.cuda_units import run_units  # noqa: E402

FMTS = {"float16": "fp16", "bfloat16": "bf16"}


def _tree_model(tree, fmt, x_bits):
    """The probed tree evaluated with float32 partial sums, rounded once to fmt."""
    tr = P.binarize(tree)
    acc = sf.Accumulator("fp32", rounding="nearest_even",
                         order=tr if not isinstance(tr, int) else "sequential")
    return sf.sum(x_bits, fmt, axis=None, acc=acc, out_fmt=fmt, out_rounding="nearest_even")


def _png(tree, out, name):
    """The tree drawn with matplotlib into OUT/NAME.png (None without matplotlib)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name + ".png")
    P.plot_tree(tree, path, title=name)
    return os.path.basename(path)


def run(device, sizes, ks, out, seed=0, trials=20, draw_max=40):
    import torch
    rng = np.random.default_rng(seed)
    cases = []
    flags = [None]
    if device == "cuda":
        flags = [True, False]
    for dt, fmt in FMTS.items():
        tdt = getattr(torch, dt)
        for n in sizes:
            fn = P.torch_adapter(lambda t: t.sum(), device)
            t0 = time.perf_counter()
            try:
                r = P.probe_sum(fn, n, fmt, max_calls=200000)
                tree, summ, calls, err = r.tree, r.summary(), r.calls, None
            except P.ProbeError as ex:
                tree, summ, calls, err = None, None, None, str(ex)
            rec = {"op": "sum", "dtype": dt, "n": n, "tree": repr(tree), "summary": summ,
                   "calls": calls, "error": err, "seconds": round(time.perf_counter() - t0, 2)}
            if tree is not None:
                mism = 0
                mean_mism = {"divide": 0, "reciprocal": 0}
                f32 = sf.get_format("fp32")
                for _ in range(trials):
                    v = np.exp2(rng.uniform(-8, 4, n)) * rng.choice([-1.0, 1.0], n)
                    xb = sf.to_bits(v, fmt)
                    tt = torch.from_numpy(xb.view(np.int16)).view(tdt).to(device)
                    got = tt.sum().view(torch.int16).cpu().numpy().view(np.uint16)
                    exp = _tree_model(tree, fmt, xb)
                    mism += int(got != exp)
                    # mean: the probed tree's float32 sum, then / N or * RN(1/N)
                    acc = sf.Accumulator("fp32", rounding="nearest_even",
                                         order=P.binarize(tree) if not isinstance(tree, int)
                                         else "sequential")
                    s32 = np.float32(sf.from_bits(sf.sum(xb, fmt, axis=None, acc=acc), f32))
                    gm = tt.mean().view(torch.int16).cpu().numpy().view(np.uint16)
                    cand = {"divide": s32 / np.float32(n),
                            "reciprocal": s32 * (np.float32(1) / np.float32(n))}
                    for name, val in cand.items():
                        mean_mism[name] += int(gm != sf.to_bits(np.float64(np.float32(val)), fmt))
                rec["tree_model_mismatches"] = mism
                rec["mean_model_mismatches"] = mean_mism
                rec["trials"] = trials
                if n <= draw_max:
                    rec["drawing"] = P.draw_tree(tree)
                    rec["png"] = _png(tree, out, f"sum_{dt}_{n}")
            cases.append(rec)
        for k in ks:
            for flag in flags:
                if flag is not None:
                    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = flag
                    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = flag
                fn = P.torch_adapter(lambda a, b: a @ b, device)
                t0 = time.perf_counter()
                try:
                    r = P.probe_matmul(fn, k, fmt, m=16, n=16, max_calls=200000)
                    tree, summ, calls, err, fused = r.tree, r.summary(), r.calls, None, r.fused_nodes
                except P.ProbeError as ex:
                    tree, summ, calls, err, fused = None, None, None, str(ex), None
                rec = {"op": "mm", "dtype": dt, "k": k, "m": 16, "n": 16,
                       "reduced_precision_reduction": flag, "tree": repr(tree),
                       "summary": summ, "fused_nodes": fused, "calls": calls,
                       "error": err, "seconds": round(time.perf_counter() - t0, 2)}
                # candidate models on random 16 x k x 16 products (the probed shape)
                cand = {"fp32_sequential": dict(acc="fp32", rounding="nearest_even")}
                for gpu in ("v100", "a100", "h100"):
                    try:
                        cand[f"tensor_core_{gpu}"] = dict(acc=sf.tensor_core(gpu, fmt))
                    except ValueError:
                        pass
                if tree is not None and not fused and not isinstance(tree, int):
                    cand["probed_tree_fp32"] = dict(acc=sf.Accumulator(
                        "fp32", rounding="nearest_even", order=P.binarize(tree)))
                mm = {c: 0 for c in cand}
                total = 0
                for _ in range(max(1, trials)):
                    a = sf.to_bits(np.exp2(rng.uniform(-4, 2, 16 * k)) *
                                   rng.choice([-1.0, 1.0], 16 * k), fmt).reshape(16, k)
                    b = sf.to_bits(np.exp2(rng.uniform(-4, 2, 16 * k)) *
                                   rng.choice([-1.0, 1.0], 16 * k), fmt).reshape(k, 16)
                    ta = torch.from_numpy(a.view(np.int16)).view(tdt).to(device)
                    tb = torch.from_numpy(b.view(np.int16)).view(tdt).to(device)
                    got = (ta @ tb).contiguous().view(torch.int16).cpu().numpy().view(np.uint16)
                    total += got.size
                    for c, kw in cand.items():
                        exp = sf.matmul(a, b, fmt, out_fmt=fmt, out_rounding="nearest_even", **kw)
                        mm[c] += int((got != exp).sum())
                rec["candidate_mismatches"] = mm
                rec["candidate_outputs"] = total
                if k <= draw_max and tree is not None:
                    rec["drawing"] = P.draw_tree(tree)
                    rec["png"] = _png(tree, out, f"mm_{dt}_{k}_{flag}")
                cases.append(rec)
    meta = {"device": device, "torch": torch.__version__,
            "device_name": (torch.cuda.get_device_name(0) if device == "cuda" else "cpu"),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "probe.json"), "w") as fh:
        json.dump({"meta": meta, "cases": cases}, fh, indent=1)
    lines = [f"# order probe on {meta['device_name']} (torch {meta['torch']}, {meta['date']})", "",
             "| op | dtype | size | reduced-precision flag | partial sums | tree-model mismatches | calls |",
             "|---|---|---:|---|---|---:|---:|"]
    for c in cases:
        size = c.get("n") if c["op"] == "sum" else c.get("k")
        mm = c.get("tree_model_mismatches", "")
        if mm != "":
            mm = f"{mm}/{c['trials']}"
        lines.append(f"| {c['op']} | {c['dtype']} | {size} | {c.get('reduced_precision_reduction', '')} "
                     f"| {c['summary'] or 'ERROR: ' + str(c['error'])} | {mm} | {c['calls']} |")
    lines += ["", "## Candidate models", ""]
    for c in cases:
        if c["op"] == "sum" and "mean_model_mismatches" in c:
            lines.append(f"- sum {c['dtype']} n={c['n']}: probed tree in float32 "
                         f"{c['tree_model_mismatches']}/{c['trials']} mismatches; mean as "
                         + ", ".join(f"{k} {v}/{c['trials']}"
                                     for k, v in c["mean_model_mismatches"].items()))
        if c["op"] == "mm" and "candidate_mismatches" in c:
            lines.append(f"- mm {c['dtype']} k={c['k']} flag={c['reduced_precision_reduction']}: "
                         + ", ".join(f"{k} {v}" for k, v in c["candidate_mismatches"].items())
                         + f" mismatches of {c['candidate_outputs']} outputs")
    lines += ["", "## Trees (small sizes)", ""]
    for c in cases:
        if "drawing" in c:
            size = c.get("n") if c["op"] == "sum" else c.get("k")
            lines += [f"### {c['op']} {c['dtype']} {size} "
                      f"(flag {c.get('reduced_precision_reduction')})", "", "```",
                      c["drawing"], "```", ""]
            if c.get("png"):
                lines += [f"![{c['png']}]({c['png']})", ""]
    lines += ["", "All trees are in probe.json (nested tuples of term indices)."]
    with open(os.path.join(out, "probe.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return cases





def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--what", default="orders,units",
                    help="comma-separated parts: orders, units, emulate (units and emulate: "
                         "CUDA only)")
    ap.add_argument("--emulate-as", default=None,
                    help="the sf.emulate device for --what emulate (default: detected)")
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 257, 1024])
    ap.add_argument("--ks", type=int, nargs="*", default=[16, 64, 256])
    ap.add_argument("--unit-ks", type=int, nargs="*", default=[16, 32, 64, 256, 1024])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--draw-max", type=int, default=40, help="draw trees up to this size")
    args = ap.parse_args(argv)
    what = {w.strip() for w in args.what.split(",") if w.strip()}
    if not what or what - {"orders", "units", "emulate"}:
        print(f"error: --what takes orders, units and/or emulate, got {args.what!r}",
              file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("error: torch is not installed: nothing was checked", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: no CUDA device (--device cuda, torch.cuda.is_available() is False): "
              "nothing was checked", file=sys.stderr)
        return 2
    if args.device == "cpu":
        gpu_only = what & {"units", "emulate"}
        what -= gpu_only               # no matrix unit on the CPU
        if not what:
            print(f"error: --what {','.join(sorted(gpu_only))} needs --device cuda",
                  file=sys.stderr)
            return 2
    if "orders" in what:
        run(args.device, args.sizes, args.ks, args.out, trials=args.trials,
            draw_max=args.draw_max)
    if "units" in what:
        meta = {"device": args.device, "torch": torch.__version__,
                "device_name": torch.cuda.get_device_name(0),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        try:
            run_units(args.out, args.unit_ks, meta=meta)
        except RuntimeError as ex:
            print(f"error: {ex}", file=sys.stderr)
            return 2
    status = 0
    if "emulate" in what:
        meta = {"device": args.device, "torch": torch.__version__,
                "device_name": torch.cuda.get_device_name(0),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        try:
            recs, status = run_emulate(args.out, args.device, emulated=args.emulate_as,
                                       meta=meta)
        except (RuntimeError, ValueError, TypeError) as ex:
            print(f"error: {ex}", file=sys.stderr)
            return 2
        bad = sum(r.get("mismatches") or 0 for r in recs)
        print(f"emulate: {len(recs)} programs, {bad} mismatching outputs"
              + ("" if status == 0 else " (or errors)") + f"; report in {args.out}")
        return status
    print(f"report in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
