"""Weight updates and the updates they lose: ``w + delta`` in float32 and how
many nonzero deltas left w unchanged (swamped: |delta| at most half an ulp of w,
or the sum rounded back to w), in one pass.

    >>> import numpy as np
    >>> from softfloat.updates import add_update
    >>> w = np.float32([1.0, 1.0, 2.0 ** 30, 0.0])
    >>> d = np.float32([1e-3, 0.0, 1.0, 0.0])
    >>> new, nonzero, lost = add_update(w, d)
    >>> new.tolist(), nonzero, lost
    ([1.0010000467300415, 1.0, 1073741824.0, 0.0], 2, 1)

A training loop's lost-update fraction is ``lost / nonzero`` summed over its
steps (nn's optimizers report it). The kernel is `_kernels.updates.add_count_chunk`;
its slow twin, NumPy's ``w + delta`` and two counts, is compared with it in
tests/test_updates.py.
"""
from __future__ import annotations

import numpy as np

from ._kernels.updates import add_count_chunk
from ._parallel import run_chunks_each

__all__ = ["add_update"]


def add_update(w, delta):
    """``(w + delta, nonzero, lost)``: the float32 sum (IEEE nearest even, as
    NumPy's float32 ``w + delta``), the number of nonzero deltas and the number of
    those that left w unchanged (``new == w``; a NaN delta or weight never counts
    as lost). ``w`` and ``delta``: float32 arrays of one shape (no broadcasting:
    an update has one delta per weight), any memory layout. Returns a new float32
    array of that shape and two ints."""
    for name, a in (("w", w), ("delta", delta)):
        if not isinstance(a, np.ndarray) or a.dtype != np.float32:
            raise TypeError(f"add_update: {name} must be a float32 numpy array, got "
                            f"{type(a).__name__} {getattr(a, 'dtype', '')}")
    if w.shape != delta.shape:
        raise ValueError(f"add_update: w and delta must have one shape, got {w.shape} and "
                         f"{delta.shape}")
    wf = np.ascontiguousarray(w).reshape(-1)
    df = np.ascontiguousarray(delta).reshape(-1)
    new = np.empty(wf.size, np.float32)
    parts = [r for _, r in run_chunks_each(add_count_chunk, wf.size, wf, df, new)]
    nz = sum(int(r) >> 32 for r in parts)
    lost = sum(int(r) & 0xFFFFFFFF for r in parts)
    return new.reshape(w.shape), nz, lost
