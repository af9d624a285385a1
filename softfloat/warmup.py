"""``python -m softfloat warmup [--all] [--times]``: compile the kernels ahead of use.

Every kernel compiles on its first call and is then kept in the cache (see
`softfloat._jitcache`), so later processes load it in milliseconds. This
command makes those first calls now, through the public functions, on tiny
arrays:

* the common set (default): what the README's tour, docs/verify.md's first
  example and the ``nn`` experiments call: float64/float32 -> fp16, bf16, fp8 and
  back, in any rounding mode (the mode is a run-time argument of each kernel);
  + - * / and sqrt of fp16/bf16 (one kernel per mode: nearest-even and one other
  mode each), fma of fp16 and bf16; the tour's ``sf.array`` line; ``sf.verify``
  with its diagnosis;
  sum and matmul of fp16/bf16 with float32 or narrow accumulation; the torch CPU
  models (``platform="torch_cpu"``);
* ``--all``: every kernel and signature the library dispatches to (every host
  dtype and storage dtype, every operation, fp16/bf16 arithmetic in every mode,
  every accumulation model), and the
  sweep engine's oracle kernels (tiny sampled sweeps).

Compiling again after an edit of the sources is automatic (a new cache
directory). Tasks of features that need an optional extra that is not
installed are skipped with a note. ``--jobs N`` compiles in N processes and
prints one progress sequence for all of them. Exit status 0, 2 if a kernel
failed or an argument is bad (``--jobs 0``: one line), 130 when interrupted
(Ctrl-C or SIGTERM: one line, the worker processes are stopped; what was
compiled stays cached).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def _vals():
    return np.array([1.0, -2.5, 1e-6, 65520.0, 3.0e38, np.inf, np.nan, -0.0, 1.0 + 2**-11])


def _enc(fmt):
    """Some encodings of fmt, made by numpy (no kernel runs before its own task)."""
    with np.errstate(all="ignore"):
        if fmt == "fp16":
            return _vals().astype(np.float16).view(np.uint16)
        x = _vals().astype(np.float32).view(np.uint32)
        if fmt == "bf16":
            return (x >> 16).astype(np.uint16)
        if fmt in ("fp32", "tf32"):
            return x if fmt == "fp32" else x >> 13
        return (x >> 24).astype(np.uint8) & 0x7F      # fp8 and smaller: small magnitudes


def _common():
    import softfloat as sf
    x64 = _vals()
    x32 = x64.astype(np.float32)
    h = _enc("fp16")
    b = _enc("bf16")
    t = []
    for name, x in (("f64", x64), ("f32", x32)):
        for fmt in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2"):
            t.append((f"to_bits {name}->{fmt}", lambda x=x, fmt=fmt: sf.to_bits(x, fmt)))
    for fmt in ("fp16", "fp8_e4m3"):
        t.append((f"from_bits {fmt}", lambda fmt=fmt: sf.from_bits(_enc(fmt), fmt)))
    for fmt, e in (("fp16", h), ("bf16", b)):
        t.append((f"add/sub/mul/div {fmt}", lambda e=e, fmt=fmt: (
            sf.add(e, e[::-1], fmt), sf.sub(e, e, fmt), sf.mul(e, e, fmt),
            sf.div(e, e[::-1], fmt))))
    # sqrt and fma of both formats (the README tour's first sf.array line takes a
    # bf16 square root)
    t.append(("sqrt fp16/bf16", lambda: (sf.sqrt(h, "fp16"), sf.sqrt(b, "bf16"))))
    t.append(("fma fp16/bf16", lambda: (sf.fma(h, h, h, "fp16"), sf.fma(b, b, b, "bf16"))))
    # the README tour's low-precision array (ufuncs with scalars, its repr)
    t.append(("sf.array bf16 (the README tour)", _tour_array))
    # fp16/bf16 + - * / sqrt fma have one kernel per rounding mode
    # (softfloat._kernels.eft.kernel): the common set compiles one other mode of
    # each (the README's upward add among them), --all every mode
    for fmt, e in (("fp16", h), ("bf16", b)):
        t.append((f"add/sub/mul/div/sqrt {fmt} directed", lambda e=e, fmt=fmt: [
            _eft_call(sf, op, e, fmt, mode) for op, mode in _DIRECTED.items()]))
    A = np.linspace(0.0, 1.0, 12).reshape(3, 4).astype(np.float16).view(np.uint16)
    B = np.linspace(-1.0, 1.0, 8).reshape(4, 2).astype(np.float16).view(np.uint16)
    ones = np.full(5000, 0x3C00, np.uint16)          # finite data: the tour's sums
    t.append(("sum fp16 (fp16 and fp32 accumulation)", lambda: (
        sf.sum(h[:4], "fp16"), sf.sum(h[:4], "fp16", acc="fp32"),
        sf.sum(ones, "fp16"), sf.sum(ones, "fp16", acc="fp32"))))
    t.append(("matmul fp16 (fp32 and fp16 accumulation)", lambda: (
        sf.matmul(A, B, "fp16", acc="fp32"), sf.matmul(A, B, "fp16"))))
    # what the README's tour, the examples and nn.experiments call beyond the above
    t.append(("stochastic rounding (quantize, to_bits, sum)", lambda: (
        sf.quantize(x64, "fp16", "stochastic", seed=0),
        sf.to_bits(x32, "bf16", "stochastic", seed=0),
        sf.sum(h[:4], "fp16", rounding="stochastic", seed=0))))
    t.append(("matmul fp16/bf16 block-FMA presets", lambda: [
        sf.matmul(A, B, f, acc=acc) for f in ("fp16", "bf16")
        for acc in ("v100", "a100", "h100", "b200") if (f, acc) != ("bf16", "v100")]))
    t.append(("mx quantize MXFP8/MXFP4/NVFP4", lambda: _mx(sf)))
    # the torch CPU models (softfloat.platforms.torch_cpu: the cascade kernel)
    t.append(("sum/mean/cumsum/matmul platform torch_cpu", lambda: (
        sf.platform_sum(h, "fp16", platform="torch_cpu", threads=2),
        sf.platform_mean(h, "fp16", platform="torch_cpu"),
        sf.platform_cumsum(h, "fp16", 0, platform="torch_cpu"),
        sf.platform_matmul(A, B, "fp16", platform="torch_cpu"))))
    t.append(("nn training steps (fp16, bf16, stochastic, fp8, MX, NVFP4)", _nn_steps))
    # GPU matrix units (softfloat.mma): the fdpa kernels (fast, for outputs with
    # finite operands; reference, for those with an infinity) on uint16 and uint8
    # operands, with fp32 and fp16 accumulators and an fp32 c
    A8 = (A & 0x3F).astype(np.uint8)
    B8 = (B & 0x3F).astype(np.uint8)
    Ainf = A.copy()
    Ainf[0, 0] = 0x7C00
    t.append(("matrix units fp16/bf16/fp8 (h100, a100 fp16 out)", lambda: (
        sf.matmul(A, B, "fp16", acc="h100"), sf.matmul(A, B, "bf16", acc="h100"),
        sf.matmul(A8, B8, "fp8_e4m3", acc="h100"),
        sf.matmul(Ainf, B, "fp16", acc="h100", c=np.zeros((3, 2), np.uint32)),
        sf.matmul(A, B, "fp16", acc=sf.tensor_core("a100", "fp16", "fp16")))))
    # the AMD matrix cores (CDNA3 two-stage, CDNA2 flush-to-zero, CDNA1 exact) and
    # the binary64 FMA chains (DMMA, fp64 MFMA)
    D = np.linspace(-1.0, 1.0, 16).reshape(4, 4).view(np.uint64)
    t.append(("matrix units AMD fp16/fp8 and fp64 (mi300x, mi250, mi100, h100 fp64)",
              lambda: (sf.matmul(A, B, "fp16", acc="mi300x"), sf.matmul(A, B, "fp16", acc="mi250"),
                       sf.matmul(A, B, "fp16", acc="mi100"),
                       sf.matmul(A8, B8, "fp8_e4m3fnuz", acc="mi300x"),
                       sf.mma.mma(sf.tensor_core("h100", "fp64", "fp64"), D, D))))
    # block-scaled units (tcgen05 mxf8f6f4, mxf4, mxf4nvf4): the fast fdpa and
    # grouped kernels, and their references for an output with an infinite c
    t.append(("matrix units block-scaled (b200 mxfp8, mxfp4, nvfp4)", _block_scaled_units))
    t.append(("verify fp16 mul and add with the diagnosis (docs/verify.md)", _verify))
    return t


def _verify():
    """sf.verify as docs/verify.md and the README call it: a truncating fp16
    multiplier and NumPy's float16 add over TestFloat's level-1 cases, the
    classification and the diagnosis (every rounding mode, the policies and the
    double rounding through fp32 on the general kernels)."""
    import softfloat as sf

    def my_mul(a, b):
        with np.errstate(all="ignore"):
            x = a.view(np.float16).astype(np.float64) * b.view(np.float16).astype(np.float64)
            r = x.astype(np.float16)
            r = np.where(np.abs(r.astype(np.float64)) > np.abs(x),
                         np.nextafter(r, np.float16(0)), r)
        return r.view(np.uint16)

    def np_add(a, b):
        with np.errstate(all="ignore"):
            return (a.view(np.float16) + b.view(np.float16)).view(np.uint16)
    sf.verify(my_mul, "mul", "fp16", space="level1", progress=False)
    sf.verify(np_add, "add", "fp16", space="level1", progress=False)


def _tour_array():
    """The README tour's first low-precision array line, printed."""
    import softfloat as sf
    x = sf.array(np.linspace(0, 1, 5), "bf16")
    return repr(np.sqrt(x * x + 1.0))


