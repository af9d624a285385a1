"""The elementwise checks: conversions from float32 (sampled, or all 2^32 inputs
in chunks under the time budget) and float64, widening to float32, tensor-tensor
add/sub/mul/div (sampled or all 2^32 pairs), unary ops, tensor-scalar ops under
the platform's scalar rules, fused ops, and the bounded transcendentals."""
from __future__ import annotations

import math

import numpy as np

import softfloat as sf
from softfloat.budget import chunk_ranges

from .cases import FMT, FP32, all16, boundaries32, edge16, finite_random16, random16
from .compare import Result
from .torch_io import from_torch, t_from64, tdtype, to_torch, torch


# 1. conversion from float32 ------------------------------------------
def check_from_float32(run, dtype):
    f = FMT[dtype]
    r = Result("from_float32", dtype, True, run.claims_nan(f"cast:{f.name}"),
               "x.to(dtype) for float32 x; model platform_to_bits (RNE, platform NaN)")
    if run.sweep:
        sf.platform_to_bits(np.zeros(4, np.float32), f, run.plat)            # compile
        cov = _sweep32(run, r, f, dtype)
        yield r.finish(coverage=cov)
        return
    xs = [boundaries32(f),
          run.rng.integers(0, 1 << 32, run.n(1 << 22, 1 << 14), dtype=np.uint64).astype(np.uint32)]
    for x in xs:
        got = from_torch(to_torch(x, "float32", run.device).to(tdtype(dtype)))
        exp = sf.platform_to_bits(x.view(np.float32), f, run.plat)
        r.add(got, exp, f, [x], alts={
            "tie_rule": lambda m, x=x: sf.to_bits(x.view(np.float32)[m], f, "nearest_away"),
            "subnormal_flush": lambda m, x=x: sf.to_bits(x.view(np.float32)[m], f, ftz=True)})
    yield r.finish(coverage=None)


def _sweep32(run, r, f, dtype):
    """All 2^32 float32 patterns (CUDA): chunks of 2^26 made on the device."""
    chunk = run.chunk
    starts = [lo for lo, _ in chunk_ranges(1 << 32, chunk, -(1 << 31))]
    return run.run_sweep(r, starts, lambda s: _conv_chunk(run, r, f, dtype, s, chunk), chunk)


def _conv_chunk(run, r, f, dtype, s, chunk):
    t = torch()
    xi = t.arange(s, s + chunk, dtype=t.int32, device=run.device)
    got = from_torch(xi.view(t.float32).to(tdtype(dtype)))
    u = s & 0xFFFFFFFF                      # the same patterns, unsigned
    x = np.arange(u, u + chunk, dtype=np.uint32)
    exp = sf.platform_to_bits(x.view(np.float32), f, run.plat)
    r.add(got, exp, f, [x])


# 2. conversion from float64 ------------------------------------------
def check_from_float64(run, dtype):
    f = FMT[dtype]
    r = Result("from_float64", dtype, True, run.claims_nan(f"cast64:{f.name}"),
               "x.to(dtype) for float64 x: through float32 (double rounding)")
    pos = np.arange(0, f.inf_bits, dtype=np.uint32).astype(f.dtype)
    lo = sf.from_bits(pos[:-1], f)
    hi = sf.from_bits(pos[1:], f)
    mid = (lo + hi) / 2
    # just above / below each midpoint by less than half a float32 ulp: the
    # double-rounding cases (float32 rounds them onto the midpoint)
    tiny = np.spacing(mid.astype(np.float32)).astype(np.float64) / 4
    n = run.n(1 << 20, 1 << 12)
    rnd = run.rng.integers(0, 1 << 63, n, dtype=np.uint64)
    rnd = rnd[(rnd >> np.uint64(52) & np.uint64(0x7FF)) != 0x7FF]   # finite
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-300, 1e300,
                         1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40])
    parts = [mid + tiny, mid - tiny, mid, specials, rnd.view(np.float64),
             run.rng.standard_normal(n)]
    x = np.concatenate([np.concatenate([p, -p]) for p in parts])
    if run.size == "tiny":
        x = x[run.rng.choice(x.size, min(x.size, 1 << 14), replace=False)]
    got = from_torch(t_from64(x, run.device).to(tdtype(dtype)))
    exp = sf.platform_to_bits(x, f, run.plat)
    r.add(got, exp, f, [x], alts={
        "double_rounding": lambda m: sf.to_bits(x[m], f)})
    yield r.finish()


