"""The ``units`` part of validation/cuda_probe.py (CUDA only): the matrix-unit
models of `softfloat.mma` for the device's architecture (from its compute
capability) against cuBLAS GEMMs through torch: fp16 / bf16 ``mm`` (fp32
accumulation, output rounded to the input type, and fp32 output where torch
offers ``out_dtype``), tf32 ``mm`` (fp32 inputs with ``allow_tf32``; operands
truncated or rounded to tf32: both candidates), fp8 ``torch._scaled_mm`` with
``use_fast_accum`` on and off (candidates: the whole K chained on the tensor core,
and promotion to fp32 every 32 .. 256 products), for K from one instruction to
many (chained), on normal, wide-exponent, cancelling, tiny and special (zeros,
infinities, NaNs, overflow) inputs. For every case the mismatch count of every
candidate model (NaNs compared as NaNs; their payloads counted apart) and the
first mismatches (index, device bits, model bits). Writes ``OUT/units.json`` and
``OUT/units.md``. The CPU-side logic (`unit_cases`, `unit_candidates`,
`check_units`, `write_units_report`) takes the device as a function of a case,
and is tested with a fake one.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

import softfloat as sf

#: compute capability (major, minor) -> softfloat.mma architecture
CC_ARCH = {(7, 0): "volta", (7, 2): "volta", (7, 5): "turing", (8, 0): "ampere",
           (8, 6): "ampere", (8, 7): "ampere", (8, 9): "ada", (9, 0): "hopper",
           (10, 0): "blackwell", (10, 3): "blackwell", (12, 0): "rtx_blackwell",
           (12, 1): "rtx_blackwell"}
KINDS = ("normal", "wide", "cancel", "tiny", "special")
FP8_UNIT = {"ada": "ada", "hopper": "hopper", "blackwell": "blackwell",
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
    if arch in FP8_UNIT:
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
        unit = FP8_UNIT[arch]
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


def same_bits(got, exp, out):
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
            diff, pay = same_bits(got, exp, c["out"])
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