def _block_scaled_units():
    import softfloat as sf
    for f in ("mxfp8_e4m3", "mxfp4", "nvfp4"):
        u = sf.tensor_core("b200", f)
        nsb = u.k // u.scale_block
        a = np.ones((2, u.k), u.a_fmt.dtype)
        c = np.zeros((2, 2), np.uint32)
        c[0, 0] = 0x7F800000
        s = np.full((2, nsb), sf.to_bits(1.0, u.scale_fmt), u.scale_fmt.dtype)
        sf.mma.mma(u, a, a.T.copy(), c, scale_a=s, scale_b=s.T.copy())


def _mx(sf):
    """MX and NVFP4 quantize/dequantize, 1-D and 2-D blocks, float32 and float64."""
    for dt in (np.float64, np.float32):
        x = np.linspace(-3.0, 3.0, 32 * 32).astype(dt).reshape(32, 32)
        for f in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp4", "nvfp4"):
            sf.mx.dequantize(*sf.mx.quantize(x, f), f)
            sf.mx.quantize(x, f, rounding="stochastic", seed=0)
        for f, blk in (("nvfp4", (16, 16)), ("mxfp8_e4m3", (32, 32))):
            sf.mx.dequantize(*sf.mx.quantize(x, f, block=blk), f, block=blk)
            sf.mx.quantize(x, f, block=blk, rounding="stochastic", seed=0)


