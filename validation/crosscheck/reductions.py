"""The reduction and GEMM checks: sums and means of data whose float32 sum is exact
and of general data, matrix products (exact against the transcribed torch CPU
kernels, bounded elsewhere), and the torch CPU model check: `softfloat.platforms.
torch_cpu`'s sum, mean, cumsum and matmul on random shapes, layouts, dims and
thread counts, bit for bit."""
from __future__ import annotations

import numpy as np

import softfloat as sf

from .cases import DTYPES, FMT, finite_random16, model_input, model_values
from .compare import Result
from .runner import Skip
from .torch_io import from_torch, to_torch, torch


# 9. sum and mean ----------------------------------------------------
def check_reduce(run, dtype):
    f = FMT[dtype]
    t = torch()
    sizes = {"quick": (1000, 4097, 65536, 300007), "tiny": (1000, 4097),
             "full": (1000, 4097, 65536, 300007, 4_000_000)}[run.size]
    # (a) sums exact in float32 (values in [1, 2) times one sign pattern, n <= 8192):
    # every order gives the exact sum, so the model is bit-exact for sum and mean
    for red in ("sum", "mean"):
        r = Result(f"{red}_exact_data", dtype, True, run.claims_nan(f"result:{f.name}"),
                   f"{red} of 1-D data whose float32 sum is exact (values in [1,2), "
                   f"n <= 8192): bit-exact in any order; mean rule "
                   f"'{run.plat.reduction.mean}'")
        for n in (1, 3, 7, 100, 1000, 3000, 4097, 8191):
            for rep in range(run.n(4, 2)):
                v = run.rng.uniform(1.0, 2.0, n) * run.rng.choice([-1.0, 1.0]) * \
                    (2.0 ** run.rng.integers(-4, 4))
                xb = sf.to_bits(v, f)
                got = from_torch(getattr(t, red)(to_torch(xb, dtype, run.device)))
                model = sf.platform_sum if red == "sum" else sf.platform_mean
                exp = model(xb, f, platform=run.plat)
                alt_p = run.plat.replace(reduction=sf.Reduction(
                    "fp32", "sequential",
                    "divide" if run.plat.reduction.mean == "reciprocal" else "reciprocal"))
                r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(n)],
                      {"mean_rule": lambda m, xb=xb: np.atleast_1d(sf.platform_mean(xb, f, platform=alt_p))})
        # all -0: the float32 identity is +0
        z = np.full(17, f.sign_mask, f.dtype)
        got = from_torch(getattr(t, red)(to_torch(z, dtype, run.device)))
        exp = (sf.platform_sum if red == "sum" else sf.platform_mean)(z, f, platform=run.plat)
        r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(17)])
        yield r.finish()
    # (b) general data: exact where the platform's order is transcribed
    # (torch_cpu: softfloat.platforms.torch_cpu), else bounded against pairwise float32
    modelled = run.device == "cpu" and run.plat.name == "torch_cpu"
    th = t.get_num_threads()
    for red in ("sum", "mean"):
        if modelled:
            r = Result(f"{red}_general", dtype, True, False,
                       f"{red} of random data, n in {list(sizes)}, {th} thread(s), vs the "
                       f"transcribed torch CPU order (softfloat.platforms.torch_cpu)")
        else:
            r = Result(f"{red}_general", dtype, False, False,
                       f"{red} of random data, n in {list(sizes)}, vs the pairwise float32 "
                       f"model; the device order ({run.plat.reduction.order}) is not "
                       f"transcribed: bounded", bounded=True)
        for n in sizes:
            xb = finite_random16(run.rng, n, f, -6, 6)
            got = from_torch(getattr(t, red)(to_torch(xb, dtype, run.device)))
            model = sf.platform_sum if red == "sum" else sf.platform_mean
            if modelled:
                exp = model(xb, f, platform=run.plat, threads=th)
            else:
                exp = model(xb, f, platform=run.plat, order="pairwise")
            r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [np.float64(n)],
                  {"order_of_accumulation": lambda m: np.atleast_1d(got)})
        yield r.finish(threads=t.get_num_threads())


