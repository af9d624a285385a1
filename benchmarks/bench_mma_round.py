"""The matrix units' output rounding against the core's `round_pack`: the same
results, and how fast each is.

The matrix units round an exact integer sum S * 2**q to p significant bits of a
binary16 or binary32 output (MMA-Sim's RNE-FP16, RNE-FP32, RZ-FP32 and RZ-E8M13
roundings) with their own routine, `_kernels/mma_round.round_out`, and the fast
kernels with `_kernels/mma_fast.round_block` (float64 scalings, rint or trunc,
vectorised over a block of 64 columns). This script routes the same inputs
through `core.round_pack` instead (`via_round_pack` below: the rounding into a
format of p - 1 fraction bits, the result moved into the output's fraction
field; the units' rules that round_pack does not have, a +0 for a zero result
and infinity at 2**(emax + 1) under toward-zero, stated around it) and reports:

* equality: every (S, q) with |S| < 2**13 over the whole exponent range, and
  random S of 1 to 62 bits, both signs, results from underflow to overflow;
  for `round_block`, random block sums S < 2**53;
* speed: nanoseconds per rounding, each routine in its own compiled loop over
  the same inputs (best of several runs; the figures vary with the machine's load:
  compare them side by side).

Usage: ``python benchmarks/bench_mma_round.py [--n N] [--repeat R]``. Exit
status 0, or 1 if a result differs.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from softfloat._kernels.core import K_IEEE, clz64, round_pack  # noqa: E402
from softfloat._kernels.mma_decode import P2_OFF, POW2  # noqa: E402
from softfloat._kernels.mma_fast import JB, round_block  # noqa: E402
from softfloat._kernels.mma_round import round_out  # noqa: E402
from softfloat.context import kernel_policy, resolve  # noqa: E402
from softfloat.formats import FP32  # noqa: E402

# (name, rne, p, E, M): the output roundings of softfloat.mma.model
ROUNDINGS = (("RNE-FP16", True, 11, 5, 10), ("RNE-FP32", True, 24, 8, 23),
             ("RZ-FP32", False, 24, 8, 23), ("RZ-E8M13", False, 14, 8, 23))
POL_RNE = kernel_policy(resolve("nearest_even"), FP32)
POL_RZ = kernel_policy(resolve("toward_zero"), FP32)


@njit(cache=False)
def via_round_pack(S, q, rne, p, emin, E, M, plus_zero, pol):
    """`round_out` through `round_pack` (``pol``: nearest-even or toward zero)."""
    if S == 0:
        return np.int64(0)
    neg = np.int64(1) if S < 0 else np.int64(0)
    mag = -S if S < 0 else S
    bias = (np.int64(1) << (E - 1)) - 1
    sign = neg << (E + M)
    inf = ((np.int64(1) << E) - 1) << M
    if not rne and q + 63 - clz64(mag) > bias:       # 2**(emax + 1) or more
        return sign | inf
    b, _ = round_pack(neg, q, mag, E, p - 1, bias, K_IEEE, pol, np.int64(0))
    m = b & ((np.int64(1) << (E + p - 1)) - 1)
    if m == 0:
        return np.int64(0) if plus_zero else sign
    return sign | (m << (M - (p - 1)))


@njit(cache=False)
def loop_round_out(S, q, rne, p, emin, E, M, out):
    for i in range(S.size):
        out[i] = round_out(S[i], q[i], rne, p, emin, E, M, True)


@njit(cache=False)
def loop_round_pack(S, q, rne, p, emin, E, M, out, pol):
    for i in range(S.size):
        out[i] = via_round_pack(S[i], q[i], rne, p, emin, E, M, True, pol)


@njit(cache=False)
def loop_round_block(S, mxi, c, cx, F, rne, p, emin, lim, twop, ez):
    """round_block over the blocks of S (n a multiple of JB), as the fast kernels call it."""
    evs = np.empty(JB, np.int64)
    t1b = np.empty(JB, np.int64)
    t1 = t1b.view(np.float64)
    t2b = np.empty(JB, np.int64)
    t2 = t2b.view(np.float64)
    rq = np.empty(JB, np.float64)
    Sj = np.empty(JB, np.float64)
    Sb = Sj.view(np.int64)
    mj = np.empty(JB, np.int64)
    for b0 in range(0, S.size, JB):
        for j in range(JB):
            Sj[j] = S[b0 + j]
            mj[j] = mxi[b0 + j]
        round_block(Sj, Sb, mj, c, cx, np.uint64(b0), F, rne, p, emin, lim, twop, ez, evs, t1,
                    t1b, t2, t2b, rq)


@njit(cache=False)
def loop_block_round_pack(S, mxi, F, rne, p, emin, E, M, out, pol):
    """The same roundings element by element through round_pack, the result a value
    (float64) as round_block leaves it."""
    for i in range(S.size):
        b = via_round_pack(np.int64(S[i]), mxi[i] - F, rne, p, emin, E, M, True, pol)
        neg = (b >> (E + M)) & 1
        ef = (b >> M) & ((np.int64(1) << E) - 1)
        fr = b & ((np.int64(1) << M) - 1)
        if ef == (np.int64(1) << E) - 1:
            v = np.inf
        elif ef == 0:
            v = np.float64(fr) * POW2[P2_OFF + 2 - (np.int64(1) << (E - 1)) - M]
        else:
            v = np.float64(fr | (np.int64(1) << M)) * POW2[P2_OFF + ef
                                                          - ((np.int64(1) << (E - 1)) - 1) - M]
        out[i] = -v if neg else v


def inputs(rng, n, p, E):
    """Random (S, q): S of 1 to 62 bits, both signs; q so that S * 2**q lies from
    below the subnormals to above the largest value."""
    bias = (1 << (E - 1)) - 1
    nb = rng.integers(1, 63, n)
    S = (rng.integers(0, 1 << 62, n) >> (62 - nb)) | (np.int64(1) << (nb - 1))
    S = np.where(rng.random(n) < 0.5, -S, S).astype(np.int64)
    ev = rng.integers(1 - bias - p - 3, bias + 3, n)
    return S, (ev - (nb - 1)).astype(np.int64)


def exhaustive(p, E):
    """Every S with |S| < 2**13 at every q from below the subnormals to overflow."""
    bias = (1 << (E - 1)) - 1
    s = np.arange(-(1 << 13) + 1, 1 << 13, dtype=np.int64)
    qs = np.arange(1 - bias - p - 14, bias + 2, dtype=np.int64)
    return np.repeat(s[None, :], qs.size, 0).reshape(-1), np.repeat(qs, s.size)


def best(fn, repeat):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000, help="random inputs per rounding")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    bad = 0
    print("round_out against round_pack (same inputs; ns per rounding, best of "
          f"{a.repeat}):")
    for name, rne, p, E, M in ROUNDINGS:
        pol = POL_RNE if rne else POL_RZ
        emin = 2 - (1 << (E - 1))
        diffs = 0
        for S, q in (exhaustive(p, E), inputs(rng, a.n, p, E)):
            o1 = np.empty(S.size, np.int64)
            o2 = np.empty(S.size, np.int64)
            loop_round_out(S, q, rne, p, emin, E, M, o1)
            loop_round_pack(S, q, rne, p, emin, E, M, o2, pol)
            diffs += int(np.count_nonzero(o1 != o2))
        t1 = best(lambda: loop_round_out(S, q, rne, p, emin, E, M, o1), a.repeat)
        t2 = best(lambda: loop_round_pack(S, q, rne, p, emin, E, M, o2, pol), a.repeat)
        bad += diffs
        print(f"  {name:9s} differ {diffs:3d}   round_out {t1 / S.size * 1e9:6.2f} ns   "
              f"round_pack {t2 / S.size * 1e9:6.2f} ns   ({t2 / t1:4.2f}x)")
    print(f"round_block (blocks of {JB}) against round_pack element by element:")
    for name, rne, p, E, M in ROUNDINGS:
        pol = POL_RNE if rne else POL_RZ
        emin = 2 - (1 << (E - 1))
        n = a.n // JB * JB
        F = 25
        nb = rng.integers(1, 54, n)
        S = ((rng.integers(0, 1 << 53, n) >> (53 - nb)) | (np.int64(1) << (nb - 1)))
        S = np.where(rng.random(n) < 0.5, -S, S).astype(np.float64)
        bias = (1 << (E - 1)) - 1
        mxi = (rng.integers(1 - bias - p - 3, bias + 3, n) - (nb - 1) + F).astype(np.int64)
        lim = POW2[P2_OFF + (1 << (E - 1))]
        twop = POW2[P2_OFF + p]
        c = np.zeros(n)
        cx = np.zeros(n, np.int64)
        out = np.empty(n)
        loop_round_block(S, mxi, c, cx, F, rne, p, emin, lim, twop, -200)
        loop_block_round_pack(S, mxi, F, rne, p, emin, E, M, out, pol)
        diffs = int(np.count_nonzero(c != out))
        t1 = best(lambda: loop_round_block(S, mxi, c, cx, F, rne, p, emin, lim, twop, -200),
                  a.repeat)
        t2 = best(lambda: loop_block_round_pack(S, mxi, F, rne, p, emin, E, M, out, pol),
                  a.repeat)
        bad += diffs
        print(f"  {name:9s} differ {diffs:3d}   round_block {t1 / n * 1e9:6.2f} ns   "
              f"round_pack {t2 / n * 1e9:6.2f} ns   ({t2 / t1:4.2f}x)")
    print("all equal" if bad == 0 else f"{bad} results differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
