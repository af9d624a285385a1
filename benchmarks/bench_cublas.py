"""cuBLAS-level GEMMs of softfloat.cublas: ns per multiply-add of an M x K x N GEMM
(bf16 on Hopper, fp8 e4m3 with and without fast accumulation on the H100 PCIe, fp8
split 4 ways pairwise on the RTX 4060), the first call of each in this process
(kernel loading, or compiling with an empty NUMBA_CACHE_DIR), and, where mmaemu is
installed, its CPU reference model of torch._scaled_mm on the same operands (one
torch thread) with a bit-for-bit check. Exit status 0, 1 if a result differs.

    python benchmarks/bench_cublas.py [--size 256] [--repeat 3]
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/bench_cublas.py   # cold
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from _timing import best

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    import softfloat as sf
    from softfloat import cublas
    print(f"import softfloat: {time.perf_counter() - t0:.2f} s")
    S = args.size
    rng = np.random.default_rng(0)
    A8 = sf.to_bits(rng.standard_normal((S, S)) * 8, "fp8_e4m3")
    B8 = sf.to_bits(rng.standard_normal((S, S)) * 8, "fp8_e4m3")
    A16 = sf.to_bits(rng.standard_normal((S, S)), "bf16")
    B16 = sf.to_bits(rng.standard_normal((S, S)), "bf16")
    one = np.float32(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
            import mmaemu
        torch.set_num_threads(1)
    except ImportError:
        mmaemu = None
    cases = [
        ("bf16 h100 -> bf16", None,
         lambda: cublas.gemm(A16, B16, device="h100", a_fmt="bf16", out_fmt="bf16")),
        ("fp8 h100_pcie fast -> bf16", ("hopper", True, 1),
         lambda: cublas.scaled_mm(A8, B8, one, one, device="h100_pcie", out_fmt="bf16",
                                  fast_accum=True)),
        ("fp8 h100_pcie promote -> bf16", ("hopper", False, 1),
         lambda: cublas.scaled_mm(A8, B8, one, one, device="h100_pcie", out_fmt="bf16")),
        ("fp8 rtx4060 fast S=4 pairwise -> bf16", ("ada", True, (4, "pairwise")),
         lambda: cublas.scaled_mm(A8, B8, one, one, device="rtx4060", out_fmt="bf16",
                                  fast_accum=True, splitk=(4, "pairwise"))),
    ]
    bad = 0
    print(f"{'case':40s} {'first call s':>12s} {'ns/madd':>9s} {'mmaemu ns/madd':>15s}")
    for name, ref, fn in cases:
        t = time.perf_counter()
        out = fn()
        first = time.perf_counter() - t
        ns = best(fn, args.repeat, warmup=False) / S ** 3 * 1e9
        ref_ns = ""
        if ref is not None and mmaemu is not None:
            prof, fast, split = ref
            ta = torch.from_numpy(A8).view(torch.float8_e4m3fn)
            tb = torch.from_numpy(np.ascontiguousarray(B8.T)).view(torch.float8_e4m3fn).t()

            def run_ref():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return mmaemu.scaled_mm(ta, tb, torch.tensor(1.0), torch.tensor(1.0),
                                            out_dtype=torch.bfloat16, use_fast_accum=fast,
                                            profile=prof, splitk=split, backend="reference")
            r = run_ref()
            ref_ns = f"{best(run_ref, args.repeat, warmup=False) / S ** 3 * 1e9:15.2f}"
            if not np.array_equal(r.view(torch.int16).numpy().view(np.uint16), out):
                print(f"  {name}: results differ from mmaemu", file=sys.stderr)
                bad += 1
        print(f"{name:40s} {first:12.2f} {ns:9.2f} {ref_ns}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
