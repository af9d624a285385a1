"""A low-precision array: encodings and a format, rounded after every operation.

``softfloat.array(x, "bf16")`` rounds float values into bf16 (under the current
`Context`) and returns an `LPArray`. It takes part in NumPy:

* ufuncs (``__array_ufunc__``): add, subtract, multiply, divide, sqrt, square,
  negative, positive, absolute, maximum, minimum, fmax, fmin, copysign, the
  comparisons (bool arrays out), isnan, isinf, isfinite, signbit, matmul; each
  result is rounded once into the format under the context (rounding mode,
  subnormals, overflow, NaN policy; flags go to the context's sticky flags).
  ``np.sqrt(x * x + y * y)`` rounds after each step. NumPy has no fma ufunc:
  use `fused_multiply_add` (or the ``.fma`` method).
* functions (``__array_function__``): sum, mean, dot, vdot, inner, matmul, outer,
  where, concatenate, stack, reshape, transpose, swapaxes, squeeze, expand_dims,
  atleast_1d/2d, broadcast_to, copy, zeros_like, ones_like, full_like, empty_like,
  diag, triu, tril, amax/max, amin/min, argmax, argmin, shape, ndim, size,
  linalg.norm (2-norm), array_equal; others raise TypeError.
* sums and products accumulate with the array's accumulation model ``acc`` (see
  `softfloat.accumulate`; default: the array's format, sequential order, each
  addition rounded), e.g. ``softfloat.array(x, "fp16", acc="fp32")`` or
  ``acc="h100"``. The result of an operation takes the model of its first array
  operand. ``sum``/``mean``/``matmul``/``dot`` return the array's format (the
  accumulator's result rounded once more if the accumulator is wider).

Operands: arrays of one format only (mixed formats raise TypeError: convert with
``.astype(fmt)``); Python and NumPy float scalars are rounded into the format
first (as NumPy treats scalars), each with one rounding, directly from its exact
value (a Python int or an ``np.longdouble`` is not rounded to float64 first);
NumPy arrays raise TypeError (wrap them with `array`).
``np.mean`` is NumPy's definition, sum / n: the sum accumulated by the array's
model ``acc`` (kept in the accumulator's format, not rounded back), then divided by
the count n (an exact integer, never rounded into the array's format) with one
rounding into the array's format. ``copy.copy`` and ``copy.deepcopy`` copy the
encodings (never a shared buffer). ``np.asarray(a)`` gives the exact float64 values, ``a.bits`` the
encodings.
"""
from __future__ import annotations

import copy as _copy

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import _validate as V
from . import accumulate as _acc
from .accumulate.models import resolve_model as _acc_model
from . import arith as _ar
from .conversions import convert, from_bits, to_bits
from .formats import Format, get_format

__all__ = ["LPArray", "array", "fused_multiply_add"]


def array(x, fmt, *, acc=None, rounding=None, **policies) -> "LPArray":
    """Round ``x`` (float values, an LPArray or nested lists of floats) into ``fmt``.

    Always a new array (an `LPArray` of the same format is copied); an `LPArray`
    of another format is converted (rounded once); ``acc`` sets the accumulation
    model of sums and products (default: ``fmt`` itself). Integers, bools, None,
    strings and masked arrays raise TypeError, as in `softfloat.to_bits`.
    """
    f = get_format(fmt)
    if isinstance(x, LPArray):
        # A new array, as numpy.array: the same format is copied, never aliased.
        bits = (x._bits.copy() if x._fmt == f
                else convert(x._bits, x._fmt, f, rounding, **policies))
        return LPArray(bits, f, acc if acc is not None else (x._acc if x._fmt == f else None))
    # Values follow to_bits' rule: float arrays, float scalars and lists of floats;
    # ints, bools, None, strings, masked and object arrays are refused (TypeError).
    return LPArray(to_bits(x, f, rounding, **policies), f, acc)


def _wrap_like(a: "LPArray", bits) -> "LPArray":
    return LPArray(np.asarray(bits), a._fmt, a._acc)


