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

``units`` (CUDA only): the matrix-unit models of `softfloat.mma` for the device's
architecture (from its compute capability) against cuBLAS GEMMs through torch:
fp16 / bf16 ``mm`` (fp32 accumulation, output rounded to the input type, and fp32
output where torch offers ``out_dtype``), tf32 ``mm`` (fp32 inputs with
``allow_tf32``; operands truncated or rounded to tf32: both candidates), fp8
``torch._scaled_mm`` with ``use_fast_accum`` on and off (candidates: the whole K
chained on the tensor core, and promotion to fp32 every 32 .. 256 products), for
K from one instruction to many (chained), on normal, wide-exponent, cancelling,
tiny and special (zeros, infinities, NaNs, overflow) inputs. For every case the
mismatch count of every candidate model (NaNs compared as NaNs; their payloads
counted apart) and the first mismatches (index, device bits, model bits). Writes
``OUT/units.json`` and ``OUT/units.md``. Its CPU-side logic (`unit_cases`,
`unit_candidates`, `check_units`, `write_units_report`) takes the device as a
function of a case, and is tested with a fake one.

``emulate`` (CUDA only): a fixed set of small torch programs (`emulate_programs`:
mm / addmm / linear / bmm / matmul in float32, tf32, float16 and bfloat16;
``torch._scaled_mm`` on fp8 with fast accumulation on and off; 16-bit elementwise
arithmetic, scalars, in-place forms and transcendental functions on special
inputs; casts into fp8 and half types; a bf16 MLP forward and backward; softmax
and log_softmax) run on CUDA and on CPU tensors under ``sf.emulate(DEVICE)``,
DEVICE detected from the GPU's name and compute capability (``--emulate-as`` to
choose), compared output by output, bit for bit (NaNs as NaNs, payloads apart),
with the mode's claim levels per program. Writes ``OUT/emulate.json`` and
``OUT/emulate.md``; exit status 1 when an output differs or the mode fails on a
program. Its CPU-side logic (`check_emulate`, `compare_outputs`,
`write_emulate_report`) takes both sides as functions, and is tested with fake
devices.

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


# ---------------------------------------------------------------------------
# units: the matrix-unit models against cuBLAS GEMMs
# ---------------------------------------------------------------------------
#: compute capability (major, minor) -> softfloat.mma architecture
CC_ARCH = {(7, 0): "volta", (7, 2): "volta", (7, 5): "turing", (8, 0): "ampere",
           (8, 6): "ampere", (8, 7): "ampere", (8, 9): "ada", (9, 0): "hopper",
           (10, 0): "blackwell", (10, 3): "blackwell", (12, 0): "rtx_blackwell",
           (12, 1): "rtx_blackwell"}
KINDS = ("normal", "wide", "cancel", "tiny", "special")
_FP8_UNIT = {"ada": "ada", "hopper": "hopper", "blackwell": "blackwell",
             "rtx_blackwell": "rtx_blackwell"}


def arch_of(cc):
    """The architecture of a compute capability (None when unknown)."""
    return CC_ARCH.get(tuple(cc))


def _values(rng, kind, shape, fmt):
    """Values of one input kind, rounded into fmt (encodings out)."""
    f = sf.get_format(fmt)
    size = int(np.prod(shape))
    if kind == "normal":
        v = rng.standard_normal(size)
    elif kind == "wide":
        v = rng.standard_normal(size) * np.exp2(rng.integers(-12, 13, size))
    elif kind == "tiny":          # near and below the format's smallest normal
        v = rng.choice([-1.0, 1.0], size) * np.exp2(rng.uniform(f.emin - f.mbits, f.emin + 2,
                                                                 size))
    else:                         # special: zeros, infinities, NaNs, the largest values
        v = rng.standard_normal(size)
        pick = rng.random(size)
        v[pick < 0.05] = 0.0
        v[(pick >= 0.05) & (pick < 0.08)] = float(f.max) * rng.choice([-1.0, 1.0])
        if f.has_inf:
            v[(pick >= 0.08) & (pick < 0.09)] = np.inf * rng.choice([-1.0, 1.0])
        v[(pick >= 0.09) & (pick < 0.095)] = np.nan
        v[rng.permutation(size)[:4]] = (0.0, -float(f.max), np.inf if f.has_inf else 0.0,
                                        np.nan)          # each at least once, anywhere
    kw = {} if f.has_inf else {"overflow": "saturate"}     # fp8 e4m3: no infinity
    with np.errstate(over="ignore", invalid="ignore"):
        return sf.to_bits(v.reshape(shape), f, **kw)


