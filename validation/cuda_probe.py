#!/usr/bin/env python
"""Probe torch's accumulation orders on a device and cross-check candidate models.

    python validation/cuda_probe.py --out validation/reports/cuda/probe [--device cuda|cpu]

One script for the GPU machine: it runs `softfloat.probe` on torch ``sum``,
``mean`` (as ``sum`` of the same data: the order), and ``mm`` for float16 and
bfloat16, with ``torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction``
/ ``allow_bf16_reduced_precision_reduction`` on and off, records the trees and the
partial-sum widths, and compares torch's results on random data with the
simplest candidate models (sequential float32 accumulation, and the probed tree
evaluated in float32 via `softfloat.accumulate`). Writes ``OUT/probe.json`` and
``OUT/probe.md``. ``--device cpu`` runs the same logic on the CPU (tests).
Exit status: 0 done, 2 could not run (e.g. no GPU for ``--device cuda``).
The CUDA part waits for hardware: no GPU was lent when this was written.
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

FMTS = {"float16": "fp16", "bfloat16": "bf16"}


def _tree_model(tree, fmt, x_bits):
    """The probed tree evaluated with float32 partial sums, rounded once to fmt."""
    tr = P.binarize(tree)
    acc = sf.Accumulator("fp32", rounding="nearest_even",
                         order=tr if not isinstance(tr, int) else "sequential")
    return sf.sum(x_bits, fmt, axis=None, acc=acc, out_fmt=fmt, out_rounding="nearest_even")


def run(device, sizes, ks, out, seed=0, trials=20):
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
                for _ in range(trials):
                    v = np.exp2(rng.uniform(-8, 4, n)) * rng.choice([-1.0, 1.0], n)
                    xb = sf.to_bits(v, fmt)
                    tt = torch.from_numpy(xb.view(np.int16)).view(tdt).to(device)
                    got = tt.sum().view(torch.int16).cpu().numpy().view(np.uint16)
                    exp = _tree_model(tree, fmt, xb)
                    mism += int(got != exp)
                rec["tree_model_mismatches"] = mism
                rec["trials"] = trials
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
                cases.append({"op": "mm", "dtype": dt, "k": k, "m": 16, "n": 16,
                              "reduced_precision_reduction": flag, "tree": repr(tree),
                              "summary": summ, "fused_nodes": fused, "calls": calls,
                              "error": err, "seconds": round(time.perf_counter() - t0, 2)})
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
    lines += ["", "Trees are in probe.json (nested tuples of term indices)."]
    with open(os.path.join(out, "probe.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 257, 1024])
    ap.add_argument("--ks", type=int, nargs="*", default=[16, 64, 256])
    ap.add_argument("--trials", type=int, default=20)
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: torch is not installed", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device cuda but torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    run(args.device, args.sizes, args.ks, args.out, trials=args.trials)
    print(f"report in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
