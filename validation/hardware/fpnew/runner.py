"""The verification plan for FPnew and its report.

Every run is ``softfloat.verify`` on the SFV1 harness (`exec_impl`), IEEE defaults as
the reference setting (the library's), the diagnosis naming what FPnew does instead.
`PLANS` lists the runs: ``shared`` (the default and the committed report: tens of
minutes on a shared 2-core machine, samples where ``full`` runs every case), ``full``
(hours), ``quick`` (about a minute, what the slow test runs).
"""
from __future__ import annotations

import dataclasses
import os
import platform
import subprocess
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
    """Every operation, format, mode and space the harness offers: several hours of one
    core (fp16 div at level 1 alone is ~30 s of harness time per mode and unit)."""
    jobs = []
    fp8 = "fp8_e5m2"
    for unit in ("thmulti", "pulp"):
        for f in ("fp16", "bf16", "fp32"):
            jobs.append(Job(unit, f, "div", "level1"))
            jobs.append(Job(unit, f, "sqrt", "level1"))
    jobs.append(Job("pulp", fp8, "div", "exhaustive"))
    jobs.append(Job("pulp", fp8, "sqrt", "exhaustive"))
    for op in ("add", "sub", "mul", "fma", "fms", "fnma", "fnms"):
        jobs.append(Job("thmulti", fp8, op, "exhaustive"))
    for f in ("fp16", "bf16"):
        for op in ("add", "sub", "mul"):
            jobs.append(Job("thmulti", f, op, "level2"))
    for f in ("fp16", "bf16", "fp32"):
        for op in ("fma", "fms", "fnma", "fnms"):
            jobs.append(Job("thmulti", f, op, "level1"))
    for op in ("add", "sub", "mul"):
        jobs.append(Job("thmulti", "fp32", op, "level1"))
    for f in (fp8, "fp16", "bf16", "fp32"):
        for op in ("fmin_riscv", "fmax_riscv", "eq", "lt_signaling", "le_signaling"):
            jobs.append(Job("thmulti", f, op, "exhaustive" if f == fp8 else "level1",
                            ("nearest_even",)))
        jobs.append(Job("thmulti", f, "classify", "exhaustive" if f != "fp32" else "level1",
                        ("nearest_even",)))
    jobs += _conversions(MODES)
    return jobs


def _conversions(modes) -> list:
    jobs = []
    srcs = ("fp8_e5m2", "fp16", "bf16", "fp32")
    for s in srcs:
        sp = "exhaustive" if s != "fp32" else "level1"
        for d in srcs:
            if s != d:
                jobs.append(Job("thmulti", s, f"convert:{d}", sp, modes))
        for t in ("to_int32", "to_int64", "to_uint32", "to_uint64"):
            jobs.append(Job("thmulti", s, t, sp, modes))
        for t in ("from_int32", "from_int64", "from_uint32", "from_uint64"):
            jobs.append(Job("thmulti", s, t, "level1", modes))
    return jobs


def _plan_shared() -> list:
    """What the committed report holds, sized for a loaded, shared 2-core machine (tens
    of minutes), in order of priority: the div/sqrt units first, the largest spaces
    last; samples where `full` runs every case (the notes say so)."""
    jobs = []
    fp8 = "fp8_e5m2"
    jobs.append(Job("pulp", "fp16", "div", "level1", ("nearest_even", "toward_zero", "upward")))
    jobs.append(Job("thmulti", "fp16", "div", "level1", ("nearest_even", "upward")))
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "fp16", "sqrt", "level1"))
    for op in ("add", "mul"):
        jobs.append(Job("thmulti", fp8, op, "exhaustive"))
    jobs.append(Job("thmulti", fp8, "sub", "exhaustive", ("nearest_even",)))
    for f in ("fp16", "bf16"):
        for op in ("add", "mul"):
            jobs.append(Job("thmulti", f, op, "level1"))
        jobs.append(Job("thmulti", f, "sub", "level1", ("nearest_even",)))
    for f, n in ((fp8, 1 << 16), ("fp16", 1 << 15), ("bf16", 1 << 15), ("fp32", 1 << 14)):
        jobs.append(Job("thmulti", f, "fma", n, note="sampled"))
        for op in ("fms", "fnma", "fnms"):
            jobs.append(Job("thmulti", f, op, n >> 2, ("nearest_even",), note="sampled"))
    for f in (fp8, "fp16", "bf16"):
        for op in ("fmin_riscv", "fmax_riscv", "eq", "lt_signaling", "le_signaling"):
            jobs.append(Job("thmulti", f, op, "exhaustive" if f == fp8 else "level1",
                            ("nearest_even",)))
        jobs.append(Job("thmulti", f, "classify", "exhaustive", ("nearest_even",)))
    jobs += [j for j in _conversions(("nearest_even", "toward_zero"))
             if not j.op.endswith(("int64", "uint64"))]
    for op in ("add", "mul"):
        jobs.append(Job("thmulti", "fp32", op, "level1", ("nearest_even", "toward_zero")))
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "fp32", "sqrt", "level1", ("nearest_even",)))
    jobs.append(Job("pulp", fp8, "sqrt", "exhaustive"))
    for unit in ("pulp", "thmulti"):
        jobs.append(Job(unit, "bf16", "div", "level1", ("nearest_even",)))
        jobs.append(Job(unit, "fp32", "div", "level1", ("nearest_even",)))
    jobs.append(Job("pulp", fp8, "div", "exhaustive", ("nearest_even",)))
    jobs.append(Job("thmulti", "fp16", "add", "level2", ("nearest_even",)))
    return jobs


def _plan_quick() -> list:
    return [Job("thmulti", "fp8_e5m2", "add", "exhaustive", ("nearest_even", "toward_zero")),
            Job("thmulti", "fp16", "mul", 2000, ("nearest_even",)),
            Job("thmulti", "fp16", "fma", 2000, ("upward",)),
            Job("thmulti", "bf16", "convert:fp8_e5m2", "exhaustive", ("nearest_even",)),
            Job("pulp", "fp16", "div", 2000, ("nearest_even",)),
            Job("thmulti", "fp16", "div", 2000, ("nearest_even",))]


PLANS = {"full": _plan_full, "shared": _plan_shared, "quick": _plan_quick}


def _trim(d: dict, examples: int) -> dict:
    d = dict(d)
    d["first_mismatches"] = d.get("first_mismatches", [])[:examples]
    diag = dict(d.get("diagnosis") or {})
    diag.pop("candidates", None)
    d["diagnosis"] = diag
    return d


def run_job(job: Job, exe: Path, mode: str, timeout: float = 900.0, examples: int = 5,
            exe_argv: list | None = None) -> dict:
    """One verify run of ``exe`` (or the command ``exe_argv``); a refused header (the unit
    lacks the format) or a space verify cannot build is recorded as such."""
    import softfloat as sf
    from softfloat.verification import ImplError, exec_impl
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
             note=job.note)
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
            "0ad2cd7ff265fe6c9852faa87d296931e2cf380d (the commit of the cvfpu sources used; "
            "the checkout has no git metadata)",
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "machine": platform.machine()}