def _cancel_pair(rng, m, k, n, fmt):
    """A (m, k), B (k, n) whose dot products cancel: b's second half is minus its
    first half, a's second half equal to its first half times (1 + small)."""
    f = sf.get_format(fmt)
    h = k // 2
    a1 = rng.standard_normal((m, h))
    a = np.concatenate([a1, a1 * (1 + rng.standard_normal((m, k - h)) * 2.0 ** -6)], 1)
    b1 = rng.standard_normal((h, n))
    b = np.concatenate([b1, -b1[: k - h]], 0)
    return sf.to_bits(a, f), sf.to_bits(b, f)


def unit_cases(arch, ks=(16, 32, 64, 256, 1024), m=32, n=32, seed=0, kinds=KINDS):
    """The cases of the ``units`` check for an architecture: dicts with ``op``
    ("mm" or "scaled_mm"), ``dtype`` (torch's name), ``fmt`` (softfloat's), ``out``
    (the output format), ``k``, ``kind``, ``A``/``B`` (encodings; fp32 bits for
    tf32), and ``fast_accum`` for scaled_mm."""
    rng = np.random.default_rng(seed)
    plan = [("mm", "float16", "fp16", "fp16"), ("mm", "float16", "fp16", "fp32"),
            ("mm", "bfloat16", "bf16", "bf16"), ("mm", "bfloat16", "bf16", "fp32"),
            ("mm", "float32", "tf32", "fp32")]
    if arch == "volta":
        plan = [p for p in plan if p[2] == "fp16"]
    if arch in ("turing",):
        plan = [p for p in plan if p[2] == "fp16"]
    if arch in _FP8_UNIT:
        plan += [("scaled_mm", "float8_e4m3fn", "fp8_e4m3", "fp32", fa)
                 for fa in (True, False)]
    cases = []
    for p in plan:
        op, dt, fmt, out = p[:4]
        for k in ks:
            if op == "scaled_mm" and k % 16:
                continue
            for kind in kinds:
                src = "fp32" if fmt == "tf32" else fmt
                if kind == "cancel":
                    A, B = _cancel_pair(rng, m, k, n, src)
                else:
                    A, B = _values(rng, kind, (m, k), src), _values(rng, kind, (k, n), src)
                c = dict(op=op, dtype=dt, fmt=fmt, out=out, k=k, m=m, n=n, kind=kind, A=A, B=B)
                if op == "scaled_mm":
                    c["fast_accum"] = p[4]
                cases.append(c)
    return cases


def _round_out(bits32, out):
    """fp32 results (bits) rounded to nearest even into the output format."""
    if out == "fp32":
        return bits32
    with np.errstate(over="ignore", invalid="ignore"):
        return sf.to_bits(sf.from_bits(bits32, "fp32"), out)


def unit_candidates(arch, case):
    """{candidate name: model output bits} for one case (see the module docstring)."""
    from softfloat import mma as M
    from softfloat import mx_gemm
    A, B, fmt, out = case["A"], case["B"], case["fmt"], case["out"]
    cands = {}
    if case["op"] == "scaled_mm":
        unit = _FP8_UNIT[arch]
        for name, N in (("chain", None), ("promote32", 32), ("promote64", 64),
                        ("promote128", 128), ("promote256", 256)):
            if N is not None and case["k"] <= N:
                continue                     # the same as the chain
            mdl = mx_gemm.FP8GemmModel(unit, N)
            vals = mx_gemm.fp8_matmul(A, B, fmt, model=mdl)
            cands[name] = sf.to_bits(vals, "fp32")
        return cands
    if fmt == "tf32":
        unit = M.tensor_core(arch, "tf32", "fp32")
        with np.errstate(invalid="ignore"):
            va, vb = sf.from_bits(A, "fp32"), sf.from_bits(B, "fp32")
            for name, mode in (("chain_truncated_operands", "toward_zero"),
                               ("chain_rounded_operands", "nearest_away")):
                ta, tb = sf.to_bits(va, "tf32", mode), sf.to_bits(vb, "tf32", mode)
                cands[name] = M.mma(unit, ta, tb)
        return cands
    unit = M.tensor_core(arch, fmt, "fp32")
    cands["chain"] = _round_out(M.mma(unit, A, B), out)
    cands["fp32_sequential"] = sf.matmul(A, B, fmt, acc="fp32", out_fmt=out,
                                         out_rounding="nearest_even")
    return cands