def _nn_steps():
    """A training step of a tiny MLP under each kind of policy nn.experiments runs
    (its own kernels and the softfloat calls they make); skipped without nn."""
    try:
        import nn
    except ImportError:
        return
    rng = np.random.default_rng(0)
    x = rng.random((8, 64)).astype(np.float32)
    y = rng.integers(0, 10, 8)
    yr = rng.random((8, 10)).astype(np.float32)
    policies = [dict(params="fp32"), dict(params="fp16", master_weights=True),
                dict(params="fp16", loss_scaling="dynamic"),
                dict(params="bf16", update_rounding="stochastic"),
                dict(params="bf16", accumulate="storage"),
                dict(params="fp16", accumulate="h100"), dict(params="fp16", accumulate="v100"),
                dict(recipe="fp8_current"), dict(recipe="fp8_delayed"),
                dict(recipe="fp8_current", fp8_gemm="hopper_fp8_promote128"),
                dict(recipe="fp8_current", fp8_gemm="hopper_fp8_fast"),
                dict(recipe="mxfp8"), dict(recipe="nvfp4"),
                dict(recipe="nvfp4", grad_rounding="stochastic")]
    for order in ("blas", "sequential"):
        for kw in policies:
            if order == "blas" and ("accumulate" in kw):
                continue
            P = nn.Precision(**kw, order=order) if "recipe" not in kw else nn.Precision(**kw)
            model = nn.MLP([64, 16, 10])
            for cls in (nn.SGD, nn.Adam):
                opt = cls(model.parameters(), lr=1e-3, precision=P)
                nn.train_step(model, opt, nn.make_scaler(P), x, y)
            if "recipe" not in kw and order == "blas":
                opt = nn.SGD(model.parameters(), lr=1e-3, momentum=0.9, precision=P)
                nn.train_step(model, opt, nn.make_scaler(P), x, yr, task="regress")


