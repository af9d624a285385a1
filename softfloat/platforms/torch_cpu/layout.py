"""What torch's TensorIterator makes of a tensor's layout, for the reduction
models: the checked reduction axes, the element strides of a NumPy view, the
iteration dimensions after reordering and coalescing (reduced dimensions first,
sorted by stride; contiguous ones merged), how many reduced dimensions remain,
and whether a layout is dense (a permutation of a contiguous one)."""
from __future__ import annotations

import numpy as np

from ...conversions import from_bits


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis = (int(axis),)
    if not isinstance(axis, tuple) or not all(isinstance(a, (int, np.integer)) for a in axis):
        raise TypeError(f"axis must be None, an int or a tuple of ints, got {axis!r}")
    out = []
    for a in axis:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(sorted(out))


def _values_and_strides(b, f):
    """float64 values of the encodings in ``b`` on the same memory layout:
    (vals flat over the underlying span, element strides, index array)."""
    item = b.itemsize
    strides = [s // item for s in b.strides]
    if any(st <= 0 for st, n in zip(strides, b.shape) if n > 1):
        raise ValueError("torch tensors have positive strides: pass an array whose strides are "
                         "positive (np.ascontiguousarray for a reversed or broadcast view)")
    # logical order (np.ascontiguousarray makes a 0-d array 1-d: shape kept)
    vals = from_bits(np.ascontiguousarray(b).reshape(b.shape), f)
    return vals, strides


def _iter_dims(shape, strides, ostr, red):
    """TensorIterator's dims after reordering and coalescing: list of
    (size, in_stride, out_stride), fastest first."""
    ds = [(int(n), int(s), int(o), r) for n, s, o, r in zip(shape, strides, ostr, red) if n != 1]

    def key(d):
        # reduced dims first; then by output stride; then by input stride
        return (0 if d[3] else 1, d[2], abs(d[1]), d[0])

    ds.sort(key=key)
    out = []
    for d in ds:
        if out:
            p = out[-1]
            if p[3] == d[3] and p[0] * p[1] == d[1] and p[0] * p[2] == d[2]:
                out[-1] = (p[0] * d[0], p[1], p[2], p[3])
                continue
        out.append(d)
    if not out:
        out = [(1, 0, 0, True)]
    return [(d[0], d[1], d[2]) for d in out]


def _pos(dims, lin):
    """Memory and output offsets of linear iteration index ``lin`` (array)."""
    mo = np.zeros_like(lin)
    oo = np.zeros_like(lin)
    rem = lin.copy()
    for n, s, o in dims:
        c = rem % n
        rem = rem // n
        mo = mo + c * s
        oo = oo + c * o
    return mo, oo


def _reduced_dims(shape, strides, axes) -> int:
    """How many reduced dimensions TensorIterator keeps after coalescing."""
    red = [k in axes for k in range(len(shape))]
    ostr = [0] * len(shape)
    keep = [k for k in range(len(shape)) if not red[k] and shape[k] != 1]
    for pos, k in enumerate(keep):
        ostr[k] = int(np.prod([shape[j] for j in keep[pos + 1:]], dtype=np.int64))
    return sum(1 for d in _iter_dims(shape, strides, ostr, red) if d[2] == 0 and d[0] > 1)


def _dense(shape, strides) -> bool:
    """A non-overlapping, dense layout (a permutation of a contiguous one)."""
    ds = sorted([(abs(s), n) for n, s in zip(shape, strides) if n != 1])
    exp = 1
    for s, n in ds:
        if s != exp:
            return False
        exp *= n
    return all(s >= 0 for s in strides)
