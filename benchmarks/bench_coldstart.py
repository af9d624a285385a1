"""Cold start: what a new user waits for before the first results.

Each measurement runs in a fresh Python process (``sys.executable``) whose numba
cache directory (``NUMBA_CACHE_DIR``, where softfloat keeps its compiled kernels
when the variable is set) is chosen here:

* ``cold``: an empty cache directory (as after ``pip install``, before warmup);
* ``warm``: the same directory again, now holding what the cold run compiled;
* ``warmup``: ``python -m softfloat warmup`` in another empty directory, timed,
  then the same first calls in a fresh process on the cache it produced.

The steps, in this order, each timed on its own (seconds):
``import`` (numpy and softfloat), ``to_bits f64->fp16``, ``to_bits f32->fp16``,
``add fp16``, ``to_bits f32->bf16 rtz``, then ``sub fp16``, ``mul fp16``, ``div
fp16`` and ``add bf16`` (each after the steps before it, so it shows what that
call adds), each as wall time and as the child's CPU time (compilation is
single-threaded, so on a quiet machine the two agree; on a loaded one CPU time
is the steadier figure). The operands of the arithmetic steps include exact
zeros, cancellations and 0/0, so the general kernels compile too, as they do
for the README's examples. Compilation dominates the cold figures; compare runs
taken side by side.

``--repeat N`` runs the cold process N times (each in a new empty cache) and
reports each step's minimum, the usual figure on a shared machine.
``--compile-report`` lists, for each step of the (last) cold run, the functions
numba compiled, with inclusive and exclusive CPU seconds (numba's
``numba:compile`` events), to see where the time goes.

Usage: ``python benchmarks/bench_coldstart.py [--json out.json] [--no-warmup]
[--warmup-args "--all"] [--repeat N] [--compile-report]``. Exit status 0, or 2
if a child process failed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
from numba.core import event
def clock():
    return time.perf_counter(), time.process_time()
r, c, comp = {}, {}, {}
stack, done = [], []
class Compiles(event.Listener):
    # numba:compile events nest (a kernel's callees compile inside it): CPU
    # seconds inclusive and exclusive of the callees, per function
    def on_start(self, e):
        f = getattr(e.data.get("dispatcher"), "py_func", None)
        stack.append([f.__qualname__ if f else "?", time.process_time(), 0.0])
    def on_end(self, e):
        name, t0, inner = stack.pop()
        dt = time.process_time() - t0
        if stack:
            stack[-1][2] += dt
        done.append((name, dt, dt - inner))
if "--compile-report" in sys.argv:
    event.register("numba:compile", Compiles())
def step(name, fn):
    del done[:]
    w0, c0 = clock(); fn(); w1, c1 = clock()
    r[name], c[name] = w1 - w0, c1 - c0
    comp[name] = list(done)
def imp():
    global np, sf
    import numpy as np
    import softfloat as sf
step("import", imp)
x64 = np.linspace(-3.0, 3.0, 1001)
x32 = x64.astype(np.float32)
step("to_bits f64->fp16", lambda: sf.to_bits(x64, "fp16"))
step("to_bits f32->fp16", lambda: sf.to_bits(x32, "fp16"))
a = sf.to_bits(x64, "fp16"); b = sf.to_bits(x64[::-1].copy(), "fp16")
step("add fp16", lambda: sf.add(a, b, "fp16"))
step("to_bits f32->bf16 rtz", lambda: sf.to_bits(x32, "bf16", "toward_zero"))
step("sub fp16", lambda: sf.sub(a, a, "fp16"))
step("mul fp16", lambda: sf.mul(a, b, "fp16"))
step("div fp16", lambda: sf.div(a, b, "fp16"))
# bf16 encodings made by numpy (truncation), so that no conversion compiles here
ab = (x32.view(np.uint32) >> 16).astype(np.uint16); bb = ab[::-1].copy()
step("add bf16", lambda: sf.add(ab, bb, "bf16"))
print("RESULT " + json.dumps({"wall": r, "cpu": c, "compiles": comp}))
"""

STEPS = ["import", "to_bits f64->fp16", "to_bits f32->fp16", "add fp16", "to_bits f32->bf16 rtz",
         "sub fp16", "mul fp16", "div fp16", "add bf16"]


