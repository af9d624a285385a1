"""The platform model hook: bit-exact accumulation models registered per platform.

A module that transcribes a platform's reduction order (``softfloat.platforms.torch_cpu``
for ``torch_cpu``) registers its functions with `register_model`; the platform
interpreter (`softfloat.platforms`: ``platform_sum``, ``platform_mean``,
``platform_matmul``, ``platform_cumsum``) asks `model_for` first and falls
back to its generic model when none is registered or an order is forced.
Modules named in ``MODEL_MODULES`` are imported on first use, by name: the hook
never imports a platform or a model module statically, so it sits below both.
"""
from __future__ import annotations

import importlib

__all__ = ["register_model", "model_for", "MODEL_MODULES", "MODEL_OPS"]

MODEL_OPS = ("sum", "mean", "cumsum", "matmul")
#: platform name -> module that registers its models when imported
MODEL_MODULES = {"torch_cpu": "softfloat.platforms.torch_cpu"}
_MODELS: dict = {}


def register_model(platform: str, op: str, fn) -> None:
    """Register ``fn`` as the bit-exact model of ``op`` (one of ``MODEL_OPS``) on
    ``platform`` (its name). Called as ``fn(bits, fmt, axis, **kw)`` for sum, mean
    and cumsum, ``fn(a, b, fmt, **kw)`` for matmul."""
    if op not in MODEL_OPS:
        raise ValueError(f"register_model: op must be one of {MODEL_OPS}, got {op!r}")
    if not callable(fn):
        raise TypeError("register_model: fn must be callable")
    _MODELS[(str(platform), op)] = fn


def model_for(platform_name: str, op: str):
    """The registered model of ``op`` on the platform, or None."""
    mod = MODEL_MODULES.get(platform_name)
    if mod is not None and (platform_name, op) not in _MODELS:
        importlib.import_module(mod)           # registers its models on import
    return _MODELS.get((platform_name, op))

