"""The summation trees of torch's CPU sum, built symbolically (nested tuples of
element indices, the explicit-tree format of `softfloat.Accumulator(order=...)` and
of `softfloat.probe`): `cascade_order` for a contiguous 1-D sum on one thread in
the ``inner``, ``ilp`` and ``plain`` orders of `cascade.py`. They let the probe's
trees be compared with the model and the order be drawn or evaluated by
`softfloat.accumulate`, an implementation independent of the model's."""
from __future__ import annotations

from ...formats import get_format
from .cascade import TORCH_CPU_WIDTHS, _level_power


def cascade_order(n: int, kind: str = "inner", fmt="fp16"):
    """The summation tree (nested tuples of indices) that the model uses for a
    contiguous 1-D sum of ``n`` elements on one thread: ``kind`` ``"inner"``
    (the vectorised path, n >= the vector length), ``"ilp"`` or ``"plain"``.
    For the probe's cross-check and for drawing; computed symbolically."""
    fname = get_format(fmt).name
    if kind == "ilp":
        return _tree_row_sum([[i] for i in range(n)], 1)
    if kind == "plain":
        return _tree_cascade([i for i in range(n)])
    vn, L = TORCH_CPU_WIDTHS[fname]
    nv = n // vn
    items = []
    for v in range(nv):
        lanes = []
        for i in range(L):
            if vn == 2 * L:
                lanes.append((v * vn + i, v * vn + i + L))
            else:
                lanes.append(v * vn + i)
        items.append(lanes)
    lanes = _tree_row_sum(items, L) if nv else [None] * L
    acc = None
    for k in list(range(nv * vn, n)):
        acc = k if acc is None else (acc, k)
    for t in lanes:
        if t is None:
            continue
        acc = t if acc is None else (acc, t)
    return acc


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return (a, b)


def _tree_cascade(terms):
    """Symbolic multi_row_sum over a list of term trees."""
    size = len(terms)
    lp = _level_power(size) if size else 4
    step = 1 << lp
    acc = [None] * 4
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] = _add(acc[0], terms[i])
            i += 1
        for j in range(1, 4):
            acc[j] = _add(acc[j], acc[j - 1])
            acc[j - 1] = None
            if i & ((step - 1) << (j * lp)):
                break
    while i < size:
        acc[0] = _add(acc[0], terms[i])
        i += 1
    for j in range(1, 4):
        acc[0] = _add(acc[0], acc[j])
    return acc[0]


def _tree_row_sum(items, L):
    """Symbolic row_sum over items (a list of per-item lane lists)."""
    size = len(items)
    si = size // 4
    parts = []
    for k in range(4):
        parts.append([_tree_cascade([items[4 * i + k][lane] for i in range(si)])
                      for lane in range(L)])
    p0 = parts[0]
    for t in range(4 * si, size):
        p0 = [_add(p0[lane], items[t][lane]) for lane in range(L)]
    for k in range(1, 4):
        p0 = [_add(p0[lane], parts[k][lane]) for lane in range(L)]
    return p0[0] if L == 1 else p0
