"""Optimizers: SGD with momentum and Adam (torch's update rules), each working on
fp32 master weights or directly on low-precision weights.

The optimizer owns the precision of the parameters: given a simulated policy it
rounds the model's parameters into the storage format S (the working copy) and,
with ``master_weights``, keeps their fp32 originals as the master copy. The
update ``delta`` is computed in fp32 from fp32 optimizer state, then

* master weights: ``master += delta`` (fp32, IEEE RNE), ``w = round_S(master)``;
* no master copy: ``w = round_S(w + delta)`` with the policy's
  ``update_rounding`` (nearest-even loses updates smaller than half a step of S;
  stochastic rounding keeps them in expectation);
* fp32 (no simulation): ``w += delta``.

``lost`` / ``changed`` count the elements whose update was nonzero but left the
stored weight (the master copy when there is one) unchanged.
"""
from __future__ import annotations

import numpy as np
from softfloat.updates import add_update

from . import precision as _prec

__all__ = ["Optimizer", "SGD", "Adam"]


def _number(name, v, lo, hi, lo_open=False, hi_open=True) -> float:
    """A real hyperparameter in [lo, hi) (or the bounds given), as float; bools,
    strings, NaN and values outside are refused naming ``name``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"{name} must be a real number, got {v!r}")
    x = float(v)
    ok = (x > lo if lo_open else x >= lo) and (x < hi if hi_open else x <= hi)
    if not ok:
        raise ValueError(f"{name} must be in {'(' if lo_open else '['}{lo}, {hi}"
                         f"{')' if hi_open else ']'}, got {v!r}")
    return x


class Optimizer:
    def __init__(self, params, lr, precision=None):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        self.lr = _number("learning rate lr", lr, 0.0, np.inf, lo_open=True)
        P = _prec.current() if precision is None else precision
        self.precision = P
        self.master = None
        if P.simulated:
            if P.master_weights:
                self.master = [np.array(p.data, dtype=np.float32) for p in self.params]
            for p in self.params:
                p.data = P.round(p.data.astype(np.float32), P.storage)
                p.fmt = P.storage
        self.lost = 0         # nonzero update, unchanged weight
        self.nonzero = 0      # nonzero updates
        self.steps = 0

    @property
    def lost_update_fraction(self):
        return self.lost / self.nonzero if self.nonzero else 0.0

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _delta(self, i, w, g):          # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, grads=None):
        """Apply one update; ``grads`` (fp32 arrays, e.g. unscaled) default to ``.grad``."""
        if grads is None:
            grads = [p.grad for p in self.params]
        if len(grads) != len(self.params):
            raise ValueError("one gradient per parameter expected")
        self.steps += 1
        P = self.precision
        for i, (p, g) in enumerate(zip(self.params, grads)):
            if g is None:
                continue
            dt = np.float32 if P.simulated else p.data.dtype
            w = self.master[i] if self.master is not None else p.data.astype(dt, copy=False)
            delta = self._delta(i, w, np.asarray(g, dtype=dt))
            if (w.dtype == np.float32 and delta.dtype == np.float32
                    and (self.master is not None or not P.simulated)):
                new, nz, lost = add_update(w, delta)      # one pass: sum and counts
                self.nonzero += nz
                self.lost += lost
                if self.master is not None:
                    self.master[i] = new
                    p.data = P.round(new, P.storage)
                else:
                    p.data = new
                continue
            if self.master is not None:
                new = w + delta
                self.master[i] = new
                p.data = P.round(new, P.storage)
            elif P.simulated:
                new = P.round(w.astype(np.float64) + delta.astype(np.float64), P.storage,
                              rounding=P.update_rounding)
                p.data = new
            else:
                new = w + delta
                p.data = new
            moved = delta != 0
            self.nonzero += int(np.count_nonzero(moved))
            self.lost += int(np.count_nonzero(moved & (new == w)))


class SGD(Optimizer):
    """torch.optim.SGD: ``buf = momentum * buf + g`` (buf = g at the first step),
    ``w -= lr * buf``; ``weight_decay`` adds ``wd * w`` to g."""

    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0, precision=None):
        super().__init__(params, lr, precision)
        self.momentum = _number("momentum", momentum, 0.0, 1.0)
        self.weight_decay = _number("weight_decay", weight_decay, 0.0, np.inf)
        self.buf = [None] * len(self.params)

    def _delta(self, i, w, g):
        dt = w.dtype.type
        if self.weight_decay:
            g = g + dt(self.weight_decay) * w
        if self.momentum:
            b = self.buf[i]
            b = g.copy() if b is None else dt(self.momentum) * b + g
            self.buf[i] = b
            g = b
        return dt(-self.lr) * g


class Adam(Optimizer):
    """torch.optim.Adam (no amsgrad): m, v in fp32 with bias correction,
    ``w -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 precision=None):
        super().__init__(params, lr, precision)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        self.b1, self.b2 = (_number(f"betas[{i}]", b, 0.0, 1.0) for i, b in enumerate(betas))
        self.eps = _number("eps", eps, 0.0, np.inf, lo_open=True)
        self.weight_decay = _number("weight_decay", weight_decay, 0.0, np.inf)
        self.m = [None] * len(self.params)
        self.v = [None] * len(self.params)
        self.t = [0] * len(self.params)

    def _delta(self, i, w, g):
        dt = w.dtype.type
        if self.weight_decay:
            g = g + dt(self.weight_decay) * w
        if self.m[i] is None:
            self.m[i] = np.zeros_like(g)
            self.v[i] = np.zeros_like(g)
        self.t[i] += 1
        t = self.t[i]
        m = self.m[i] = self.m[i] + (g - self.m[i]) * dt(1 - self.b1)      # lerp, as torch
        v = self.v[i] = self.v[i] * dt(self.b2) + g * g * dt(1 - self.b2)
        bc1 = 1 - self.b1 ** t
        bc2_sqrt = np.sqrt(1 - self.b2 ** t)
        denom = np.sqrt(v) / dt(bc2_sqrt) + dt(self.eps)
        return dt(-self.lr / bc1) * m / denom