# 3. conversion to float32 ---------------------------------------------
def check_to_float32(run, dtype):
    f = FMT[dtype]
    r = Result("to_float32", dtype, True, run.claims_nan(f"widen:{f.name}"),
               "x.float() for all 2^16 inputs; exact widening")
    x = all16()
    got = from_torch(to_torch(x, dtype, run.device).float())
    exp = sf.platform_convert(x, f, FP32, run.plat)
    r.add(got, exp, FP32, [x])
    yield r.finish()


# 4. tensor-tensor add, sub, mul, div ---------------------------------
def check_binary(run, dtype):
    f = FMT[dtype]
    t = torch()
    ops = {"add": t.add, "sub": t.sub, "mul": t.mul, "div": t.div}
    for op, tf in ops.items():
        r = Result(f"{op}_tensor", dtype, True, run.claims_nan(f"result:{f.name}"),
                   f"torch.{op}(a, b) on {dtype} tensors; model platform_op('{op}')")
        alts = {
            "tie_rule": lambda m, a, b, op=op: getattr(sf, op)(a[m], b[m], f, "nearest_away"),
            "subnormal_flush": lambda m, a, b, op=op: getattr(sf, op)(a[m], b[m], f, subnormals=False),
        }
        if run.sweep:
            chunk = run.chunk
            sf.platform_op(op, edge16(f), edge16(f), fmt=f, platform=run.plat)  # compile
            starts = [lo for lo, _ in chunk_ranges(1 << 32, chunk)]
            cov = run.run_sweep(r, starts, lambda s, op=op, tf=tf, r=r: _pair_chunk(run, 
                r, f, dtype, op, tf, s, chunk, alts), chunk)
            yield r.finish(coverage=cov)
            continue
        e = edge16(f)
        a1, b1 = np.meshgrid(e, e, indexing="ij")
        n = run.n(1 << 20, 1 << 13)
        for a, b in ((a1.reshape(-1), b1.reshape(-1)),
                     (random16(run.rng, n), random16(run.rng, n)),
                     (finite_random16(run.rng, n, f), finite_random16(run.rng, n, f))):
            got = from_torch(tf(to_torch(a, dtype, run.device), to_torch(b, dtype, run.device)))
            exp = sf.platform_op(op, a, b, fmt=f, platform=run.plat)
            r.add(got, exp, f, [a, b], {k: (lambda m, fn=fn, a=a, b=b: fn(m, a, b))
                                        for k, fn in alts.items()})
        yield r.finish(coverage=None)


def _pair_chunk(run, r, f, dtype, op, tf, s, chunk, alts):
    t = torch()
    idx = t.arange(s, s + chunk, dtype=t.int64, device=run.device)
    ai = (((idx >> 16) ^ 0x8000) - 0x8000).to(t.int16).view(tdtype(dtype))
    bi = (((idx & 0xFFFF) ^ 0x8000) - 0x8000).to(t.int16).view(tdtype(dtype))
    got = from_torch(tf(ai, bi))
    if chunk >= 1 << 16:
        rows = chunk >> 16
        if rows not in run._tiles:      # b is the same in every chunk
            run._tiles[rows] = np.tile(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16),
                                        rows)
        b = run._tiles[rows]
        a = np.empty((rows, 1 << 16), np.uint16)
        a[:] = np.arange(s >> 16, (s + chunk) >> 16, dtype=np.uint32).astype(np.uint16)[:, None]
        a = a.reshape(-1)
    else:
        ii = np.arange(s, s + chunk, dtype=np.uint64)
        a = (ii >> np.uint64(16)).astype(np.uint16)
        b = (ii & np.uint64(0xFFFF)).astype(np.uint16)
    exp = sf.platform_op(op, a, b, fmt=f, platform=run.plat)
    r.add(got, exp, f, [a, b], {k: (lambda m, fn=fn: fn(m, a, b)) for k, fn in alts.items()})


