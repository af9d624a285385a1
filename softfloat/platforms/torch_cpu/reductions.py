"""torch 2.13 CPU ``sum``, ``mean`` and ``cumsum`` of fp16, bf16 and fp32
encodings: the reduction loop (``serial_for_each`` over the coalesced iteration
space, each tile summed in the order `cascade.py` gives it and stored in the
dtype), the two-pass split of a single output over threads (``parallel_reduce``),
the float32 detour of strided half/bfloat16 sums and of ``mean``, and ``cumsum``'s
sequential running sum."""
from __future__ import annotations

import numpy as np

from ... import _validate as V
from ...conversions import from_bits
from ...formats import BF16, FP16, FP32, get_format
from .cascade import TORCH_CPU_WIDTHS, _sum_ilp, _sum_inner, _sum_plain
from .layout import _axes, _dense, _iter_dims, _pos, _reduced_dims, _values_and_strides
from .values import _f32, _round_out, _store

#: torch's TensorIterator grain: below this many elements a reduction runs on one thread
GRAIN_SIZE = 32768
_OUTER_BLOCK = 32          # columns per multi_row_sum block in vectorized_outer_sum (4 x 8)
_SUPPORTED_FORMATS = (FP16, BF16, FP32)      # by value: a custom format named "fp16" is not


def _check(x, fmt, what):
    f = get_format(fmt)
    if f not in _SUPPORTED_FORMATS:
        raise ValueError(f"{what}: the torch CPU model covers fp16, bf16 and fp32, not {f!r}")
    b = V.as_bits(x, f)
    return f, b


