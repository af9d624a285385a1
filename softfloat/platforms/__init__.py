"""Platforms: what a machine or a library does beyond IEEE 754.

* presets.py -- the data: `Platform`, `Reduction`, the presets (``ieee``,
  ``torch_cuda``, ``torch_cpu``, ``numpy``, ``x86_sse``, ``arm_default_nan``,
  ``riscv``) in the ``PRESETS`` registry, `get_platform`;
* ops.py -- the interpreter: `platform_op`, `platform_to_bits`,
  `platform_convert`, `platform_sum`, `platform_mean`, `platform_matmul`;
* torch_cpu/ -- the bit-exact models of torch 2.13 CPU's sum, mean, cumsum and
  matmul (the ``torch_cpu`` platform's registered models, imported by name on
  first use through `softfloat.model_hook`);
* device_table.py -- `devices()`: every device the library describes (these platform
  presets, the GPU matrix units of softfloat/mma/presets.py, the paper-based
  block-FMA presets of `softfloat.block_fma_preset`) and where each is described.

A platform turns its NaN rules into kernel policies (`Platform.nan_policy`);
softfloat.specialize carries them out and never looks a platform up.
"""
from .ops import (platform_convert, platform_cumsum, platform_matmul,  # noqa: F401
                  platform_mean, platform_op, platform_sum, platform_to_bits)
from .device_table import DEVICE_KINDS, Device, devices  # noqa: F401
from .presets import (ARM_DEFAULT_NAN, IEEE, NUMPY, PLATFORM_OPS, PRESETS, RISCV,  # noqa: F401
                      TORCH_CPU, TORCH_CUDA, X86_SSE, Platform, Reduction, get_platform,
                      platform_names)

__all__ = [
    "Platform", "Reduction", "get_platform", "platform_names", "PLATFORM_OPS",
    "platform_op", "platform_to_bits", "platform_convert", "platform_sum",
    "platform_mean", "platform_cumsum", "platform_matmul",
]
