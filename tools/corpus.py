"""A corpus of library calls, recorded as digests, to compare two checkouts bit for bit.

    PYTHONPATH=<checkout> python corpus.py record --out digests.json [--only PREFIX]
    python corpus.py compare old.json new.json

Each case calls the public API (softfloat, softfloat.mx, softfloat.mx_gemm,
softfloat.mma, nn) on seeded inputs that include zeros, subnormals, infinities,
NaNs and overflow, and stores a SHA-256 of the results (bits, flags) or of the
error's type and message. compare prints every case whose digest differs or
that exists on one side only, and exits 1 if there is any.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings

import numpy as np


def _h(obj, hs):
    if isinstance(obj, (tuple, list)):
        hs.update(b"(")
        for o in obj:
            _h(o, hs)
        hs.update(b")")
    elif isinstance(obj, dict):
        for k in sorted(obj):
            hs.update(str(k).encode())
            _h(obj[k], hs)
    elif isinstance(obj, np.ndarray):
        hs.update(str(obj.dtype).encode() + str(obj.shape).encode())
        hs.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, (np.generic,)):
        _h(np.asarray(obj), hs)
    elif isinstance(obj, float):
        hs.update(np.float64(obj).tobytes())
    elif obj is None or isinstance(obj, (int, str, bool)):
        hs.update(repr(obj).encode())
    elif hasattr(obj, "bits") and hasattr(obj, "fmt"):          # LPArray
        _h((np.asarray(obj.bits), str(obj.fmt)), hs)
    elif hasattr(obj, "__dict__"):
        _h({k: v for k, v in vars(obj).items() if not k.startswith("_")}, hs)
    else:
        hs.update(repr(obj).encode())


def digest(obj) -> str:
    hs = hashlib.sha256()
    _h(obj, hs)
    return hs.hexdigest()[:20]


CASES = []


def case(name):
    def deco(fn):
        CASES.append((name, fn))
        return fn
    return deco


def rng(seed):
    return np.random.default_rng(seed)


def _specials64():
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-300, -1e-300, 5e-324,
                     65504.0, 65520.0, 65519.99, 448.0, 464.0, 57344.0, 61440.0, 3.4e38, 3.5e38,
                     1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 6.0e-8, 2.98e-8, 1e-45, 1.4e-45, 7e-46,
                     1.1754943508222875e-38, 1.1754942e-38, 2.0 ** -133, 2.0 ** -134])


def values64(seed, n=3000):
    r = rng(seed)
    parts = [_specials64(),
             r.standard_normal(n // 3),
             r.standard_normal(n // 3) * np.exp2(r.integers(-150, 130, n // 3)),
             (r.random(n // 3) - 0.5) * 1e-6]
    return np.concatenate(parts)


def bits_of(fmt, seed, n=4000):
    import softfloat as sf
    f = sf.get_format(fmt)
    nb = f.nbits
    dt = f.dtype
    if nb <= 16:
        allb = np.arange(1 << nb, dtype=np.uint64).astype(dt)
        r = rng(seed)
        return r.permutation(allb)[: max(n, 1 << min(nb, 12))]
    r = rng(seed)
    x = r.integers(0, 1 << nb, n, dtype=np.uint64).astype(dt)
    return x


FORMATS = ["fp16", "bf16", "fp32", "tf32", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz",
           "fp8_e5m2fnuz", "fp4_e2m1", "fp6_e2m3", "fp6_e3m2", "e8m0"]
MODES = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "odd"]
POLICIES = [{}, {"ftz": True}, {"daz": True}, {"ftz": True, "daz": True},
            {"overflow": "saturate"}, {"tininess": "before"}, {"nan": "canonical"},
            {"subnormals": False}]


def _register():
    import softfloat as sf

    for f in FORMATS:
        for m in MODES:
            for i, pol in enumerate(POLICIES):
                @case(f"to_bits/{f}/{m}/{i}")
                def _(f=f, m=m, pol=pol):
                    return sf.to_bits(values64(1), f, m, return_flags=True, **pol)
        @case(f"to_bits/{f}/stochastic")
        def _(f=f):
            return sf.to_bits(values64(2), f, "stochastic", seed=7, return_flags=True)
        @case(f"from_bits/{f}")
        def _(f=f):
            return sf.from_bits(bits_of(f, 3), f)
        for g in FORMATS:
            if g == f:
                continue
            for m in ("nearest_even", "toward_zero", "upward"):
                @case(f"convert/{f}/{g}/{m}")
                def _(f=f, g=g, m=m):
                    return sf.convert(bits_of(f, 4), f, g, m, return_flags=True)

    arith_fmts = ["fp16", "bf16", "fp32", "fp8_e5m2", "fp8_e4m3", "fp8_e4m3fnuz", "fp6_e3m2",
                  "fp4_e2m1", "tf32"]
    for f in arith_fmts:
        for m in MODES:
            for i, pol in enumerate(POLICIES[:7]):
                for op in ("add", "sub", "mul", "div"):
                    @case(f"{op}/{f}/{m}/{i}")
                    def _(f=f, m=m, pol=pol, op=op):
                        a, b = bits_of(f, 5), bits_of(f, 6)
                        return getattr(sf, op)(a, b, f, m, return_flags=True, **pol)
                @case(f"fma/{f}/{m}/{i}")
                def _(f=f, m=m, pol=pol):
                    return sf.fma(bits_of(f, 7), bits_of(f, 8), bits_of(f, 9), f, m,
                                  return_flags=True, **pol)
                @case(f"sqrt/{f}/{m}/{i}")
                def _(f=f, m=m, pol=pol):
                    return sf.sqrt(bits_of(f, 10), f, m, return_flags=True, **pol)
            @case(f"round_to_integral/{f}/{m}")
            def _(f=f, m=m):
                return sf.round_to_integral(bits_of(f, 11), f, m, exact=True, return_flags=True)
            @case(f"to_int32/{f}/{m}")
            def _(f=f, m=m):
                return sf.to_int32(bits_of(f, 12), f, m, return_flags=True)
            @case(f"from_int/{f}/{m}")
            def _(f=f, m=m):
                x = rng(13).integers(-2 ** 31, 2 ** 31, 2000)
                return sf.from_int(x, f, m, return_flags=True)
        @case(f"stochastic_add/{f}")
        def _(f=f):
            return sf.add(bits_of(f, 14), bits_of(f, 15), f, "stochastic", seed=3, return_flags=True)
        for op in ("eq", "lt", "le", "unordered", "lt_signaling", "minimum", "maximum",
                   "minimum_number", "maximum_number", "neg", "abs", "copysign"):
            @case(f"{op}/{f}")
            def _(f=f, op=op):
                fn = getattr(sf, op)
                a, b = bits_of(f, 16), bits_of(f, 17)
                if op in ("neg", "abs"):
                    return fn(a, f)
                try:
                    return fn(a, b, f, return_flags=True)
                except TypeError:
                    return fn(a, b, f)

    # accumulation models
    accs = [None, "fp32", "fp16", "bf16"]
    for f in ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32"):
        for order in ("sequential", "pairwise", "blocked", "blas"):
            for acc in accs:
                for prod in ("exact", "fused", "rounded"):
                    @case(f"matmul/{f}/{order}/{acc}/{prod}")
                    def _(f=f, order=order, acc=acc, prod=prod):
                        r = rng(20)
                        A = sf.to_bits(r.standard_normal((9, 37)) * 4, f)
                        B = sf.to_bits(r.standard_normal((37, 5)), f)
                        kw = {"block": 8} if order == "blocked" else {}
                        if order == "blas":
                            return sf.matmul(A, B, f, **kw)
                        return sf.matmul(A, B, f, acc=acc, order=order, products=prod,
                                         return_flags=True, **kw)
                @case(f"sum/{f}/{order}/{acc}")
                def _(f=f, order=order, acc=acc):
                    r = rng(21)
                    X = sf.to_bits(r.standard_normal((7, 300)) * np.exp2(r.integers(-20, 12, (7, 300))), f)
                    kw = {"block": 16} if order == "blocked" else {}
                    if order == "blas":
                        return sf.sum(X, f, axis=-1, acc="fp32", order=order)
                    return sf.sum(X, f, axis=-1, acc=acc, order=order, return_flags=True, **kw)
        for kahan in (True,):
            @case(f"sum_kahan/{f}")
            def _(f=f):
                X = sf.to_bits(rng(22).standard_normal(1000), f)
                return sf.sum(X, f, acc="fp16", kahan=True)
        for m in ("toward_zero", "upward", "stochastic"):
            @case(f"dot/{f}/{m}")
            def _(f=f, m=m):
                r = rng(23)
                a = sf.to_bits(r.standard_normal(64), f)
                b = sf.to_bits(r.standard_normal(64), f)
                kw = {"seed": 5} if m == "stochastic" else {}
                return sf.dot(a, b, f, acc="fp16", rounding=m, **kw)
        for w, eb in ((4, 0), (8, 3), (16, 1)):
            @case(f"blockfma/{f}/{w}/{eb}")
            def _(f=f, w=w, eb=eb):
                r = rng(24)
                A = sf.to_bits(r.standard_normal((6, 40)) * np.exp2(r.integers(-10, 10, (6, 40))), f)
                B = sf.to_bits(r.standard_normal((40, 3)), f)
                return sf.matmul(A, B, f, acc=sf.BlockFMA(width=w, extra_bits=eb), return_flags=True)
        @case(f"values/{f}")
        def _(f=f):
            r = rng(25)
            a = sf.quantize(r.standard_normal((8, 33)), f)
            b = sf.quantize(r.standard_normal((33, 4)), f)
            return (sf.matmul_values(a, b, f, acc="fp32"), sf.dot_values(a[0], b[:, 0], f),
                    sf.sum_values(a, f, acc="fp16"))
    for gpu in ("v100", "a100", "h100", "b200"):
        for fin, fout in (("fp16", "fp32"), ("bf16", "fp32"), ("fp16", "fp16")):
            @case(f"preset/{gpu}/{fin}/{fout}")
            def _(gpu=gpu, fin=fin, fout=fout):
                try:
                    acc = sf.block_fma_preset(gpu, fin, fout)
                except Exception as e:  # noqa: BLE001
                    return ("err", type(e).__name__)
                r = rng(26)
                A = sf.to_bits(r.standard_normal((5, 70)) * 30, fin)
                B = sf.to_bits(r.standard_normal((70, 6)) * 30, fin)
                return sf.matmul(A, B, fin, acc=acc, out_fmt=fout, return_flags=True)

    # matrix units
    from softfloat import mma as M
    r0 = rng(27)
    inss = []
    for arch in M.ARCHS:
        ins_list = sorted(M.INSTRUCTIONS[arch]) if isinstance(M.INSTRUCTIONS, dict) else []
        pick = ins_list if len(ins_list) <= 12 else [ins_list[i] for i in
                                                     sorted(r0.choice(len(ins_list), 12, replace=False))]
        inss += [(arch, i) for i in pick]
    for arch, ins in inss:
        @case(f"mma/{arch}/{ins}")
        def _(arch=arch, ins=ins):
            unit = M.tensor_core(arch, instruction=ins)
            K = 2 * unit.k
            r = rng(28)
            def enc(fmt, shape):
                if fmt.name == "fp64":
                    v = r.standard_normal(shape) * np.exp2(r.integers(-8, 8, shape))
                    return v.view(np.uint64)
                return sf.to_bits(r.standard_normal(shape) * np.exp2(r.integers(-8, 8, shape)), fmt)
            a = enc(unit.a_fmt, (2, K))
            b = enc(unit.b_fmt, (K, 3))
            c = enc(unit.c_fmt, (2, 3))
            kw = {}
            if getattr(unit, "scale_block", None):
                sfmt = unit.scale_fmt
                kw["scale_a"] = sf.to_bits(np.exp2(r.integers(-3, 3, (2, K // unit.scale_block))), sfmt)
                kw["scale_b"] = sf.to_bits(np.exp2(r.integers(-3, 3, (3, K // unit.scale_block))), sfmt).T
            return M.mma(unit, a, b, c, **kw)
    for arch in M.ARCHS:
        for fin in ("fp16", "bf16", "fp8_e4m3"):
            @case(f"tensor_core_matmul/{arch}/{fin}")
            def _(arch=arch, fin=fin):
                try:
                    unit = sf.tensor_core(arch, fin, "fp32")
                except Exception as e:  # noqa: BLE001
                    return ("err", type(e).__name__, str(e))
                r = rng(29)
                A = sf.to_bits(r.standard_normal((20, 100)), fin)
                B = sf.to_bits(r.standard_normal((100, 9)), fin)
                return sf.matmul(A, B, fin, acc=unit)

    # platforms
    for p in sf.platform_names():
        for f in ("fp16", "bf16", "fp32", "fp8_e4m3"):
            for op in ("add", "mul", "div", "sqrt", "fma", "relu", "lerp", "addcmul"):
                @case(f"platform_op/{p}/{f}/{op}")
                def _(p=p, f=f, op=op):
                    n = {"sqrt": 1, "relu": 1, "fma": 3, "lerp": 3, "addcmul": 3}.get(op, 2)
                    ops = [bits_of(f, 30 + i, 3000)[:3000] for i in range(n)]
                    kw = {"value": 0.5} if op in ("addcmul",) else {}
                    try:
                        return sf.platform_op(op, *ops, fmt=f, platform=p, **kw)
                    except Exception as e:  # noqa: BLE001
                        return ("err", type(e).__name__, str(e))
            @case(f"platform_reduce/{p}/{f}")
            def _(p=p, f=f):
                r = rng(31)
                X = sf.to_bits(r.standard_normal((6, 515)), f)
                out = []
                for fn, kw in ((sf.platform_sum, {"axis": -1}), (sf.platform_mean, {"axis": 0}),
                               (sf.platform_cumsum, {"axis": 1})):
                    try:
                        out.append(fn(X, f, platform=p, **kw))
                    except Exception as e:  # noqa: BLE001
                        out.append(("err", type(e).__name__, str(e)))
                try:
                    out.append(sf.platform_matmul(X[:, :64], X[:, :64].T.copy(), f, platform=p))
                except Exception as e:  # noqa: BLE001
                    out.append(("err", type(e).__name__, str(e)))
                try:
                    out.append(sf.platform_convert(X, f, "fp8_e5m2", platform=p))
                except Exception as e:  # noqa: BLE001
                    out.append(("err", type(e).__name__, str(e)))
                return out

    # LPArray
    for f in ("fp16", "bf16", "fp8_e4m3"):
        @case(f"lparray/{f}")
        def _(f=f):
            r = rng(32)
            x = sf.array(r.standard_normal((5, 7)), f, acc="fp32")
            y = sf.array(r.standard_normal((7, 3)), f)
            z = (x @ y)
            w = (x * 3 + x / 7 - x).sum(axis=0)
            return (np.asarray(z.bits), np.asarray(w.bits), np.asarray(x.mean().bits))

    # MX block formats
    from softfloat import mx
    for bfn in mx.BLOCK_FORMATS:
        rules = mx.NVFP4_SCALE_RULES if bfn == "nvfp4" else mx.SCALE_RULES
        for rule in rules:
            for rd in ("nearest_even", "toward_zero", "stochastic"):
                @case(f"mx_quantize/{bfn}/{rule}/{rd}")
                def _(bfn=bfn, rule=rule, rd=rd):
                    r = rng(33)
                    x = r.standard_normal((6, 96)) * np.exp2(r.integers(-30, 30, (6, 1)))
                    x[0, :5] = [0.0, -0.0, np.inf, np.nan, 1e-40]
                    kw = {"seed": 4} if rd == "stochastic" else {}
                    q = mx.quantize(x, bfn, scale_rule=rule, rounding=rd, **kw)
                    dq = mx.dequantize(*q[:2], bfn) if bfn != "nvfp4" else None
                    vals = mx.quantize_values(x, bfn, scale_rule=rule, rounding=rd, **kw)
                    return (q, dq, vals)
    @case("mx_fp4_pack")
    def _():
        c = rng(34).integers(0, 16, (4, 10)).astype(np.uint8)
        p = mx.pack_fp4(c)
        return (p, mx.unpack_fp4(p, 10))
    @case("nvfp4_tensor_scale")
    def _():
        x = rng(35).standard_normal(1000) * 1e3
        return (mx.nvfp4_tensor_scale(x), mx.nvfp4_values_nearest(x.reshape(10, 100), -1))
    for f in ("fp8_e4m3", "fp8_e5m2"):
        for margin in (0, 2):
            @case(f"per_tensor/{f}/{margin}")
            def _(f=f, margin=margin):
                x = rng(36).standard_normal((8, 50)) * 300
                s = mx.fp8_scale(np.abs(x).max(), f, margin=margin)
                q = mx.quantize_per_tensor(x, f, margin=margin)
                return (s, q, mx.dequantize_per_tensor(q[0], q[1], f) if isinstance(q, tuple) else None)
    @case("delayed_scaling")
    def _():
        d = mx.DelayedScaling()
        out = []
        for i in range(5):
            x = rng(37 + i).standard_normal(100) * (10 ** i)
            out.append(repr(d.update(np.abs(x).max())) if hasattr(d, "update") else None)
        return out

    from softfloat import mx_gemm
    for model in mx_gemm.FP8_GEMM_PRESETS:
        for f in ("fp8_e4m3", "fp8_e5m2"):
            @case(f"fp8_matmul/{model}/{f}")
            def _(model=model, f=f):
                r = rng(38)
                a = r.standard_normal((8, 300)) * 50
                b = r.standard_normal((300, 6))
                A, B = sf.to_bits(a, f), sf.to_bits(b, f)
                out = [mx_gemm.fp8_matmul(A, B, f, model=model)]
                try:
                    out.append(mx_gemm.fp8_matmul(A, B, f, model=model,
                                                  scale_a=np.full((8, 3), 0.5, np.float32),
                                                  scale_b=np.full((3, 6), 2.0, np.float32)))
                except ValueError as e:
                    out.append(str(e))
                return out
    for arch in mx_gemm.MX_ARCHS:
        for bfn in ("mxfp8_e4m3", "mxfp6_e2m3", "mxfp4", "nvfp4"):
            @case(f"mx_matmul/{arch}/{bfn}")
            def _(arch=arch, bfn=bfn):
                r = rng(39)
                a = r.standard_normal((4, 128))
                b = r.standard_normal((128, 5))
                qa = mx.quantize(a, bfn, axis=-1)
                qb = mx.quantize(b, bfn, axis=0)
                try:
                    return mx_gemm.mx_matmul(qa[0], qa[1], qb[0], qb[1], bfn, arch=arch)
                except Exception as e:  # noqa: BLE001
                    return ("err", type(e).__name__, str(e))

    # torch CPU models
    @case("torch_models")
    def _():
        try:
            from softfloat.platforms import torch_cpu as T          # noqa: F401
        except ImportError:
            from softfloat import torch_models as T
        X = sf.to_bits(rng(40).standard_normal((3, 1000)), "fp16")
        return (T.torch_cpu_sum(X, "fp16", axis=-1), T.torch_cpu_mean(X, "bf16" and "fp16", axis=0),
                T.torch_cpu_cumsum(X, "fp16", 1), T.cascade_order(100))

    # nn
    import nn
    nn_policies = [dict(params="fp32"), dict(params="fp16", accumulate="fp32", order="blas",
                   master_weights=True, loss_scaling="dynamic"),
                   dict(params="bf16", accumulate="bf16"), dict(params="fp16", accumulate="h100"),
                   dict(params="fp16", accumulate="ampere", rounding="stochastic"),
                   dict(params="fp8_e4m3", recipe="delayed") , dict(params="fp16", recipe="nvfp4")]
    for i, kw in enumerate(nn_policies):
        @case(f"nn_train_step/{i}")
        def _(kw=kw):
            r = rng(41)
            x = r.standard_normal((16, 12)).astype(np.float32)
            y = r.integers(0, 4, 16)
            try:
                policy = nn.Precision(**kw)
            except Exception as e:  # noqa: BLE001
                return ("err", type(e).__name__, str(e))
            np.random.seed(0)
            model = nn.MLP([12, 16, 4])
            opt = nn.SGD(model.parameters(), lr=1e-2, momentum=0.9, precision=policy)
            scaler = nn.make_scaler(policy)
            out = []
            for _ in range(3):
                res = nn.train_step(model, opt, scaler, x, y)
                out.append(repr(res))
            out += [np.asarray(p.data) for p in model.parameters()]
            return out

    # verify
    @case("verify_small")
    def _():
        rep = sf.verify(lambda a, b: sf.add(a, b, "fp8_e4m3", "toward_zero"), "add", "fp8_e4m3",
                        "nearest_even", "exhaustive", diagnose=True)
        return repr(getattr(rep, "mismatches", None)), repr(getattr(rep, "diagnosis", None))[:2000]


def record(out, only):
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    _register()
    res = {}
    t0 = time.time()
    for name, fn in CASES:
        if only and not name.startswith(only):
            continue
        try:
            res[name] = digest(fn())
        except Exception as e:  # noqa: BLE001
            res[name] = "error " + type(e).__name__ + ": " + str(e)[:200]
    with open(out, "w") as f:
        json.dump(res, f, indent=0, sort_keys=True)
    errs = sum(v.startswith("error") for v in res.values())
    print(f"{len(res)} cases ({errs} raise) in {time.time() - t0:.1f} s -> {out}")


def compare(a, b):
    A, B = json.load(open(a)), json.load(open(b))
    diff = [k for k in sorted(set(A) | set(B)) if A.get(k) != B.get(k)]
    for k in diff[:200]:
        print(f"{k}: {A.get(k, '<missing>')} != {B.get(k, '<missing>')}")
    print(f"{len(set(A) | set(B))} cases, {len(diff)} differ")
    return 1 if diff else 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--out", required=True)
    r.add_argument("--only", default=None)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    ns = ap.parse_args(argv)
    if ns.cmd == "record":
        record(ns.out, ns.only)
        return 0
    return compare(ns.a, ns.b)


if __name__ == "__main__":
    sys.exit(main())