def _float_sum(vals, strides, axes, fname, threads, out_f, lowp_out):
    """The cascade_sum of float values ``vals`` (logical array) laid out with
    element ``strides``, over ``axes``; returns the accumulated float32 values
    rounded into ``out_f`` encodings (the output dtype), shaped like the kept axes."""
    shape = vals.shape
    red = [k in axes for k in range(len(shape))]
    keep_shape = tuple(s for k, s in enumerate(shape) if k not in axes)
    nout = int(np.prod(keep_shape, dtype=np.int64))
    out = np.zeros(nout, out_f.dtype)               # +0 in the dtype
    if vals.size == 0:
        return out.reshape(keep_shape)
    # address every element by its memory offset (strides may be negative)
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    size = sum(abs(s) * (n - 1) for n, s in zip(shape, strides)) + 1
    mem = np.zeros(size)
    off = np.full(shape, -lo, np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        sh = [1] * len(shape)
        sh[k] = n
        off = off + (np.arange(n, dtype=np.int64) * s).reshape(sh)
    mem[off] = vals
    # output index of every kept position, in the output's logical order
    kshape = [s if not r else 1 for s, r in zip(shape, red)]
    oidx = np.arange(nout, dtype=np.int64).reshape([s for s, r in zip(shape, red) if not r] or [1])
    oidx = oidx.reshape(kshape)
    ostr = []
    for k in range(len(shape)):
        if red[k] or shape[k] == 1:
            ostr.append(0)
        else:
            ostr.append(int(np.prod([shape[j] for j in range(k + 1, len(shape)) if not red[j]],
                                    dtype=np.int64)))
    dims = _iter_dims(shape, strides, ostr, red)
    total = int(np.prod(shape, dtype=np.int64))
    if nout == 1 and threads > 1 and total >= GRAIN_SIZE:
        return _two_pass(mem, -lo, dims, total, threads, out_f, lowp_out).reshape(keep_shape)
    out = _loop(mem, -lo, dims, 0, total, out, out_f)
    return out.reshape(keep_shape)


def _loop(mem, base, dims, begin, end, out, out_f):
    """serial_for_each over [begin, end) of the iteration space: loop2d calls on
    (partial row, full rows, partial row) pieces, each through cascade_sum's loop."""
    n0 = dims[0][0]
    lin = begin
    while lin < end:
        c0 = lin % n0
        step0 = min(n0 - c0, end - lin)
        step1 = 1
        if c0 == 0 and len(dims) > 1:
            rest = dims[1][0] - (lin // n0) % dims[1][0]
            step1 = max(1, min(rest, (end - lin) // n0))
        out = _loop2d(mem, base, dims, lin, step0, step1, out, out_f)
        lin += step0 * step1
    return out


def _loop2d(mem, base, dims, lin, size0, size1, out, out_f):
    """One call of cascade_sum's loop on a (size0, size1) tile starting at ``lin``."""
    fname = out_f.name if out_f.name in TORCH_CPU_WIDTHS else "fp32"
    st0, o0 = dims[0][1], dims[0][2]
    if len(dims) > 1:
        st1, o1 = dims[1][1], dims[1][2]
    else:
        st1, o1 = 0, 0
    mo, oo = _pos(dims, np.array([lin], np.int64))
    m0, q0 = int(mo[0]) + base, int(oo[0])
    if size1 == 1:
        st1, o1 = 0, 0
    if o0 != 0 and o1 == 0:
        st0, st1 = st1, st0
        o0, o1 = o1, o0
        size0, size1 = size1, size0
    if o0 != 0 and o1 != 0:              # not a reduction: out = out + x, elementwise
        idx = m0 + np.arange(size1)[:, None] * st1 + np.arange(size0)[None, :] * st0
        oi = q0 + np.arange(size1)[:, None] * o1 + np.arange(size0)[None, :] * o0
        cur = from_bits(out[oi], out_f)
        out[oi] = _round_out(_f32(cur + mem[idx]), out_f)   # float op, then dtype
        return out
    X = mem[m0 + np.arange(size1)[:, None] * st1 + np.arange(size0)[None, :] * st0]
    oidx = q0 + np.arange(size1) * o1
    vn, L = TORCH_CPU_WIDTHS[fname]
    if st0 == 1 and size0 >= vn:
        acc = _sum_inner(X, fname)
    elif st1 == 1 and size1 >= vn:
        # vectorized_outer_sum: blocks of 32 columns take the plain cascade
        nb = (size1 // _OUTER_BLOCK) * _OUTER_BLOCK
        acc = np.empty(size1)
        if nb:
            acc[:nb] = _sum_plain(X[:nb])
        if nb < size1:
            acc[nb:] = _sum_ilp(X[nb:])
    elif st0 < st1:
        acc = _sum_ilp(X)
    else:
        nb = (size1 // 4) * 4
        acc = np.empty(size1)
        if nb:
            acc[:nb] = _sum_plain(X[:nb])
        if nb < size1:
            acc[nb:] = _sum_ilp(X[nb:])
    # stores, in row order (rows sharing an output accumulate into it one by one)
    if o1 == 0:
        for j in range(size1):
            out[q0] = _store(out[q0:q0 + 1], acc[j:j + 1], out_f)[0]
    else:
        out[oidx] = _store(out[oidx], acc, out_f)
    return out


def _two_pass(mem, base, dims, total, threads, out_f, lowp_out):
    """parallel_reduce's two-pass reduction for one output: the range split in
    ``threads`` pieces (at::parallel_for with GRAIN_SIZE), each summed into its
    own dtype-typed buffer; then the buffer (``threads`` entries, zeros for
    idle threads) summed into the output by the same kernel."""
    nthr = min(threads, -(-total // GRAIN_SIZE))
    chunk = -(-total // nthr)
    buf = np.zeros(threads, out_f.dtype)
    for t in range(nthr):
        b, e = t * chunk, min(total, (t + 1) * chunk)
        if b >= e:
            continue
        o = np.zeros(1, out_f.dtype)
        buf[t] = _loop(mem, base, dims, b, e, o, out_f)[0]
    bv = from_bits(buf, out_f)
    out = np.zeros(1, out_f.dtype)
    return _loop(bv, 0, [(threads, 1, 0)], 0, threads, out, out_f)


def torch_cpu_sum(x, fmt, axis=None, *, threads=1):
    """torch.sum(x, dim=axis) of encodings ``x`` of ``fmt`` (fp16, bf16, fp32) on
    torch 2.13 CPU with ``threads`` threads (torch.set_num_threads), following
    the memory layout of ``x`` (a NumPy view: transposes and slices are laid out
    as torch's ``.t()`` and slicing would lay them out). ``axis``: None, an int
    or a tuple of ints. Returns encodings of ``fmt``."""
    f, b = _check(x, fmt, "torch_cpu_sum")
    threads = _threads(threads)
    axes = _axes(axis, b.ndim)
    vals, strides = _values_and_strides(b, f)
    if b.ndim == 0:
        return _round_out(_f32(0.0 + vals), f).reshape(())
    if f.name != "fp32" and _reduced_dims(b.shape, strides, axes) >= 2:
        # several reduced dimensions that do not coalesce: torch sums a float32
        # copy (found by the probe: no rounding to the dtype between rows, and
        # the float32 kernel's order on the logical element order)
        f32 = get_format("fp32")
        if not _dense(b.shape, strides):
            strides = list(np.array(np.ascontiguousarray(vals).strides) // 8)
        s = from_bits(_float_sum(vals, strides, axes, "fp32", int(threads), f32, False), f32)
        return _round_out(s, f)
    return _float_sum(vals, strides, axes, f.name, int(threads), f, True)

#: the most threads the models take: torch's reduction keeps one buffer entry per
#: thread (zeros for idle ones) and sums the buffer, so the model's memory and time
#: grow with ``threads``; real thread pools are far smaller (one per core)
MAX_THREADS = 1 << 12


def _threads(threads) -> int:
    """A checked thread count: an int in [1, MAX_THREADS] (bools refused)."""
    if (not isinstance(threads, (int, np.integer)) or isinstance(threads, (bool, np.bool_))
            or not 1 <= threads <= MAX_THREADS):
        raise ValueError(f"threads must be an int in [1, {MAX_THREADS}] (torch's thread "
                         f"count, torch.get_num_threads()), got {threads!r}")
    return int(threads)


def torch_cpu_mean(x, fmt, axis=None, *, threads=1):
    """torch.mean(x, dim=axis) on torch 2.13 CPU: half/bfloat16 input converted
    to float32 (strides kept if dense, else contiguous), summed by the float32
    kernel, divided by N in float32, rounded once to ``fmt``."""
    f, b = _check(x, fmt, "torch_cpu_mean")
    threads = _threads(threads)
    axes = _axes(axis, b.ndim)
    vals, strides = _values_and_strides(b, f)
    f32 = get_format("fp32")
    if f.name != "fp32" and not _dense(b.shape, strides):
        strides = list(np.array(np.ascontiguousarray(vals).strides) // 8)
    n = int(np.prod([b.shape[a] for a in axes], dtype=np.int64)) if b.ndim else 1
    if b.ndim == 0:
        s = _f32(0.0 + vals)
    else:
        s = from_bits(_float_sum(vals, strides, axes, "fp32", int(threads), f32, False), f32)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = _f32(s / np.float64(np.float32(n)))
    r = _round_out(m, f)
    return r.reshape(()) if b.ndim == 0 else r


def torch_cpu_cumsum(x, fmt, axis):
    """torch.cumsum(x, dim=axis) on torch 2.13 CPU: a sequential running sum in
    float (half/bfloat16) or double (float32), each output rounded to ``fmt``."""
    f, b = _check(x, fmt, "torch_cpu_cumsum")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"cumsum needs an int axis, got {axis!r}")
    if b.ndim == 0:
        return _round_out(from_bits(b, f), f)
    ax = _axes(axis, b.ndim)[0]
    v = np.moveaxis(from_bits(b, f), ax, -1).copy()
    # the running sum starts at +0: 0 + (-0) = +0 (then a sequential float sum)
    v[..., :1] = v[..., :1] + 0.0
    if f.name == "fp32":
        c = np.cumsum(v, axis=-1)                       # float64, sequential
    else:
        c = np.cumsum(v.astype(np.float32), axis=-1, dtype=np.float32).astype(np.float64)
    return np.moveaxis(_round_out(c, f), -1, ax)