class LPArray(np.lib.mixins.NDArrayOperatorsMixin):
    """Encodings of one format; NumPy operations on it round after each step.

    Build one with `softfloat.array`. ``LPArray(bits, fmt, acc=None)`` wraps
    existing encodings (the storage dtype of ``fmt``) without copying.
    """

    __array_priority__ = 20

    def __init__(self, bits, fmt, acc=None):
        f = get_format(fmt)
        self._bits = V.as_bits(bits, f, "bits")
        self._fmt = f
        if acc is not None:                  # a bad model fails here, not at the first sum
            _acc_model(acc, f, "sequential", None, None, None, False, None)
        self._acc = acc

    # ---- basic attributes --------------------------------------------------
    @property
    def bits(self) -> np.ndarray:
        """The encodings (a view: writing to it changes the array)."""
        return self._bits

    @property
    def format(self) -> Format:
        return self._fmt

    @property
    def acc(self):
        """The accumulation model used by sum, mean, dot and matmul."""
        return self._acc

    shape = property(lambda self: self._bits.shape)
    ndim = property(lambda self: self._bits.ndim)
    size = property(lambda self: self._bits.size)
    T = property(lambda self: _wrap_like(self, self._bits.T))

    def __len__(self):
        return len(self._bits)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def values(self) -> np.ndarray:
        """Exact float64 values."""
        return from_bits(self._bits, self._fmt)

    def __array__(self, dtype=None, copy=None):
        v = self.values()
        return v if dtype is None else v.astype(dtype)

    def __float__(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays convert to a Python float")
        return float(self.values().reshape(-1)[0])

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of an array with more than one element is "
                             "ambiguous")
        return bool(self.values().reshape(-1)[0])

    def __repr__(self):
        body = np.array2string(self.values(), separator=", ", prefix="array(")
        acc = "" if self._acc is None else f", acc={self._acc!r}"
        return f"array({body}, {self._fmt.name!r}{acc})"

    def __str__(self):
        return str(self.values())

    def __getitem__(self, idx):
        return _wrap_like(self, self._bits[_index(idx)])

    def __setitem__(self, idx, value):
        self._bits[_index(idx)] = self._coerce(value)

    def _coerce(self, value):
        """Encodings of this array's format for an operand (scalars rounded)."""
        if isinstance(value, LPArray):
            if value._fmt != self._fmt:
                raise TypeError(f"mixed formats: {self._fmt.name} and {value._fmt.name}; "
                                f"convert explicitly with .astype({self._fmt.name!r})")
            return value._bits
        if _is_scalar(value):
            return to_bits(_odd53(value), self._fmt)
        raise TypeError(f"cannot mix an LPArray ({self._fmt.name}) with "
                        f"{type(value).__name__}; wrap NumPy arrays with "
                        f"softfloat.array(x, {self._fmt.name!r})")

    # ---- conversions and shape ---------------------------------------------
    def astype(self, fmt, rounding=None, **policies):
        """Convert to another format (rounded once), or to a host float dtype
        (``np.float64`` exact; ``np.float32``/``np.float16`` through `from_bits`)."""
        if isinstance(fmt, (type, np.dtype)) and np.dtype(fmt).kind == "f":
            return self.values().astype(fmt)
        return array(self, fmt, rounding=rounding, **policies)

    def copy(self):
        return _wrap_like(self, self._bits.copy())

    def __copy__(self):
        return LPArray(self._bits.copy(), self._fmt, self._acc)

    def __deepcopy__(self, memo):
        return LPArray(self._bits.copy(), self._fmt, _copy.deepcopy(self._acc, memo))

    def reshape(self, *shape, **kw):
        return _wrap_like(self, self._bits.reshape(*shape, **kw))

    def transpose(self, *axes):
        return _wrap_like(self, self._bits.transpose(*axes))

    def ravel(self):
        return _wrap_like(self, self._bits.ravel())

    def flatten(self):
        return _wrap_like(self, self._bits.flatten())

    def with_acc(self, acc):
        """The same encodings with another accumulation model."""
        return LPArray(self._bits, self._fmt, acc)

    # ---- reductions ---------------------------------------------------------
    def sum(self, axis=None, **kw):
        return _sum(self, axis, **kw)

    def mean(self, axis=None, **kw):
        return _mean(self, axis, **kw)

    def max(self, axis=None):
        return _extreme(self, axis, np.argmax)

    def min(self, axis=None):
        return _extreme(self, axis, np.argmin)

    def dot(self, other):
        return _matmul(self, other)

    def fma(self, b, c):
        """self * b + c with one rounding."""
        return fused_multiply_add(self, b, c)

    # ---- NumPy protocols ----------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # Every keyword is honoured or refused with a TypeError: none is ignored.
        out = kwargs.pop("out", None)
        _no_extra(f"np.{ufunc.__name__}", where=kwargs.pop("where", True))
        if method == "reduce" and ufunc is np.add:
            if not isinstance(inputs[0], LPArray):
                return NotImplemented
            axis = kwargs.pop("axis", 0)
            r = _sum(inputs[0], axis, **kwargs)
        elif method == "__call__" and ufunc in _UFUNCS:
            _no_extra(f"np.{ufunc.__name__}", **kwargs)
            first = next(x for x in inputs if isinstance(x, LPArray))
            ops = [first._coerce(x) for x in inputs]
            r = _UFUNCS[ufunc](first, *ops)
        else:
            return NotImplemented
        if out is not None:
            (o,) = out
            if not isinstance(o, LPArray) or not isinstance(r, LPArray):
                raise TypeError(f"np.{ufunc.__name__}: out= must be an LPArray of the "
                                f"result's format, got {type(o).__name__}")
            if o.shape != r.shape:
                raise ValueError(f"np.{ufunc.__name__}: out= has shape {o.shape}, the "
                                 f"result {r.shape}")
            o._bits[...] = o._coerce(r)
            return o
        return r

    def __array_function__(self, func, types, args, kwargs):
        if func not in _FUNCS:
            return NotImplemented
        if not all(issubclass(t, (LPArray, np.ndarray)) for t in types):
            return NotImplemented
        return _FUNCS[func](*args, **kwargs)


