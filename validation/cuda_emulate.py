"""The ``emulate`` part of validation/cuda_probe.py: a fixed set of small torch
programs (`emulate_programs`: mm / addmm / linear / bmm / matmul in float32, tf32,
float16 and bfloat16; ``torch._scaled_mm`` on fp8 with fast accumulation on and
off; 16-bit elementwise arithmetic, scalars, in-place forms and transcendental
functions on special inputs; casts into fp8 and half types; a bf16 MLP forward
and backward; softmax and log_softmax) run on CUDA and on CPU tensors under
``sf.emulate(DEVICE)``, compared output by output, bit for bit (NaNs as NaNs,
payloads apart), with the mode's claim levels per program. Writes
``OUT/emulate.json`` and ``OUT/emulate.md``. The CPU-side logic
(`check_emulate`, `compare_outputs`, `write_emulate_report`) takes both sides as
functions, and is tested with fake devices.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

import softfloat as sf
from validation.cuda_units import FP8_UNIT, arch_of, same_bits
#: GPU names (lower case, as torch.cuda.get_device_name gives them) -> sf.emulate device
_EMU_NAMES = (("h100 pcie", "h100_pcie"), ("h100", "h100_sxm"), ("h200", "h200"),
              ("h800", "h800"), ("gh200", "gh200"), ("rtx 4060", "rtx4060"), ("l40s", "l40s"),
              ("l40", "l40"), ("l4", "l4"), ("rtx 4090", "rtx4090"), ("a100", "a100"),
              ("a10", "a10"), ("a40", "a40"), ("rtx 3090", "rtx3090"), ("v100", "v100"),
              ("t4", "t4"), ("b200", "b200"), ("b100", "b100"), ("gb200", "gb200"),
              ("rtx 5090", "rtx5090"))


def emulate_device_of(name, cc):
    """The ``sf.emulate`` device for a CUDA device's name and compute capability:
    the GPU itself when the name says which (the H100 PCIe and SXM apart), else
    its architecture; None when neither is known."""
    low = (name or "").lower()
    for key, dev in _EMU_NAMES:
        if key in low:
            return dev
    return arch_of(cc)


def _emu_values(rng, shape, kind="normal", scale=1.0):
    """float32 values (numpy) of one input kind: ``normal``, ``wide`` (exponents
    spread over 2**-12 .. 2**12), ``special`` (zeros, infinities, a NaN, huge values)."""
    v = rng.standard_normal(shape) * scale
    if kind == "wide":
        v = v * np.exp2(rng.integers(-12, 13, shape))
    elif kind == "special":
        flat = v.reshape(-1)
        n = flat.size
        flat[rng.permutation(n)[: max(1, n // 20)]] = 0.0
        flat[: 4] = (np.inf, -np.inf, np.nan, 1e30)
    return v.astype(np.float32)


def _t(torch, v, dev, dtype=None):
    t = torch.from_numpy(np.ascontiguousarray(v)).to(dev)
    return t if dtype is None else t.to(dtype)


def _prog_gemm(torch, dev, rng, dtype, tf32=False):
    """mm, addmm (a linear layer's bias row), bmm and matmul of one dtype."""
    dt = getattr(torch, dtype)
    a = _t(torch, _emu_values(rng, (64, 256)), dev, dt)
    b = _t(torch, _emu_values(rng, (256, 48)), dev, dt)
    bias = _t(torch, _emu_values(rng, (48,)), dev, dt)
    w = _t(torch, _emu_values(rng, (48, 256), "wide"), dev, dt)
    a3 = _t(torch, _emu_values(rng, (3, 16, 96)), dev, dt)
    b3 = _t(torch, _emu_values(rng, (3, 96, 24)), dev, dt)
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        return {"mm": a @ b, "addmm": torch.addmm(bias, a, b),
                "linear_wide": torch.nn.functional.linear(a, w, bias),
                "bmm": torch.bmm(a3, b3), "matmul_broadcast": a3 @ b3[0]}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def _prog_scaled_mm(torch, dev, rng):
    """torch._scaled_mm on e4m3 (and e5m2 x e4m3) with per-tensor scales, fast
    accumulation on and off, bf16 and float32 outputs, K up to 1024."""
    out = {}
    for k in (64, 1024):
        a = _t(torch, _emu_values(rng, (32, k)) * 8, dev).clamp(-448, 448).to(torch.float8_e4m3fn)
        b = _t(torch, _emu_values(rng, (48, k)) * 8, dev).clamp(-448, 448).to(
            torch.float8_e4m3fn).t()                    # column-major, as cuBLASLt wants
        g = _t(torch, _emu_values(rng, (32, k)) * 1e3, dev).clamp(-57344, 57344).to(
            torch.float8_e5m2)
        sa = _t(torch, np.array(0.0125, np.float32), dev)
        sb = _t(torch, np.array(0.37, np.float32), dev)
        for fast in (True, False):
            for od in ("bfloat16", "float32"):
                out[f"e4m3_k{k}_fast{int(fast)}_{od}"] = torch._scaled_mm(
                    a, b, sa, sb, out_dtype=getattr(torch, od), use_fast_accum=fast)
            out[f"e5m2xe4m3_k{k}_fast{int(fast)}_bfloat16"] = torch._scaled_mm(
                g, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
    return out


def _prog_elementwise(torch, dev, rng):
    """16-bit elementwise arithmetic (float32 opmath, one rounding), scalars,
    in-place forms, and a few transcendental functions, on normal and special inputs."""
    out = {}
    for dtype in ("float16", "bfloat16"):
        dt = getattr(torch, dtype)
        x = _t(torch, _emu_values(rng, (4096,), "special"), dev, dt)
        y = _t(torch, _emu_values(rng, (4096,), "wide"), dev, dt)
        out[f"{dtype}_add"] = x + y
        out[f"{dtype}_sub_alpha"] = torch.sub(x, y, alpha=0.3)
        out[f"{dtype}_mul"] = x * y
        out[f"{dtype}_div"] = x / y
        out[f"{dtype}_mul_scalar"] = x * 0.1
        out[f"{dtype}_add_scalar"] = x + 1e-3
        out[f"{dtype}_addcmul"] = torch.addcmul(x, x, y, value=0.5)
        z = y.clone()
        z.mul_(1.7).add_(x)
        out[f"{dtype}_inplace"] = z
        out[f"{dtype}_sqrt"] = y.abs().sqrt()
        out[f"{dtype}_exp"] = (x / 4).exp()
        out[f"{dtype}_tanh"] = x.tanh()
        out[f"{dtype}_sigmoid"] = x.sigmoid()
        out[f"{dtype}_gelu"] = torch.nn.functional.gelu(x)
    return out


def _prog_casts(torch, dev, rng):
    """Casts into fp8 (beyond the range: no saturation in torch's cast), into half
    types, and up again."""
    x = _t(torch, _emu_values(rng, (4096,), "special") * 100, dev)
    out = {}
    for dt in ("float8_e4m3fn", "float8_e5m2", "float16", "bfloat16"):
        out[f"float32_to_{dt}"] = x.to(getattr(torch, dt))
    out["bfloat16_to_float8_e4m3fn"] = x.to(torch.bfloat16).to(torch.float8_e4m3fn)
    out["float16_to_float8_e5m2"] = x.to(torch.float16).to(torch.float8_e5m2)
    out["float8_e4m3fn_to_float32"] = out["float32_to_float8_e4m3fn"].to(torch.float32)
    return out


def _prog_mlp(torch, dev, rng):
    """A two-layer bf16 MLP: forward, a float32 mean-square loss, backward; the
    output, the loss and every gradient."""
    dt = torch.bfloat16
    x = _t(torch, _emu_values(rng, (64, 32)), dev, dt)
    w1 = _t(torch, _emu_values(rng, (96, 32), scale=0.2), dev, dt).requires_grad_()
    b1 = _t(torch, _emu_values(rng, (96,), scale=0.1), dev, dt).requires_grad_()
    w2 = _t(torch, _emu_values(rng, (16, 96), scale=0.1), dev, dt).requires_grad_()
    b2 = _t(torch, _emu_values(rng, (16,), scale=0.1), dev, dt).requires_grad_()
    h = torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1))
    y = torch.nn.functional.linear(h, w2, b2)
    loss = y.float().pow(2).mean()
    loss.backward()
    return {"output": y.detach(), "loss": loss.detach(), "grad_w1": w1.grad, "grad_b1": b1.grad,
            "grad_w2": w2.grad, "grad_b2": b2.grad}


