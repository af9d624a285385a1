"""torch's CPU sum kernels on float values (``SumKernel.cpp``): the cascade
``multi_row_sum`` (a numba kernel over independent lanes), ``row_sum`` (four
interleaved cascades), and the three orders a reduction loop takes: ``inner``
(vectorised along a contiguous reduced dimension), ``ilp`` (the scalar
``row_sum``) and ``plain`` (one cascade per output). Every addition is rounded to
float32; `orders.py` builds the same orders as trees."""
from __future__ import annotations

import numpy as np
from numba import njit

from .values import _f32

#: (elements per loaded vector, float lanes) of the sum kernel per input format
TORCH_CPU_WIDTHS = {"fp16": (16, 8), "bf16": (16, 8), "fp32": (8, 8)}


@njit(cache=True, nogil=True)
def _multi_row(V, level_power, f32):
    """multi_row_sum over the rows of V (size, W): W independent lanes. Every
    addition is rounded to float32 when ``f32`` (V holds float32 values in
    float64; the float64 sum of two float32 numbers rounded to float32 is the
    float32 sum: double rounding is innocuous for + when 53 >= 2*24 + 2)."""
    size, W = V.shape
    acc = np.zeros((4, W))
    step = 1 << level_power
    mask0 = step - 1
    i = 0
    while i + step <= size:
        for _ in range(step):
            for k in range(W):
                s = acc[0, k] + V[i, k]
                acc[0, k] = np.float32(s) if f32 else s
            i += 1
        for j in range(1, 4):
            for k in range(W):
                s = acc[j, k] + acc[j - 1, k]
                acc[j, k] = np.float32(s) if f32 else s
                acc[j - 1, k] = 0.0
            if (i & (mask0 << (j * level_power))) != 0:
                break
    while i < size:
        for k in range(W):
            s = acc[0, k] + V[i, k]
            acc[0, k] = np.float32(s) if f32 else s
        i += 1
    for j in range(1, 4):
        for k in range(W):
            s = acc[0, k] + acc[j, k]
            acc[0, k] = np.float32(s) if f32 else s
    return acc[0].copy()


def _ceil_log2(x: int) -> int:
    return 1 if x <= 2 else int(x - 1).bit_length()


def _level_power(size: int) -> int:
    return max(4, _ceil_log2(size) // 4)


def _cascade(V):
    """V (size, W) -> (W,) float32 sums (as float64), one cascade per lane."""
    V = np.ascontiguousarray(V, np.float64)
    if V.shape[0] == 0:
        return np.zeros(V.shape[1])
    return _multi_row(V, _level_power(V.shape[0]), True)


def _row_sum(items):
    """torch's row_sum over items (R, size, L): 4 interleaved cascades over the
    items, the tail into partial 0, then p0 + p1 + p2 + p3. Returns (R, L)."""
    R, size, L = items.shape
    si = size // 4
    body = items[:, :4 * si].reshape(R, si, 4, L)
    V = np.moveaxis(body, 1, 0).reshape(si, R * 4 * L)
    part = _cascade(V).reshape(R, 4, L)
    p0 = part[:, 0]
    for t in range(4 * si, size):
        p0 = _f32(p0 + items[:, t])
    for k in range(1, 4):
        p0 = _f32(p0 + part[:, k])
    return p0


def _sum_ilp(X):
    """Sums of the rows of X (R, n) in torch's scalar ``row_sum`` order."""
    return _row_sum(X[:, :, None])[:, 0]


def _sum_plain(X):
    """Sums of the rows of X (R, n), one cascade each (multi_row_sum)."""
    return _cascade(X.T)


def _sum_inner(X, fname):
    """vectorized_inner_sum of the rows of X (R, n), n >= the vector length."""
    R, n = X.shape
    vn, L = TORCH_CPU_WIDTHS[fname]
    nv = n // vn
    vecs = X[:, :nv * vn].reshape(R, nv, vn)
    if vn == 2 * L:          # half/bf16: load_to_float gives two 8-lane halves, summed
        items = _f32(vecs[:, :, :L] + vecs[:, :, L:])
    else:
        items = vecs
    lanes = _row_sum(items)                           # (R, L)
    acc = np.zeros(R)
    for k in range(nv * vn, n):
        acc = _f32(acc + X[:, k])
    for k in range(L):
        acc = _f32(acc + lanes[:, k])
    return acc
