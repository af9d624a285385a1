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

``--entry-points [NAME ...]``: instead of the steps above, the first call of
each public entry point (`ENTRY_POINTS`: the array functions of ``softfloat``,
``softfloat.mx`` and ``softfloat.mx_gemm``, on small arrays), each in a fresh
process after ``import softfloat`` (which includes numba's one-time set-up,
`softfloat._startup`), so that no call profits from a kernel an earlier call
loaded: ``warm`` on the cache ``--cache DIR`` (default: the package's own cache,
as ``python -m softfloat warmup`` fills it), and with ``--cold`` also on an empty
cache of its own per entry point (compilation: minutes in all). Entry points
without a snippet here are listed, so a new public function shows up.

Usage: ``python benchmarks/bench_coldstart.py [--json out.json] [--no-warmup]
[--warmup-args "--all"] [--repeat N] [--compile-report]`` or ``... --entry-points
[NAME ...] [--cold] [--cache DIR]``. Exit status 0, or 2 if a child process
failed.
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


# One snippet per public entry point: its first call on small arrays. ``h``/``b``:
# fp16/bf16 encodings made by numpy (no kernel runs before the timed call).
ENTRY_SETUP = r"""
import time
t0 = time.perf_counter()
import numpy as np, softfloat as sf
t1 = time.perf_counter()
x = np.linspace(-3.0, 3.0, 64)
x32 = x.astype(np.float32)
h = x.astype(np.float16).view(np.uint16)
b = (x32.view(np.uint32) >> 16).astype(np.uint16)
H = h.reshape(8, 8)
X = x.reshape(2, 32)
"""
ENTRY_POINTS = {
    "to_bits": 'sf.to_bits(x, "fp16")',
    "from_bits": 'sf.from_bits(h, "fp16")',
    "quantize": 'sf.quantize(x, "bf16")',
    "convert": 'sf.convert(h, "fp16", "fp8_e4m3")',
    "add": 'sf.add(h, h[::-1], "fp16")',
    "sub": 'sf.sub(b, b[::-1], "bf16")',
    "mul": 'sf.mul(h, h, "fp16")',
    "div": 'sf.div(h, h[::-1], "fp16")',
    "fma": 'sf.fma(h, h, h, "fp16")',
    "sqrt": 'sf.sqrt(h, "fp16")',
    "neg": 'sf.neg(h, "fp16")',
    "abs": 'sf.abs(h, "fp16")',
    "copysign": 'sf.copysign(h, h[::-1], "fp16")',
    "eq": 'sf.eq(h, h[::-1], "fp16")',
    "lt": 'sf.lt(h, h[::-1], "fp16")',
    "lt_signaling": 'sf.lt_signaling(h, h[::-1], "fp16")',
    "unordered": 'sf.unordered(h, h[::-1], "fp16")',
    "minimum": 'sf.minimum(h, h[::-1], "fp16")',
    "maximum_number": 'sf.maximum_number(h, h[::-1], "fp16")',
    "round_to_integral": 'sf.round_to_integral(h, "fp16")',
    "to_int32": 'sf.to_int32(h, "fp16")',
    "to_int64": 'sf.to_int64(h, "fp16")',
    "from_int": 'sf.from_int(np.arange(-4, 5), "fp16")',
    "sum": 'sf.sum(h, "fp16", acc="fp32")',
    "dot": 'sf.dot(h, h, "fp16", acc="fp32")',
    "matmul": 'sf.matmul(H, H, "fp16")',
    "matmul acc=h100": 'sf.matmul(H, H, "fp16", acc="h100")',
    "sum_values": 'sf.sum_values(sf.from_bits(h, "fp16"), "fp16")',
    "dot_values": 'sf.dot_values(sf.from_bits(h, "fp16"), sf.from_bits(h, "fp16"), "fp16")',
    "matmul_values": 'sf.matmul_values(sf.from_bits(H, "fp16"), sf.from_bits(H, "fp16"), "fp16")',
    "fused_multiply_add": 'A = sf.array(x, "fp16"); sf.fused_multiply_add(A, A, A)',
    "tensor_core": 'sf.matmul(H, H, "fp16", acc=sf.tensor_core("a100", "fp16", "fp32"))',
    "array": 'np.sqrt(sf.array(x, "bf16") * 2.0)',
    "platform_op": 'sf.platform_op("div", h, h[::-1], fmt="fp16", platform="torch_cuda")',
    "platform_to_bits": 'sf.platform_to_bits(x, "fp16", platform="torch_cpu")',
    "platform_convert": 'sf.platform_convert(h, "fp16", "bf16", platform="torch_cpu")',
    "platform_sum": 'sf.platform_sum(h, "fp16", platform="torch_cpu")',
    "platform_mean": 'sf.platform_mean(h, "fp16", platform="torch_cpu")',
    "platform_matmul": 'sf.platform_matmul(H, H, "fp16", platform="torch_cpu")',
    "platform_cumsum": 'sf.platform_cumsum(h, "fp16", 0, platform="torch_cpu")',
    "mx.quantize": 'sf.mx.quantize(X, "mxfp4")',
    "mx.quantize nvfp4": 'sf.mx.quantize(X, "nvfp4")',
    "mx.dequantize": 'sf.mx.dequantize(np.zeros((2, 32), np.uint8), np.full((2, 1), 127, np.uint8), "mxfp8_e4m3")',
    "mx.quantize_values": 'sf.mx.quantize_values(X, "mxfp8_e4m3")',
    "mx.quantize_per_tensor": 'sf.mx.quantize_per_tensor(X)',
    "mx.dequantize_per_tensor": 'sf.mx.dequantize_per_tensor(np.zeros(4, np.uint8), 1.0)',
    "mx.nvfp4_tensor_scale": 'sf.mx.nvfp4_tensor_scale(X)',
    "mx.pack_fp4": 'sf.mx.pack_fp4(np.zeros(8, np.uint8))',
    "mx.unpack_fp4": 'sf.mx.unpack_fp4(np.zeros(4, np.uint8))',
    "mx_gemm.fp8_matmul": 'sf.mx_gemm.fp8_matmul(np.zeros((4, 8), np.uint8), np.zeros((8, 4), np.uint8))',
    "mx_gemm.mx_matmul": 'sf.mx_gemm.mx_matmul(*sf.mx.quantize(X, "mxfp8_e4m3"), *sf.mx.quantize(X.T.copy(), "mxfp8_e4m3", axis=0), "mxfp8_e4m3")',
}
# not timed: no kernel behind them (context, format and platform look-ups, hooks)
NO_KERNEL = {"getcontext", "setcontext", "localcontext", "flag_names", "formats",
             "get_format", "get_rounding", "get_platform", "platform_names", "register_model",
             "mx.block_format", "mx.fp8_scale", "mx_gemm.fp8_gemm_model"}