_DEFAULTS = {"keepdims": False, "where": True, "casting": "same_kind", "order": "K",
             "subok": True}


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _no_extra(what: str, /, **kw) -> None:
    """Refuse keywords with a non-default value (TypeError naming them): an
    LPArray operation never ignores an argument."""
    for k, v in kw.items():
        if v is None or v is np._NoValue:
            continue
        if k in _DEFAULTS and isinstance(v, (bool, str)) and v == _DEFAULTS[k]:
            continue
        raise TypeError(f"{what}: {k}={_short(v)} is not supported for LPArrays")


def _axes(a, axis, where: str) -> tuple:
    """Normalised, sorted axes (numpy's AxisError when out of range)."""
    if axis is None:
        return tuple(range(a.ndim))
    if isinstance(axis, (bool, np.bool_)) or not isinstance(
            axis, (int, np.integer, tuple)):
        raise TypeError(f"{where}: axis must be an int, a tuple of ints or None, "
                        f"got {type(axis).__name__}")
    return tuple(sorted(normalize_axis_tuple(axis, a.ndim)))


def _is_scalar(v) -> bool:
    return (isinstance(v, (float, int, np.floating, np.integer))
            and not isinstance(v, (bool, np.bool_)))


_F64_MAX_ODD = np.float64(np.finfo(np.float64).max)     # its last significand bit is 1