# 10. matmul: bounded --------------------------------------------------
def check_matmul(run, dtype):
    f = FMT[dtype]
    shapes = {"quick": ((64, 16, 64), (64, 256, 64), (32, 1024, 32)),
              "tiny": ((16, 16, 16), (8, 128, 8)),
              "full": ((64, 16, 64), (64, 256, 64), (64, 4096, 64), (128, 1024, 128))}[run.size]
    modelled = run.device == "cpu" and run.plat.name == "torch_cpu"
    from softfloat.platforms import torch_cpu as TM
    r = Result("matmul", dtype, modelled, False,
               (f"a @ b for shapes (m,k,n) {[s for s in shapes if TM.matmul_claimed(*s, f)]} "
                f"vs the transcribed torch CPU GEMM kernels (torch_cpu_matmul)") if modelled
               else (f"a @ b for shapes (m,k,n) {list(shapes)} vs the fp32-accumulation model "
                     f"(exact products, sequential fma in float32, one rounding); bounded"),
               bounded=not modelled)
    rb = Result("matmul_unmodelled", dtype, False, False,
                "a @ b not claimed by torch_cpu.matmul_claimed on this CPU (oneDNN "
                "with k > 4096, or a path torch_cpu.host_probe did not confirm); "
                "bounded", bounded=True)
    for m, k, n in shapes:
        a = finite_random16(run.rng, m * k, f, -4, 2).reshape(m, k)
        b = finite_random16(run.rng, k * n, f, -4, 2).reshape(k, n)
        got = from_torch(to_torch(a, dtype, run.device) @ to_torch(b, dtype, run.device))
        exp = sf.platform_matmul(a, b, f, platform=run.plat)
        (r if not modelled or TM.matmul_claimed(m, k, n, f) else rb).add(
            got, exp, f, [np.float64(k)])
    yield r.finish()
    if rb.d["cases"]:
        yield rb.finish(note="not claimed on this CPU (torch_cpu.matmul_claimed)")


