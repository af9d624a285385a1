"""Build the SFV1 harness around a Verilated FPnew (one executable per div/sqrt unit).

``build(rtl, out, unit)`` runs Verilator 5 on FPnew's sources (``src_files.yml`` order,
with the common_cells and PULP div/sqrt files it needs) plus ``sfv1_top.sv`` and
``harness.cpp`` from this directory, and returns the path of the executable
``<out>/<unit>/Vsfv1_top``. Verilator's own optimiser is switched off (``-O0
-fno-dfg``): Verilator 5.006 miscompiles FPnew's multiplier at ``-O1``/``-O3``
(fp32 1.0 * 2.0 gives 0x00400000); the C++ compiler still optimises (`CXX_OPT`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
UNITS = {"pulp": 0, "thmulti": 2}          # fpnew_pkg::divsqrt_unit_t codes
DEFAULT_BUILD = HERE / "build"


def default_rtl() -> Path:
    """The cvfpu checkout: $FPNEW_RTL, else ../shared/rtl/cvfpu next to the repository,
    else /work/shared/rtl/cvfpu."""
    env = os.environ.get("FPNEW_RTL")
    if env:
        return Path(env)
    for cand in (REPO.parent / "shared" / "rtl" / "cvfpu", Path("/work/shared/rtl/cvfpu")):
        if (cand / "src" / "fpnew_top.sv").is_file():
            return cand
    return REPO.parent / "shared" / "rtl" / "cvfpu"


def source_files(rtl: Path) -> list[Path]:
    """FPnew's file list in compilation order: packages first, then src_files.yml."""
    rtl = Path(rtl)
    if not (rtl / "src_files.yml").is_file():
        raise FileNotFoundError(f"FPnew sources not found: no {rtl / 'src_files.yml'} "
                                f"(pass --rtl or set FPNEW_RTL to a cvfpu checkout)")
    listing = (rtl / "src_files.yml").read_text()
    yml = [rtl / m.group(1) for m in re.finditer(r"^\s+([\w/.\-]+\.s?v),", listing, re.M)]
    cc = rtl / "src" / "common_cells" / "src"
    mvp = rtl / "src" / "fpu_div_sqrt_mvp" / "hdl"
    pulp = [mvp / "defs_div_sqrt_mvp.sv"] + sorted(p for p in mvp.glob("*.sv")
                                                   if p.name != "defs_div_sqrt_mvp.sv")
    pkg = [p for p in yml if p.name == "fpnew_pkg.sv"]
    rest = [p for p in yml if p.name != "fpnew_pkg.sv"]
    files = [cc / "cf_math_pkg.sv", *pkg, *pulp, cc / "lzc.sv", cc / "rr_arb_tree.sv", *rest]
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise FileNotFoundError(f"FPnew sources not found under {rtl}: {missing[0]}{more}"
                                " (are the submodules checked out?)")
    return files


def executable(out: Path, unit: str) -> Path:
    return Path(out) / unit / "Vsfv1_top"


#: The C++ optimisation of the model (Verilator's OPT_FAST; its own default is -Os).
#: -O2 measured 1.5-1.8x faster (fp8 add, fp16 fma, fp16 div) with identical results.
CXX_OPT = "-O2"


def verilator_command(rtl: Path, out: Path, unit: str, jobs: int = 2,
                      cxx_opt: str | None = CXX_OPT) -> list[str]:
    """The Verilator command line; ``cxx_opt`` is the C++ optimisation of the model
    (None: Verilator's default)."""
    rtl = Path(rtl)
    obj = Path(out) / unit
    return ["verilator", "--cc", "--exe", "--build", "-j", str(jobs),
            "-O0", "-fno-dfg", "-Wno-fatal", "-Wno-lint", "-Wno-style",
            "--top-module", "sfv1_top", f"-GDIVSQRT={UNITS[unit]}",
            "-CFLAGS", f"-DDIVSQRT_NAME=\\\"{unit}\\\"",
            *(["-MAKEFLAGS", f"OPT_FAST={cxx_opt}"] if cxx_opt else []),
            "-I" + str(rtl / "src" / "common_cells" / "include"),
            "--Mdir", str(obj), "-o", "Vsfv1_top",
            *map(str, source_files(rtl)), str(HERE / "sfv1_top.sv"), str(HERE / "harness.cpp")]


def build(rtl: Path | None = None, out: Path | None = None, unit: str = "thmulti",
          jobs: int = 2, quiet: bool = False,
          cxx_opt: str | None = CXX_OPT) -> tuple[Path, float]:
    """Build the harness for ``unit`` ('pulp' or 'thmulti'); returns (executable, seconds)."""
    if unit not in UNITS:
        raise ValueError(f"unit: expected one of {sorted(UNITS)}, got {unit!r}")
    if shutil.which("verilator") is None:
        raise RuntimeError("verilator is not on the PATH (Debian: apt-get install verilator)")
    rtl = Path(rtl) if rtl else default_rtl()
    out = Path(out) if out else DEFAULT_BUILD
    cmd = verilator_command(rtl, out, unit, jobs, cxx_opt)
    (out / unit).mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    log = out / unit / "build.log"
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    secs = time.monotonic() - t0
    if proc.returncode != 0:
        tail = log.read_text().splitlines()[-15:]
        raise RuntimeError(f"verilator failed (status {proc.returncode}); last lines of {log}:\n"
                           + "\n".join(tail))
    if not quiet:
        print(f"built {executable(out, unit)} in {secs:.0f} s", file=sys.stderr)
    return executable(out, unit), secs