def _odd53(v) -> np.float64:
    """A real scalar (Python int or float, any NumPy integer or float, longdouble
    included) as a float64 rounded to odd: the exact value when it has at most 53
    significant bits, else its truncation with the last bit set (beyond float64's
    range: the largest float64, whose last bit is set). Rounding that into a target
    of p <= 51 bits (every softfloat target: at most 24) in any mode gives the
    correctly rounded value of the scalar (Boldo and Melquiond 2008): one rounding,
    as if from the exact value."""
    if isinstance(v, (float, np.float64, np.float32, np.float16)):
        return np.float64(v)                        # exact
    if isinstance(v, (int, np.integer)):
        v = int(v)
        if -(1 << 53) <= v <= 1 << 53:
            return np.float64(v)
        try:
            hi = np.float64(float(v))               # round to nearest (exact integer math)
        except OverflowError:
            return np.copysign(_F64_MAX_ODD, -1.0 if v < 0 else 1.0)
        if not np.isfinite(hi):                     # pragma: no cover (float() raises)
            return np.copysign(_F64_MAX_ODD, -1.0 if v < 0 else 1.0)
        lo = v - int(hi)
    elif isinstance(v, np.floating):                # longdouble (wider than float64)
        if not np.isfinite(v):
            return np.float64(v)
        with np.errstate(over="ignore"):
            hi = np.float64(v)
        if not np.isfinite(hi):
            return np.copysign(_F64_MAX_ODD, np.float64(np.sign(v)))
        lo = v - type(v)(hi)                        # exact in the wider type
    else:                                           # pragma: no cover (callers check)
        raise TypeError(f"expected a real scalar, got {type(v).__name__}")
    if lo == 0 or int(hi.view(np.int64)) & 1:
        return hi                                   # exact, or the odd neighbour already
    return np.nextafter(hi, np.inf if lo > 0 else -np.inf)


def _index(idx):
    """Index arrays given as LPArrays are not allowed; bool/int numpy arrays are."""
    if isinstance(idx, LPArray):
        raise TypeError("index with integers, slices or bool arrays, not an LPArray")
    return idx


def _first(*xs) -> LPArray:
    for x in xs:
        if isinstance(x, LPArray):
            return x
        if isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, LPArray):
                    return y
    raise TypeError("expected an LPArray operand")


# ---- elementwise ---------------------------------------------------------------
def _binop(fn):
    return lambda a, x, y: _wrap_like(a, fn(x, y, a._fmt))


def _unop(fn):
    return lambda a, x: _wrap_like(a, fn(x, a._fmt))


def _cmp(fn):
    return lambda a, x, y: fn(x, y, a._fmt)


def _on_values(fn):
    return lambda a, x: fn(from_bits(x, a._fmt))


_UFUNCS = {
    np.add: _binop(_ar.add), np.subtract: _binop(_ar.sub), np.multiply: _binop(_ar.mul),
    np.true_divide: _binop(_ar.div),
    np.sqrt: _unop(_ar.sqrt), np.negative: _unop(_ar.neg), np.absolute: _unop(_ar.abs),
    np.positive: lambda a, x: _wrap_like(a, x.copy()),
    np.square: lambda a, x: _wrap_like(a, _ar.mul(x, x, a._fmt)),
    np.maximum: _binop(_ar.maximum), np.minimum: _binop(_ar.minimum),
    np.fmax: _binop(_ar.maximum_number), np.fmin: _binop(_ar.minimum_number),
    np.copysign: _binop(_ar.copysign),
    np.equal: _cmp(_ar.eq), np.not_equal: _cmp(_ar.ne), np.less: _cmp(_ar.lt),
    np.less_equal: _cmp(_ar.le), np.greater: _cmp(_ar.gt), np.greater_equal: _cmp(_ar.ge),
    np.isnan: _on_values(np.isnan), np.isinf: _on_values(np.isinf),
    np.isfinite: _on_values(np.isfinite), np.signbit: _on_values(np.signbit),
    np.matmul: lambda a, x, y: _matmul(_wrap_like(a, x), _wrap_like(a, y)),
}


def fused_multiply_add(a, b, c):
    """a * b + c with one rounding (IEEE fusedMultiplyAdd) on LPArrays of one
    format (scalars rounded into it first)."""
    f = _first(a, b, c)
    return _wrap_like(f, _ar.fma(f._coerce(a), f._coerce(b), f._coerce(c), f._fmt))


# ---- accumulation ----------------------------------------------------------------
def _back(a: LPArray, bits, model_fmt) -> LPArray:
    """Accumulator encodings -> the array's format (rounded once if wider)."""
    if model_fmt != a._fmt:
        bits = convert(bits, model_fmt, a._fmt)
    return _wrap_like(a, bits)


