"""Orders as programs: `_program` turns an order (sequential, pairwise, blocked,
or an explicit tree of term indices, with or without an initial accumulator ``c``)
into the rows (kind, dst, src) on numbered slots that the accumulation kernel
`softfloat._kernels.accum.reduce_program` runs for every output; `_tree_program`
compiles an explicit tree (iteratively, so trees of any depth compile). The op
kinds are the kernel's ``OP_*`` codes.
"""
from __future__ import annotations

import numpy as np

from .._kernels.accum import (OP_ADD_LEAF, OP_ADD_SLOT, OP_COPY, OP_INIT_C, OP_LEAF,
                              pairwise_program)


def _tree_program(tree, K: int):
    """An explicit order tree -> program. Iterative (an explicit stack, no
    recursion), so trees of any depth compile; the ops are those of a depth-first
    walk: a leaf child enters its parent's slot (``OP_LEAF`` first, ``OP_ADD_LEAF``
    after); an inner child gets the next slot number (pre-order), is compiled,
    then enters its parent's slot (``OP_COPY`` first, ``OP_ADD_SLOT`` after)."""
    ops = []
    seen = []
    counter = 0

    def is_leaf(t):
        return isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_))

    def leaf(t):
        if not 0 <= int(t) < K:
            raise ValueError(f"order tree: index {int(t)} out of range for {K} terms")
        seen.append(int(t))
        return int(t)

    def inner(node):
        if not isinstance(node, (tuple, list)) or len(node) == 0:
            raise ValueError(f"order tree: expected an index or a non-empty tuple/list, "
                             f"got {type(node).__name__} {node!r:.60}")
        return node

    if is_leaf(tree):
        ops.append((OP_LEAF, 0, leaf(tree)))
    else:
        stack = [[inner(tree), 0, 0]]          # [node, slot, index of the next child]
        while stack:
            frame = stack[-1]
            node, slot, i = frame
            if i == len(node):
                stack.pop()
                if stack:
                    parent = stack[-1]
                    ops.append((OP_COPY if parent[2] == 0 else OP_ADD_SLOT, parent[1], slot))
                    parent[2] += 1
                continue
            child = node[i]
            if is_leaf(child):
                ops.append((OP_LEAF if i == 0 else OP_ADD_LEAF, slot, leaf(child)))
                frame[2] += 1
            else:
                counter += 1
                stack.append([inner(child), counter, 0])
    if sorted(seen) != list(range(K)):
        raise ValueError(f"order tree must use every term index in range({K}) exactly once")
    return np.array(ops, np.int64).reshape(-1, 3), counter + 1


def _program(order, block, K: int, has_c: bool):
    """The program of ``order`` for K terms: (rows (kind, dst, src) as an int64
    array (n, 3), the number of slots). With an initial accumulator (``has_c``)
    only the sequential order exists: c, then each term added in k order.

    The named orders are built array-wise (pairwise by a compiled walk,
    `_kernels.accum.pairwise_program`), op for op the programs `_tree_program`
    compiles from their trees (`order_tree`; tests/test_accumulate_orders.py
    compares them)."""
    if isinstance(order, str) and order == "sequential" or has_c:
        if has_c and order != "sequential":
            raise ValueError("an initial accumulator c= needs order='sequential'")
        ops = np.zeros((K + has_c, 3), np.int64)
        ops[:, 0] = OP_ADD_LEAF
        ops[has_c:, 2] = np.arange(K)
        ops[0, 0] = OP_INIT_C if has_c else OP_LEAF
        return ops, 1
    if isinstance(order, str) and order == "pairwise":
        return pairwise_program(K)
    if isinstance(order, str) and order == "blocked":
        return _blocked_program(block, K)
    return _tree_program(order, K)


def order_tree(order, block, K: int):
    """The tree of a named order (nested tuples of term indices), as
    `_tree_program` takes it: the slow twin of the array-wise programs."""
    if order == "sequential":
        return tuple(range(K)) if K > 1 else 0
    if order == "pairwise":
        nodes = list(range(K))
        while len(nodes) > 1:
            nxt = [(nodes[i], nodes[i + 1]) for i in range(0, len(nodes) - 1, 2)]
            if len(nodes) % 2:
                nxt.append(nodes[-1])
            nodes = nxt
        return nodes[0]
    blocks = [tuple(range(s, min(K, s + block))) for s in range(0, K, block)]
    blocks = [b[0] if len(b) == 1 else b for b in blocks]
    return tuple(blocks) if len(blocks) > 1 else blocks[0]


def _blocked_program(block: int, K: int):
    """The blocked order's program: each block of more than one term summed in a
    slot of its own, in order, then added to slot 0 (a one-term block's term
    directly); one block alone, or blocks of one term, summed in slot 0."""
    if K <= block or block == 1:
        ops = np.zeros((K, 3), np.int64)
        ops[:, 0] = OP_ADD_LEAF
        ops[0, 0] = OP_LEAF
        ops[:, 2] = np.arange(K)
        return ops, 1
    full = K // block                        # blocks of `block` terms (block >= 2)
    r = K - full * block                     # the last block's terms, if any

    def rows(first_slot, nblocks, size, start):
        p = np.zeros((nblocks, size + 1, 3), np.int64)
        slots = np.arange(first_slot, first_slot + nblocks)[:, None]
        p[:, :size, 0] = OP_ADD_LEAF
        p[:, 0, 0] = OP_LEAF
        p[:, :size, 1] = slots
        p[:, :size, 2] = start + np.arange(nblocks * size).reshape(nblocks, size)
        p[:, size, 0] = OP_ADD_SLOT
        p[:, size, 2] = slots[:, 0]
        return p.reshape(-1, 3)

    ops = rows(1, full, block, 0)
    ops[block, 0] = OP_COPY                  # the first block enters slot 0
    if r == 1:
        ops = np.concatenate([ops, [[OP_ADD_LEAF, 0, K - 1]]])
    elif r > 1:
        ops = np.concatenate([ops, rows(full + 1, 1, r, full * block)])
    return ops, full + (r > 1) + 1
