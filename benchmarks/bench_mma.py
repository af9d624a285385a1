"""softfloat.mma against MMA-Sim 2.1.1, side by side, as ratios in the same run.

    python benchmarks/bench_mma.py [--quick] [ARCH ...]

(ARCH ...: only those architectures' rows, e.g. ``cdna1 cdna2 cdna3``.)

For each preset: (1) one batch of instructions (m x n outputs of one
instruction, K = its k), MMA-Sim's ``op(A, B, C)`` vs `softfloat.mma.mma`;
(2) a 256 x 256 x 256 GEMM (MMA-Sim: its call with the whole K, which chains
chunks the same way); both checked bit for bit. Prints seconds (best of a few
runs after a warm-up), the speed-up ratio, and softfloat's nanoseconds per
multiply-add on the configured threads (SOFTFLOAT_NUM_THREADS). Also the cold
first call (compilation) of the kernels. Timings on a shared machine are noisy:
compare the ratios.
"""
from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from _timing import best  # noqa: E402

import softfloat as sf  # noqa: E402
from softfloat import mma as M  # noqa: E402
from softfloat._parallel import num_threads  # noqa: E402

CASES = [("ampere", "fp16", "fp32"), ("hopper", "fp16", "fp32"), ("hopper", "bf16", "fp32"),
         ("hopper", "fp8_e4m3", "fp32"), ("blackwell", "fp8_e4m3", "fp32"),
         ("ada", "fp8_e4m3", "fp16"), ("cdna3", "fp16", "fp32"), ("cdna3", "bf16", "fp32"),
         ("cdna3", "fp8_e4m3fnuz", "fp32"), ("cdna3", "tf32", "fp32"),
         ("cdna2", "fp16", "fp32"), ("cdna2", "bf16", "fp32"), ("cdna1", "fp16", "fp32"),
         ("cdna1", "bf16", "fp32"), ("cdna3", "fp32", "fp32"), ("cdna3", "fp64", "fp64"),
         ("hopper", "fp64", "fp64")]


def main(quick=False, only=()):
    warnings.filterwarnings("ignore")
    import mmasim_harness as H
    if not H.HAVE_MMASIM:
        print("mmasim is not importable (pip install mmasim==2.1.1): nothing to compare")
        return 2
    rng = np.random.default_rng(0)
    print(f"softfloat {sf.__version__}, threads {num_threads()}")
    t = time.perf_counter()
    u = M.tensor_core("hopper", "fp16")
    a = sf.to_bits(rng.standard_normal((64, 16)), "fp16")
    M.mma(u, a, a.T.copy())
    print(f"cold first call (hopper fp16, compiles decode + fdpa kernels): "
          f"{time.perf_counter() - t:.2f} s")
    N = 128 if quick else 256
    reps = 2 if quick else 3
    for arch, fin, fout in CASES:
        if only and arch not in only:
            continue
        u = M.tensor_core(arch, fin, fout)
        # (1) one batch of instructions: 256 x 256 outputs, K = k
        a, b, c, _, _ = H.make_case(u, N, N, 1, 1, kinds=(0, 2, 4))
        op = H.mmasim_op(u)
        A = H._to_torch(a, u.a_fmt.name)
        B = H._to_torch(np.ascontiguousarray(b.T), u.b_fmt.name).T
        C = H._to_torch(c, u.c_fmt.name)
        theirs = H._from_torch(op(A, B, C), u.out_fmt.name)
        ours = M.mma(u, a, b, c)
        same = np.array_equal(ours, theirs)
        t_sim = best(lambda: op(A, B, C), reps, warmup=False)
        t_ours = best(lambda: M.mma(u, a, b, c), reps)
        print(f"{arch:9s} {u.instruction:28s} batch {N}x{N}x{u.k}: mmasim {t_sim:.3f} s, "
              f"softfloat {t_ours:.4f} s, ratio {t_sim / t_ours:6.0f}x  (same bits: {same})")
        # (2) a GEMM N x N x N (MMA-Sim: whole K in one call)
        a, b = (rng.standard_normal((N, N)).view(np.uint64) if fin == "fp64"
                else sf.to_bits(rng.standard_normal((N, N)), fin) for _ in "ab")
        c = np.zeros((N, N), u.c_fmt.dtype)
        A = H._to_torch(a, u.a_fmt.name)
        B = H._to_torch(np.ascontiguousarray(b.T), u.b_fmt.name).T
        C = H._to_torch(c, u.c_fmt.name)
        t = time.perf_counter()
        theirs = H._from_torch(op(A, B, C), u.out_fmt.name)
        t_sim = time.perf_counter() - t
        ours = M.mma(u, a, b, c)
        same = np.array_equal(ours, theirs)
        t_ours = best(lambda: M.mma(u, a, b, c), reps)
        ns = t_ours / N ** 3 * 1e9
        print(f"{'':9s} GEMM {N}^3: mmasim {t_sim:.2f} s, softfloat {t_ours:.4f} s, "
              f"ratio {t_sim / t_ours:6.0f}x, {ns:.2f} ns per multiply-add  (same bits: {same})")
    return 0


if __name__ == "__main__":
    sys.exit(main("--quick" in sys.argv, [x for x in sys.argv[1:] if not x.startswith("-")]))