def _same(got, exp, out):
    """(mismatches, NaN-payload differences): NaNs compared as NaNs."""
    f = sf.get_format(out)
    with np.errstate(invalid="ignore"):
        gn = np.isnan(sf.from_bits(got, f))
        en = np.isnan(sf.from_bits(exp, f))
    both = gn & en
    diff = (got != exp) & ~both
    return diff, int(np.count_nonzero(both & (got != exp)))


def check_units(device_fn, arch, cases, show=4):
    """Run every case on ``device_fn(case) -> output bits`` and compare with every
    candidate model; returns the records (JSON-ready)."""
    recs = []
    for c in cases:
        t0 = time.perf_counter()
        rec = {k: c[k] for k in ("op", "dtype", "fmt", "out", "k", "m", "n", "kind")}
        if "fast_accum" in c:
            rec["fast_accum"] = c["fast_accum"]
        try:
            got = np.asarray(device_fn(c))
        except Exception as ex:           # the device refused the case: recorded
            rec["error"] = f"{type(ex).__name__}: {ex}"
            recs.append(rec)
            continue
        rec["outputs"] = int(got.size)
        rec["mismatches"], rec["nan_payload_differences"], rec["examples"] = {}, {}, {}
        for name, exp in unit_candidates(arch, c).items():
            exp = np.asarray(exp).astype(got.dtype)
            if exp.shape != got.shape:
                rec["mismatches"][name] = None
                continue
            diff, pay = _same(got, exp, c["out"])
            rec["mismatches"][name] = int(np.count_nonzero(diff))
            rec["nan_payload_differences"][name] = pay
            idx = np.argwhere(diff)[:show]
            w = 4 if got.dtype == np.uint16 else 8
            rec["examples"][name] = [[int(i), int(j), f"{int(got[i, j]):#0{w + 2}x}",
                                      f"{int(exp[i, j]):#0{w + 2}x}"] for i, j in idx]
        rec["best"] = min(rec["mismatches"], key=lambda n: (rec["mismatches"][n] is None,
                                                             rec["mismatches"][n] or 0))
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        recs.append(rec)
    return recs