def _model_fmt(a: LPArray):
    return _acc_model(a._acc, a._fmt, "sequential", None, None, None, False, None).fmt


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
         where=np._NoValue, **kw):
    """Sum over ``axis`` with the array's accumulation model (axis as numpy's:
    None, an int or a tuple; out of range raises numpy's AxisError). dtype=,
    out=, initial= and where= are refused with a TypeError, never ignored;
    keepdims is honoured."""
    if not isinstance(a, LPArray):
        return NotImplemented
    _no_extra("LPArray.sum", dtype=dtype, out=out, initial=initial, where=where)
    keepdims = V.boolean(False if keepdims is np._NoValue else keepdims, "keepdims")
    axes = _axes(a, axis, "LPArray.sum")
    b, ax = _reduced(a, axes)
    if ax is None:                          # axis=() on an n-d array: nothing summed
        return _wrap_like(a, b.copy())
    r = _acc.sum(b, a._fmt, ax, acc=a._acc, **kw)
    res = _back(a, r, _model_fmt(a))
    if keepdims:
        res = _wrap_like(a, np.expand_dims(res._bits, axes))
    return res


def _reduced(a, axes):
    """(encodings, axis) for reducing ``a`` over ``axes`` along one axis: several
    axes (or a 0-d array's one term) moved last and merged; axis None when there
    is nothing to reduce (axis=() on an n-d array)."""
    b = a._bits
    if len(axes) > 1 or (len(axes) == 0 and a.ndim == 0):
        keep = [d for d in range(a.ndim) if d not in axes]
        return (np.transpose(b, keep + list(axes)).reshape([a.shape[d] for d in keep] + [-1]),
                -1)
    return b, (axes[0] if len(axes) == 1 else None)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, where=np._NoValue, **kw):
    """NumPy's mean, sum / n: the sum with the array's accumulation model, kept in
    the accumulator's format, divided by the count n (an exact integer) with one
    rounding into the array's format (under the context). The count is never
    rounded into a format; n = 0 gives NaN (0 / 0), as NumPy."""
    if not isinstance(a, LPArray):
        return NotImplemented
    _no_extra("LPArray.mean", dtype=dtype, out=out, where=where)
    keepdims = V.boolean(False if keepdims is np._NoValue else keepdims, "keepdims")
    axes = _axes(a, axis, "LPArray.mean")
    n = int(np.prod([a.shape[d] for d in axes], dtype=object)) if axes else 1
    mfmt = _model_fmt(a)
    b, ax = _reduced(a, axes)
    if ax is None:                          # axis=() on an n-d array: each element / 1
        return _wrap_like(a, b.copy())
    s = from_bits(_acc.sum(b, a._fmt, ax, acc=a._acc, **kw), mfmt)   # exact values
    q = _div_odd53(s, n)
    r = _wrap_like(a, to_bits(q, a._fmt))
    if keepdims:
        r = _wrap_like(a, np.expand_dims(r._bits, axes))
    return r


def _div_odd53(s: np.ndarray, n: int) -> np.ndarray:
    """s / n (s float64, n a positive integer) rounded to odd at float64's 53 bits,
    exactly: q = RN(s / n), its exact remainder s - q * n by Dekker's product (no
    overflow or underflow for values of softfloat formats and n < 2**53), then q
    moved to its odd neighbour towards s / n when inexact and even. Rounding that
    into a target of at most 24 bits is the correctly rounded s / n (see `_odd53`).
    NaN, infinite and zero quotients are left as they are."""
    s = np.asarray(s, np.float64)
    if n == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            return s / 0.0
    if n >= 1 << 53:                       # pragma: no cover (arrays that large do not fit)
        raise ValueError(f"mean over {n} elements: the count is beyond 2**53")
    nf = np.float64(n)
    with np.errstate(invalid="ignore", over="ignore"):
        q = s / nf
        split = np.float64(134217729.0)     # 2**27 + 1, Veltkamp's constant
        t = split * q
        qh = t - (t - q)
        ql = q - qh
        t = split * nf
        nh = t - (t - nf)
        nl = nf - nh
        p = q * nf
        e = ((qh * nh - p) + qh * nl + ql * nh) + ql * nl     # q * n = p + e exactly
        r = (s - p) - e                                        # exact remainder
        fix = np.isfinite(q) & (q != 0) & (r != 0) & ((q.view(np.int64) & 1) == 0)
    return np.where(fix, np.nextafter(q, np.where(r > 0, np.inf, -np.inf)), q)


