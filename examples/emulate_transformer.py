"""A small character-level transformer trained as different GPUs would compute it.

    python examples/emulate_transformer.py [--quick] [--out DIR] [--steps N]
                                           [--runs fp32,bf16_h100,...] [--seed 0]

One model (plain ``torch.nn``, CPU tensors), one initialisation, one sequence of
batches, trained under five arithmetics; only the arithmetic differs between runs:

``fp32``
    native float32 on the CPU: the reference.
``bf16_h100``
    ``torch.autocast("cpu", dtype=torch.bfloat16)`` inside ``sf.emulate("h100")``:
    the GEMMs (linear layers, the attention products) as an H100's bf16 tensor
    cores compute them, every other op as the mode models torch CUDA; the float32
    master weights and AdamW as on the GPU.
``fp8_fast_h100``, ``fp8_promote_h100``
    as ``bf16_h100``, with the transformer blocks' linear layers in fp8 with
    per-tensor current scaling (Transformer Engine's recipe: e4m3 activations and
    weights, e5m2 gradients, scale = 448 / amax or 57344 / amax), all three GEMMs
    of each layer (forward, input gradient, weight gradient) on the Hopper fp8
    wgmma model of `softfloat.mx_gemm`: with fast accumulation (the whole K
    chained on the tensor core, each 32-product chunk truncated to 13 fraction
    bits) or with promotion into float32 every 128 products (DeepSeek-V3's fix).
    The epilogue is torch._scaled_mm's: alpha = RN32(1/s_a * 1/s_b), RN32(alpha *
    acc) (+ bias in float32), rounded to bf16 (float32 for weight gradients).
``nvfp4_b200``
    as ``bf16_h100`` on a B200 (``sf.emulate("b200")``), with the blocks' linear
    layers in NVFP4 (e2m1 elements, e4m3 scales per 16 along K, an fp32 tensor
    scale amax / (6 * 448)) on the Blackwell ``tcgen05.mma kind::mxf4nvf4``
    model, all three GEMMs, each operand quantized along the GEMM's K (so every
    transposed use is quantized anew, as the hardware requires); gradients with
    stochastic rounding, as NVIDIA's NVFP4 training recipe does (its random
    Hadamard transform and 2-D weight blocks are not modelled here).

The embedding, the layer norms and the output head stay in the run's base
arithmetic (float32 or bf16 autocast), as fp8 and fp4 recipes keep them. Where
`softfloat.emulate` is missing (an older softfloat), the emulated runs fall back to
native CPU autocast around the modelled layers, and the report says so.

Every run prints its report (the mode's per-op table, and the modelled layers'
GEMM calls with their models and claim levels) and, for the fp8 and NVFP4 runs,
the relative errors of each GEMM kind on the last step: against the exact product
of the quantized operands (the accumulation's error alone) and against the
float32 product of the unquantized operands (quantization and accumulation).
Writes DIR/emulate_transformer.png (one panel per comparison) and
DIR/emulate_transformer.json; DIR defaults to ``out/`` under the current directory.
``--quick``: a tiny model for a few steps (seconds once the kernels are compiled),
for the tests. Exit status 0, or 2 (bad arguments, missing data: one line).

The text is an excerpt of the Jargon File 4.4.7 (public domain), see
examples/README.md for its source and how it was extracted.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import softfloat as sf  # noqa: E402
from softfloat import fp8_scaling, mx, mx_gemm  # noqa: E402

DATA = os.path.join(HERE, "data", "jargon_4.4.7_excerpt.txt")
RUNS = ("fp32", "bf16_h100", "fp8_fast_h100", "fp8_promote_h100", "nvfp4_b200")

#: model and training sizes: the full study and the quick one (tests)
CONFIGS = {
    "full": dict(d=64, heads=4, layers=2, ctx=64, batch=8, steps=150, lr=3e-3, warmup=10,
                 eval_every=25, eval_batches=2),
    "quick": dict(d=32, heads=2, layers=1, ctx=32, batch=4, steps=6, lr=3e-3, warmup=2,
                  eval_every=3, eval_batches=1),
}


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
class Corpus:
    """Characters of a text as token ids; the last tenth held out for validation."""

    def __init__(self, text: str):
        if len(text) < 1000:
            raise ValueError(f"the text has {len(text)} characters: too short to train on")
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        ids = np.array([self.index[c] for c in text], np.int64)
        cut = len(ids) * 9 // 10
        self.train, self.val = ids[:cut], ids[cut:]

    @property
    def vocab(self) -> int:
        return len(self.chars)

    def batch(self, rng, split, batch, ctx):
        """(inputs, targets): ``batch`` windows of ``ctx`` characters and the next ones."""
        import torch
        src = self.train if split == "train" else self.val
        starts = rng.integers(0, len(src) - ctx - 1, batch)
        x = np.stack([src[s:s + ctx] for s in starts])
        y = np.stack([src[s + 1:s + ctx + 1] for s in starts])
        return torch.from_numpy(x), torch.from_numpy(y)


def load_corpus(path=DATA) -> Corpus:
    with open(path, encoding="ascii") as fh:
        return Corpus(fh.read())


# ---------------------------------------------------------------------------
# the model: plain torch.nn
# ---------------------------------------------------------------------------
def build_model(vocab, d, heads, layers, ctx, seed):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (t.reshape(B, T, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
            mask = torch.ones(T, T, dtype=torch.bool).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, d)
            x = x + self.proj(y)
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    class CharTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    torch.manual_seed(seed)
    return CharTransformer()


# ---------------------------------------------------------------------------
# fp8 and NVFP4 linear layers (the GEMMs on softfloat's matrix-unit models)
# ---------------------------------------------------------------------------
#: the claim level of the layers' GEMMs (softfloat.emulate's vocabulary)
LAYER_CLAIM = ("modelled (the instruction validated against MMA-Sim 2.1.1; the chain along K "
               "and the epilogue not checked on a GPU)")


class GemmLog:
    """Calls of the modelled GEMMs (for the report) and, when ``probe`` is on, the
    relative errors of each GEMM kind (filled by the layers)."""

    def __init__(self):
        self.calls = {}
        self.probe = False
        self.errors = {}

    def count(self, key, macs):
        c = self.calls.setdefault(key, [0, 0])
        c[0] += 1
        c[1] += int(macs)

    def record(self, kind, got, exact, ref):
        """got: the model's float64 result; exact: the exact product of the quantized
        operands; ref: the float64 product of the unquantized operands."""
        def rel(a, b):
            nb = np.linalg.norm(b)
            return float(np.linalg.norm(a - b) / nb) if nb else 0.0
        e = self.errors.setdefault(kind, {"accumulation": [], "total": []})
        e["accumulation"].append(rel(got, exact))
        e["total"].append(rel(got, ref))


def _f32(t):
    """A torch tensor's values as a contiguous float32 numpy array."""
    import torch
    return np.ascontiguousarray(t.detach().to(torch.float32).numpy())