def write_units_report(recs, meta, out):
    """OUT/units.json and OUT/units.md (a table per case, then a summary per
    (op, dtype, output, fast_accum) of the candidates' mismatch totals)."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "units.json"), "w") as fh:
        json.dump({"meta": meta, "cases": recs}, fh, indent=1)
    lines = [f"# matrix-unit models against {meta.get('device_name')} "
             f"({meta.get('arch')}, torch {meta.get('torch')}, {meta.get('date')})", "",
             "## Summary (mismatching outputs / outputs, per candidate model)", "",
             "| op | dtype | output | fast_accum | candidate | mismatches | outputs |",
             "|---|---|---|---|---|---:|---:|"]
    tot = {}
    for r in recs:
        if "mismatches" not in r:
            continue
        for name, mm in r["mismatches"].items():
            key = (r["op"], r["dtype"], r["out"], r.get("fast_accum", ""), name)
            t = tot.setdefault(key, [0, 0])
            t[0] += mm if mm is not None else r["outputs"]
            t[1] += r["outputs"]
    for key, (mm, n) in tot.items():
        lines.append("| " + " | ".join(str(x) for x in key) + f" | {mm} | {n} |")
    lines += ["", "## Cases", "",
              "| op | dtype | output | k | kind | fast_accum | best candidate | mismatches |",
              "|---|---|---|---:|---|---|---|---|"]
    for r in recs:
        mm = r.get("mismatches")
        txt = ("ERROR: " + r["error"]) if mm is None else \
            ", ".join(f"{k} {v}" for k, v in mm.items())
        lines.append(f"| {r['op']} | {r['dtype']} | {r['out']} | {r['k']} | {r['kind']} | "
                     f"{r.get('fast_accum', '')} | {r.get('best', '')} | {txt} |")
    errs = [r for r in recs if r.get("examples") and any(r["examples"].values())]
    if errs:
        lines += ["", "## First mismatches (row, column, device bits, model bits)", ""]
        for r in errs:
            for name, ex in r["examples"].items():
                if ex:
                    lines.append(f"- {r['op']} {r['dtype']}->{r['out']} k={r['k']} {r['kind']} "
                                 f"{name}: {ex}")
    with open(os.path.join(out, "units.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def torch_device_fn(device="cuda"):
    """The device function of the ``units`` check: one case through torch on
    ``device`` (cuBLAS), output bits as numpy."""
    import torch
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

    def fn(c):
        A, B = c["A"], c["B"]
        if c["op"] == "scaled_mm":
            ta = torch.from_numpy(A).view(torch.float8_e4m3fn).to(device)
            tb = torch.from_numpy(np.ascontiguousarray(B.T)).view(torch.float8_e4m3fn)
            tb = tb.to(device).t()                               # column-major b
            one = torch.tensor(1.0, device=device)
            r = torch._scaled_mm(ta, tb, scale_a=one, scale_b=one, out_dtype=torch.float32,
                                 use_fast_accum=c["fast_accum"])
            return r.contiguous().view(torch.int32).cpu().numpy().view(np.uint32)
        if c["fmt"] == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            ta = torch.from_numpy(A.view(np.float32)).to(device)
            tb = torch.from_numpy(B.view(np.float32)).to(device)
            r = ta @ tb
            torch.backends.cuda.matmul.allow_tf32 = False
            return r.contiguous().view(torch.int32).cpu().numpy().view(np.uint32)
        dt = getattr(torch, c["dtype"])
        ta = torch.from_numpy(A.view(np.int16)).view(dt).to(device)
        tb = torch.from_numpy(B.view(np.int16)).view(dt).to(device)
        if c["out"] == "fp32":
            r = torch.mm(ta, tb, out_dtype=torch.float32)        # torch >= 2.9
            return r.contiguous().view(torch.int32).cpu().numpy().view(np.uint32)
        r = ta @ tb
        return r.contiguous().view(torch.int16).cpu().numpy().view(np.uint16)
    return fn


def run_units(out, ks, seed=0, device="cuda", arch=None, device_fn=None, meta=None):
    """The ``units`` part: cases for the device's architecture, the checks, the report."""
    if arch is None:
        import torch
        arch = arch_of(torch.cuda.get_device_capability(0))
        if arch is None:
            raise RuntimeError(f"compute capability {torch.cuda.get_device_capability(0)} has "
                               f"no matrix-unit model")
    cases = unit_cases(arch, ks=ks, seed=seed)
    recs = check_units(device_fn or torch_device_fn(device), arch, cases)
    meta = dict(meta or {}, arch=arch)
    write_units_report(recs, meta, out)
    return recs


# ---------------------------------------------------------------------------
# emulate: torch programs on CUDA against the same programs under sf.emulate
# ---------------------------------------------------------------------------
#: GPU names (lower case, as torch.cuda.get_device_name gives them) -> sf.emulate device
_EMU_NAMES = (("h100 pcie", "h100_pcie"), ("h100", "h100_sxm"), ("h200", "h200"),
              ("h800", "h800"), ("gh200", "gh200"), ("rtx 4060", "rtx4060"), ("l40s", "l40s"),
              ("l40", "l40"), ("l4", "l4"), ("rtx 4090", "rtx4090"), ("a100", "a100"),
              ("a10", "a10"), ("a40", "a40"), ("rtx 3090", "rtx3090"), ("v100", "v100"),
              ("t4", "t4"), ("b200", "b200"), ("b100", "b100"), ("gb200", "gb200"),
              ("rtx 5090", "rtx5090"))