def _matmul(x, y, **kw):
    f = _first(x, y)
    xb, yb = f._coerce(x), f._coerce(y)
    model = _acc_model(f._acc, f._fmt, "sequential", None, None, None, False, None)
    r = _acc.matmul(xb, yb, f._fmt, acc=f._acc, **kw)
    return _back(f, r, model.fmt)


def _dot(a, b, out=None):
    f = _first(a, b)
    _no_extra("np.dot", out=out)
    xa, xb = f._coerce(a), f._coerce(b)
    if xa.ndim == 0 or xb.ndim == 0:
        return _wrap_like(f, _ar.mul(xa, xb, f._fmt))
    if xa.ndim <= 2 and xb.ndim <= 2:
        return _matmul(_wrap_like(f, xa), _wrap_like(f, xb))
    raise TypeError("dot of arrays of more than 2 dimensions: use matmul")


def _vdot(a, b):
    f = _first(a, b)
    return _matmul(_wrap_like(f, f._coerce(a).ravel()), _wrap_like(f, f._coerce(b).ravel()))


def _inner(a, b):
    f = _first(a, b)
    yb = f._coerce(b)
    return _matmul(_wrap_like(f, f._coerce(a)), _wrap_like(f, np.swapaxes(yb, -1, -2)
                                                           if yb.ndim > 1 else yb))


def _outer(a, b, out=None):
    f = _first(a, b)
    _no_extra("np.outer", out=out)
    x, y = f._coerce(a).ravel(), f._coerce(b).ravel()
    return _wrap_like(f, _ar.mul(x[:, None], y[None, :], f._fmt))


def _where(cond, x=None, y=None):
    if x is None or y is None:
        return np.where(np.asarray(cond))
    f = _first(x, y)
    c = np.asarray(cond, dtype=bool)
    return _wrap_like(f, np.where(c, f._coerce(x), f._coerce(y)))


def _concatenate(arrays, axis=0, out=None, **kw):
    f = _first(arrays)
    _no_extra("np.concatenate", out=out, **kw)
    return _wrap_like(f, np.concatenate([f._coerce(a) for a in arrays], axis=axis))


def _stack(arrays, axis=0, out=None, **kw):
    f = _first(arrays)
    _no_extra("np.stack", out=out, **kw)
    return _wrap_like(f, np.stack([f._coerce(a) for a in arrays], axis=axis))


def _extreme(a, axis, argf, **kw):
    """max/min by position of the extreme value (exact; NaN wins, as in NumPy);
    out=, keepdims=True, initial= and where= are refused (TypeError)."""
    _no_extra(f"np.{argf.__name__[3:]}", **kw)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError(f"max/min of an LPArray: axis must be an int or None, got {axis!r}")
    v = a.values()
    if axis is None:
        i = argf(v)
        return _wrap_like(a, a._bits.reshape(-1)[i])
    idx = np.expand_dims(argf(v, axis=axis), axis)
    return _wrap_like(a, np.take_along_axis(a._bits, idx, axis).squeeze(axis))


def _shape_fn(npf):
    def f(a, *args, **kw):
        return _wrap_like(a, npf(a._bits, *args, **kw))
    return f


