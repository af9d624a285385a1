"""Device presets of the paper-based block-FMA model: `TENSOR_CORE_PRESETS` and
`block_fma_preset` give the `BlockFMA` (block width and extra alignment bits) of
NVIDIA V100, A100, H100 and B200 tensor cores for fp16, bf16 and tf32 inputs, as
Fasi, Higham, Mikaitis & Pranesh (2021) and Khattak & Mikaitis (2025) describe
them. These are generic models from the papers; the GPU matrix units validated
bit for bit against MMA-Sim (every instruction, NVIDIA Volta to Blackwell, AMD
CDNA1-3), which ``acc="h100"`` and `softfloat.tensor_core` give, are in
softfloat/mma/presets.py.
"""
from __future__ import annotations

from ..formats import get_format
from .models import BlockFMA

__all__ = ["TENSOR_CORE_PRESETS", "block_fma_preset"]

# Block-FMA parameters per GPU and input format, from Khattak & Mikaitis, "Accurate
# Models of NVIDIA Tensor Cores" (arXiv:2512.07004, 2025) and their MATLAB models
# (github.com/north-numerical-computing/MATLAB-tensor-core, models/{V100,A100,H100,
# B200}TC.m), which agree with Fasi, Higham, Mikaitis & Pranesh, "Numerical behavior
# of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021) for V100 and A100:
#   V100: 4 products per block, no extra alignment bit;
#   A100: 8 products (fp16/bf16), 4 (tf32), 1 extra alignment bit;
#   H100, B200: 16 products (fp16/bf16), 8 (tf32), 2 extra alignment bits;
# exact products, alignment to the largest exponent with truncation, one
# normalisation per block, the result truncated (round toward zero) into binary32,
# or rounded to nearest-even when the output is binary16. These are the
# paper-based `BlockFMA` models (`block_fma_preset`); the GPU names themselves
# (``acc="h100"``, `tensor_core`) now give the MMA-Sim-validated `MatrixUnit`
# models of softfloat.mma, which agree with these on fp16/bf16/tf32 inputs with
# fp32 output. (The fp8 models of Hopper need the chunk result truncated to 13
# fraction bits, which a `BlockFMA` cannot express: see softfloat.mma.)
TENSOR_CORE_PRESETS = {
    # gpu: {input format: (width, extra alignment bits)}
    "v100": {"fp16": (4, 0)},
    "a100": {"fp16": (8, 1), "bf16": (8, 1), "tf32": (4, 1)},
    "h100": {"fp16": (16, 2), "bf16": (16, 2), "tf32": (8, 2)},
    "b200": {"fp16": (16, 2), "bf16": (16, 2), "tf32": (8, 2)},
}


def block_fma_preset(gpu: str, in_fmt="fp16", out_fmt="fp32") -> BlockFMA:
    """The paper-based `BlockFMA` model of an NVIDIA tensor core (``"v100"``,
    ``"a100"``, ``"h100"``, ``"b200"``; `TENSOR_CORE_PRESETS`) for inputs ``in_fmt``
    and output ``out_fmt`` (``"fp32"``: truncation; ``"fp16"``: round to nearest
    even, fp16 inputs only). `tensor_core` gives the MMA-Sim-validated models."""
    key = str(gpu).strip().lower()
    if key not in TENSOR_CORE_PRESETS:
        raise ValueError(f"unknown tensor-core preset {gpu!r}; expected one of "
                         f"{sorted(TENSOR_CORE_PRESETS)}")
    fin = get_format(in_fmt)
    table = TENSOR_CORE_PRESETS[key]
    if fin.name not in table:
        raise ValueError(f"the {key} preset covers inputs {sorted(table)}, not {fin.name}")
    width, extra = table[fin.name]
    fout = get_format(out_fmt)
    if fout.name == "fp32":
        return BlockFMA(width, extra, "fp32", "toward_zero")
    if fout.name == "fp16" and fin.name == "fp16":
        return BlockFMA(width, extra, "fp16", "nearest_even")
    raise ValueError(f"tensor-core output must be fp32 (or fp16 for fp16 inputs), got {fout.name}")