def emulate_device_of(name, cc):
    """The ``sf.emulate`` device for a CUDA device's name and compute capability:
    the GPU itself when the name says which (the H100 PCIe and SXM apart), else
    its architecture; None when neither is known."""
    low = (name or "").lower()
    for key, dev in _EMU_NAMES:
        if key in low:
            return dev
    return arch_of(cc)


def _emu_values(rng, shape, kind="normal", scale=1.0):
    """float32 values (numpy) of one input kind: ``normal``, ``wide`` (exponents
    spread over 2**-12 .. 2**12), ``special`` (zeros, infinities, a NaN, huge values)."""
    v = rng.standard_normal(shape) * scale
    if kind == "wide":
        v = v * np.exp2(rng.integers(-12, 13, shape))
    elif kind == "special":
        flat = v.reshape(-1)
        n = flat.size
        flat[rng.permutation(n)[: max(1, n // 20)]] = 0.0
        flat[: 4] = (np.inf, -np.inf, np.nan, 1e30)
    return v.astype(np.float32)


def _t(torch, v, dev, dtype=None):
    t = torch.from_numpy(np.ascontiguousarray(v)).to(dev)
    return t if dtype is None else t.to(dtype)


def _prog_gemm(torch, dev, rng, dtype, tf32=False):
    """mm, addmm (a linear layer's bias row), bmm and matmul of one dtype."""
    dt = getattr(torch, dtype)
    a = _t(torch, _emu_values(rng, (64, 256)), dev, dt)
    b = _t(torch, _emu_values(rng, (256, 48)), dev, dt)
    bias = _t(torch, _emu_values(rng, (48,)), dev, dt)
    w = _t(torch, _emu_values(rng, (48, 256), "wide"), dev, dt)
    a3 = _t(torch, _emu_values(rng, (3, 16, 96)), dev, dt)
    b3 = _t(torch, _emu_values(rng, (3, 96, 24)), dev, dt)
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        return {"mm": a @ b, "addmm": torch.addmm(bias, a, b),
                "linear_wide": torch.nn.functional.linear(a, w, bias),
                "bmm": torch.bmm(a3, b3), "matmul_broadcast": a3 @ b3[0]}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def _prog_scaled_mm(torch, dev, rng):
    """torch._scaled_mm on e4m3 (and e5m2 x e4m3) with per-tensor scales, fast
    accumulation on and off, bf16 and float32 outputs, K up to 1024."""
    out = {}
    for k in (64, 1024):
        a = _t(torch, _emu_values(rng, (32, k)) * 8, dev).clamp(-448, 448).to(torch.float8_e4m3fn)
        b = _t(torch, _emu_values(rng, (48, k)) * 8, dev).clamp(-448, 448).to(
            torch.float8_e4m3fn).t()                    # column-major, as cuBLASLt wants
        g = _t(torch, _emu_values(rng, (32, k)) * 1e3, dev).clamp(-57344, 57344).to(
            torch.float8_e5m2)
        sa = _t(torch, np.array(0.0125, np.float32), dev)
        sb = _t(torch, np.array(0.37, np.float32), dev)
        for fast in (True, False):
            for od in ("bfloat16", "float32"):
                out[f"e4m3_k{k}_fast{int(fast)}_{od}"] = torch._scaled_mm(
                    a, b, sa, sb, out_dtype=getattr(torch, od), use_fast_accum=fast)
            out[f"e5m2xe4m3_k{k}_fast{int(fast)}_bfloat16"] = torch._scaled_mm(
                g, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return out


def _prog_elementwise(torch, dev, rng):
    """16-bit elementwise arithmetic (float32 opmath, one rounding), scalars,
    in-place forms, and a few transcendental functions, on normal and special inputs."""
    out = {}
    for dtype in ("float16", "bfloat16"):
        dt = getattr(torch, dtype)
        x = _t(torch, _emu_values(rng, (4096,), "special"), dev, dt)
        y = _t(torch, _emu_values(rng, (4096,), "wide"), dev, dt)
        out[f"{dtype}_add"] = x + y
        out[f"{dtype}_sub_alpha"] = torch.sub(x, y, alpha=0.3)
        out[f"{dtype}_mul"] = x * y
        out[f"{dtype}_div"] = x / y
        out[f"{dtype}_mul_scalar"] = x * 0.1
        out[f"{dtype}_add_scalar"] = x + 1e-3
        out[f"{dtype}_addcmul"] = torch.addcmul(x, x, y, value=0.5)
        z = y.clone()
        z.mul_(1.7).add_(x)
        out[f"{dtype}_inplace"] = z
        out[f"{dtype}_sqrt"] = y.abs().sqrt()
        out[f"{dtype}_exp"] = (x / 4).exp()
        out[f"{dtype}_tanh"] = x.tanh()
        out[f"{dtype}_sigmoid"] = x.sigmoid()
        out[f"{dtype}_gelu"] = torch.nn.functional.gelu(x)
    return out


def _prog_casts(torch, dev, rng):
    """Casts into fp8 (beyond the range: no saturation in torch's cast), into half
    types, and up again."""
    x = _t(torch, _emu_values(rng, (4096,), "special") * 100, dev)
    out = {}
    for dt in ("float8_e4m3fn", "float8_e5m2", "float16", "bfloat16"):
        out[f"float32_to_{dt}"] = x.to(getattr(torch, dt))
    out["bfloat16_to_float8_e4m3fn"] = x.to(torch.bfloat16).to(torch.float8_e4m3fn)
    out["float16_to_float8_e5m2"] = x.to(torch.float16).to(torch.float8_e5m2)
    out["float8_e4m3fn_to_float32"] = out["float32_to_float8_e4m3fn"].to(torch.float32)
    return out


def _prog_mlp(torch, dev, rng):
    """A two-layer bf16 MLP: forward, a float32 mean-square loss, backward; the
    output, the loss and every gradient."""
    dt = torch.bfloat16
    x = _t(torch, _emu_values(rng, (64, 32)), dev, dt)
    w1 = _t(torch, _emu_values(rng, (96, 32), scale=0.2), dev, dt).requires_grad_()
    b1 = _t(torch, _emu_values(rng, (96,), scale=0.1), dev, dt).requires_grad_()
    w2 = _t(torch, _emu_values(rng, (16, 96), scale=0.1), dev, dt).requires_grad_()
    b2 = _t(torch, _emu_values(rng, (16,), scale=0.1), dev, dt).requires_grad_()
    h = torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1))
    y = torch.nn.functional.linear(h, w2, b2)
    loss = y.float().pow(2).mean()
    loss.backward()
    return {"output": y.detach(), "loss": loss.detach(), "grad_w1": w1.grad, "grad_b1": b1.grad,
            "grad_w2": w2.grad, "grad_b2": b2.grad}


def _prog_softmax(torch, dev, rng):
    """softmax and log_softmax along the last axis, float32 / float16 / bfloat16."""
    out = {}
    for dtype in ("float32", "float16", "bfloat16"):
        x = _t(torch, _emu_values(rng, (32, 257), "normal", 4.0), dev, getattr(torch, dtype))
        out[f"{dtype}_softmax"] = x.softmax(-1)
        out[f"{dtype}_log_softmax"] = x.log_softmax(-1)
    return out


def emulate_programs(arch=None):
    """The fixed programs of the ``emulate`` check: {name: fn(torch, dev, rng) ->
    {label: tensor}}; each is called with a fresh ``np.random.default_rng(seed)``
    on both sides, so both get the same inputs. fp8 GEMMs only where the
    architecture has them (Ada, Hopper, Blackwell; every one when arch is None)."""
    progs = {"gemm_float32": lambda T, d, r: _prog_gemm(T, d, r, "float32"),
             "gemm_tf32": lambda T, d, r: _prog_gemm(T, d, r, "float32", tf32=True),
             "gemm_float16": lambda T, d, r: _prog_gemm(T, d, r, "float16"),
             "gemm_bfloat16": lambda T, d, r: _prog_gemm(T, d, r, "bfloat16"),
             "scaled_mm_fp8": _prog_scaled_mm,
             "elementwise_half": _prog_elementwise,
             "cast_fp8": _prog_casts,
             "mlp_bf16_forward_backward": _prog_mlp,
             "softmax": _prog_softmax}
    if arch is not None and arch not in _FP8_UNIT:
        del progs["scaled_mm_fp8"]
    if arch in ("volta", "turing"):
        for k in ("gemm_tf32", "gemm_bfloat16", "mlp_bf16_forward_backward"):
            del progs[k]
    return progs


def _bits(torch, t):
    """(uint numpy array of the encodings, softfloat format name) of a CPU tensor."""
    t = t.detach().to("cpu").contiguous()
    fmt, it = {torch.float32: ("fp32", torch.int32), torch.float16: ("fp16", torch.int16),
               torch.bfloat16: ("bf16", torch.int16),
               torch.float8_e4m3fn: ("fp8_e4m3", torch.uint8),
               torch.float8_e5m2: ("fp8_e5m2", torch.uint8)}[t.dtype]
    u = {torch.int32: np.uint32, torch.int16: np.uint16, torch.uint8: np.uint8}[it]
    return t.view(it).numpy().view(u).reshape(t.shape), fmt


def compare_outputs(torch, got, exp, show=4):
    """One output: the device's tensor ``got`` against the emulated ``exp``, bit for
    bit (NaNs compared as NaNs, their payload differences counted apart)."""
    rec = {"dtype": str(got.dtype).replace("torch.", ""), "shape": list(got.shape)}
    if got.dtype != exp.dtype or tuple(got.shape) != tuple(exp.shape):
        rec.update(outputs=int(got.numel()), mismatches=int(got.numel()),
                   error=f"emulated {str(exp.dtype).replace('torch.', '')} "
                         f"{list(exp.shape)} vs device {rec['dtype']} {rec['shape']}")
        return rec
    g, fmt = _bits(torch, got)
    e, _ = _bits(torch, exp)
    g, e = g.reshape(-1), e.reshape(-1)
    diff, pay = _same(g, e, fmt)
    idx = np.flatnonzero(diff)
    w = 2 * g.dtype.itemsize
    rec.update(outputs=int(g.size), mismatches=int(idx.size), nan_payload_differences=pay,
               examples=[[int(i), f"{int(g[i]):#0{w + 2}x}", f"{int(e[i]):#0{w + 2}x}"]
                         for i in idx[:show]])
    if idx.size:
        with np.errstate(invalid="ignore", over="ignore"):
            gv, ev = sf.from_bits(g[idx], fmt), sf.from_bits(e[idx], fmt)
            fin = np.isfinite(gv) & np.isfinite(ev)
            if fin.any():
                rec["max_finite_difference"] = float(np.max(np.abs(gv[fin] - ev[fin])))
    return rec


def emulated_fn(torch, device_name, **emulate_kw):
    """The emulated side: a program run on CPU tensors under sf.emulate(device_name);
    returns (outputs, report dict)."""
    def fn(prog, seed):
        with sf.emulate(device_name, **emulate_kw) as run:
            out = prog(torch, "cpu", np.random.default_rng(seed))
        return out, run.report().as_dict()
    return fn


def native_fn(torch, dev):
    """The device side: a program run natively on torch device ``dev``."""
    def fn(prog, seed):
        out = prog(torch, dev, np.random.default_rng(seed))
        if dev == "cuda":
            torch.cuda.synchronize()
        return {k: v.detach().to("cpu") for k, v in out.items()}, None
    return fn


def check_emulate(device_fn, emu_fn, programs, seed=0):
    """Every program on the device (``device_fn(prog, seed) -> (outputs, _)``) and
    emulated (``emu_fn``), compared output by output; returns the records."""
    import torch
    recs = []
    for i, (name, prog) in enumerate(programs.items()):
        t0 = time.perf_counter()
        rec = {"program": name, "doc": (prog.__doc__ or "").strip().split("\n")[0]}
        try:
            got, _ = device_fn(prog, seed + i)
        except Exception as ex:          # the device refused the program: recorded
            rec["error"] = f"device: {type(ex).__name__}: {ex}"
            recs.append(rec)
            continue
        try:
            exp, report = emu_fn(prog, seed + i)
        except Exception as ex:          # the mode failed: recorded, a mismatch
            rec["error"] = f"emulate: {type(ex).__name__}: {ex}"
            recs.append(rec)
            continue
        rec["report"] = report
        rec["outputs"] = {}
        for label, g in got.items():
            if label not in exp:
                rec["outputs"][label] = {"error": "no emulated output", "mismatches": None}
                continue
            rec["outputs"][label] = compare_outputs(torch, g, exp[label])
        rec["mismatches"] = sum(o.get("mismatches") or 0 for o in rec["outputs"].values())
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        recs.append(rec)
    return recs


def emulate_status(recs) -> int:
    """0: every output of every program the same bits; 1: a mismatch, an error of
    the mode or a missing output (a device that refused a program is no mismatch)."""
    for r in recs:
        if "error" in r:
            if r["error"].startswith("emulate"):
                return 1
            continue
        if any(o.get("mismatches") is None or o["mismatches"] for o in r["outputs"].values()):
            return 1
    return 0


def write_emulate_report(recs, meta, out):
    """OUT/emulate.json and OUT/emulate.md: per program, per output, mismatching
    outputs / outputs, and the claim levels of the ops the mode ran."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "emulate.json"), "w") as fh:
        json.dump({"meta": meta, "programs": recs, "status": emulate_status(recs)}, fh, indent=1)
    lines = [f"# torch programs on {meta.get('device_name')} against sf.emulate("
             f"{meta.get('emulated')!r}) (torch {meta.get('torch')}, {meta.get('date')})", "",
             "| program | output | dtype | mismatches | outputs | first mismatches (index, device, "
             "emulated) |", "|---|---|---|---:|---:|---|"]
    for r in recs:
        if "error" in r:
            lines.append(f"| {r['program']} | ERROR: {r['error']} | | | | |")
            continue
        for label, o in r["outputs"].items():
            lines.append(f"| {r['program']} | {label} | {o.get('dtype', '')} | "
                         f"{o.get('mismatches')} | {o.get('outputs', '')} | "
                         f"{o.get('examples', o.get('error', ''))} |")
    lines += ["", "## Claim levels of the emulated ops (calls)", ""]
    for r in recs:
        if r.get("report"):
            tot = ", ".join(f"{k} {v}" for k, v in r["report"].get("totals", {}).items() if v)
            lines.append(f"- {r['program']}: {tot}")
    st = emulate_status(recs)
    lines += ["", "All outputs the same bits." if st == 0 else
              "Mismatches or errors: see the table and emulate.json."]
    with open(os.path.join(out, "emulate.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def run_emulate(out, device="cuda", emulated=None, device_fn=None, emu_fn=None, meta=None,
                programs=None, seed=0):
    """The ``emulate`` part: the programs on ``device`` and under
    sf.emulate(``emulated``: detected from the CUDA device when None); the report;
    returns (records, status)."""
    import torch
    if not hasattr(sf, "emulate"):
        raise RuntimeError("this softfloat has no sf.emulate")
    if emulated is None:
        name = torch.cuda.get_device_name(0)
        cc = torch.cuda.get_device_capability(0)
        emulated = emulate_device_of(name, cc)
        if emulated is None:
            raise RuntimeError(f"{name} (compute capability {cc}): no sf.emulate device")
    arch = sf.emulate(emulated).device.arch
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    recs = check_emulate(device_fn or native_fn(torch, device),
                         emu_fn or emulated_fn(torch, emulated), programs or emulate_programs(arch),
                         seed=seed)
    meta = dict(meta or {}, emulated=emulated, arch=arch,
                reduced_precision_reduction=False)
    write_emulate_report(recs, meta, out)
    return recs, emulate_status(recs)


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