def _epilogue(acc, inv_a, inv_b, bias=None):
    """torch._scaled_mm's epilogue on the float32 accumulator: alpha = RN32(inv_a *
    inv_b), RN32(alpha * acc), + bias rounded in float32."""
    alpha = np.float32(np.float32(inv_a) * np.float32(inv_b))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        y = (acc.astype(np.float32) * alpha).astype(np.float32)
        if bias is not None:
            y = (y + bias.astype(np.float32)).astype(np.float32)
    return y


def _fp8_gemm(a, fa, b, fb, model, log, kind):
    """a (m, k) @ b (k, n), float32 inputs, each quantized with per-tensor current
    scaling into fa / fb (fp8_scaling); returns the float32 result after the
    _scaled_mm epilogue (no bias) and the codes (for reuse)."""
    qa, sa = fp8_scaling.quantize_per_tensor(a, fa)
    qb, sb = fp8_scaling.quantize_per_tensor(b, fb)
    acc = mx_gemm.fp8_matmul(qa, np.ascontiguousarray(qb), fa, fmt_b=fb, model=model)
    inv_a, inv_b = np.float32(1) / np.float32(sa), np.float32(1) / np.float32(sb)
    y = _epilogue(acc, inv_a, inv_b)
    log.count(f"{kind}: {fa} x {fb}, {model}", a.shape[0] * a.shape[1] * b.shape[1])
    if log.probe:
        va = sf.from_bits(qa, fa) / np.float64(sa)
        vb = sf.from_bits(qb, fb) / np.float64(sb)
        log.record(kind, y.astype(np.float64), va @ vb, a.astype(np.float64) @ b)
    return y