def _prog_softmax(torch, dev, rng):
    """softmax and log_softmax along the last axis, float32 / float16 / bfloat16."""
    out = {}
    for dtype in ("float32", "float16", "bfloat16"):
        x = _t(torch, _emu_values(rng, (32, 257), "normal", 4.0), dev, getattr(torch, dtype))
        out[f"{dtype}_softmax"] = x.softmax(-1)
        out[f"{dtype}_log_softmax"] = x.log_softmax(-1)
    return out


def emulate_programs(arch=None):
    """The fixed programs of the ``emulate`` check: {name: fn(torch, dev, rng) ->
    {label: tensor}}; each is called with a fresh ``np.random.default_rng(seed)``
    on both sides, so both get the same inputs. fp8 GEMMs only where the
    architecture has them (Ada, Hopper, Blackwell; every one when arch is None)."""
    progs = {"gemm_float32": lambda T, d, r: _prog_gemm(T, d, r, "float32"),
             "gemm_tf32": lambda T, d, r: _prog_gemm(T, d, r, "float32", tf32=True),
             "gemm_float16": lambda T, d, r: _prog_gemm(T, d, r, "float16"),
             "gemm_bfloat16": lambda T, d, r: _prog_gemm(T, d, r, "bfloat16"),
             "scaled_mm_fp8": _prog_scaled_mm,
             "elementwise_half": _prog_elementwise,
             "cast_fp8": _prog_casts,
             "mlp_bf16_forward_backward": _prog_mlp,
             "softmax": _prog_softmax}
    if arch is not None and arch not in FP8_UNIT:
        del progs["scaled_mm_fp8"]
    if arch in ("volta", "turing"):
        for k in ("gemm_tf32", "gemm_bfloat16", "mlp_bf16_forward_backward"):
            del progs[k]
    return progs


