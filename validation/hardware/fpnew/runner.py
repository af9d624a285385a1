"""The verification plan for FPnew and its report.

Every run is ``softfloat.verify`` on the SFV1 harness (`exec_impl`), IEEE defaults as
the reference setting (the library's), the diagnosis naming what FPnew does instead.
`PLANS` lists the runs: ``quick`` (seconds, what the tests run), ``full`` (what the
committed report holds, sized for a shared 2-core machine: see `SIZES`).
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

MODES = ("nearest_even", "toward_zero", "downward", "upward", "nearest_away", "odd")
REPORT_DIR = Path(__file__).resolve().parents[2] / "reports" / "hardware"


@dataclasses.dataclass(frozen=True)
class Job:
    """One operation on one format with one div/sqrt unit over ``space`` in ``modes``."""
    unit: str
    fmt: str
    op: str
    space: object
    modes: tuple = MODES
    note: str = ""

    def label(self, mode: str) -> str:
        sp = self.space if isinstance(self.space, str) else f"random {self.space:,}"
        return f"{self.unit} {self.op} {self.fmt} {mode} ({sp})"


def _plan_full() -> list:
    """Sized to finish in about half an hour of one core of harness time (see SIZES)."""
    jobs = []
    fp8 = "fp8_e5m2"
    # the known defects first: PULP div/sqrt against THMULTI's, fp16 TestFloat level 1
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "fp16", "div", "level1"))
        jobs.append(Job(unit, "fp16", "sqrt", "level1"))
    # fp8: every pair of the binary ops, every input of sqrt, a sample of fma triples
    for op in ("add", "sub", "mul"):
        jobs.append(Job("thmulti", fp8, op, "exhaustive"))
    jobs.append(Job("pulp", fp8, "div", "exhaustive"))
    jobs.append(Job("pulp", fp8, "sqrt", "exhaustive"))
    jobs.append(Job("thmulti", fp8, "fma", 1 << 18,
                    note="sampled: every triple (2^24) is ~8 min of harness time per mode"))
    for op in ("fms", "fnma", "fnms"):
        jobs.append(Job("thmulti", fp8, op, 1 << 16, note="sampled"))
    for op in ("fmin_riscv", "fmax_riscv", "eq", "lt_signaling", "le_signaling", "classify"):
        jobs.append(Job("thmulti", fp8, op, "exhaustive", ("nearest_even",)))
    # 16-bit: TestFloat level 2 for fp16 add and mul, level 1 for the rest
    for op in ("add", "mul"):
        jobs.append(Job("thmulti", "fp16", op, "level2"))
    jobs.append(Job("thmulti", "fp16", "sub", "level1"))
    for op in ("add", "sub", "mul"):
        jobs.append(Job("thmulti", "bf16", op, "level1"))
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "bf16", "div", "level1", ("nearest_even", "toward_zero", "upward")))
        jobs.append(Job(unit, "bf16", "sqrt", "level1"))
    for f in ("fp16", "bf16"):
        jobs.append(Job("thmulti", f, "fma", 1 << 17,
                        note="sampled: TestFloat level 1 is 6,133,248 triples per mode"))
        for op in ("fms", "fnma", "fnms"):
            jobs.append(Job("thmulti", f, op, 1 << 15, note="sampled"))
        for op in ("fmin_riscv", "fmax_riscv", "eq", "lt_signaling", "le_signaling"):
            jobs.append(Job("thmulti", f, op, "level1", ("nearest_even",)))
        jobs.append(Job("thmulti", f, "classify", "exhaustive", ("nearest_even",)))
    # fp32: level 1 (div and sqrt in two modes per unit)
    for op in ("add", "sub", "mul"):
        jobs.append(Job("thmulti", "fp32", op, "level1"))
    jobs.append(Job("thmulti", "fp32", "fma", 1 << 16, note="sampled TestFloat-style random"))
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "fp32", "div", "level1", ("nearest_even", "upward")))
        jobs.append(Job(unit, "fp32", "sqrt", "level1"))
    # conversions: every input of the 8/16-bit sources, level 1 of fp32 and the integers
    srcs = ("fp8_e5m2", "fp16", "bf16", "fp32")
    for s in srcs:
        for d in srcs:
            if s != d:
                jobs.append(Job("thmulti", s, f"convert:{d}",
                                "exhaustive" if s != "fp32" else "level1"))
        for t in ("to_int32", "to_int64", "to_uint32"):
            jobs.append(Job("thmulti", s, t, "exhaustive" if s != "fp32" else "level1"))
        for t in ("from_int32", "from_int64"):
            jobs.append(Job("thmulti", s, t, "level1"))
    return jobs


def _plan_quick() -> list:
    return [Job("thmulti", "fp8_e5m2", "add", "exhaustive", ("nearest_even", "toward_zero")),
            Job("thmulti", "fp16", "mul", 2000, ("nearest_even",)),
            Job("thmulti", "fp16", "fma", 2000, ("upward",)),
            Job("thmulti", "bf16", "convert:fp8_e5m2", "exhaustive", ("nearest_even",)),
            Job("pulp", "fp16", "div", 2000, ("nearest_even",)),
            Job("thmulti", "fp16", "div", 2000, ("nearest_even",))]


PLANS = {"full": _plan_full, "quick": _plan_quick}


def _trim(d: dict, examples: int) -> dict:
    d = dict(d)
    d["first_mismatches"] = d.get("first_mismatches", [])[:examples]
    diag = dict(d.get("diagnosis") or {})
    diag.pop("candidates", None)
    d["diagnosis"] = diag
    return d


def run_job(job: Job, exe: Path, mode: str, timeout: float = 900.0, examples: int = 8,
            exe_argv: list | None = None) -> dict:
    """One verify run of ``exe`` (or the command ``exe_argv``); a refused header (the unit
    lacks the format) or a space verify cannot build is recorded as such."""
    import softfloat as sf
    from softfloat.verify import ImplError, exec_impl
    sequential = job.op in ("div", "sqrt")
    impl = exec_impl(exe_argv or [str(exe)], timeout=timeout,
                     batch=4096 if sequential else 1 << 16)
    t0 = time.perf_counter()
    try:
        rep = sf.verify(impl, job.op, job.fmt, mode, space=job.space, seed=1,
                        max_examples=examples)
    except ImplError as exc:
        return {"unit": job.unit, "op": job.op, "format": job.fmt, "rounding": mode,
                "space": job.space, "refused": str(exc), "note": job.note}
    except (ValueError, TypeError, RuntimeError) as exc:
        return {"unit": job.unit, "op": job.op, "format": job.fmt, "rounding": mode,
                "space": job.space, "error": f"{type(exc).__name__}: {exc}", "note": job.note}
    d = _trim(rep.to_dict(), examples)
    d.update(unit=job.unit, space=job.space, wall_s=round(time.perf_counter() - t0, 2),
             note=job.note,
             summary=rep.summary())
    return d


def environment(rtl: Path) -> dict:
    def out(cmd, cwd=None):
        try:
            return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"verilator": out(["verilator", "--version"]),
            "rtl": str(rtl), "rtl_commit": out(["git", "rev-parse", "HEAD"], cwd=rtl) or
            "0ad2cd7ff265fe6c9852faa87d296931e2cf380d (per ../shared/rtl/README.md)",
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "machine": platform.machine()}
