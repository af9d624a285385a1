"""One training step under a precision policy, with loss scaling and step skipping."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .engine import Tensor, cross_entropy, mse_loss
from .scaler import DynamicLossScaler, NoLossScaler, StaticLossScaler, unscale

__all__ = ["make_scaler", "train_step", "evaluate", "StepResult"]


class StepResult(NamedTuple):
    loss: float          # the loss (times loss_factor), before loss scaling
    found_inf: bool      # some scaled gradient was inf/NaN
    grads: list          # the unscaled fp32 gradients
    graph: object        # the scaled loss tensor (its graph holds every gradient)


def make_scaler(policy):
    """The loss scaler a policy asks for."""
    if policy.loss_scaling == "static":
        return StaticLossScaler(policy.loss_scale)
    if policy.loss_scaling == "dynamic":
        return DynamicLossScaler(init_scale=policy.loss_scale, **policy.scaler_options)
    return NoLossScaler()


_TASKS = ("classify", "regress")


def _check_batch(fn, x, y, task):
    """Refuse what would give a NaN loss or a ZeroDivisionError: an empty batch,
    x and y of different lengths, an unknown task."""
    if task not in _TASKS:
        raise ValueError(f"{fn}: task must be one of {_TASKS}, got {task!r}")
    nx, ny = len(x), len(y)
    if nx != ny:
        raise ValueError(f"{fn}: x has {nx} rows but y has {ny}")
    if nx == 0:
        raise ValueError(f"{fn}: empty batch (x and y have no rows)")


def _loss(model, x, y, task, loss_factor=1.0):
    out = model(Tensor(x))
    loss = cross_entropy(out, y) if task == "classify" else mse_loss(out, y)
    return loss * loss_factor if loss_factor != 1.0 else loss


def train_step(model, opt, scaler, x, y, task="classify", loss_factor=1.0):
    """Forward, backward of ``loss * scale``, unscale, skip or step, update the scale.

    ``loss_factor`` multiplies the loss (in fp32) to make gradients small (the
    loss-scaling experiment); the caller compensates in the learning rate.
    Returns a `StepResult`.
    """
    _check_batch("train_step", x, y, task)
    if isinstance(loss_factor, bool) or not (isinstance(loss_factor, (int, float, np.number))
                                             and 0 < loss_factor < float("inf")):
        raise ValueError(f"train_step: loss_factor must be a positive finite number, got "
                         f"{loss_factor!r}")
    P = opt.precision
    with P:
        loss = _loss(model, x, y, task, loss_factor)
        opt.zero_grad()
        scaled = loss * scaler.scale                  # fp32 product, as GradScaler.scale
        scaled.backward()
        grads, found_inf = unscale([p.grad for p in opt.params], scaler.scale)
        if not (found_inf and scaler.skips):
            opt.step(grads)
        scaler.update(found_inf)
    return StepResult(float(loss.data), found_inf, grads, scaled)


def evaluate(model, policy, x, y, task="classify", batch=512):
    """``(mean loss, accuracy)`` of ``model`` on ``x``, ``y`` under the precision
    ``policy`` (an `nn.Precision`; ``nn.Precision()`` for plain float32), in
    batches of ``batch`` rows, no gradients. ``task``: ``"classify"`` (cross-entropy;
    ``y`` holds labels) or ``"regress"`` (MSE; accuracy None). An empty ``x`` is
    refused (ValueError)."""
    from .precision import Precision
    if not isinstance(policy, Precision):
        raise TypeError(f"evaluate(model, policy, x, y): policy must be an nn.Precision "
                        f"(nn.Precision() for float32), got {type(policy).__name__}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"evaluate: batch must be a positive int, got {batch!r}")
    _check_batch("evaluate", x, y, task)
    losses, correct = [], 0
    with policy:
        for i in range(0, len(x), batch):
            out = model(Tensor(x[i:i + batch]))
            if task == "classify":
                losses.append(float(cross_entropy(out, y[i:i + batch]).data) * len(out.data))
                correct += int((out.data.argmax(axis=1) == y[i:i + batch]).sum())
            else:
                losses.append(float(mse_loss(out, y[i:i + batch]).data) * len(out.data))
    loss = sum(losses) / len(x)
    return loss, (correct / len(x) if task == "classify" else None)
