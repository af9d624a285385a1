"""nn: a small autograd MLP over NumPy whose every rounding can be simulated by
`softfloat`, to show fp32 master weights, loss scaling and fp32 accumulation,
each against its absence (``python -m nn.experiments``).

``nn.train`` is the module of `train_step`, `evaluate` and `make_scaler` (exported
here); a training run is a loop of `train_step` calls (``nn.experiments.run``).
``evaluate(model, policy, x, y)`` takes the precision policy second."""
from .engine import Tensor, cross_entropy, mse_loss
from .layers import MLP, Linear, Module
from .optim import SGD, Adam, Optimizer
from .precision import Precision, current, lp_matmul
from .scaler import DynamicLossScaler, NoLossScaler, StaticLossScaler, unscale
from .train import evaluate, make_scaler, train_step

__all__ = ["Tensor", "cross_entropy", "mse_loss", "Module", "Linear", "MLP", "SGD", "Adam",
           "Optimizer", "Precision", "current", "lp_matmul", "StaticLossScaler",
           "DynamicLossScaler", "NoLossScaler", "unscale", "train_step", "evaluate",
           "make_scaler"]
