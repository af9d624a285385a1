"""``python -m validation.hardware.fpnew [build|run|report|bench]``: FPnew checked with
softfloat.verify through a Verilated harness speaking SFV1.

  build   build the harness for both div/sqrt units (PULP, THMULTI) into --build-dir
  bench   measure the harness's ops/s per kind of operation (raw SFV1, no verifier)
  run     build when needed, bench, run the plan (--plan full|quick), write the report
  report  re-render the Markdown report from its JSON (--merge DIR: first add the runs of
          another report, e.g. the other unit's run side by side with --units)

Exit status: 0 every run matched the library's IEEE defaults, 1 mismatches found (the
report says which, and what FPnew does instead), 2 could not run.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import sys
import time
from pathlib import Path

from . import build as B
from . import runner as R
from .report import render


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def _parser():
    p = _Parser(prog="python -m validation.hardware.fpnew",
                description="Verify the FPnew RTL FPU (Verilator) against softfloat.")
    p.add_argument("command", nargs="?", default="run", choices=("build", "run", "report",
                                                                  "bench"))
    p.add_argument("--rtl", type=Path, default=None,
                   help="the cvfpu checkout (default: $FPNEW_RTL, ../shared/rtl/cvfpu)")
    p.add_argument("--build-dir", type=Path, default=B.DEFAULT_BUILD,
                   help="where the harness is built (default: validation/hardware/fpnew/build)")
    p.add_argument("--units", nargs="+", default=list(B.UNITS), choices=list(B.UNITS))
    p.add_argument("--plan", default="shared", choices=sorted(R.PLANS),
                   help="shared (default: tens of minutes), full (hours), quick (a minute)")
    p.add_argument("--only", default=None, metavar="GLOB",
                   help="runs whose label matches, e.g. '*div fp16*'")
    p.add_argument("--out", type=Path, default=R.REPORT_DIR,
                   help="report directory (default: validation/reports/hardware)")
    p.add_argument("--resume", action="store_true",
                   help="keep the runs already in the report's JSON, do the rest")
    p.add_argument("--rebuild", action="store_true", help="build even if a harness exists")
    p.add_argument("--jobs", type=int, default=2, help="compiler jobs (default 2)")
    p.add_argument("--cxx-opt", default=B.CXX_OPT,
                   help=f"C++ optimisation of the model (default {B.CXX_OPT})")
    p.add_argument("--merge", type=Path, default=None, metavar="DIR",
                   help="report: add the runs of DIR/fpnew.json to --out's report")
    return p


def _build(args, env):
    for unit in args.units:
        exe = B.executable(args.build_dir, unit)
        if exe.is_file() and not args.rebuild and args.command != "build":
            continue
        if args.rebuild and (args.build_dir / unit).is_dir():
            shutil.rmtree(args.build_dir / unit)
        print(f"building the {unit} harness (Verilator, a few minutes)...", file=sys.stderr)
        _, secs = B.build(args.rtl, args.build_dir, unit, jobs=args.jobs,
                          cxx_opt=args.cxx_opt or None)
        env.setdefault("build_s", {})[unit] = round(secs, 1)


def _key(r):
    return (r["unit"], r["op"], r["format"], r["rounding"], json.dumps(r["space"]))


def _merge(data: dict, other: dict) -> None:
    have = {_key(r) for r in data["runs"]}
    data["runs"] += [r for r in other.get("runs", []) if _key(r) not in have]
    data["throughput"] = {**data.get("throughput", {}), **other.get("throughput", {})}
    meta, om = data.setdefault("meta", {}), other.get("meta", {})
    meta["build_s"] = {**meta.get("build_s", {}), **om.get("build_s", {})}
    meta["finished"] = max(meta.get("finished", ""), om.get("finished", ""))


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    out_json = args.out / "fpnew.json"
    try:
        if args.command == "report":
            data = json.loads(out_json.read_text())
            if args.merge:
                _merge(data, json.loads((args.merge / "fpnew.json").read_text()))
                out_json.write_text(json.dumps(data, indent=1, default=str) + "\n")
            (args.out / "fpnew.md").write_text(render(data))
            print(f"wrote {args.out / 'fpnew.md'}")
            return 0
        rtl = args.rtl or B.default_rtl()
        B.source_files(rtl)                       # a clear error when the RTL is missing
        env = R.environment(rtl)
        _build(args, env)
        if args.command == "build":
            return 0
        from .bench import bench
        old_thr = {}
        if args.resume and out_json.is_file():
            old_thr = json.loads(out_json.read_text()).get("throughput", {})
        benched = {k.split()[0] for k in old_thr}
        thr = bench(args.build_dir, [u for u in args.units if u not in benched]
                    if args.command == "run" else args.units)
        if args.command == "bench":
            print(json.dumps(thr, indent=1))
            return 0
    except (FileNotFoundError, RuntimeError, ValueError, OSError) as exc:
        print(f"fpnew: {exc}", file=sys.stderr)
        return 2
    data = {"meta": {**env, "plan": args.plan, "started": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                        time.gmtime())},
            "throughput": thr, "runs": []}
    done = set()
    if args.resume and out_json.is_file():
        old = json.loads(out_json.read_text())
        data["runs"] = old.get("runs", [])
        data["meta"]["build_s"] = {**old.get("meta", {}).get("build_s", {}),
                                   **env.get("build_s", {})}
        data["meta"]["started"] = old.get("meta", {}).get("started", data["meta"]["started"])
        data["throughput"] = {**old.get("throughput", {}), **thr}
        done = {_key(r) for r in data["runs"]}
    args.out.mkdir(parents=True, exist_ok=True)
    for job in R.PLANS[args.plan]():
        if job.unit not in args.units:
            continue
        for mode in job.modes:
            label = job.label(mode)
            if args.only and not fnmatch.fnmatch(label, args.only):
                continue
            key = (job.unit, job.op, job.fmt, mode, json.dumps(job.space))
            if key in done:
                continue
            t0 = time.perf_counter()
            r = R.run_job(job, B.executable(args.build_dir, job.unit), mode)
            r["space"] = job.space
            data["runs"].append(r)
            what = r.get("refused") or r.get("error") or (
                f"{r['cases']:,} cases, {r['mismatches']:,} mismatches; "
                + r.get("diagnosis", {}).get("summary", ""))
            print(f"{label}: {what} [{time.perf_counter() - t0:.0f} s]", flush=True)
            out_json.write_text(json.dumps(data, indent=1, default=str) + "\n")
            (args.out / "fpnew.md").write_text(render(data))
    data["meta"]["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out_json.write_text(json.dumps(data, indent=1, default=str) + "\n")
    (args.out / "fpnew.md").write_text(render(data))
    print(f"wrote {out_json} and {args.out / 'fpnew.md'}")
    return 1 if any(r.get("mismatches") for r in data["runs"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
