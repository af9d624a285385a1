"""nn: a small autograd MLP over NumPy whose every rounding can be simulated by
`softfloat`, to show fp32 master weights, loss scaling and fp32 accumulation,
each against its absence (``python -m nn.experiments``)."""
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
