"""Where the blocks of a block-scaled array lie (softfloat.mx): the block shape
and the blocked axes checked and normalised, the array viewed as (B, R, C) with
the blocked axes last and moved back, the shape of the scales, and the NVFP4
per-tensor scale checked and taken apart.
"""
import math

import numpy as np


def blocks_and_axes(ndim, block, axis, bf):
    """((br, bc), (axis_r, axis_c) or (None, axis_c)) with normalised axes."""
    if block is None:
        block = bf.block
    if isinstance(block, (tuple, list)):
        if len(block) != 2:
            raise ValueError(f"block: expected an int or a pair (rows, cols), got {block!r}")
        br, bc = block
        if axis == -1 or axis is None:
            axis = (-2, -1)
        if not (isinstance(axis, (tuple, list)) and len(axis) == 2):
            raise ValueError(f"axis: 2-D blocks need a pair of axes, got {axis!r}")
        axes = tuple(axis)
    else:
        br, bc = 1, block
        if isinstance(axis, (tuple, list)):
            raise ValueError(f"axis: 1-D blocks take one axis, got {axis!r}")
        if axis is None:
            raise TypeError("axis: 1-D blocks need the blocked axis as an int (a block "
                            "never spans axes), got None")
        axes = (None, axis)
    for v in (br, bc):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ValueError(f"block: sizes must be positive integers, got {block!r}")
    norm = []
    for a in axes:
        if a is None:
            norm.append(None)
            continue
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"axis: expected an int, got {a!r}")
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of range for an array of {ndim} dimensions")
        norm.append(int(a) % ndim)
    if norm[0] is not None and norm[0] == norm[1]:
        raise ValueError(f"axis: the two blocked axes must differ, got {axes!r}")
    return (int(br), int(bc)), tuple(norm)


def to_3d(a, axes):
    """Move the blocked axes last and view as (B, R, C) (a contiguous copy if needed)."""
    ar, ac = axes
    if ar is None:
        moved = np.moveaxis(a, ac, -1)
        R, C = 1, moved.shape[-1]
        lead = moved.shape[:-1]
        B = int(np.prod(lead)) if lead else 1
        if moved.ndim == 1:
            lead = ()
        return np.ascontiguousarray(moved).reshape(B, R, C), moved.shape
    moved = np.moveaxis(a, (ar, ac), (-2, -1))
    R, C = moved.shape[-2], moved.shape[-1]
    B = int(np.prod(moved.shape[:-2])) if moved.ndim > 2 else 1
    return np.ascontiguousarray(moved).reshape(B, R, C), moved.shape


def from_moved(arr, moved_shape, axes):
    arr = arr.reshape(moved_shape)
    ar, ac = axes
    if ar is None:
        return np.moveaxis(arr, -1, ac)
    return np.moveaxis(arr, (-2, -1), (ar, ac))


def scale_shape(moved_shape, axes, br, bc):
    s = list(moved_shape)
    s[-1] = -(-s[-1] // bc)
    if axes[0] is not None:
        s[-2] = -(-s[-2] // br)
    return tuple(s)


def tensor_scale_parts(ts):
    """An fp32 per-tensor scale as (exp, sig) with sig odd; checks it."""
    if ts is None:
        return 0, 1, 1.0
    if isinstance(ts, (bool, np.bool_)) or not isinstance(ts, (float, np.floating, int, np.integer)):
        if isinstance(ts, np.ndarray) and ts.ndim == 0 and ts.dtype.kind == "f":
            ts = ts[()]
        else:
            raise TypeError(f"tensor_scale: expected a positive float (an fp32 value), got {ts!r}")
    t = float(ts)
    if not (math.isfinite(t) and t > 0) or float(np.float32(t)) != t:
        raise ValueError(f"tensor_scale: expected a positive finite float32 value, got {ts!r} "
                         f"(round it with np.float32 first)")
    m, e = math.frexp(t)
    sig = int(m * (1 << 24))
    e = e - 24
    while sig % 2 == 0:
        sig //= 2
        e += 1
    return e, sig, t
