"""Cost of the accumulation models, as ratios to NumPy in the same run.

    python benchmarks/bench_matmul.py [--quick]

Prints: fp16 matmul with fp32 sequential nearest-even accumulation (the float32
fast path) at 256x256x256 and 1024x256x1024 as a ratio to numpy's float32 matmul;
the paper-based block-FMA models (`block_fma_preset`: V100, A100, H100) with their
fast kernel and its slow twin; the integer kernel (fp16 accumulation), the block-FMA
models and the H100 matrix unit (softfloat.mma, ``acc="h100"``) in nanoseconds per
multiply-add; summation throughput in elements per second.
Each figure is the best of a few runs after a warm-up call (numba compiles on
first use; cold first-call times are printed too).
"""
from __future__ import annotations

import sys
import time

import numpy as np

import softfloat as sf
from _timing import best as _best


def best(fn, reps=7):
    return _best(fn, reps, warmup=False)


def main(quick=False):
    rng = np.random.default_rng(0)
    print(f"softfloat {sf.__version__}, numpy {np.__version__}")
    t0 = time.perf_counter()
    a = sf.to_bits(rng.standard_normal((8, 8)), "fp16")
    sf.matmul(a, a, "fp16", acc="fp32")
    sf.matmul(a, a, "fp16", acc="fp16")
    sf.matmul(a, a, "fp16", acc=sf.block_fma_preset("h100", "fp16"))
    print(f"cold first calls (compile or cache load): {time.perf_counter() - t0:.1f} s")

    print("\nfp16 matmul, fp32 sequential RNE accumulation (fast path) vs numpy float32:")
    shapes = [(256, 256, 256), (1024, 256, 1024)]
    for m, k, n in shapes:
        A = rng.standard_normal((m, k))
        B = rng.standard_normal((k, n))
        ab, bb = sf.to_bits(A, "fp16"), sf.to_bits(B, "fp16")
        a32, b32 = sf.from_bits(ab, "fp16").astype(np.float32), sf.from_bits(bb, "fp16").astype(np.float32)
        # interleaved, best of 7 each (the machine may be shared)
        t_np = t_sf = t_sf16 = float("inf")
        for _ in range(7):
            t_np = min(t_np, best(lambda: a32 @ b32, 1))
            t_sf = min(t_sf, best(lambda: sf.matmul(ab, bb, "fp16", acc="fp32"), 1))
            t_sf16 = min(t_sf16, best(lambda: sf.matmul(ab, bb, "fp16", acc="fp32",
                                                         out_fmt="fp16"), 1))
        print(f"  {m}x{k}x{n}: numpy f32 {t_np * 1e3:8.2f} ms   softfloat {t_sf * 1e3:8.2f} ms "
              f"(ratio {t_sf / t_np:5.1f}x)   with fp16 output {t_sf16 * 1e3:8.2f} ms "
              f"(ratio {t_sf16 / t_np:5.1f}x)")

    print("\nblock-FMA (tensor-core) models, 256x256x256 fp16 (target: <= 2 ns per "
          "multiply-add on 2 threads, >= 20x the integer kernel), fast kernel vs its slow twin:")
    import softfloat.accumulate.dispatch as _acc
    from softfloat._kernels import block_fma as _K
    A = sf.to_bits(rng.standard_normal((256, 256)), "fp16")
    B = sf.to_bits(rng.standard_normal((256, 256)), "fp16")
    a32 = sf.from_bits(A, "fp16").astype(np.float32)
    b32 = sf.from_bits(B, "fp16").astype(np.float32)
    t_np = best(lambda: a32 @ b32)
    t_seq = best(lambda: sf.matmul(A, B, "fp16", acc="fp32"))
    for gpu in ([("h100")] if quick else ["v100", "a100", "h100"]):
        model = sf.block_fma_preset(gpu, "fp16")
        t_fast = best(lambda: sf.matmul(A, B, "fp16", acc=model))
        _acc.block_fma = _K.block_fma_slow
        try:
            t_slow = best(lambda: sf.matmul(A, B, "fp16", acc=model), reps=2)
        finally:
            _acc.block_fma = _K.block_fma
        print(f"  {gpu}: fast {t_fast * 1e3:7.2f} ms ({t_fast / 256 ** 3 * 1e9:5.2f} ns/MAC)   "
              f"slow twin {t_slow * 1e3:8.2f} ms ({t_slow / t_fast:5.1f}x the fast one)   "
              f"numpy f32 {t_np * 1e3:6.2f} ms ({t_fast / t_np:6.1f}x)   fp32 sequential "
              f"{t_seq * 1e3:6.2f} ms ({t_fast / t_seq:5.1f}x)")

    m = k = n = 64 if quick else 128
    A = sf.to_bits(rng.standard_normal((m, k)), "fp16")
    B = sf.to_bits(rng.standard_normal((k, n)), "fp16")
    macs = m * k * n
    for label, kw in (("integer kernel, fp16 accumulation (RNE)", dict(acc="fp16")),
                      ("integer kernel, fp32 accumulation, flags", dict(acc="fp32",
                                                                        return_flags=True)),
                      ("integer kernel, fp16 pairwise", dict(acc="fp16", order="pairwise")),
                      ("block-FMA model, h100 preset", dict(acc=sf.block_fma_preset("h100"))),
                      ("block-FMA model, v100 preset", dict(acc=sf.block_fma_preset("v100"))),
                      ("matrix unit h100 (softfloat.mma)", dict(acc="h100"))):
        t = best(lambda: sf.matmul(A, B, "fp16", **kw))
        print(f"  {label:44s} {t / macs * 1e9:7.1f} ns per multiply-add ({m}x{k}x{n})")

    print("\nsummation throughput:")
    N = 10**6 if quick else 10**7
    x = sf.to_bits(rng.standard_normal((10, N // 10)), "fp16")
    for label, kw in (("fp16 -> fp32 sequential RNE (fast path)", dict(acc="fp32")),
                      ("fp16 -> fp16 sequential (integer kernel)", dict(acc="fp16")),
                      ("fp16 -> fp16 stochastic (integer kernel)", dict(acc="fp16",
                                                                      rounding="stochastic",
                                                                      seed=1)),
                      ("fp16 -> fp16 Kahan (integer kernel)", dict(acc="fp16", kahan=True))):
        t = best(lambda: sf.sum(x, "fp16", **kw), reps=2)
        print(f"  {label:44s} {N / t / 1e6:8.1f} Melem/s")
    xf = sf.from_bits(x, "fp16").astype(np.float32)
    t = best(lambda: xf.sum(axis=1))
    print(f"  {'numpy float32 sum (pairwise), for scale':44s} {N / t / 1e6:8.1f} Melem/s")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
