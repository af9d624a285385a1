"""``sf.emulate`` against native torch on the CPU, side by side in one run.

    python benchmarks/bench_emulate.py [--quick] [--device h100] [--threads N]
                                       [--no-first-call] [--gemm-size 256]

(1) The first calls of a fresh process: ``import softfloat`` and torch, then the
first training step of the study's transformer (examples/emulate_transformer.py,
its full size) under ``sf.emulate(DEVICE)`` and bf16 autocast, then the second
step: on an empty numba cache (cold: compilation) and on the cache that run
filled (warm).

(2) One training step of that transformer (forward, cross-entropy, backward,
gradient clipping, AdamW), the same batch and weights: native float32 on the CPU,
against the same step under ``sf.emulate(DEVICE)`` in float32 (no autocast: the
device's float32 GEMM path) and with ``torch.autocast("cpu", torch.bfloat16)``
(the H100's bf16 tensor cores); seconds (best of a few after a warm-up) and the
ratio to native float32 (the aim: at most 10x).

(3) Each emulated GEMM, M = N = K = ``--gemm-size``: ``torch.mm`` in float32, float32
with ``allow_tf32``, float16 and bfloat16, and ``torch._scaled_mm`` on e4m3 with
and without fast accumulation (bf16 output), under the mode, in nanoseconds per
multiply-add; beside it the same product through `softfloat.cublas.gemm` on
encodings (what the mode adds is the conversion to and from torch tensors) and
native torch on the CPU.

torch's OpenMP threads spin for a while after a torch call and slow numba's
threads that follow: the benchmark asks for passive waiting (``OMP_WAIT_POLICY``)
and pauses ``--pause`` seconds after each native timing. Threads: torch's and
softfloat's (SOFTFLOAT_NUM_THREADS) both ``--threads`` (default 1: on a small
shared machine more threads measure the neighbours). Timings on a shared machine
are noisy: compare the ratios of one run. Exit status 0, 2 (no torch, no
``sf.emulate``, a bad argument: one line).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from _timing import best  # noqa: E402

_CHILD = r"""
import sys, time
t0 = time.perf_counter()
import torch
import softfloat as sf
sys.path.insert(0, sys.argv[2])
import emulate_transformer as ET
t1 = time.perf_counter()
corpus = ET.load_corpus()
cfg = ET.CONFIGS["full"]
model = ET.build_model(corpus.vocab, cfg["d"], cfg["heads"], cfg["layers"], cfg["ctx"], 0)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
import numpy as np
x, y = corpus.batch(np.random.default_rng(0), "train", cfg["batch"], cfg["ctx"])
def step():
    with sf.emulate(sys.argv[1]), torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x).float().reshape(-1, corpus.vocab),
                                                 y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
step()
t2 = time.perf_counter()
step()
t3 = time.perf_counter()
print(f"{t1 - t0:.1f} / {t2 - t1:.1f} / {t3 - t2:.1f}")
"""


def first_call(device, cache_dir):
    """'import / first emulated step / second step' seconds of a fresh process whose
    numba cache is ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", _CHILD, device, os.path.join(ROOT, "examples")],
                       env=env, capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else f"failed: {r.stderr.strip()[-300:]}"


