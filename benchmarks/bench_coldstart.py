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
``add fp16``, ``to_bits f32->bf16 rtz``, each as wall time and as the child's CPU
time (compilation is single-threaded, so on a quiet machine the two agree; on a
loaded one CPU time is the steadier figure). Compilation dominates the cold
figures; compare runs taken side by side.

Usage: ``python benchmarks/bench_coldstart.py [--json out.json] [--no-warmup]
[--warmup-args "--all"]``. Exit status 0, or 2 if a child process failed.
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
import json, time
def clock():
    return time.perf_counter(), time.process_time()
r, c = {}, {}
def step(name, fn):
    w0, c0 = clock(); fn(); w1, c1 = clock()
    r[name], c[name] = w1 - w0, c1 - c0
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
print("RESULT " + json.dumps({"wall": r, "cpu": c}))
"""

STEPS = ["import", "to_bits f64->fp16", "to_bits f32->fp16", "add fp16", "to_bits f32->bf16 rtz"]


def _env(cache_dir):
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def first_calls(cache_dir):
    """Run the steps in a fresh process; returns {step: seconds} plus 'process'."""
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD], env=_env(cache_dir), cwd=ROOT,
                       capture_output=True, text=True)
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
    args = ap.parse_args(argv)
    out = {"python": sys.version.split()[0]}
    tmp = tempfile.mkdtemp(prefix="sf-coldstart-")
    try:
        cold_dir = os.path.join(tmp, "cold")
        out["cold"] = first_calls(cold_dir)
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
    print("seconds: wall (process CPU time); CPU time is less sensitive to other load")
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
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