def _nvfp4_gemm(a, b, log, kind, rng_a=None, rng_b=None):
    """a (m, k) @ b (k, n) in NVFP4 on the Blackwell model: a blocked along its rows'
    k, b along its columns' k; ``rng_*``: a Generator for stochastic rounding of that
    operand (None: nearest even)."""
    def q(x, axis, rng):
        ts = np.float32(mx.nvfp4_tensor_scale(x))
        kw = dict(rounding="stochastic", seed=rng) if rng is not None else {}
        codes, scales = mx.quantize(x, "nvfp4", axis=axis, tensor_scale=float(ts), **kw)
        return codes, scales, ts
    ca, sa, ta = q(a, -1, rng_a)
    cb, sb, tb = q(b, 0, rng_b)
    acc = mx_gemm.mx_matmul(ca, sa, cb, sb, "nvfp4", arch="blackwell",
                            tensor_scale_a=float(ta), tensor_scale_b=float(tb))
    y = acc.astype(np.float32)
    log.count(f"{kind}: nvfp4 x nvfp4, blackwell kind::mxf4nvf4", a.shape[0] * a.shape[1]
              * b.shape[1])
    if log.probe:
        va = mx.dequantize(ca, sa, "nvfp4", axis=-1, tensor_scale=float(ta))
        vb = mx.dequantize(cb, sb, "nvfp4", axis=0, tensor_scale=float(tb))
        log.record(kind, y.astype(np.float64), va @ vb, a.astype(np.float64) @ b)
    return y


def make_lowp_linear(kind, log, model=None, seed=0):
    """A function (x, weight, bias) -> y computing F.linear with all three GEMMs
    modelled: kind "fp8" (model: an fp8 GEMM preset of softfloat.mx_gemm) or
    "nvfp4". The output is in autocast's dtype where CPU autocast is on (bf16
    here), else in x's; the input gradient in x's dtype; the weight and bias
    gradients in float32 (master weights)."""
    import torch
    rng = np.random.default_rng(seed)

    class LowpLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b, out_dtype):
            shape = x.shape
            x2 = _f32(x.reshape(-1, shape[-1]))
            wt = np.ascontiguousarray(_f32(w).T)              # (in, out)
            if kind == "fp8":
                y = _fp8_gemm(x2, "fp8_e4m3", wt, "fp8_e4m3", model, log, "fprop")
            else:
                y = _nvfp4_gemm(x2, wt, log, "fprop")
            if b is not None:
                with np.errstate(all="ignore"):
                    y = (y + _f32(b)).astype(np.float32)
            ctx.save_for_backward(x, w)
            ctx.has_bias = b is not None
            return torch.from_numpy(y.reshape(*shape[:-1], -1)).to(out_dtype)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            g2 = _f32(g.reshape(-1, g.shape[-1]))              # (T, out)
            x2 = _f32(x.reshape(-1, x.shape[-1]))              # (T, in)
            w2 = _f32(w)                                        # (out, in)
            gt = np.ascontiguousarray(g2.T)
            if kind == "fp8":
                dx = _fp8_gemm(g2, "fp8_e5m2", w2, "fp8_e4m3", model, log, "dgrad")
                dw = _fp8_gemm(gt, "fp8_e5m2", x2, "fp8_e4m3", model, log, "wgrad")
            else:
                dx = _nvfp4_gemm(g2, w2, log, "dgrad", rng_a=rng)
                dw = _nvfp4_gemm(gt, x2, log, "wgrad", rng_a=rng)
            db = torch.from_numpy(g2.sum(0, dtype=np.float32)) if ctx.has_bias else None
            return (torch.from_numpy(dx).reshape(x.shape).to(x.dtype),
                    torch.from_numpy(dw).to(w.dtype), db, None)

    def linear(x, w, b):
        # under autocast the output is in its dtype (bf16), as a GEMM's output type
        on = torch.is_autocast_enabled("cpu")
        return LowpLinear.apply(x, w, b, torch.get_autocast_dtype("cpu") if on else x.dtype)
    return linear


