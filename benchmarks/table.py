"""The benchmark table: softfloat against numpy, ml_dtypes, torch CPU and MMA-Sim,
as ratios measured side by side in one run.

    python benchmarks/table.py [--quick] [--out docs/benchmarks.md] [--threads 2]

Prints the page (``--out PATH``: writes it there; docs/benchmarks.md is the
committed one). ``--quick`` runs
every row on small sizes (seconds: a smoke run, not a measurement). Peers that
are not installed get an empty cell. Each row times softfloat and its peers in
rounds (one call of each per round, after a warm-up round) and keeps the fastest
call of each, so a shared machine slows every column of a row alike; the
ratios are what to compare, the absolute times depend on the machine.

torch's OpenMP threads are told to sleep when idle (OMP_WAIT_POLICY=PASSIVE,
set before torch is imported, unless already set): with libgomp's default they
spin for milliseconds after each torch call, on the cores the next measurement
in the round needs (softfloat's threads, or torch's own next call).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)            # this checkout's softfloat, ahead of an installed one
sys.path.insert(1, HERE)

from _timing import best_interleaved  # noqa: E402

NONE = "–"          # an empty cell: the peer is not installed or has no such operation




def _ratio(peer, ours):
    return NONE if peer is None else f"{peer / ours:.2f}"


def _table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


# --------------------------------------------------------------------------
# the machine and the versions
# --------------------------------------------------------------------------
def machine() -> str:
    model = platform.processor() or platform.machine()
    sockets_cores = set()
    siblings = None
    try:
        with open("/proc/cpuinfo") as f:
            phys = core = None
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k == "model name":
                    model = v
                elif k == "physical id":
                    phys = v
                elif k == "core id":
                    core = v
                elif k == "siblings":
                    siblings = int(v)
                elif not k and phys is not None:
                    sockets_cores.add((phys, core))
                    phys = core = None
    except OSError:
        pass
    try:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        model += f" (LLVM host CPU {llvm.get_host_cpu_name()})"
    except Exception:                       # noqa: BLE001 (a detail of the header only)
        pass
    cpus = os.cpu_count()
    avail = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    cores = f"{len(sockets_cores)} cores, " if sockets_cores else ""
    smt = f", {siblings} threads per socket" if siblings else ""
    return f"{model}; {cores}{cpus} logical CPUs{smt}; {avail} available to this process"


def versions(sf, peers) -> str:
    import numba
    out = [f"softfloat {sf.__version__}", f"Python {platform.python_version()}",
           f"numpy {np.__version__}", f"numba {numba.__version__}"]
    for name, mod in peers.items():
        out.append(f"{name} {getattr(mod, '__version__', '?')}" if mod is not None
                   else f"{name} not installed")
    return ", ".join(out)


def _mmasim_version():
    try:
        from importlib.metadata import version
        return version("mmasim")
    except Exception:                       # noqa: BLE001
        return "?"


# --------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------
# (softfloat format, numpy dtype, ml_dtypes name, torch dtype name)
CONVERSIONS = [("fp16", np.float16, None, "float16"), ("bf16", None, "bfloat16", "bfloat16"),
               ("fp8_e4m3", None, "float8_e4m3fn", "float8_e4m3fn"),
               ("fp8_e5m2", None, "float8_e5m2", "float8_e5m2"),
               ("fp6_e2m3", None, "float6_e2m3fn", None), ("fp6_e3m2", None, "float6_e3m2fn", None),
               ("fp4_e2m1", None, "float4_e2m1fn", None)]


def conversions(sf, ml, torch, n, repeat):
    rng = np.random.default_rng(0)
    x64 = rng.standard_normal(n) * 4
    x32 = x64.astype(np.float32)
    rows = []
    for src, x in (("float32", x32), ("float64", x64)):
        tx = torch.from_numpy(x) if torch is not None else None
        for fmt, npdt, mlname, tname in CONVERSIONS:
            fns = {"ours": lambda x=x, fmt=fmt: sf.to_bits(x, fmt)}
            if npdt is not None:
                fns["numpy"] = lambda x=x, d=npdt: x.astype(d)
            if ml is not None and mlname is not None:
                fns["ml"] = lambda x=x, d=getattr(ml, mlname): x.astype(d)
            if tx is not None and tname is not None:
                fns["torch"] = lambda tx=tx, d=getattr(torch, tname): tx.to(d)
            t = best_interleaved(fns, repeat)
            rows.append([f"{src} → {fmt}", f"{t['ours'] / n * 1e9:.2f}",
                         _ratio(t.get("numpy"), t["ours"]), _ratio(t.get("ml"), t["ours"]),
                         _ratio(t.get("torch"), t["ours"])])
    head = ["conversion (nearest-even)", "softfloat ns/element", "numpy astype",
            "ml_dtypes astype", "torch .to"]
    return (f"`sf.to_bits(x, fmt)` of {n:,} values (standard normal × 4), against the peers' "
            f"casts; ratio = peer time / softfloat time (above 1: softfloat is faster). "
            f"Best of {repeat} rounds.", head, rows)


def arithmetic(sf, ml, torch, n, repeat):
    rng = np.random.default_rng(1)
    vals = [rng.standard_normal(n) * 4 for _ in range(3)]
    rows = []
    for fmt in ("fp16", "bf16"):
        a, b, c = (sf.to_bits(v, fmt) for v in vals)
        if fmt == "fp16":
            peer = [v.astype(np.float16) for v in vals]
        else:
            peer = [v.astype(ml.bfloat16) for v in vals] if ml is not None else None
        tt = None
        if torch is not None:
            dt = torch.float16 if fmt == "fp16" else torch.bfloat16
            tt = [torch.from_numpy(v).to(dt) for v in vals]
        for op in ("add", "mul", "fma"):
            fns = {"ours": (lambda op=op, a=a, b=b, c=c, fmt=fmt:
                            getattr(sf, op)(*((a, b, c) if op == "fma" else (a, b)), fmt))}
            if peer is not None:
                p, q, r = peer
                fns["peer"] = {"add": lambda p=p, q=q: p + q, "mul": lambda p=p, q=q: p * q,
                               "fma": lambda p=p, q=q, r=r: p * q + r}[op]
            if tt is not None:
                p, q, r = tt
                fns["torch"] = {"add": lambda p=p, q=q: p + q, "mul": lambda p=p, q=q: p * q,
                                "fma": lambda p=p, q=q, r=r: torch.addcmul(r, p, q)}[op]
            t = best_interleaved(fns, repeat)
            rows.append([f"{op} {fmt}", f"{t['ours'] / n * 1e9:.2f}",
                         _ratio(t.get("peer") if fmt == "fp16" else None, t["ours"]),
                         _ratio(t.get("peer") if fmt == "bf16" else None, t["ours"]),
                         _ratio(t.get("torch"), t["ours"])])
    head = ["operation (nearest-even)", "softfloat ns/element", "numpy float16",
            "ml_dtypes bfloat16", "torch"]
    return (f"`sf.add/mul/fma(a, b[, c], fmt)` on {n:,} encodings against the peers' "
            f"arrays of the type (fma: numpy and ml_dtypes `a * b + c`, two roundings; torch "
            f"`addcmul`); ratio = peer time / softfloat time. Best of {repeat} rounds.",
            head, rows)


def sums_matmul(sf, torch, n_sum, n_small, N, repeat):
    """One round holds every model of a kind and the peers (measured once for them all)."""
    rng = np.random.default_rng(2)
    rows = []
    x = sf.to_bits(rng.random(n_sum), "fp16")
    x32 = sf.from_bits(x, "fp16").astype(np.float32)
    xs, xs32 = x[:n_small], x32[:n_small]
    tx = torch.from_numpy(x32) if torch is not None else None
    txs = torch.from_numpy(xs32) if torch is not None else None
    # (label, n, our call, numpy's, torch's)
    sums = [(f"sum of {n_sum:,} fp16, fp32 sequential accumulation", n_sum,
             lambda: sf.sum(x, "fp16", acc="fp32"), lambda: x32.sum(),
             None if tx is None else lambda: tx.sum()),
            (f"sum of {n_small:,} fp16, fp32 pairwise accumulation", n_small,
             lambda: sf.sum(xs, "fp16", acc="fp32", order="pairwise"), lambda: xs32.sum(),
             None if txs is None else lambda: txs.sum()),
            (f"sum of {n_small:,} fp16, fp16 sequential accumulation", n_small,
             lambda: sf.sum(xs, "fp16"), lambda: xs32.sum(),
             None if txs is None else lambda: txs.sum())]
    for label, n, ours, npf, tf in sums:
        fns = {"ours": ours, "numpy": npf}
        if tf is not None:
            fns["torch"] = tf
        t = best_interleaved(fns, repeat)
        rows.append([label, f"{t['ours'] / n * 1e9:.3f}", _ratio(t["numpy"], t["ours"]),
                     _ratio(t.get("torch"), t["ours"])])
    A = sf.to_bits(rng.standard_normal((N, N)), "fp16")
    B = sf.to_bits(rng.standard_normal((N, N)), "fp16")
    a32, b32 = (sf.from_bits(v, "fp16").astype(np.float32) for v in (A, B))
    models = {"fp32 sequential accumulation": "fp32",
              "block FMA, V100 paper model": sf.block_fma_preset("v100", "fp16"),
              "block FMA, A100 paper model": sf.block_fma_preset("a100", "fp16"),
              "block FMA, H100 paper model": sf.block_fma_preset("h100", "fp16")}
    fns = {name: (lambda acc=acc: sf.matmul(A, B, "fp16", acc=acc))
           for name, acc in models.items()}
    fns["numpy"] = lambda: a32 @ b32
    if torch is not None:
        ta, tb = torch.from_numpy(a32), torch.from_numpy(b32)
        fns["torch"] = lambda: ta @ tb
    t = best_interleaved(fns, repeat)
    for name in models:
        rows.append([f"matmul {N}³ fp16, {name}", f"{t[name] / N ** 3 * 1e9:.3f}",
                     _ratio(t["numpy"], t[name]), _ratio(t.get("torch"), t[name])])
    head = ["model", "softfloat ns per element or multiply-add", "numpy float32",
            "torch float32"]
    return ("Accumulation models (`sf.sum`, `sf.matmul`: exact models of an order of "
            "operations, bit for bit) against plain float32 sums and products, which round "
            "in an order of their own: ratio = peer time / softfloat time (below 1: the model "
            f"is slower). Best of {repeat} rounds; the matrix products and their peers in the "
            "same rounds.", head, rows)


MATRIX_UNITS = [("hopper", "fp16"), ("hopper", "bf16"), ("hopper", "fp8_e4m3"),
                ("ampere", "fp16"), ("ampere", "bf16"),
                ("cdna1", "fp16"), ("cdna1", "bf16"),
                ("cdna3", "fp16"), ("cdna3", "bf16"), ("cdna3", "tf32"),
                ("cdna3", "fp8_e4m3fnuz")]

_TORCH_VIEW = {1: np.uint8, 2: np.int16, 4: np.int32}


def _to_torch(torch, bits, fmt_name):
    """Encodings as the torch tensor MMA-Sim takes (tf32: float32 with the low 13
    bits clear)."""
    bits = np.ascontiguousarray(bits)
    if fmt_name == "tf32":
        return torch.from_numpy((bits.astype(np.uint32) << np.uint32(13)).view(np.int32)
                                ).view(torch.float32)
    dt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
          "fp8_e4m3": torch.float8_e4m3fn, "fp8_e4m3fnuz": torch.float8_e4m3fnuz}[fmt_name]
    return torch.from_numpy(bits.view(_TORCH_VIEW[bits.itemsize]).copy()).view(dt)


def _mmasim_op(unit):
    import mmasim.amd as amd
    import mmasim.nv_ptx as nv
    from softfloat.mma import MMASIM_ARCH
    arch = MMASIM_ARCH[unit.arch]
    if unit.family == "mfma":
        return amd.MFMA(arch, unit.instruction)
    return {"mma": nv.MMA, "wgmma": nv.WGMMA}[unit.family](arch, unit.instruction)


def matrix_units(sf, torch, have_mmasim, N, N_sim, repeat):
    from softfloat import mma as M
    rng = np.random.default_rng(3)
    rows = []
    for arch, fin in MATRIX_UNITS:
        u = M.tensor_core(arch, fin, "fp32")
        a = sf.to_bits(rng.standard_normal((N, N)), u.a_fmt)
        b = sf.to_bits(rng.standard_normal((N, N)), u.b_fmt)
        c = sf.to_bits(rng.standard_normal((N, N)), u.c_fmt)
        t = best_interleaved({"ours": lambda: M.mma(u, a, b, c)}, repeat)["ours"]
        sim, same = NONE, NONE
        if have_mmasim:
            s = slice(0, N_sim)
            op = _mmasim_op(u)
            A = _to_torch(torch, a[s, s], u.a_fmt.name)
            B = _to_torch(torch, np.ascontiguousarray(b[s, s].T), u.b_fmt.name).T
            C = _to_torch(torch, c[s, s], u.c_fmt.name)
            t0 = time.perf_counter()
            D = op(A, B, C)
            ts = time.perf_counter() - t0
            d = D.contiguous().view(torch.int32).numpy().view(np.uint32)
            same = "yes" if np.array_equal(d, M.mma(u, a[s, s], b[s, s], c[s, s])) else "NO"
            sim = f"{ts / N_sim ** 3 * 1e9:.0f}"
        ns = t / N ** 3 * 1e9
        rows.append([f"{arch} {fin} → fp32", u.instruction, f"{ns:.2f}", sim,
                     NONE if sim == NONE else f"{float(sim) / ns:.0f}", same])
    head = ["matrix unit", "instruction", f"softfloat ns/multiply-add ({N}³)",
            f"MMA-Sim ns/multiply-add ({N_sim}³)", "ratio", f"same bits ({N_sim}³)"]
    return ("GPU matrix units (`softfloat.mma.mma`, the instruction chained along K) against "
            "MMA-Sim on the same operands: a GEMM with standard normal A, B and C; "
            f"softfloat best of {repeat}, MMA-Sim one call"
            + ("" if N_sim == N else f" on the top-left {N_sim}³ block")
            + "; ratio = MMA-Sim / softfloat per multiply-add; same bits: the two results "
            "compared.",
            head, rows)


# --------------------------------------------------------------------------
def build(quick=False, threads=2) -> str:
    os.environ.setdefault("SOFTFLOAT_NUM_THREADS", str(threads))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    import softfloat as sf
    try:
        import ml_dtypes as ml
    except ImportError:
        ml = None
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    try:
        import mmasim.amd  # noqa: F401
        import mmasim.nv_ptx  # noqa: F401
        have_mmasim = torch is not None
    except Exception:                       # noqa: BLE001 (any import failure: no column)
        have_mmasim = False
    import warnings
    warnings.filterwarnings("ignore")       # MMA-Sim's and torch's own warnings
    if quick:
        sizes = dict(n_conv=1 << 16, n_arith=1 << 16, n_sum=1 << 16, n_small=1 << 12, N=64,
                     N_unit=32, N_sim=32, repeat=2)
    else:
        # MMA-Sim takes about 0.1 us per multiply-add: 2 s for each 256^3 product
        sizes = dict(n_conv=4_000_000, n_arith=1_000_000, n_sum=4_000_000, n_small=1 << 16,
                     N=256, N_unit=256, N_sim=256, repeat=7)
    r = sizes["repeat"]
    sections = [
        ("Conversions", conversions(sf, ml, torch, sizes["n_conv"], r)),
        ("Arithmetic", arithmetic(sf, ml, torch, sizes["n_arith"], r)),
        ("Sums and matrix products", sums_matmul(sf, torch, sizes["n_sum"], sizes["n_small"], sizes["N"],
                                                 max(3, r // 2))),
        ("GPU matrix units", matrix_units(sf, torch, have_mmasim, sizes["N_unit"],
                                          sizes["N_sim"], max(2, r // 2))),
    ]
    load1 = os.getloadavg()
    wall = time.perf_counter() - t_start
    peers = {"ml_dtypes": ml, "torch": torch}
    ver = versions(sf, peers) + (f", MMA-Sim {_mmasim_version()}" if have_mmasim
                                 else ", MMA-Sim not installed")
    out = ["# Benchmarks", "",
           "Generated by `python benchmarks/table.py" + (" --quick" if quick else "")
           + f" --out docs/benchmarks.md` in {wall:.0f} s; rerun it to refresh this page "
           "(without `--out` it prints the page). Ratios are measured side by side in one run; the "
           "absolute times depend on the machine and its load.", "",
           f"- Machine: {machine()}.",
           f"- Threads: softfloat {os.environ['SOFTFLOAT_NUM_THREADS']} "
           f"(SOFTFLOAT_NUM_THREADS), torch {threads} (torch.set_num_threads; "
           f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}); numpy and ml_dtypes "
           "run on one thread.",
           f"- Load average (1 minute) when taken: {load0[0]:.2f} at the start, "
           f"{load1[0]:.2f} at the end; a load near the number of CPUs means other "
           "processes shared the cores.",
           f"- Taken {datetime.date.today().isoformat()} with {ver}.",
           ]
    if quick:
        out += ["- `--quick`: small sizes, a check that the script runs; not a measurement."]
    for title, (intro, head, rows) in sections:
        out += ["", f"## {title}", "", intro, ""] + _table(head, rows)
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="write the page there (docs/benchmarks.md is the committed one); "
                        "default: print it")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    page = build(a.quick, a.threads)
    if a.out is None:
        sys.stdout.write(page)
    else:
        with open(a.out, "w") as f:
            f.write(page)
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