# the common set's one other mode of each fp16/bf16 op (the README's upward add)
_DIRECTED = {"add": "upward", "sub": "toward_zero", "mul": "downward", "div": "odd",
             "sqrt": "nearest_away"}


def _eft_call(sf, op, e, fmt, mode):
    args = (e,) if op == "sqrt" else (e, e, e) if op == "fma" else (e, e[::-1])
    return getattr(sf, op)(*args, fmt, mode)


def _all():
    import softfloat as sf
    x64 = _vals()
    t = []
    fmts = ["fp16", "bf16", "fp32", "tf32", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz",
            "fp8_e5m2fnuz", "e6m9"]
    for name, dt in (("f64", np.float64), ("f32", np.float32), ("f16", np.float16)):
        with np.errstate(over="ignore"):
            x = x64.astype(dt)
        for fmt in fmts:
            t.append((f"to_bits {name}->{fmt}",
                      lambda x=x, fmt=fmt: (sf.to_bits(x, fmt, return_flags=True),
                                            sf.to_bits(x, fmt, "stochastic", seed=0))))
    enc = {f: _enc(f) for f in fmts if not f.startswith("e")}
    enc["e6m9"] = np.arange(0, 1 << 16, 4099, dtype=np.uint16)
    for f in fmts:
        t.append((f"from_bits {f}", lambda f=f: sf.from_bits(enc[f], f)))
    for s, d in (("fp16", "fp32"), ("fp8_e4m3", "fp16"), ("bf16", "fp8_e5m2"),
                 ("fp32", "fp16"), ("fp16", "bf16")):
        t.append((f"convert {s}->{d}", lambda s=s, d=d: sf.convert(enc[s], s, d)))
    for f in ("fp16", "fp32", "fp8_e4m3"):
        e = enc[f]
        t.append((f"arithmetic {f}", lambda e=e, f=f: (
            sf.add(e, e[::-1], f, return_flags=True), sf.div(e, e[::-1], f),
            sf.mul(e, e, f, "stochastic", seed=0), sf.fma(e, e, e, f),
            sf.sqrt(e, f), sf.round_to_integral(e, f), sf.minimum(e, e[::-1], f),
            sf.lt(e, e[::-1], f), sf.to_int32(e, f), sf.to_int64(e, f),
            sf.from_int(np.arange(-4, 5), f))))
    A = np.linspace(0.0, 1.0, 12).reshape(3, 4).astype(np.float16).view(np.uint16)
    B = np.linspace(-1.0, 1.0, 8).reshape(4, 2).astype(np.float16).view(np.uint16)
    for acc in ("fp16", "fp32", "bf16", "v100", "a100", "h100", "b200"):
        t.append((f"matmul fp16 acc={acc}", lambda acc=acc: sf.matmul(A, B, "fp16", acc=acc)))
    for order, block in (("pairwise", None), ("blocked", 2)):
        t.append((f"sum fp16 order={order}", lambda order=order, block=block: sf.sum(
            enc["fp16"][:5], "fp16", order=order, block=block, acc="fp32")))
    t.append(("sum fp16 kahan", lambda: sf.sum(enc["fp16"][:5], "fp16", kahan=True)))
    # (any uint16 is a bf16 encoding)
    t.append(("matmul bf16 acc=fp32", lambda: sf.matmul(A, B, "bf16", acc="fp32")))
    # the paper-based BlockFMA presets (the float64 kernel) and the integer twin (odd
    # rounding is not a mode of the float64 kernel)
    t.append(("matmul fp16 paper block-FMA presets", lambda: [
        sf.matmul(A, B, "fp16", acc=sf.block_fma_preset(g, "fp16", o))
        for g, o in (("v100", "fp32"), ("h100", "fp16"))]))
    t.append(("matmul fp16 block-FMA integer kernel", lambda: sf.matmul(
        A, B, "fp16", acc=sf.BlockFMA(4, rounding="odd"))))
    # block-scaled formats (softfloat.mx): one quantize kernel per host dtype
    for dt in (np.float32, np.float64):
        x = np.linspace(-3.0, 3.0, 64).astype(dt)
        t.append((f"mx quantize {np.dtype(dt).name}", lambda x=x: (
            [sf.mx.dequantize(*sf.mx.quantize(x, f), f) for f in ("mxfp8_e4m3", "mxint8",
                                                                 "nvfp4")],
            sf.mx.quantize(x, "mxfp4", rounding="stochastic", seed=0),
            sf.mx.quantize_per_tensor(x))))
    t.append(("fma/sqrt bf16", lambda: (sf.fma(enc["bf16"], enc["bf16"], enc["bf16"], "bf16"),
                                         sf.sqrt(enc["bf16"], "bf16"))))
    # the fp16/bf16 pass-1 kernels of the other (op, mode) pairs (softfloat._kernels.eft;
    # nearest-even and the common set's directed pairs are compiled above)
    for f in ("fp16", "bf16"):
        for mode in sf.DETERMINISTIC_MODES[1:]:
            ops = [op for op in ("add", "sub", "mul", "div", "sqrt", "fma")
                   if _DIRECTED.get(op) != mode]
            t.append((f"eft {f} {mode}", lambda e=enc[f], f=f, mode=mode, ops=ops: [
                _eft_call(sf, op, e, f, mode) for op in ops]))
    # the sweep engine's oracle and compare kernels (softfloat.sweep_oracles): a tiny
    # sampled run per operation kind, oracle method and operand width
    for fmt in ("fp16", "fp8_e4m3"):
        for op in ("add", "mul", "div", "sqrt", "fma", "convert:bf16"):
            for mode in ("nearest_even", "toward_zero"):
                t.append((f"sweep {op} {fmt} {mode}", lambda op=op, fmt=fmt, mode=mode:
                          _sweep(op, fmt, mode)))
    # the SIMD fma kernels (sweep_oracles.simd_fma, one per way the block layout
    # reads the operands): c fixed, the cancel4 family, a block of the whole space
    t.append(("sweep fma fp16 structured (simd_fma)", lambda: (
        _sweep_sub("fma", "fp16", a=0x3C00, c=0x3C00),
        _sweep_sub("fma", "fp16", a=0x3C00, c_family="cancel4"),
        _sweep_sub("fma", "fp16", a=0x3C00, b="0x3c00-0x3c0f"))))
    for fmt in ("fp16", "tf32"):
        t.append((f"sweep from_float32/convert {fmt}", lambda fmt=fmt: (
            _sweep("from_float32", fmt, "nearest_even"),
            _sweep("from_float32", fmt, "upward"),
            _sweep("convert:fp16" if fmt == "tf32" else "convert:tf32", fmt, "odd"))))
    return t