def _bits(torch, t):
    """(uint numpy array of the encodings, softfloat format name) of a CPU tensor."""
    t = t.detach().to("cpu").contiguous()
    fmt, it = {torch.float32: ("fp32", torch.int32), torch.float16: ("fp16", torch.int16),
               torch.bfloat16: ("bf16", torch.int16),
               torch.float8_e4m3fn: ("fp8_e4m3", torch.uint8),
               torch.float8_e5m2: ("fp8_e5m2", torch.uint8)}[t.dtype]
    u = {torch.int32: np.uint32, torch.int16: np.uint16, torch.uint8: np.uint8}[it]
    return t.view(it).numpy().view(u).reshape(t.shape), fmt


def compare_outputs(torch, got, exp, show=4):
    """One output: the device's tensor ``got`` against the emulated ``exp``, bit for
    bit (NaNs compared as NaNs, their payload differences counted apart)."""
    rec = {"dtype": str(got.dtype).replace("torch.", ""), "shape": list(got.shape)}
    if got.dtype != exp.dtype or tuple(got.shape) != tuple(exp.shape):
        rec.update(outputs=int(got.numel()), mismatches=int(got.numel()),
                   error=f"emulated {str(exp.dtype).replace('torch.', '')} "
                         f"{list(exp.shape)} vs device {rec['dtype']} {rec['shape']}")
        return rec
    g, fmt = _bits(torch, got)
    e, _ = _bits(torch, exp)
    g, e = g.reshape(-1), e.reshape(-1)
    diff, pay = same_bits(g, e, fmt)
    idx = np.flatnonzero(diff)
    w = 2 * g.dtype.itemsize
    rec.update(outputs=int(g.size), mismatches=int(idx.size), nan_payload_differences=pay,
               examples=[[int(i), f"{int(g[i]):#0{w + 2}x}", f"{int(e[i]):#0{w + 2}x}"]
                         for i in idx[:show]])
    if idx.size:
        with np.errstate(invalid="ignore", over="ignore"):
            gv, ev = sf.from_bits(g[idx], fmt), sf.from_bits(e[idx], fmt)
            fin = np.isfinite(gv) & np.isfinite(ev)
            if fin.any():
                rec["max_finite_difference"] = float(np.max(np.abs(gv[fin] - ev[fin])))
    return rec


def emulated_fn(torch, device_name, **emulate_kw):
    """The emulated side: a program run on CPU tensors under sf.emulate(device_name);
    returns (outputs, report dict)."""
    def fn(prog, seed):
        with sf.emulate(device_name, **emulate_kw) as run:
            out = prog(torch, "cpu", np.random.default_rng(seed))
        return out, run.report().as_dict()
    return fn


def native_fn(torch, dev):
    """The device side: a program run natively on torch device ``dev``."""
    def fn(prog, seed):
        out = prog(torch, dev, np.random.default_rng(seed))
        if dev == "cuda":
            torch.cuda.synchronize()
        return {k: v.detach().to("cpu") for k, v in out.items()}, None
    return fn