def use_lowp_linears(model, fn):
    """Route the transformer blocks' linear layers through ``fn(x, w, b)``."""
    for blk in model.blocks:
        for lin in (blk.qkv, blk.proj, blk.fc1, blk.fc2):
            lin.forward = (lambda lin: lambda x: fn(x, lin.weight, lin.bias))(lin)


# ---------------------------------------------------------------------------
# the runs
# ---------------------------------------------------------------------------
def have_emulate() -> bool:
    return hasattr(sf, "emulate")


def recipe(name, log, seed):
    """(device or None, base dtype, low-precision linear function or None) of a run."""
    if name == "fp32":
        return None, "float32", None
    if name == "bf16_h100":
        return "h100", "bfloat16", None
    if name in ("fp8_fast_h100", "fp8_promote_h100"):
        mdl = "hopper_fp8_fast" if "fast" in name else "hopper_fp8_promote128"
        return "h100", "bfloat16", make_lowp_linear("fp8", log, model=mdl)
    if name == "nvfp4_b200":
        return "b200", "bfloat16", make_lowp_linear("nvfp4", log, seed=seed)
    raise ValueError(f"unknown run {name!r}: expected one of {', '.join(RUNS)}")


def _contexts(device, dtype):
    """The run's context managers: the emulation mode (when softfloat has it) and
    autocast. Returns (context, mode handle or None)."""
    import torch
    stack = contextlib.ExitStack()
    handle = None
    if device is not None and have_emulate():
        handle = stack.enter_context(sf.emulate(device))
    if dtype == "bfloat16":
        stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
    return stack, handle


def _report_of(handle):
    """The mode's report: (text, JSON-ready object)."""
    if handle is None:
        return None, None
    text = handle.report()
    obj = None
    for attr in ("report_json", "as_json", "to_json", "json"):
        f = getattr(handle, attr, None)
        if callable(f):
            try:
                obj = f()
                break
            except TypeError:
                continue
    if isinstance(obj, str):
        obj = json.loads(obj)
    return str(text), obj