def _env(cache_dir):
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def first_calls(cache_dir, report=False):
    """Run the steps in a fresh process; returns {"wall": {step: seconds} plus
    'process', "cpu": {step: seconds}, "compiles": {step: [(function, inclusive,
    exclusive CPU seconds)]}} (compiles filled with report=True)."""
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD] + (["--compile-report"] if report else []),
                       env=_env(cache_dir), cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not line:
        raise RuntimeError(f"child failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    r = json.loads(line[-1][7:])
    r["wall"]["process"] = wall
    return r


def warmup(cache_dir, extra):
    t = time.perf_counter()
    c = os.times()
    p = subprocess.run([sys.executable, "-m", "softfloat", "warmup", *extra],
                       env=_env(cache_dir), cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"warmup failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    c2 = os.times()
    return {"wall": time.perf_counter() - t,
            "cpu": (c2.children_user - c.children_user) + (c2.children_system - c.children_system)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the figures to this JSON file")
    ap.add_argument("--no-warmup", action="store_true", help="skip the warmup command")
    ap.add_argument("--warmup-args", default="", help="extra arguments for the warmup command")
    ap.add_argument("--repeat", type=int, default=1,
                    help="cold runs (each in a new empty cache); each step's minimum is shown")
    ap.add_argument("--compile-report", action="store_true",
                    help="list the functions numba compiled in each step of the cold run")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat: expected a positive integer")
    out = {"python": sys.version.split()[0]}
    tmp = tempfile.mkdtemp(prefix="sf-coldstart-")
    try:
        runs = []
        for k in range(args.repeat):
            cold_dir = os.path.join(tmp, f"cold{k}")
            runs.append(first_calls(cold_dir, args.compile_report))
        out["cold"] = {key: {s: min(r[key][s] for r in runs) for s in runs[0][key]}
                       for key in ("wall", "cpu")}
        out["cold"]["compiles"] = runs[-1]["compiles"]
        if args.repeat > 1:
            out["cold_runs"] = runs
        out["warm"] = first_calls(cold_dir)
        if not args.no_warmup:
            wdir = os.path.join(tmp, "warmup")
            out["warmup_s"] = warmup(wdir, args.warmup_args.split())
            out["after_warmup"] = first_calls(wdir)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cols = [c for c in ("cold", "warm", "after_warmup") if c in out]
    print("seconds: wall (process CPU time); CPU time is less sensitive to other load"
          + (f"; cold: minimum of {args.repeat} runs" if args.repeat > 1 else ""))
    print(f"{'':26s}" + "".join(f"{c:>18s}" for c in cols))
    for s in STEPS + ["import + first to_bits"]:
        cells = []
        for c in cols:
            w, u = out[c]["wall"], out[c]["cpu"]
            if s == "import + first to_bits":
                w = {s: w["import"] + w["to_bits f64->fp16"]}
                u = {s: u["import"] + u["to_bits f64->fp16"]}
            cells.append(f"{w[s]:8.2f} ({u[s]:6.2f})")
        print(f"{s:26s}" + "".join(f"{x:>18s}" for x in cells))
    print(f"{'whole process (wall)':26s}" + "".join(f"{out[c]['wall']['process']:18.2f}"
                                                   for c in cols))
    if "warmup_s" in out:
        print(f"warmup {args.warmup_args or '(common set)'}: {out['warmup_s']['wall']:.1f} s "
              f"wall ({out['warmup_s']['cpu']:.1f} s CPU)")
    if args.compile_report:
        print("\ncompiled in each step of the cold run (CPU s, inclusive / exclusive of callees):")
        for s in STEPS:
            ev = out["cold"]["compiles"].get(s, [])
            if not ev:
                continue
            incl, excl = {}, {}
            for name, i, x in ev:
                incl[name] = max(incl.get(name, 0.0), i)
                excl[name] = excl.get(name, 0.0) + x
            print(f"  {s}: {len(ev)} compilations, {sum(excl.values()):.2f} s")
            for name in sorted(incl, key=lambda n: -incl[n])[:12]:
                print(f"    {name:32s} {incl[name]:6.2f} {excl[name]:6.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