# 5. unary sqrt, neg, abs, relu over all 2^16 inputs ------------------
def check_unary(run, dtype):
    f = FMT[dtype]
    t = torch()
    x = all16()
    for op, tf in {"sqrt": t.sqrt, "neg": t.neg, "abs": t.abs, "relu": t.relu}.items():
        what = f"result:{f.name}" if op == "sqrt" else f"signop:{f.name}"
        r = Result(op, dtype, True, run.claims_nan(what),
                   f"torch.{op}(x) for all 2^16 inputs")
        got = from_torch(tf(to_torch(x, dtype, run.device)))
        exp = sf.platform_op(op, x, fmt=f, platform=run.plat)
        alts = {}
        if op == "relu":
            other = "zero" if run.plat.relu_negzero == "keep" else "keep"
            alts["signed_zero"] = lambda m: sf.platform_op(
                "relu", x[m], fmt=f, platform=run.plat.replace(relu_negzero=other))
        r.add(got, exp, f, [x], alts)
        yield r.finish()


# 6. tensor-scalar ops under the device's scalar rules ----------------
SCALARS = (0.1, 0.3, 1 / 3, -2.5, 3.0, 1e-3, 7e-6, 1e5, 65519.0, 1e-40, 3.0e38)


def check_scalar(run, dtype):
    f = FMT[dtype]
    ops = {"add": lambda x, s: x + s, "sub": lambda x, s: x - s,
           "mul": lambda x, s: x * s, "div": lambda x, s: x / s}
    x = all16() if run.size != "tiny" else random16(run.rng, 1 << 12)
    tx = to_torch(x, dtype, run.device)
    for op, tf in ops.items():
        r = Result(f"{op}_scalar", dtype, True, run.claims_nan(f"result:{f.name}"),
                   f"x {op} python_float for all x and scalars {list(SCALARS)}; rule: "
                   f"scalar '{run.plat.scalar_rule(op)}'" +
                   (f", division '{run.plat.scalar_div}'" if op == "div" else ""))
        flip = "narrow" if run.plat.scalar_rule(op) == "opmath" else "opmath"
        p_flip = run.plat.replace(scalars={**run.plat.scalars, op: flip, "*": flip})
        p_div = run.plat.replace(scalar_div="divide" if run.plat.scalar_div == "reciprocal"
                                  else "reciprocal")
        for s in SCALARS:
            got = from_torch(tf(tx, s))
            exp = sf.platform_op(op, x, s, fmt=f, platform=run.plat)
            alts = {"scalar_narrowing": lambda m, s=s: sf.platform_op(op, x[m], s, fmt=f, platform=p_flip)}
            if op == "div":
                alts["reciprocal_division"] = lambda m, s=s: sf.platform_op(op, x[m], s, fmt=f, platform=p_div)
            alts["double_rounding"] = lambda m, s=s: getattr(sf, op)(
                x[m], sf.to_bits(np.float64(s), f), f)
            r.add(got, exp, f, [x, np.float64(s)], alts)
        yield r.finish()


