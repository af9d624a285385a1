"""Layers: a `Module` with ``parameters()`` and ``zero_grad()``, `Linear` and `MLP`."""
from __future__ import annotations

import numpy as np

from .engine import Tensor

__all__ = ["Module", "Linear", "MLP"]


class Module:
    def parameters(self):
        return []

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def __call__(self, x):
        return self.forward(x)


class Linear(Module):
    """``y = x @ W + b`` with W (nin, nout) and b (nout,), float32, initialised
    like torch's ``nn.Linear`` (uniform in +-1/sqrt(nin)) from ``rng``."""

    def __init__(self, nin, nout, rng=None, bias=True):
        rng = np.random.default_rng(0) if rng is None else rng
        bound = 1.0 / np.sqrt(nin)
        self.W = Tensor(rng.uniform(-bound, bound, (nin, nout)).astype(np.float32),
                        requires_grad=True)
        self.b = (Tensor(rng.uniform(-bound, bound, nout).astype(np.float32), requires_grad=True)
                  if bias else None)

    def forward(self, x):
        y = x @ self.W
        return y + self.b if self.b is not None else y

    def parameters(self):
        return [self.W] + ([self.b] if self.b is not None else [])

    def __repr__(self):
        return f"Linear({self.W.shape[0]}, {self.W.shape[1]})"


class MLP(Module):
    """Linear layers of the given sizes with ``relu`` (or ``tanh``) between them;
    the last layer is linear (logits or regression output)."""

    def __init__(self, sizes, activation="relu", seed=0):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"activation must be 'relu' or 'tanh', got {activation!r}")
        if len(sizes) < 2:
            raise ValueError("MLP needs at least an input and an output size")
        rng = np.random.default_rng(seed)
        self.layers = [Linear(a, b, rng) for a, b in zip(sizes[:-1], sizes[1:])]
        self.activation = activation

    def forward(self, x):
        if not isinstance(x, Tensor):
            x = Tensor(x)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = x.relu() if self.activation == "relu" else x.tanh()
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP([{', '.join(map(repr, self.layers))}], {self.activation})"
