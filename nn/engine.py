"""A tensor with a gradient: micrograd's shape, over NumPy arrays.

Each operator builds its output and a small ``_backward`` closure that adds
(``_accumulate``) the gradient into its parents; ``backward()`` is a
topological sort and a reverse loop.

Precision. Every tensor has a format, ``fmt``:

* ``None`` (the default) -- plain NumPy arithmetic in the array's own dtype
  (float32, or float64 for gradient checks); no simulation, no overhead.
* a `softfloat.Format` (fp16, bf16, fp8, ...) -- the array is float32 and holds
  values of that format exactly; every result is rounded into the format by
  `softfloat` (see `nn.precision`), as a fp16 tensor behaves in torch.

Formats mix as in torch's type promotion: an op between a simulated tensor and a
native (fp32) one gives a native one; Python scalars take the tensor's format.
Matrix products autocast: both operands are cast to the current policy's storage
format (`nn.precision.current()`), the products are exact, the sum runs in the
policy's accumulation format, and the result is rounded once into the storage
format. A gradient always has the format of its tensor (rounded on the way in).
"""
from __future__ import annotations

import numpy as np

from . import precision as _prec

__all__ = ["Tensor", "cross_entropy", "mse_loss"]


def _as_array(data):
    if isinstance(data, Tensor):
        raise TypeError("Tensor(data): data is already a Tensor; use it directly")
    if isinstance(data, np.ndarray) and data.dtype in (np.float32, np.float64):
        return data
    a = np.asarray(data)
    if a.dtype.kind not in "fiu" or a.dtype == np.float16:
        raise TypeError(f"Tensor(data): expected float32/float64 values, got dtype {a.dtype}")
    if isinstance(data, np.ndarray) and a.dtype.kind in "iu":
        raise TypeError(f"Tensor(data): expected float32/float64 values, got integer dtype "
                        f"{a.dtype}; convert explicitly with .astype(np.float32)")
    return a.astype(np.float32)      # Python numbers and lists: float32, like torch


def _keep_where(mask, g):
    """``np.where(mask, g, +0)`` in g's dtype, bit for bit, without branches: the
    encodings of g AND-ed with all-ones where ``mask`` (np.where on a random mask
    is about 20x slower: a branch per element)."""
    g = np.ascontiguousarray(g)
    if g.dtype == np.float32:
        u = np.uint32
    elif g.dtype == np.float64:
        u = np.uint64
    else:
        return np.where(mask, g, g.dtype.type(0))
    keep = mask.astype(u)
    keep *= u(-1 & (2 ** (8 * g.itemsize) - 1))           # 0 or all ones
    return (g.view(u) & keep).view(g.dtype)


