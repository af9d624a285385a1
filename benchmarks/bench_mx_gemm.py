"""fp8 and block-scaled GEMMs of softfloat.mx_gemm against MMA-Sim on the same
operands, in the same run: Hopper fp8 wgmma fast accumulation and promotion every
128 products (e4m3, M x K x N), Blackwell tcgen05 NVFP4 (mxf4nvf4 block16) and
MXFP8 (mxf8f6f4). Prints best-of-N seconds, ns per multiply-add and the ratios
(MMA-Sim time / ours), and checks the results agree bit for bit. Exit status 0,
1 if a result differs, 2 if it could not run (no mmasim).

    python benchmarks/bench_mx_gemm.py [--size 256] [--repeat 3]
"""
import argparse
import os
import sys
import warnings

import numpy as np

from _timing import best

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
            from mmasim.nv_ptx import WGMMA, TCGen05MMABlockScale
    except Exception as ex:
        print(f"error: mmasim is not importable ({type(ex).__name__}): nothing was timed",
              file=sys.stderr)
        return 2
    import softfloat as sf
    from softfloat import mx, mx_gemm
    S = args.size
    rng = np.random.default_rng(0)
    A = sf.to_bits(rng.standard_normal((S, S)) * 8, "fp8_e4m3")
    B = sf.to_bits(rng.standard_normal((S, S)) * 8, "fp8_e4m3")
    ta = torch.from_numpy(A).view(torch.float8_e4m3fn)
    tb = torch.from_numpy(B).view(torch.float8_e4m3fn)
    op = WGMMA("Hopper", "m64n8k32.f32.e4m3.e4m3")
    zero = torch.zeros(S, S)

    def sim_prom():
        acc = torch.zeros(S, S)
        for k0 in range(0, S, 128):
            acc = acc + op(ta[:, k0:k0 + 128], tb[k0:k0 + 128], zero)
        return acc

    rows, bad = [], 0
    cases = [("hopper fp8 fast", lambda: mx_gemm.fp8_matmul(A, B, model="hopper_fp8_fast"),
              lambda: op(ta, tb, zero)),
             ("hopper fp8 promote128",
              lambda: mx_gemm.fp8_matmul(A, B, model="hopper_fp8_promote128"), sim_prom)]
    for fmt, ins, sdt in (("nvfp4", "m128n8k64.kind::mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3",
                           torch.float8_e4m3fn),
                          ("mxfp8_e4m3", "m128n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0",
                           torch.float8_e8m0fnu)):
        ca, sa = mx.quantize(rng.standard_normal((S, S)), fmt, axis=-1)
        cb, sb = mx.quantize(rng.standard_normal((S, S)), fmt, axis=0)
        bop = TCGen05MMABlockScale("Blackwell", ins)
        al = torch.from_numpy(sa).view(sdt)
        be = torch.from_numpy(sb).view(sdt)
        if fmt == "nvfp4":
            pa = torch.from_numpy(((ca[:, 0::2] << 4) | ca[:, 1::2]).astype(np.uint8))
            pbT = torch.from_numpy(np.ascontiguousarray(((cb[0::2] << 4) | cb[1::2]).T))

            def sim(pa=pa, pbT=pbT, al=al, be=be, bop=bop):
                return bop.dpa(pa[:, None, :].expand(-1, S, -1), pbT[None].expand(S, -1, -1),
                               zero, al[:, None, :].expand(-1, S, -1),
                               be.T[None].expand(S, -1, -1))
        else:
            xa = torch.from_numpy(ca).view(torch.float8_e4m3fn)
            xb = torch.from_numpy(cb).view(torch.float8_e4m3fn)

            def sim(xa=xa, xb=xb, al=al, be=be, bop=bop):
                C = zero
                for j in range(S // 32):
                    C = bop(xa[:, 32 * j:32 * j + 32], xb[32 * j:32 * j + 32], C,
                            al[:, j:j + 1].contiguous(), be[j:j + 1].contiguous())
                return C
        cases.append((f"blackwell {fmt}",
                      lambda ca=ca, sa=sa, cb=cb, sb=sb, fmt=fmt:
                      mx_gemm.mx_matmul(ca, sa, cb, sb, fmt), sim))
    print(f"{S} x {S} x {S}, best of {args.repeat} (after a warm-up call; noisy on a "
          f"shared machine: compare the ratios)")
    print(f"{'GEMM':<24} {'ours s':>9} {'ns/MAC':>8} {'MMA-Sim s':>10} {'ratio':>8}  equal")
    for name, ours, sim in cases:
        t_o = best(ours, args.repeat)
        t_s = best(sim, max(1, args.repeat // 3), warmup=False)
        eq = np.array_equal(sf.to_bits(ours(), "fp32"),
                            sf.to_bits(sim().double().numpy(), "fp32"))
        bad += not eq
        rows.append((name, t_o, t_s))
        print(f"{name:<24} {t_o:9.4f} {t_o / S ** 3 * 1e9:8.2f} {t_s:10.3f} {t_s / t_o:8.0f}x  {eq}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