def _sweep(op, fmt, mode):
    from .sweep import run_sweep
    from .sweep import total_cases
    return run_sweep(op, fmt, mode, sample=min(512, total_cases(op, fmt)), shards=1, mpfr=0)


def _sweep_sub(op, fmt, **space):
    from .sweep import run_sweep
    return run_sweep(op, fmt, "nearest_even", shards=1, mpfr=0, **space)


def tasks(everything: bool = False):
    """(label, callable) pairs; the common set, plus the rest with everything=True."""
    t = _common()
    if everything:
        seen = {name for name, _ in t}
        t += [(n, f) for n, f in _all() if n not in seen]
    return t


_SPECIALISED = ("to_bits f64->fp16", "to_bits f64->bf16", "to_bits f32->fp16",
                "to_bits f32->bf16")
# Rough compile cost of each group (CPU seconds on a 2-core machine), to balance --jobs.
_WEIGHT = {"conversions": 17, "arith": 15, "accum": 8, "from_bits": 1, "mx": 6, "sweep": 12,
           "nn": 20, "verify": 10}
_WEIGHT.update({f"eft {f} {m}": 4 for f in ("fp16", "bf16")
                for m in ("nearest_away", "toward_zero", "upward", "downward", "odd")})


def group_of(name: str) -> str:
    """Tasks of one group share kernels: --jobs keeps each group in one process,
    so that no kernel is compiled twice at the same time."""
    if name in _SPECIALISED:
        return name                   # a kernel of its own (formats as constants)
    if name.startswith(("to_bits", "convert")):
        return "conversions"
    if name.startswith("from_bits"):
        return "from_bits"
    if name.startswith("nn"):
        return "nn"
    if name.startswith(("sum", "matmul")):
        return "accum"
    if name.startswith("mx"):
        return "mx"
    if name.startswith("sweep"):
        return "sweep"
    if name.startswith("verify"):
        return "verify"
    if name.startswith("eft"):
        return name                   # its own kernels (one per op of that mode)
    return "arith"