def train(name, corpus, cfg, seed=0, log_every=0):
    """One run: returns a JSON-ready record (losses, validation losses, seconds,
    the report)."""
    import torch
    log = GemmLog()
    device, dtype, lowp = recipe(name, log, seed)
    model = build_model(corpus.vocab, cfg["d"], cfg["heads"], cfg["layers"], cfg["ctx"], seed)
    if lowp is not None:
        use_lowp_linears(model, lowp)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    steps, warm = cfg["steps"], cfg["warmup"]

    def lr_at(s):
        if s < warm:
            return cfg["lr"] * (s + 1) / warm
        p = (s - warm) / max(1, steps - warm)
        return cfg["lr"] * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))

    rng = np.random.default_rng(seed)            # the same batches in every run
    vrng = np.random.default_rng(seed + 1)
    val = [corpus.batch(vrng, "val", cfg["batch"], cfg["ctx"]) for _ in range(cfg["eval_batches"])]
    losses, vals = [], []
    reports = []
    t0 = time.perf_counter()

    def evaluate():
        with torch.no_grad():
            stack, _ = _contexts(device, dtype)
            with stack:
                tot = [torch.nn.functional.cross_entropy(
                    model(x).float().reshape(-1, corpus.vocab), y.reshape(-1)) for x, y in val]
            return float(sum(float(t) for t in tot) / len(tot))

    for s in range(steps):
        for gr in opt.param_groups:
            gr["lr"] = lr_at(s)
        x, y = corpus.batch(rng, "train", cfg["batch"], cfg["ctx"])
        log.probe = s == steps - 1
        stack, handle = _contexts(device, dtype)
        with stack:
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, corpus.vocab),
                                                     y.reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        log.probe = False
        if s == steps - 1:
            reports.append(_report_of(handle))
        lv = loss.item()
        if not math.isfinite(lv):
            losses.append(None)
            print(f"  {name}: step {s}: the loss is {lv}: stopped")
            break
        losses.append(lv)
        if (s + 1) % cfg["eval_every"] == 0 or s == steps - 1:
            vals.append([s + 1, evaluate()])
        if log_every and (s + 1) % log_every == 0:
            print(f"  {name}: step {s + 1}/{steps}: loss {lv:.4f}"
                  + (f", validation {vals[-1][1]:.4f}" if vals and vals[-1][0] == s + 1 else ""),
                  flush=True)
    secs = time.perf_counter() - t0
    text, obj = reports[-1] if reports else (None, None)
    gemms = {k: {"calls": v[0], "multiply_adds": v[1], "claim": LAYER_CLAIM}
             for k, v in log.calls.items()}
    errors = {k: {w: float(np.mean(v)) for w, v in e.items()} for k, e in log.errors.items()}
    return {"name": name, "device": device, "base_dtype": dtype,
            "emulated": bool(device is not None and have_emulate()),
            "losses": losses, "validation": vals, "seconds": round(secs, 2),
            "seconds_per_step": round(secs / max(1, len(losses)), 4),
            "report_text": text, "report": obj, "modelled_gemms": gemms,
            "gemm_errors_last_step": errors}


def print_report(rec):
    print(f"== {rec['name']}: {rec['seconds']} s ({rec['seconds_per_step']} s/step), "
          f"final training loss {_last(rec['losses'])}, validation "
          f"{rec['validation'][-1][1] if rec['validation'] else None}")
    if rec["device"] is not None and not rec["emulated"]:
        print("   softfloat.emulate is not available: ops outside the modelled layers ran "
              "natively on the CPU (bf16 autocast)")
    if rec["report_text"]:
        print(rec["report_text"])
    for k, v in rec["modelled_gemms"].items():
        print(f"   layer GEMM {k}: {v['calls']} calls, {v['multiply_adds']:.3g} "
              f"multiply-adds; {v['claim']}")
    for k, e in rec["gemm_errors_last_step"].items():
        print(f"   {k} relative error (last step, norm-wise): accumulation "
              f"{e['accumulation']:.2e}, quantization + accumulation {e['total']:.2e}")


def _last(xs):
    xs = [x for x in xs if x is not None]
    return round(xs[-1], 4) if xs else None


def smooth(xs, w):
    xs = _series(xs)
    if len(xs) < w or w < 2:
        return xs
    c = np.convolve(xs, np.ones(w) / w, mode="valid")
    return np.concatenate([np.full(w - 1, np.nan), c])


