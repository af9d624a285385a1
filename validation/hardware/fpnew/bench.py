"""Throughput of the harness through the SFV1 protocol: cases per second of wall time
and per second of the harness's own CPU time (the second is what a loaded machine
does not change much). Random operands; best of ``repeat``."""
from __future__ import annotations

import resource
import time

import numpy as np

from . import build as B
from .sfv1 import run

#: (op, fmt, n_operands, bytes, cases)
CASES = (("add", "fp16", 2, 2, 1 << 14), ("mul", "fp32", 2, 4, 1 << 14),
         ("fma", "fp16", 3, 2, 1 << 14), ("convert:fp32", "fp16", 1, 4, 1 << 14),
         ("div", "fp16", 2, 2, 1 << 10), ("sqrt", "fp16", 1, 2, 1 << 10),
         ("div", "fp32", 2, 4, 1 << 10))


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(build_dir, units, repeat: int = 2) -> dict:
    rng = np.random.default_rng(7)
    out = {}
    for unit in units:
        exe = str(B.executable(build_dir, unit))
        for op, fmt, nops, nb, n in CASES:
            ops = [rng.integers(0, 1 << (8 * (2 if fmt == "fp16" else 4)), n,
                                dtype=np.uint64).astype(f"u{2 if fmt == 'fp16' else 4}")
                   for _ in range(nops)]
            out_bytes = 4 if op == "convert:fp32" else (2 if fmt == "fp16" else 4)
            best_w = best_c = None
            for _ in range(repeat):
                c0, t0 = _child_cpu(), time.perf_counter()
                run([exe], op, fmt, "nearest_even", ops, out_bytes, batch=min(n, 1 << 16),
                    timeout=600)
                w, c = time.perf_counter() - t0, _child_cpu() - c0
                best_w = w if best_w is None else min(best_w, w)
                best_c = c if best_c is None else min(best_c, c)
            out[f"{unit} {op} {fmt}"] = {"cases": n, "ops_per_s_wall": round(n / best_w),
                                          "ops_per_s_cpu": round(n / max(best_c, 1e-9))}
    return out
