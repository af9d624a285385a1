"""softfloat.mma against MMA-Sim 2.1.1, side by side, as ratios in the same run.

    python benchmarks/bench_mma.py [--quick] [--no-first-call] [ARCH ...]
    python benchmarks/bench_mma.py --pace [--rounds N] [ARCH ...]

(ARCH ...: only those architectures' rows, e.g. ``cdna1 cdna2 cdna3``;
--no-first-call: without the fresh-process first calls.)

``--pace``: softfloat alone (no MMA-Sim), nanoseconds per multiply-add of a
256 x 256 x 256 product (finite operands, standard normal values) for every
selected row, the rows timed in turn within each of N rounds (default 7) so
that a load on the machine falls on all of them alike; prints each row's best
and median and its ratio to hopper fp16's (to the first row selected when
hopper is not).

For each preset: (1) one batch of instructions (m x n outputs of one
instruction, K = its k), MMA-Sim's ``op(A, B, C)`` vs `softfloat.mma.mma`;
(2) a 256 x 256 x 256 GEMM (MMA-Sim: its call with the whole K, which chains
chunks the same way); both checked bit for bit. Prints seconds (best of a few
runs after a warm-up), the speed-up ratio, and softfloat's nanoseconds per
multiply-add on the configured threads (SOFTFLOAT_NUM_THREADS). First, the
first calls of a fresh process (``import softfloat``; a 256 x 256 x 256 product
with finite operands and c: the decoder and the fast kernel; then one with an inf
or NaN operand: the reference kernel too) on an empty numba cache (cold:
compilation) and on the cache that run filled (warm), for Hopper fp16 and fp8.
Timings on a shared machine are noisy: compare the ratios.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
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
         ("hopper", "fp64", "fp64"), ("blackwell", "mxfp8_e4m3", "fp32"),
         ("blackwell", "mxfp6_e2m3", "fp32"), ("blackwell", "mxfp4", "fp32"),
         ("blackwell", "nvfp4", "fp32"), ("rtx_blackwell", "nvfp4", "fp32")]


def main(quick=False, only=(), skip_first=False):
    warnings.filterwarnings("ignore")
    import mmasim_harness as H
    if not H.HAVE_MMASIM:
        print("mmasim is not importable (pip install mmasim==2.1.1): nothing to compare")
        return 2
    rng = np.random.default_rng(0)
    print(f"softfloat {sf.__version__}, threads {num_threads()}")
    for fin in () if skip_first else ("fp16", "fp8_e4m3"):
        with tempfile.TemporaryDirectory() as d:
            cold, warm = first_call(fin, d), first_call(fin, d)
        print(f"first call, hopper {fin} (import / finite operands / an inf or NaN operand), s: "
              f"cold cache {cold}, warm cache {warm}")
    N = 128 if quick else 256
    reps = 2 if quick else 5
    for arch, fin, fout in CASES:
        if only and arch not in only:
            continue
        u = M.tensor_core(arch, fin, fout)
        # (1) one batch of instructions: 256 x 256 outputs, K = k
        a, b, c, sa, sb = H.make_case(u, N, N, 1, 1, kinds=(0, 2, 4))
        if u.scaled:        # scales near 1: the products stay finite
            sa, sb = (_near_one_scales(u, x.shape, rng) for x in (sa, sb))
        op_sim = _mmasim_chain(u, a, b, c, sa, sb)
        theirs = op_sim()
        ours = M.mma(u, a, b, c, scale_a=sa, scale_b=sb)
        same = np.array_equal(ours, theirs)
        t_sim = best(op_sim, reps, warmup=False)
        t_ours = best(lambda: M.mma(u, a, b, c, scale_a=sa, scale_b=sb), reps)
        print(f"{arch:9s} {u.instruction:28s} batch {N}x{N}x{u.k}: mmasim {t_sim:.3f} s, "
              f"softfloat {t_ours:.4f} s, ratio {t_sim / t_ours:6.0f}x  (same bits: {same})")
        # (2) a GEMM N x N x N (MMA-Sim: whole K in one call; block-scaled
        # instructions: one call per instruction, D carried as the next C)
        a, b = (rng.standard_normal((N, N)).view(np.uint64) if fin == "fp64"
                else sf.to_bits(rng.standard_normal((N, N)), u.a_fmt) for _ in "ab")
        c = np.zeros((N, N), u.c_fmt.dtype)
        if u.scaled:
            nsb = N // u.scale_block
            sa, sb = (_near_one_scales(u, sh, rng) for sh in ((N, nsb), (nsb, N)))
        op_sim = _mmasim_chain(u, a, b, c, sa, sb)
        t = time.perf_counter()
        theirs = op_sim()
        t_sim = time.perf_counter() - t
        if not quick:           # best of two: MMA-Sim takes seconds
            t_sim = min(t_sim, best(op_sim, 1, warmup=False))
        ours = M.mma(u, a, b, c, scale_a=sa, scale_b=sb)
        same = np.array_equal(ours, theirs)
        t_ours = best(lambda: M.mma(u, a, b, c, scale_a=sa, scale_b=sb), reps)
        ns = t_ours / N ** 3 * 1e9
        print(f"{'':9s} GEMM {N}^3: mmasim {t_sim:.2f} s, softfloat {t_ours:.4f} s, "
              f"ratio {t_sim / t_ours:6.0f}x, {ns:.2f} ns per multiply-add  (same bits: {same})")
    return 0


def pace(only=(), rounds=7, N=256):
    """ns per multiply-add of each selected row, the rows interleaved in rounds."""
    rng = np.random.default_rng(0)
    rows = []
    for arch, fin, fout in CASES:
        if only and arch not in only:
            continue
        u = M.tensor_core(arch, fin, fout)
        a, b = (rng.standard_normal((N, N)).view(np.uint64) if fin == "fp64"
                else sf.to_bits(rng.standard_normal((N, N)), u.a_fmt) for _ in "ab")
        c = np.zeros((N, N), u.c_fmt.dtype)
        sa = sb = None
        if u.scaled:
            nsb = N // u.scale_block
            sa, sb = (_near_one_scales(u, sh, rng) for sh in ((N, nsb), (nsb, N)))
        run = (lambda u=u, a=a, b=b, c=c, sa=sa, sb=sb:
               M.mma(u, a, b, c, scale_a=sa, scale_b=sb))
        run()                                   # compile, fill the tables
        rows.append((f"{arch} {fin}->{fout} ({u.instruction})", run, []))
    for _ in range(rounds):
        for _, run, ts in rows:
            t = time.perf_counter()
            run()
            ts.append(time.perf_counter() - t)
    print(f"softfloat {sf.__version__}, threads {num_threads()}, {N}^3 products, "
          f"{rounds} interleaved rounds; ns per multiply-add (best / median), ratio of "
          f"the best to hopper fp16's")
    refs = [ts for name, _, ts in rows if name.startswith("hopper fp16->fp32")] or \
        [ts for _, _, ts in rows[:1]]
    ref = min(refs[0]) if refs else 1.0
    for name, _, ts in rows:
        b, md = min(ts) / N ** 3 * 1e9, float(np.median(ts)) / N ** 3 * 1e9
        print(f"  {name:58s} {b:6.3f} / {md:6.3f}  x{min(ts) / ref:5.2f}")
    return 0


def _near_one_scales(u, shape, rng):
    """Block-scale codes of 2**-3 ... 2**3 (e8m0) or 0.5 ... 4 (ue4m3)."""
    if u.scale_fmt.name == "e8m0":
        return rng.integers(124, 131, size=shape).astype(np.uint8)
    return sf.to_bits(2.0 ** rng.integers(-1, 3, size=shape), "fp8_e4m3")


def _mmasim_chain(u, a, b, c, sa, sb):
    """A function running MMA-Sim on the case (inputs converted beforehand):
    one call with the whole K, or for block-scaled instructions one call per
    instruction along K, D carried as the next C (as the hardware chains them)."""
    import mmasim_harness as H
    op = H.mmasim_op(u)
    C = H._to_torch(c, u.c_fmt.name)
    if not u.scaled:
        A = H._to_torch(a, u.a_fmt.name)
        B = H._to_torch(np.ascontiguousarray(b.T), u.b_fmt.name).T
        return lambda: H._from_torch(op(A, B, C), u.out_fmt.name)
    packed = u.algorithm == "grouped"
    sname = "e8m0" if u.scale_fmt.name == "e8m0" else "fp8_e4m3"
    steps = []
    for k0 in range(0, a.shape[1], u.k):
        A = H._to_torch(a[:, k0:k0 + u.k], u.a_fmt.name, packed)
        B = H._to_torch(np.ascontiguousarray(b[k0:k0 + u.k].T), u.b_fmt.name, packed).T
        if packed:
            B = B.contiguous()
        s0, s1 = k0 // u.scale_block, (k0 + u.k) // u.scale_block
        steps.append((A, B, H._to_torch(sa[:, s0:s1], sname), H._to_torch(sb[s0:s1], sname)))

    def run():
        d = C
        for A, B, SA, SB in steps:
            d = op(A, B, d, SA, SB)
        return H._from_torch(d, u.out_fmt.name)
    return run


_CHILD = r"""
import sys, time
t0 = time.perf_counter()
import numpy as np
import softfloat as sf
t1 = time.perf_counter()
fin = sys.argv[1]
rng = np.random.default_rng(0)
if fin == "fp16":
    a = rng.standard_normal((256, 256)).astype(np.float16).view(np.uint16)
else:
    a = (rng.integers(0, 256, (256, 256)) & 0xF7).astype(np.uint8)   # no NaN (0x7F, 0xFF)
u = sf.tensor_core("hopper", fin)
c = np.zeros((256, 256), np.uint32)
sf.mma.mma(u, a, a, c)
t2 = time.perf_counter()
a[0, 0] = 0x7C00 if fin == "fp16" else 0x7F
sf.mma.mma(u, a, a, c)
t3 = time.perf_counter()
print(f"{t1 - t0:.2f} / {t2 - t1:.2f} / {t3 - t2:.2f}")
"""


def first_call(fin, cache_dir):
    """'import / first product / first product with an infinity' seconds of a
    fresh process whose numba cache is ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    r = subprocess.run([sys.executable, "-c", _CHILD, fin], env=env, capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 else f"failed: {r.stderr.strip()[-200:]}"


def _cli(argv):
    args = list(argv)
    rounds = 7
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    only = [x for x in args if not x.startswith("-")]
    if "--pace" in args:
        return pace(only, rounds)
    return main("--quick" in args, only, "--no-first-call" in args)


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