def partition(names, n: int) -> list[int]:
    """Part (0..n-1) of each task: whole groups, heaviest first onto the lightest part."""
    groups = list(dict.fromkeys(group_of(x) for x in names))
    load = [0] * n
    where = {}
    for g in sorted(groups, key=lambda g: -_WEIGHT.get(g, 13)):
        k = load.index(min(load))
        where[g] = k
        load[k] += _WEIGHT.get(g, 13)
    return [where[group_of(x)] for x in names]


class _Progress:
    """The progress of one warmup, as one coherent sequence: ``[k/N] task  time``
    lines, or on a terminal one line rewritten in place; tasks from several
    processes (``--jobs``) are counted in one sequence, in the order they end."""

    def __init__(self, total, times, out):
        import threading
        self.total, self.times, self.out = total, times, out
        self.done = self.failed = self.skipped = 0
        self.tty = hasattr(out, "isatty") and out.isatty() and not times
        self.lock = threading.Lock()

    def task(self, name, dt, dc, status=""):
        with self.lock:
            self.done += 1
            self.failed += status.startswith("  FAILED")
            self.skipped += status.startswith("  skipped")
            w = len(str(self.total))
            line = f"[{self.done:{w}d}/{self.total}] {name:44s} {dt:6.1f} s"
            if self.times:
                line += f" ({dc:5.1f} s CPU)"
            line += status
            try:
                if self.tty and not status:
                    print("\r" + line.ljust(79), end="", file=self.out, flush=True)
                else:
                    print(("\r" if self.tty else "") + line, file=self.out, flush=True)
            except (BrokenPipeError, ValueError):
                pass

    def close(self):
        if self.tty:
            print(file=self.out)


def _status(exc: BaseException) -> str:
    if isinstance(exc, ImportError):
        # a task of a feature that needs an optional extra: skipped, with a note
        return f"  skipped (needs an optional extra: {exc})"
    return f"  FAILED: {type(exc).__name__}: {exc}"


def _run_tasks(ts, report) -> None:
    """Call each task; ``report(name, seconds, cpu_seconds, status)`` after each."""
    with np.errstate(all="ignore"):
        for name, fn in ts:
            t, c = time.perf_counter(), time.process_time()
            try:
                fn()
                status = ""
            except Exception as e:  # report and go on: the others still help
                status = _status(e)
            report(name, time.perf_counter() - t, time.process_time() - c, status)


def _warn_if_temporary() -> None:
    """One line on stderr when the kernels go into a temporary directory deleted at exit."""
    from . import _jitcache
    if _jitcache._tmpdir:
        print("softfloat warmup: warning: no writable cache directory (set NUMBA_CACHE_DIR); "
              "these kernels are compiled into a temporary directory deleted at exit",
              file=sys.stderr, flush=True)


def _part_of(ts, part):
    if part[1] > 1:
        parts = partition([n for n, _ in ts], part[1])
        ts = [t for t, k in zip(ts, parts) if k == part[0]]
    return ts


def run(everything: bool = False, times: bool = False, out=sys.stderr, part=(0, 1)) -> int:
    """Compile the tasks (`tasks`), printing one progress line per task; returns
    0, or 2 if a task failed (tasks of a missing optional extra are skipped with
    a note, and count as done)."""
    from . import _jitcache
    ts = _part_of(tasks(everything), part)
    t0 = time.perf_counter()
    print(f"softfloat warmup: {len(ts)} tasks, compiling into "
          f"{_jitcache.cache_dir()}", file=out)
    if part[1] == 1:                     # with --jobs, the parent process warns
        _warn_if_temporary()
    bar = _Progress(len(ts), times, out)
    _run_tasks(ts, bar.task)
    bar.close()
    print(f"softfloat warmup: done in {time.perf_counter() - t0:.1f} s"
          + (f", {bar.failed} failed" if bar.failed else "")
          + (f", {bar.skipped} skipped (optional extras missing)" if bar.skipped else ""),
          file=out)
    return 2 if bar.failed else 0


def _jobs(s):
    try:
        v = int(s)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be a positive integer, got {s!r}")
    return v


def _part(s):
    try:
        i, n = (int(v) for v in s.split("/"))
        if not 0 <= i < n:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"--part must be i/n with 0 <= i < n, got {s!r}") \
            from None
    return i, n