# 7. fused ops: addcmul, addcdiv, lerp, add(alpha) --------------------
def check_fused(run, dtype):
    f = FMT[dtype]
    t = torch()
    n = run.n(1 << 18, 1 << 12, 1 << 24)
    a, b, c = (finite_random16(run.rng, n, f, -10, 6) for _ in range(3))
    ta, tb, tc = (to_torch(v, dtype, run.device) for v in (a, b, c))
    unfused = run.plat.replace(fused=frozenset())
    cases = [
        ("addcmul", {}, lambda: t.addcmul(ta, tb, tc), (a, b, c)),
        ("addcmul", {"value": 0.3}, lambda: t.addcmul(ta, tb, tc, value=0.3), (a, b, c)),
        ("addcdiv", {}, lambda: t.addcdiv(ta, tb, tc), (a, b, c)),
        ("addcdiv", {"value": 0.3}, lambda: t.addcdiv(ta, tb, tc, value=0.3), (a, b, c)),
        ("lerp", {}, lambda: t.lerp(ta, tb, 0.3), (a, b, 0.3)),
        ("lerp", {}, lambda: t.lerp(ta, tb, 0.7), (a, b, 0.7)),
        ("lerp", {}, lambda: t.lerp(ta, tb, tc), (a, b, c)),
        ("add", {"alpha": 0.3}, lambda: t.add(ta, tb, alpha=0.3), (a, b)),
        ("sub", {"alpha": 2.5}, lambda: t.sub(ta, tb, alpha=2.5), (a, b)),
    ]
    for op, kw, tfn, operands in cases:
        label = op + "".join(f"_{k}{v}" for k, v in kw.items())
        if op == "lerp":
            label += "_w" + ("tensor" if isinstance(operands[2], np.ndarray) else str(operands[2]))
        r = Result(f"fused_{label}", dtype, True, run.claims_nan(f"result:{f.name}"),
                   f"torch.{op}({', '.join(f'{k}={v}' for k, v in kw.items())}); model "
                   f"platform_op with fused={sorted(run.plat.fused)}")
        got = from_torch(tfn())
        exp = sf.platform_op(op, *operands, fmt=f, platform=run.plat, **kw)
        sel = lambda m, o: o[m] if isinstance(o, np.ndarray) else o  # noqa: E731
        alts = {"unfused": lambda m, op=op, kw=kw, operands=operands: sf.platform_op(
            op, *[sel(m, o) for o in operands], fmt=f, platform=unfused, **kw)}
        flip = "narrow" if run.plat.scalar_rule(op) == "opmath" else "opmath"
        pf = run.plat.replace(scalars={"*": flip})
        alts["scalar_narrowing"] = lambda m, op=op, kw=kw, operands=operands: sf.platform_op(
            op, *[sel(m, o) for o in operands], fmt=f, platform=pf, **kw)
        r.add(got, exp, f, [o for o in operands if isinstance(o, np.ndarray)], alts)
        yield r.finish()


# 8. transcendentals: bounded ----------------------------------------
def check_transcendental(run, dtype):
    f = FMT[dtype]
    t = torch()
    x = all16()
    xv = sf.from_bits(x, f)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    with np.errstate(all="ignore"):
        refs = {
            "exp": (t.exp, np.exp(xv)),
            "tanh": (t.tanh, np.tanh(xv)),
            "sigmoid": (t.sigmoid, 1.0 / (1.0 + np.exp(-xv))),
            "gelu": (lambda v: t.nn.functional.gelu(v),
                     0.5 * xv * (1.0 + erf(xv / math.sqrt(2.0)))),
            "gelu_tanh": (lambda v: t.nn.functional.gelu(v, approximate="tanh"),
                          0.5 * xv * (1.0 + np.tanh(math.sqrt(2 / math.pi)
                                                     * (xv + 0.044715 * xv ** 3)))),
        }
    for op, (tf, ref) in refs.items():
        r = Result(op, dtype, False, False,
                   f"torch {op} for all 2^16 inputs vs RN(float64 {op}) through the "
                   f"platform's float32 route; bounded", bounded=True)
        got = from_torch(tf(to_torch(x, dtype, run.device)))
        run.luts[f"{op}_{dtype}"] = got        # the device's table, saved as luts.npz
        exp = sf.platform_to_bits(ref, f, run.plat)
        r.add(got, exp, f, [x])
        yield r.finish()
