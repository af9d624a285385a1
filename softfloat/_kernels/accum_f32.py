"""Accumulation kernels, native float32: the fast path of the sequential and
blocked fp32 models (`matmul_f32_seq`, `sum_f32_seq`, `matmul_f32_blocked`) and
the range check that decides whether it applies (`abs_range_f32`).
"""
import numpy as np
from numba import njit

from .._parallel import run_chunks_weighted


# ---------------------------------------------------------------------------
# Native float32 accumulation (the fast path of the sequential fp32 model)
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def matmul_f32_seq_chunk(lo, hi, A, B, C, has_c, out):
    """Native float32, groups of four rows [lo, hi) (linear over (nb, ceil(m/4))):
    out[bt, i, :] = sequential k sum of A[bt, i, k] * B[bt, k, :] (after C, if
    given, else starting from the k = 0 product). Exact products and IEEE float32
    addition make this equal to the nearest-even sequential model; rows go in
    groups of four (each row of B is used four times), the loop over j vectorises,
    and the k order of every output is kept."""
    nb, m, K = A.shape
    n = B.shape[2]
    ngrp = (m + 3) // 4
    acc = np.empty((4, n), np.float32)
    for lin in range(lo, hi):
        bt = lin // ngrp
        i0 = (lin - bt * ngrp) * 4
        rows = min(4, m - i0)
        if has_c:
            for r in range(rows):
                for j in range(n):
                    acc[r, j] = C[bt, i0 + r, j]
            k0 = 0
        else:
            for r in range(rows):
                a0 = A[bt, i0 + r, 0]
                for j in range(n):
                    acc[r, j] = a0 * B[bt, 0, j]
            k0 = 1
        if rows == 4:
            acc0 = acc[0]
            acc1 = acc[1]
            acc2 = acc[2]
            acc3 = acc[3]
            for k in range(k0, K):
                a0 = A[bt, i0, k]
                a1 = A[bt, i0 + 1, k]
                a2 = A[bt, i0 + 2, k]
                a3 = A[bt, i0 + 3, k]
                brow = B[bt, k]
                for j in range(n):
                    b = brow[j]
                    acc0[j] = acc0[j] + a0 * b
                    acc1[j] = acc1[j] + a1 * b
                    acc2[j] = acc2[j] + a2 * b
                    acc3[j] = acc3[j] + a3 * b
        else:
            for r in range(rows):
                accr = acc[r]
                for k in range(k0, K):
                    a = A[bt, i0 + r, k]
                    brow = B[bt, k]
                    for j in range(n):
                        accr[j] = accr[j] + a * brow[j]
        for r in range(rows):
            for j in range(n):
                out[bt, i0 + r, j] = acc[r, j]
    return 0


def matmul_f32_seq(A, B, C, has_c, out):
    """`matmul_f32_seq_chunk` over all row groups, on several threads. A: (nb, m, K),
    B: (nb, K, n), C/out: (nb, m, n) float32 (C only read when has_c)."""
    nb, m, K = A.shape
    n = B.shape[2]
    run_chunks_weighted(matmul_f32_seq_chunk, nb * ((m + 3) // 4), 4 * K * n, A, B, C,
                        has_c, out)


@njit(cache=True, nogil=True)
def sum_f32_seq_chunk(lo, hi, X, out):
    """Native float32 sequential row sums of X (rows, K), rows [lo, hi):
    ((x0 + x1) + x2) + ..."""
    rows, K = X.shape
    for r in range(lo, hi):
        s = X[r, 0]
        for k in range(1, K):
            s = s + X[r, k]
        out[r] = s
    return 0


def sum_f32_seq(X, out):
    """`sum_f32_seq_chunk` over all rows of X (rows, K >= 1) on several threads."""
    run_chunks_weighted(sum_f32_seq_chunk, X.shape[0], X.shape[1], X, out)


@njit(cache=True, nogil=True)
def abs_range_f32(x):
    """(max |x|, smallest nonzero |x|) of a flat float32 array in one pass; NaN
    for both if x holds a NaN; (0, inf) if every entry is zero."""
    mx = np.float32(0.0)
    mn = np.float32(np.inf)
    nan = False
    for t in range(x.size):
        a = np.abs(x[t])
        nan |= a != a
        mx = a if a > mx else mx
        mn = a if (a < mn and a != 0) else mn
    if nan:
        return np.float32(np.nan), np.float32(np.nan)
    return mx, mn


@njit(cache=True, nogil=True)
def matmul_f32_blocked_chunk(lo, hi, A, B, block, out):
    """Native float32 blocked order, rows [lo, hi) (linear over (nb, m)): each
    block of ``block`` consecutive k is summed sequentially (from its first exact
    product), then the block sums are summed sequentially, every addition an IEEE
    float32 RNE addition: Higham's blocked summation, the same tree as
    `softfloat.accumulate`'s ``order="blocked"`` program (a block of one term
    enters as that term), so with exact products it equals that model bit for bit.
    Vectorised over j; the k order within each output is kept."""
    nb, m, K = A.shape
    n = B.shape[2]
    tot = np.empty(n, np.float32)
    blk = np.empty(n, np.float32)
    for lin in range(lo, hi):
        bt = lin // m
        i = lin - bt * m
        for k0 in range(0, K, block):
            k1 = min(K, k0 + block)
            a0 = A[bt, i, k0]
            b0 = B[bt, k0]
            for j in range(n):
                blk[j] = a0 * b0[j]
            for k in range(k0 + 1, k1):
                a = A[bt, i, k]
                brow = B[bt, k]
                for j in range(n):
                    blk[j] = blk[j] + a * brow[j]
            if k0 == 0:
                for j in range(n):
                    tot[j] = blk[j]
            else:
                for j in range(n):
                    tot[j] = tot[j] + blk[j]
        for j in range(n):
            out[bt, i, j] = tot[j]
    return 0


def matmul_f32_blocked(A, B, block, out):
    """`matmul_f32_blocked_chunk` over all rows on several threads (K >= 1)."""
    nb, m, K = A.shape
    run_chunks_weighted(matmul_f32_blocked_chunk, nb * m, K * B.shape[2], A, B, int(block),
                        out)