# 12. torch CPU reduction and GEMM models (softfloat.platforms.torch_cpu): exact -----
def check_torch_models(run, dtype):
    """Random shapes, layouts (contiguous, transposed, sliced), dims and thread
    counts; values of mixed magnitudes with cancelling pairs. Exact checks
    against `softfloat.platforms.torch_cpu` (CPU only)."""
    if run.device != "cpu":
        raise Skip("the torch_models check is for torch CPU (CUDA: validation/cuda_probe.py)")
    from softfloat.platforms import torch_cpu as TM
    t = torch()
    dts = [dtype] + (["float32"] if dtype == DTYPES[0] else [])
    n_inputs = run.n(3000, 40)
    keep_threads = t.get_num_threads()
    try:
        for dt in dts:
            f = sf.get_format({"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}[dt])
            res = {op: Result(f"model_{op}", dt, True, False,
                              f"torch.{op} on random shapes/layouts/dims, threads 1 and 2, vs "
                              f"softfloat.platforms.torch_cpu (transcribed order)")
                   for op in ("sum", "mean", "cumsum")}
            inputs = {op: 0 for op in res}
            for _ in range(n_inputs):
                x, tx, axis, th = model_input(run.rng, f, dt, run.n(70000, 5000))
                t.set_num_threads(th)
                for op, r in res.items():
                    if op == "cumsum" and axis is None:
                        continue
                    fn = getattr(t, op)
                    got = from_torch(fn(tx) if axis is None else fn(tx, dim=axis))
                    exp = {"sum": TM.torch_cpu_sum, "mean": TM.torch_cpu_mean}.get(op)
                    exp = (exp(x, f, axis, threads=th) if exp else TM.torch_cpu_cumsum(x, f, axis))
                    r.add(np.atleast_1d(got), np.atleast_1d(exp), f, [])
                    inputs[op] += 1
            for op, r in res.items():
                note = None
                if op == "sum" and dt != "float32":
                    note = ("thread-dependent order modelled: with 2 threads a sum of >= "
                            "32,768 elements into one output is split in two halves whose "
                            "partial sums are rounded to the dtype (torch_cpu_sum threads=)")
                yield r.finish(inputs=inputs[op], **({"note": note} if note else {}))
            if dt == "float32":
                continue
            r = Result("model_matmul", dt, True, False,
                       "mm (a, b row-major or transposed), addmm with bias (a row-major or "
                       "transposed), linear with "
                       "and without bias, on random (m,k,n): m,n in [2,64], k in [1,4096] "
                       "(log-uniform), threads 1 and 2; claimed where "
                       "torch_cpu.matmul_claimed (paths and k ranges that torch on this "
                       "CPU matched in torch_cpu.host_probe; oneDNN paths: k <= 4096)")
            rb = Result("model_matmul_unclaimed", dt, False, False,
                        "oneDNN (m*n*k > 4096) with k > 4096 (k chunking not modelled "
                        "there), or a path this CPU's torch did not match in "
                        "torch_cpu.host_probe (e.g. bf16 on AMX tiles); bounded",
                        bounded=True)
            count = 0
            for _ in range(run.n(1000, 20)):
                m, n = (int(v) for v in run.rng.integers(2, 65, 2))
                k = int(np.exp(run.rng.uniform(0, np.log(4096))))
                th = int(run.rng.integers(1, 3))
                t.set_num_threads(th)
                a = model_values(run.rng, f, m * k).reshape(m, k)
                bt = model_values(run.rng, f, n * k).reshape(n, k)
                bias = model_values(run.rng, f, n)
                layout = str(run.rng.choice(["rowmajor", "a_T", "both_T", "linear",
                                              "linear_bias", "bias_rowmajor", "bias_a_T"]))
                ta, tbt = to_torch(a, dt, "cpu"), to_torch(bt, dt, "cpu")
                b = np.ascontiguousarray(bt.T)
                tb = to_torch(b, dt, "cpu")
                aT = np.ascontiguousarray(a.T)
                taT = to_torch(aT, dt, "cpu")
                use_bias = "bias" in layout
                if layout == "rowmajor":
                    got, exp = from_torch(ta @ tb), TM.torch_cpu_matmul(a, b, f)
                elif layout == "a_T":
                    got, exp = from_torch(taT.t() @ tb), TM.torch_cpu_matmul(aT.T, b, f)
                elif layout == "both_T":
                    got = from_torch(taT.t() @ tbt.t())
                    exp = TM.torch_cpu_matmul(aT.T, bt.T, f)
                elif layout == "bias_rowmajor":
                    got = from_torch(t.addmm(to_torch(bias, dt, "cpu"), ta, tb))
                    exp = TM.torch_cpu_matmul(a, b, f, bias=bias)
                elif layout == "bias_a_T":
                    got = from_torch(t.addmm(to_torch(bias, dt, "cpu"), taT.t(), tb))
                    exp = TM.torch_cpu_matmul(aT.T, b, f, bias=bias)
                else:
                    wb = to_torch(bias, dt, "cpu") if use_bias else None
                    got = from_torch(t.nn.functional.linear(ta, tbt, wb))
                    exp = TM.torch_cpu_matmul(a, bt.T, f, bias=bias if use_bias else None)
                claimed = TM.matmul_claimed(m, k, n, f)
                (r if claimed else rb).add(got, exp, f, [])
                count += claimed
            yield r.finish(inputs=count)
            if rb.d["cases"]:
                yield rb.finish(note="not claimed: oneDNN's k chunking is modelled up "
                                     "to k = 4096 only; paths not confirmed by "
                                     "torch_cpu.host_probe on this CPU")
    finally:
        t.set_num_threads(keep_threads)