def public_entry_points():
    """Public functions of softfloat, softfloat.mx and softfloat.mx_gemm (by name)."""
    import inspect
    sys.path.insert(0, ROOT)
    import softfloat as sf
    names = [n for n in sf.__all__ if inspect.isfunction(getattr(sf, n))]
    for mod in ("mx", "mx_gemm"):
        m = getattr(sf, mod)
        names += [f"{mod}.{n}" for n in m.__all__ if inspect.isfunction(getattr(m, n))]
    return names


def entry_first_call(name, cache_dir):
    """A fresh process: import, then the first call of one entry point (wall and
    CPU seconds of each)."""
    code = ENTRY_SETUP + f"""
c0 = time.process_time(); t2 = time.perf_counter()
{ENTRY_POINTS[name]}
t3 = time.perf_counter(); c1 = time.process_time()
print("RESULT", t1 - t0, t3 - t2, c1 - c0)
"""
    env = _env(cache_dir) if cache_dir else dict(os.environ, PYTHONPATH=ROOT + os.pathsep
                                                  + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                       text=True)
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not line:
        raise RuntimeError(f"{name}: child failed ({p.returncode}):\n{p.stderr[-2000:]}")
    imp, call, cpu = (float(v) for v in line[-1].split()[1:])
    return {"import": imp, "first_call": call, "first_call_cpu": cpu}


def entry_points_main(args) -> int:
    names = args.entry_points or list(ENTRY_POINTS)
    unknown = [n for n in names if n not in ENTRY_POINTS]
    if unknown:
        print(f"bench_coldstart: no snippet for {unknown}; known: {sorted(ENTRY_POINTS)}",
              file=sys.stderr)
        return 2
    base = {n.split(" ")[0] for n in ENTRY_POINTS}
    missing = [n for n in public_entry_points() if n not in base and n not in NO_KERNEL]
    out = {"warm": {}, "cold": {}, "cache": args.cache or "the package's own cache",
           "without_snippet": missing}
    tmp = tempfile.mkdtemp(prefix="sf-coldstart-")
    try:
        failed = []
        for n in names:
            try:
                out["warm"][n] = entry_first_call(n, args.cache)
                if args.cold:
                    out["cold"][n] = entry_first_call(n, os.path.join(tmp, n.replace(" ", "_")))
            except RuntimeError as e:     # report it, measure the others
                print(e, file=sys.stderr)
                failed.append(n)
        names = [n for n in names if n not in failed]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("first call of each entry point, each in a fresh process after `import softfloat`"
          " (seconds; wall, CPU in parentheses)")
    print(f"{'entry point':26s} {'import':>8s} {'warm first call':>18s}"
          + (f" {'cold first call':>18s}" if args.cold else ""))
    for n in names:
        w = out["warm"][n]
        line = f"{n:26s} {w['import']:8.2f} {w['first_call']:9.3f} ({w['first_call_cpu']:6.3f})"
        if args.cold:
            c = out["cold"][n]
            line += f" {c['first_call']:9.2f} ({c['first_call_cpu']:6.2f})"
        print(line)
    if missing:
        print("public functions without a snippet here: " + ", ".join(missing))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 2 if failed else 0


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
    ap.add_argument("--entry-points", nargs="*", metavar="NAME",
                    help="first call of each public entry point (default: all of them)")
    ap.add_argument("--cold", action="store_true",
                    help="with --entry-points: also on an empty cache per entry point")
    ap.add_argument("--cache", metavar="DIR",
                    help="with --entry-points: NUMBA_CACHE_DIR of the warm runs (default: "
                         "the package's own cache)")
    args = ap.parse_args(argv)
    if args.entry_points is not None:
        return entry_points_main(args)
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