def check_emulate(device_fn, emu_fn, programs, seed=0):
    """Every program on the device (``device_fn(prog, seed) -> (outputs, _)``) and
    emulated (``emu_fn``), compared output by output; returns the records."""
    import torch
    recs = []
    for i, (name, prog) in enumerate(programs.items()):
        t0 = time.perf_counter()
        rec = {"program": name, "doc": (prog.__doc__ or "").strip().split("\n")[0]}
        try:
            got, _ = device_fn(prog, seed + i)
        except Exception as ex:          # the device refused the program: recorded
            rec["error"] = f"device: {type(ex).__name__}: {ex}"
            recs.append(rec)
            continue
        try:
            exp, report = emu_fn(prog, seed + i)
        except Exception as ex:          # the mode failed: recorded, a mismatch
            rec["error"] = f"emulate: {type(ex).__name__}: {ex}"
            recs.append(rec)
            continue
        rec["report"] = report
        rec["outputs"] = {}
        for label, g in got.items():
            if label not in exp:
                rec["outputs"][label] = {"error": "no emulated output", "mismatches": None}
                continue
            rec["outputs"][label] = compare_outputs(torch, g, exp[label])
        rec["mismatches"] = sum(o.get("mismatches") or 0 for o in rec["outputs"].values())
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        recs.append(rec)
    return recs


def emulate_status(recs) -> int:
    """0: every output of every program the same bits; 1: a mismatch, an error of
    the mode or a missing output (a device that refused a program is no mismatch)."""
    for r in recs:
        if "error" in r:
            if r["error"].startswith("emulate"):
                return 1
            continue
        if any(o.get("mismatches") is None or o["mismatches"] for o in r["outputs"].values()):
            return 1
    return 0


def write_emulate_report(recs, meta, out):
    """OUT/emulate.json and OUT/emulate.md: per program, per output, mismatching
    outputs / outputs, and the claim levels of the ops the mode ran."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "emulate.json"), "w") as fh:
        json.dump({"meta": meta, "programs": recs, "status": emulate_status(recs)}, fh, indent=1)
    lines = [f"# torch programs on {meta.get('device_name')} against sf.emulate("
             f"{meta.get('emulated')!r}) (torch {meta.get('torch')}, {meta.get('date')})", "",
             "| program | output | dtype | mismatches | outputs | first mismatches (index, device, "
             "emulated) |", "|---|---|---|---:|---:|---|"]
    for r in recs:
        if "error" in r:
            lines.append(f"| {r['program']} | ERROR: {r['error']} | | | | |")
            continue
        for label, o in r["outputs"].items():
            lines.append(f"| {r['program']} | {label} | {o.get('dtype', '')} | "
                         f"{o.get('mismatches')} | {o.get('outputs', '')} | "
                         f"{o.get('examples', o.get('error', ''))} |")
    lines += ["", "## Claim levels of the emulated ops (calls)", ""]
    for r in recs:
        if r.get("report"):
            tot = ", ".join(f"{k} {v}" for k, v in r["report"].get("totals", {}).items() if v)
            lines.append(f"- {r['program']}: {tot}")
    st = emulate_status(recs)
    lines += ["", "All outputs the same bits." if st == 0 else
              "Mismatches or errors: see the table and emulate.json."]
    with open(os.path.join(out, "emulate.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def run_emulate(out, device="cuda", emulated=None, device_fn=None, emu_fn=None, meta=None,
                programs=None, seed=0):
    """The ``emulate`` part: the programs on ``device`` and under
    sf.emulate(``emulated``: detected from the CUDA device when None); the report;
    returns (records, status)."""
    import torch
    if not hasattr(sf, "emulate"):
        raise RuntimeError("this softfloat has no sf.emulate")
    if emulated is None:
        name = torch.cuda.get_device_name(0)
        cc = torch.cuda.get_device_capability(0)
        emulated = emulate_device_of(name, cc)
        if emulated is None:
            raise RuntimeError(f"{name} (compute capability {cc}): no sf.emulate device")
    arch = sf.emulate(emulated).device.arch
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    recs = check_emulate(device_fn or native_fn(torch, device),
                         emu_fn or emulated_fn(torch, emulated), programs or emulate_programs(arch),
                         seed=seed)
    meta = dict(meta or {}, emulated=emulated, arch=arch,
                reduced_precision_reduction=False)
    write_emulate_report(recs, meta, out)
    return recs, emulate_status(recs)