class Tensor:
    """An array with a gradient.

    Parameters
    ----------
    data : array_like
        float32 or float64 array (kept as is), or Python numbers (-> float32).
    requires_grad : bool
        Whether ``backward()`` fills ``.grad`` for this tensor.
    fmt : softfloat.Format, str or None
        The simulated format the values belong to (None: plain NumPy). The data
        is rounded into it (the current policy's rounding) when it does not belong.
    """

    __array_priority__ = 100     # so that ndarray + Tensor calls Tensor.__radd__

    def __init__(self, data, requires_grad=False, fmt=None, _children=(), _op=""):
        a = _as_array(data)
        if fmt is not None:
            fmt = _prec.storage_format(fmt)
            a = _prec.current().cast(a, fmt)
        self.data = a
        self.fmt = fmt
        self.requires_grad = bool(requires_grad)
        self.grad = None
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    # ---- bookkeeping ------------------------------------------------------
    @property
    def shape(self):
        return self.data.shape

    @property
    def ndim(self):
        return self.data.ndim

    def __repr__(self):
        f = "" if self.fmt is None else f", fmt={self.fmt.name}"
        return f"Tensor({self.data!r}{f}, requires_grad={self.requires_grad})"

    def _make(self, data, children, op, fmt):
        out = Tensor.__new__(Tensor)
        out.data, out.fmt, out.grad, out._op = data, fmt, None, op
        out.requires_grad = any(c.requires_grad for c in children)
        out._backward = lambda: None
        out._prev = tuple(children) if out.requires_grad else ()
        return out

    def _accumulate(self, g, P):
        """self.grad += g, in this tensor's format (g is rounded into it first) under
        the policy ``P`` that the forward op captured (not the one in force when
        ``backward()`` runs: the graph carries its own policy)."""
        if not self.requires_grad:
            return
        kind = "grad" if self._prev else "wgrad"       # a leaf that needs a gradient: a weight
        g = P.cast_grad(g, self.fmt, self.data.dtype, self.shape, kind)
        self.grad = g if self.grad is None else P.add(self.grad, g, self.fmt)

    @staticmethod
    def _lift(other, like):
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (bool, np.bool_)):
            raise TypeError("Tensor arithmetic with a bool")
        a = np.asarray(other, dtype=like.data.dtype)   # scalars take the tensor's dtype/format
        fmt = like.fmt if a.ndim == 0 else None
        if fmt is not None:
            a = _prec.current().cast(a, fmt)
        t = Tensor.__new__(Tensor)
        t.data, t.fmt, t.grad, t.requires_grad = a, fmt, None, False
        t._backward, t._prev, t._op = (lambda: None), (), "const"
        return t

    # ---- elementwise ------------------------------------------------------
    def __add__(self, other):
        other = Tensor._lift(other, self)
        P, fmt = _prec.current(), _prec.promote(self.fmt, other.fmt)
        out = self._make(P.add(self.data, other.data, fmt), (self, other), "+", fmt)

        def _backward():
            for x in (self, other):
                if x.requires_grad:
                    x._accumulate(P.sum_to(out.grad, x.shape, fmt), P)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Tensor._lift(other, self)
        P, fmt = _prec.current(), _prec.promote(self.fmt, other.fmt)
        out = self._make(P.mul(self.data, other.data, fmt), (self, other), "*", fmt)

        def _backward():
            g = out.grad
            for x, y in ((self, other), (other, self)):
                if x.requires_grad:
                    x._accumulate(P.sum_to(P.mul(g, y.data, fmt, final=False), x.shape, fmt), P)
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-Tensor._lift(other, self))

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return Tensor._lift(other, self) + (-self)

    def __rmul__(self, other):
        return self * other

    def relu(self):
        P = _prec.current()
        out = self._make(np.maximum(self.data, 0).astype(self.data.dtype, copy=False),
                         (self,), "relu", self.fmt)          # exact in every format

        def _backward():
            self._accumulate(_keep_where(self.data > 0, out.grad), P)
        out._backward = _backward
        return out

    def tanh(self):
        P = _prec.current()
        t = P.unary(np.tanh, self.data, self.fmt)
        out = self._make(t, (self,), "tanh", self.fmt)

        def _backward():
            one_minus = P.add(np.ones_like(t), -P.mul(t, t, self.fmt), self.fmt)
            self._accumulate(P.mul(out.grad, one_minus, self.fmt, final=False), P)
        out._backward = _backward
        return out

    # ---- reductions and shapes -------------------------------------------
    def sum(self, axis=None, keepdims=False):
        P = _prec.current()
        out = self._make(P.sum(self.data, axis, keepdims, self.fmt), (self,), "sum", self.fmt)

        def _backward():
            g = out.grad
            if axis is not None and not keepdims:
                g = np.expand_dims(g, axis)
            self._accumulate(np.broadcast_to(g, self.shape), P)
        out._backward = _backward
        return out

    def mean(self, axis=None, keepdims=False):
        n = self.data.size if axis is None else int(np.prod(
            [self.shape[a] for a in np.atleast_1d(axis)]))
        return self.sum(axis, keepdims) * (1.0 / n)

    def reshape(self, *shape):
        P = _prec.current()
        out = self._make(self.data.reshape(*shape), (self,), "reshape", self.fmt)

        def _backward():
            self._accumulate(out.grad.reshape(self.shape), P)
        out._backward = _backward
        return out

    @property
    def T(self):
        P = _prec.current()
        out = self._make(self.data.T, (self,), "T", self.fmt)

        def _backward():
            self._accumulate(out.grad.T, P)
        out._backward = _backward
        return out

    # ---- matrix product ---------------------------------------------------
    def __matmul__(self, other):
        if not isinstance(other, Tensor):
            other = Tensor(other)
        if self.ndim != 2 or other.ndim != 2:
            raise ValueError(f"@ takes two 2-d tensors, got shapes {self.shape} and {other.shape}")
        P = _prec.current()
        if P.fp8 is not None and self.fmt is None and other.fmt is None:
            return self._matmul_recipe(other, P)
        fmt = P.matmul_format(self.fmt, other.fmt)
        a = self.data if self.fmt == fmt else P.cast(self.data, fmt)      # autocast
        b = other.data if other.fmt == fmt else P.cast(other.data, fmt)
        out = self._make(P.matmul(a, b, fmt), (self, other), "@", fmt)

        def _backward():
            g = out.grad                       # already in fmt: gradients keep their format
            if self.requires_grad:
                self._accumulate(P.matmul(g, b.T, fmt, final=False), P)
            if other.requires_grad:
                other._accumulate(P.matmul(a.T, g, fmt, final=False), P)
        out._backward = _backward
        return out

    def _matmul_recipe(self, other, P):
        """``self @ other`` under an fp8/fp4 recipe (`nn.fp8`): the GEMM site (for
        delayed scaling's amax histories) is the second operand when it is a leaf
        (a layer's weight), else the first."""
        site = id(other) if not other._prev else id(self)
        a = self.data.astype(np.float32, copy=False)
        b = other.data.astype(np.float32, copy=False)
        data, ctx = P.fp8.forward(a, b, site)
        out = self._make(data, (self, other), "@fp8", None)

        def _backward():
            g = np.ascontiguousarray(out.grad, dtype=np.float32)
            da, db = P.fp8.backward(g, ctx, self.requires_grad, other.requires_grad)
            if self.requires_grad:
                self._accumulate(da, P)
            if other.requires_grad:
                other._accumulate(db, P)
        out._backward = _backward
        return out

    # ---- backward ---------------------------------------------------------
    def backward(self, grad=None):
        """Fill ``.grad`` of every tensor this one depends on (``+=``)."""
        topo, seen = [], set()

        def build(v):
            if id(v) not in seen:
                seen.add(id(v))
                for c in v._prev:
                    build(c)
                topo.append(v)
        build(self)
        if grad is None:
            if self.data.size != 1:
                raise ValueError("backward() without a gradient needs a scalar tensor")
            grad = np.ones_like(self.data)
        self.grad = np.asarray(grad, dtype=self.data.dtype).reshape(self.shape)
        for v in reversed(topo):
            v._backward()


