"""GPU matrix units (NVIDIA tensor cores, AMD matrix cores), instruction by
instruction, bit for bit as MMA-Sim 2.1.1 models them (arXiv:2511.10909).

``tensor_core(arch, in_fmt="fp16", out_fmt="fp32", *, instruction=None)`` gives a
`MatrixUnit` (the frozen dataclass of one instruction's arithmetic; presets for
every instruction in `INSTRUCTIONS`); ``mma(model, a, b, c=None, *, scale_a=None,
scale_b=None, return_flags=False)`` runs it on encodings, any K as a chain of
instructions. ``softfloat.matmul(A, B, fmt, acc=model)`` takes the same models.
See docs/matrix-units.md.
"""
from .model import ALGORITHMS, OUTPUT_ROUNDINGS, MatrixUnit
from .presets import (ARCH_ALIASES, ARCHS, DENSE_GEMM, INSTRUCTIONS, MMASIM_ARCH,
                      canonical_arch, tensor_core)
from .run import mma, truncate_tf32

__all__ = ["MatrixUnit", "tensor_core", "INSTRUCTIONS", "mma", "truncate_tf32", "ARCHS",
           "ARCH_ALIASES", "DENSE_GEMM", "MMASIM_ARCH", "ALGORITHMS", "OUTPUT_ROUNDINGS",
           "canonical_arch"]