class _Parser(argparse.ArgumentParser):
    def error(self, message):            # one line, status 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv=None) -> int:
    """``python -m softfloat warmup``. Exit status: 0 done, 2 a kernel failed or
    a bad argument, 130 interrupted (Ctrl-C or SIGTERM: one line; the kernels
    compiled so far stay cached, and worker processes are stopped)."""
    ap = _Parser(prog="python -m softfloat warmup",
                 description="Compile softfloat's kernels ahead of use "
                             "(they are cached for later processes). Exit status: 0 done, "
                             "2 a kernel failed or a bad argument, 130 interrupted.")
    ap.add_argument("--all", action="store_true",
                    help="every kernel and signature, not only the common set")
    ap.add_argument("--times", action="store_true", help="one line per task, with its time")
    ap.add_argument("--jobs", type=_jobs, default=1,
                    help="compile in this many processes at once (default 1)")
    ap.add_argument("--part", type=_part, default=(0, 1), help=argparse.SUPPRESS)
    ap.add_argument("--report-to-parent", type=int, default=0, help=argparse.SUPPRESS)
    try:
        a = ap.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if a.report_to_parent:
        return _child(a)
    import signal
    old = signal.signal(signal.SIGTERM, _terminated) \
        if threading_main() else None
    try:
        if a.jobs > 1:
            return _parallel(a)
        return run(a.all, a.times, part=a.part)
    except KeyboardInterrupt:
        print("\nsoftfloat warmup: interrupted; the kernels compiled so far are cached",
              file=sys.stderr)
        return 130
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


def threading_main() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def _terminated(signum, frame):
    raise KeyboardInterrupt                 # SIGTERM: stop as after Ctrl-C


def _child(a) -> int:
    """A worker of `_parallel`: its part of the tasks, one line per task on
    stdout for the parent (which prints the progress); dies with its parent and
    leaves Ctrl-C to it."""
    import signal
    from .sweep.backends import die_with_parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(a.report_to_parent)
    ts = _part_of(tasks(a.all), a.part)

    def report(name, dt, dc, status):
        print(json.dumps([name, dt, dc, status]), flush=True)
    _run_tasks(ts, report)
    return 0


def _parallel(a) -> int:
    """Run the tasks in a.jobs processes (whole groups each, see `partition`);
    compilation holds one core per process, and the cache is shared on disk.
    The children report each task to this process, which prints one progress
    sequence; on Ctrl-C or SIGTERM (or any error) the children are stopped."""
    import subprocess
    import threading
    from . import _jitcache
    t0 = time.perf_counter()
    names = [n for n, _ in tasks(a.all)]
    jobs = min(a.jobs, len(set(group_of(n) for n in names)))
    base = [sys.executable, "-m", "softfloat", "warmup"] + (["--all"] if a.all else [])
    base += ["--report-to-parent", str(os.getpid())]
    print(f"softfloat warmup: {len(names)} tasks in {jobs} processes, compiling into "
          f"{_jitcache.cache_dir()}", file=sys.stderr)
    _warn_if_temporary()
    bar = _Progress(len(names), a.times, sys.stderr)
    procs = []

    def read(p):
        for raw in p.stdout:
            try:
                name, dt, dc, status = json.loads(raw)
            except (ValueError, TypeError):
                continue                    # not a task line: ignore
            bar.task(name, dt, dc, status)
    readers = []
    try:
        for i in range(jobs):
            p = subprocess.Popen(base + ["--part", f"{i}/{jobs}"], stdout=subprocess.PIPE,
                                 text=True)
            procs.append(p)
            th = threading.Thread(target=read, args=(p,), daemon=True)
            th.start()
            readers.append(th)
        rcs = [p.wait() for p in procs]
        for th in readers:
            th.join(10)
    except BaseException:
        _stop(procs)
        raise
    bar.close()
    lost = len(names) - bar.done
    print(f"softfloat warmup: {jobs} processes done in {time.perf_counter() - t0:.1f} s"
          + (f", {bar.failed} failed" if bar.failed else "")
          + (f", {bar.skipped} skipped (optional extras missing)" if bar.skipped else "")
          + (f", {lost} not reported" if lost > 0 else ""), file=sys.stderr)
    return 2 if bar.failed or lost > 0 or any(rcs) else 0


def _stop(procs, grace=5.0) -> None:
    """Terminate the child processes, then kill those still alive after ``grace`` s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except Exception:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