def _like(fill):
    def f(a, dtype=None, order="K", subok=True, shape=None, **kw):
        _no_extra("*_like of an LPArray", dtype=dtype, order=order, subok=subok, **kw)
        bits = np.full(a.shape if shape is None else shape, 0, a._fmt.dtype)
        r = _wrap_like(a, bits)
        if fill is not None:
            r._bits[...] = to_bits(np.float64(fill), a._fmt)
        return r
    return f


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    _no_extra("np.full_like", dtype=dtype, order=order, subok=subok, **kw)
    if isinstance(fill_value, LPArray):
        if fill_value.size != 1:
            raise ValueError("np.full_like of an LPArray: fill_value must be a scalar")
        fill = a._coerce(fill_value).reshape(())
    elif _is_scalar(fill_value):
        fill = to_bits(_odd53(fill_value), a._fmt)
    else:
        # np.float64 would read "1.5" as 1.5, None as NaN and True as 1.0: refused
        raise TypeError(f"np.full_like of an LPArray: fill_value must be a real number "
                        f"(int or float), got {type(fill_value).__name__} "
                        f"{_short(fill_value)}")
    r = _like(None)(a, shape=shape)
    r._bits[...] = fill
    return r


def _norm(x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro") or axis is not None or keepdims:
        raise TypeError("linalg.norm of an LPArray: only the 2-norm of the whole array")
    v = x.ravel()
    return np.sqrt(_sum(v * v))


def _array_equal(a1, a2, equal_nan=False):
    """NumPy's array_equal on exact values: an LPArray equals an ndarray, a list
    or an LPArray of another format holding the same numbers (-0 == +0; NaNs
    equal only with ``equal_nan``). Integer operands are compared exactly (not
    through float64)."""
    equal_nan = V.boolean(equal_nan, "equal_nan")
    x, y = [v.values() if isinstance(v, LPArray) else np.asarray(v) for v in (a1, a2)]
    if x.shape != y.shape:
        return False
    for u, w in ((x, y), (y, x)):
        if u.dtype.kind == "f" and w.dtype.kind in "iuO":
            # exact: every float must be an integer equal to the other side's
            if not np.all(np.isfinite(u)) or not np.all(u == np.floor(u)):
                return False
            try:
                return all(int(p) == int(q) for p, q in zip(u.reshape(-1).tolist(),
                                                              w.reshape(-1).tolist()))
            except (TypeError, ValueError):
                return False
    return bool(np.array_equal(x, y, equal_nan=equal_nan))


_FUNCS = {
    np.sum: _sum, np.mean: _mean, np.dot: _dot, np.vdot: _vdot, np.inner: _inner,
    np.matmul: _matmul, np.outer: _outer, np.where: _where, np.concatenate: _concatenate,
    np.stack: _stack, np.reshape: _shape_fn(np.reshape), np.transpose: _shape_fn(np.transpose),
    np.swapaxes: _shape_fn(np.swapaxes), np.squeeze: _shape_fn(np.squeeze),
    np.expand_dims: _shape_fn(np.expand_dims), np.atleast_1d: _shape_fn(np.atleast_1d),
    np.atleast_2d: _shape_fn(np.atleast_2d), np.broadcast_to: _shape_fn(np.broadcast_to),
    np.copy: _shape_fn(np.copy), np.diag: _shape_fn(np.diag), np.triu: _shape_fn(np.triu),
    np.tril: _shape_fn(np.tril), np.ravel: _shape_fn(np.ravel),
    np.zeros_like: _like(0.0), np.ones_like: _like(1.0), np.empty_like: _like(0.0),
    np.full_like: _full_like,
    np.amax: lambda a, axis=None, **k: _extreme(a, axis, np.argmax, **k),
    np.amin: lambda a, axis=None, **k: _extreme(a, axis, np.argmin, **k),
    np.max: lambda a, axis=None, **k: _extreme(a, axis, np.argmax, **k),
    np.min: lambda a, axis=None, **k: _extreme(a, axis, np.argmin, **k),
    np.argmax: lambda a, axis=None, **k: np.argmax(a.values(), axis=axis, **k),
    np.argmin: lambda a, axis=None, **k: np.argmin(a.values(), axis=axis, **k),
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None:
        a.size if axis is None else a.shape[axis],
    np.linalg.norm: _norm, np.array_equal: _array_equal,
}