def make_step(torch, ET, model, opt, x, y, vocab, ctx_fn):
    """A training step of ``model`` on (x, y) inside the context ``ctx_fn()``."""
    def step():
        with ctx_fn():
            loss = torch.nn.functional.cross_entropy(model(x).float().reshape(-1, vocab),
                                                     y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    return step


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the quick model, fewer repeats")
    ap.add_argument("--device", default="h100")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pause", type=float, default=0.5,
                    help="seconds to wait after native torch timings")
    ap.add_argument("--gemm-size", type=int, default=None)
    ap.add_argument("--no-first-call", action="store_true")
    args = ap.parse_args(argv)
    if args.threads < 1 or args.pause < 0 or (args.gemm_size is not None and args.gemm_size < 16):
        print("error: --threads >= 1, --pause >= 0, --gemm-size >= 16", file=sys.stderr)
        return 2
    os.environ["SOFTFLOAT_NUM_THREADS"] = str(args.threads)
    try:
        import numpy as np
        import torch
    except ImportError:
        print("error: torch is not installed: nothing was timed", file=sys.stderr)
        return 2
    import softfloat as sf
    if not hasattr(sf, "emulate"):
        print("error: this softfloat has no sf.emulate: nothing was timed", file=sys.stderr)
        return 2
    try:
        sf.emulate(args.device)
    except (ValueError, TypeError) as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 2
    import emulate_transformer as ET
    from softfloat._parallel import num_threads
    torch.set_num_threads(args.threads)
    reps = 2 if args.quick else 5
    print(f"softfloat {sf.__version__}, torch {torch.__version__}, device {args.device}, "
          f"threads: torch {torch.get_num_threads()}, softfloat {num_threads()}")

    # (1) first calls
    if not args.no_first_call:
        with tempfile.TemporaryDirectory() as d:
            cold, warm = first_call(args.device, d), first_call(args.device, d)
        print(f"first call (import / first emulated bf16 training step / second step), s: "
              f"cold cache {cold}; warm cache {warm}")

    # (2) a training step
    corpus = ET.load_corpus()
    cfg = ET.CONFIGS["quick" if args.quick else "full"]
    x, y = corpus.batch(np.random.default_rng(0), "train", cfg["batch"], cfg["ctx"])
    rows = []
    for name, dev, bf16 in (("native float32 (CPU)", None, False),
                            (f"emulate {args.device}, float32", args.device, False),
                            (f"emulate {args.device}, bf16 autocast", args.device, True)):
        model = ET.build_model(corpus.vocab, cfg["d"], cfg["heads"], cfg["layers"], cfg["ctx"], 0)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def ctx(dev=dev, bf16=bf16):
            import contextlib
            st = contextlib.ExitStack()
            if dev is not None:
                st.enter_context(sf.emulate(dev))
            if bf16:
                st.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
            return st
        t = best(make_step(torch, ET, model, opt, x, y, corpus.vocab, ctx), reps)
        if dev is None:
            time.sleep(args.pause)
        rows.append((name, t))
    base = rows[0][1]
    print(f"training step, model d={cfg['d']} layers={cfg['layers']} batch {cfg['batch']} x "
          f"{cfg['ctx']} characters (best of {reps}):")
    for name, t in rows:
        print(f"  {name:34s} {t * 1e3:9.1f} ms   {t / base:6.1f}x native float32")

    # (3) GEMMs
    n = args.gemm_size or (128 if args.quick else 256)
    rng = np.random.default_rng(1)
    a32 = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    b32 = torch.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    from softfloat import cublas
    from softfloat.emulation.encode import to_bits
    print(f"GEMMs {n} x {n} x {n}, ns per multiply-add (best of {reps}): under the mode / "
          f"softfloat.cublas.gemm on encodings / native torch CPU")
    macs = n ** 3
    cases = [("mm float32", torch.float32, False, None),
             ("mm float32, allow_tf32", torch.float32, True, None),
             ("mm float16", torch.float16, False, None),
             ("mm bfloat16", torch.bfloat16, False, None),
             ("_scaled_mm e4m3, fast accumulation", torch.float8_e4m3fn, False, True),
             ("_scaled_mm e4m3, promotion", torch.float8_e4m3fn, False, False)]
    fmts = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
            torch.float8_e4m3fn: "fp8_e4m3"}
    one = torch.tensor(1.0)
    for label, dt, tf32, fast in cases:
        a, b = a32.to(dt), b32.to(dt)
        if fast is None:
            def op(a=a, b=b):
                return torch.mm(a, b)
        else:
            b = b.t().contiguous().t()                     # column-major, as cuBLAS wants

            def op(a=a, b=b, fast=fast):
                return torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16,
                                        use_fast_accum=fast)
        try:
            with sf.emulate(args.device, allow_tf32=tf32) as run:
                def emu(op=op):
                    with sf.emulate(args.device, allow_tf32=tf32):
                        op()
                op()
            model = next((r.model for r in run.report().rows
                          if r.op.startswith(("aten.mm", "aten._scaled_mm"))), "?")
            t_emu = best(emu, reps)
        except Exception as ex:                          # the mode refused the case
            print(f"  {label:36s} mode failed: {type(ex).__name__}: {str(ex)[:120]}")
            continue
        f = fmts[dt]
        ab, bb = to_bits(a), to_bits(b)
        kw = dict(device=args.device, a_fmt=f, out_fmt="bf16" if fast is not None else f)
        if fast is not None:
            kw.update(scale_a=np.array(1.0, np.float32), scale_b=np.array(1.0, np.float32),
                      fast_accum=fast)
        else:
            kw.update(allow_tf32=tf32)
        try:
            t_lib = best(lambda: cublas.gemm(ab, bb, **kw), reps)
            lib = f"{t_lib / macs * 1e9:7.2f}"
        except Exception as ex:
            lib = f"failed ({type(ex).__name__})"
        if fast is None:
            t_nat = best(op, reps)
            time.sleep(args.pause)
            nat = f"{t_nat / macs * 1e9:7.3f}"
        else:
            nat = "  -"
        print(f"  {label:36s} {t_emu / macs * 1e9:7.2f} / {lib} / {nat}   [{model}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