def cross_entropy(logits: Tensor, labels) -> Tensor:
    """Mean softmax cross-entropy, computed in fp32 as autocast does (float64 when
    the logits are plain float64, for gradient checks). The gradient flowing
    back into ``logits`` is rounded into their format: this is where small
    gradients underflow in fp16."""
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: labels must be integers, got dtype {labels.dtype}")
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(f"cross_entropy: logits (N, C) and labels (N,), got {logits.shape} "
                         f"and {labels.shape}")
    ncls = logits.shape[1]
    if labels.size and (labels.min() < 0 or labels.max() >= ncls):
        bad = labels[(labels < 0) | (labels >= ncls)].ravel()[0]
        raise ValueError(f"cross_entropy: labels must lie in [0, {ncls}) (the number of "
                         f"classes), got {int(bad)}")
    P = _prec.current()
    dt = np.float64 if (logits.fmt is None and logits.data.dtype == np.float64) else np.float32
    z = logits.data.astype(dt)                       # exact: every format fits in float32
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    n = z.shape[0]
    rows = np.arange(n)
    loss = (np.log(s[:, 0]) - z[rows, labels]).mean(dtype=dt).astype(dt)
    out = logits._make(np.asarray(loss, dt), (logits,), "cross_entropy", None)

    def _backward():
        d = e / s
        d[rows, labels] -= 1
        d *= (out.grad / dt(n)).astype(dt)
        logits._accumulate(d.astype(dt), P)
    out._backward = _backward
    return out


def mse_loss(pred: Tensor, target) -> Tensor:
    """Mean squared error, computed in fp32 (float64 for plain float64 input)."""
    target = np.asarray(target)
    if target.shape != pred.shape:
        raise ValueError(f"mse_loss: shapes differ: {pred.shape} and {target.shape}")
    P = _prec.current()
    dt = np.float64 if (pred.fmt is None and pred.data.dtype == np.float64) else np.float32
    r = pred.data.astype(dt) - target.astype(dt)
    out = pred._make(np.asarray(np.mean(r * r, dtype=dt), dt), (pred,), "mse", None)

    def _backward():
        pred._accumulate((r * (out.grad * dt(2.0 / r.size)).astype(dt)).astype(dt), P)
    out._backward = _backward
    return out