#: (title, reference run or None, runs): the first panel draws the losses, the
#: others each run's loss minus the reference's (same batches: paired differences)
PANELS = (("every run: cross-entropy", None, RUNS),
          ("bf16 autocast on an H100, minus fp32", "fp32", ("bf16_h100",)),
          ("fp8 on an H100 minus bf16: fast accumulation vs promotion", "bf16_h100",
           ("fp8_fast_h100", "fp8_promote_h100")),
          ("NVFP4 on a B200 minus bf16 on an H100", "bf16_h100", ("nvfp4_b200",)))


def _series(xs):
    return np.array([np.nan if x is None else x for x in xs], float)


def plot(recs, path, steps):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    by = {r["name"]: r for r in recs}
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    w = max(1, steps // 20)
    for ax, (title, ref, names) in zip(axes.flat, PANELS):
        rr = by.get(ref) if ref else None
        for n in names:
            if n not in by or (ref and rr is None):
                continue
            r = by[n]
            y = _series(r["losses"])
            if rr is not None:
                y0 = _series(rr["losses"])
                m = min(len(y), len(y0))
                y = y[:m] - y0[:m]
            ln, = ax.plot(np.arange(1, len(y) + 1), smooth(y, w), lw=1.2,
                          label=f"{n}: training (mean of {w} steps)")
            v = dict((int(s), x) for s, x in r["validation"])
            if rr is not None:
                v0 = dict((int(s), x) for s, x in rr["validation"])
                v = {s: x - v0[s] for s, x in v.items() if s in v0}
            if v:
                ax.plot(list(v), list(v.values()), "o--", color=ln.get_color(), ms=4,
                        label=f"{n}: validation")
        if ref:
            ax.axhline(0, color="k", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        ax.set_ylabel("nats/char" + (f" (minus {ref}'s)" if ref else ""))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tiny model, a few steps")
    ap.add_argument("--out", default="out")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--runs", default=",".join(RUNS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--data", default=DATA)
    args = ap.parse_args(argv)
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    bad = [r for r in runs if r not in RUNS]
    if not runs or bad:
        print(f"error: --runs takes {', '.join(RUNS)}; got {args.runs!r}", file=sys.stderr)
        return 2
    cfg = dict(CONFIGS["quick" if args.quick else "full"])
    if args.steps is not None:
        if args.steps < 1:
            print(f"error: --steps must be at least 1, got {args.steps}", file=sys.stderr)
            return 2
        cfg["steps"] = args.steps
        cfg["warmup"] = min(cfg["warmup"], max(1, args.steps // 10))
        cfg["eval_every"] = min(cfg["eval_every"], args.steps)
    try:
        import torch
    except ImportError:
        print("error: torch is not installed: nothing was trained", file=sys.stderr)
        return 2
    try:
        corpus = load_corpus(args.data)
    except (OSError, UnicodeDecodeError, ValueError) as ex:
        print(f"error: cannot read the text {args.data}: {ex}", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"softfloat {sf.__version__}, torch {torch.__version__}, emulate mode: "
          f"{'yes' if have_emulate() else 'no (older softfloat)'}; {len(corpus.train)} "
          f"training characters, vocabulary {corpus.vocab}; {cfg}")
    recs = []
    for name in runs:
        rec = train(name, corpus, cfg, seed=args.seed,
                    log_every=0 if args.quick else max(1, cfg["steps"] // 8))
        print_report(rec)
        recs.append(rec)
    os.makedirs(args.out, exist_ok=True)
    meta = {"config": cfg, "seed": args.seed, "torch": torch.__version__,
            "softfloat": sf.__version__, "threads": torch.get_num_threads(),
            "data": os.path.basename(args.data), "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                       time.gmtime())}
    with open(os.path.join(args.out, "emulate_transformer.json"), "w") as fh:
        json.dump({"meta": meta, "runs": recs}, fh, indent=1)
    if not args.no_plot:
        plot(recs, os.path.join(args.out, "emulate_transformer.png"), cfg["steps"])
    print(f"wrote {os.path.join(args.out, 'emulate_transformer.json')}"
          + ("" if args.no_plot else " and emulate_transformer.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
