"""The matrix-unit model: one frozen dataclass describes what one GPU matrix
instruction (NVIDIA ``mma.sync`` / ``wgmma`` / ``tcgen05.mma``, AMD ``v_mfma``)
does to the numbers, chunk after chunk along K.

Algorithms (``MatrixUnit.algorithm``); in each, a chunk of ``chunk`` products
and the running accumulator c give the next c:

``"fdpa"``  truncated fused dot-product-add (every NVIDIA instruction but fp64,
    and the block-scaled ``mxf8f6f4`` kinds). Every term (the products, times
    both block scales when the instruction is block-scaled, and c) is read as
    ``s * 2**e`` with ``e`` its binade exponent (subnormals and zero at the
    format's smallest one; a product's ``e`` is the sum of its factors', not
    renormalised); a zero term (zero product, zero c) takes the fixed exponent
    ``e_zero``. With E the largest ``e``, every term is truncated toward zero to
    a multiple of ``2**(E - frac_bits)``, the truncated terms are added exactly,
    and the sum is rounded once by ``output_rounding``:
    ``"RNE-FP16"``, ``"RNE-FP32"`` (nearest-even), ``"RZ-FP32"`` (toward zero into
    binary32) or ``"RZ-E8M13"`` (toward zero into binary32 keeping 13 fraction
    bits, subnormals on the 2**-139 grid). A sum that reaches 2**128 (2**16 for
    fp16) is infinite whatever the rounding. NaN results are the canonical
    0x7FFFFFFF (fp16 0x7FFF); a zero result is +0.
``"grouped"``  the ``mxf4`` / ``mxf4nvf4`` kinds with K = 64: the products are
    added exactly in groups of ``group``; each group sum times its two scales is
    a term whose exponent is the scales' (``e_zero`` when the group's products
    are all zero or a scale is zero); then as ``"fdpa"``.
``"two_stage"``  AMD CDNA3 fp16/bf16/xf32: the products are summed as in
    ``"fdpa"`` with ``frac_bits`` (a zero product counts for nothing; a product of
    2**128 or more is infinite); that sum (floored to ``frac_bits2 + 1`` fraction
    bits) and c (floored to ``frac_bits``) are aligned to the larger exponent and
    added; the sum is floored to ``frac_bits2`` fraction bits and rounded to
    nearest-even into binary32.
``"two_stage_pairs"``  AMD CDNA3 fp8/bf8: as ``"two_stage"`` but the even and the
    odd products are summed separately first (each floored to ``frac_bits``),
    and c is dropped when it lies more than ``frac_bits + 1`` binades below.
``"exact"``  AMD CDNA1 fp16/bf16: the exact sum of the chunk's products and c,
    rounded to nearest-even into binary32.
``"ftz_chain"``  AMD CDNA2 fp16/bf16: products in binary32 and a chain of binary32
    additions (``products_per_step`` products added pairwise, then into c), every
    input, product and sum below 2**-126 flushed to zero.
``"fma"``  fp32/fp64 instructions: a chain of IEEE fused multiply-adds.

Sources (public): MMA-Sim, Xie et al., "MMA-Sim: Bit-Accurate Reference Model of
Tensor Cores and Matrix Cores" (arXiv:2511.10909, 2025) and its package ``mmasim``
2.1.1 (validated bit for bit against the GPUs by its authors), which gives every
parameter below; Khattak & Mikaitis (arXiv:2512.07004) for B200 fp16 (F = 25);
Fasi, Higham, Mikaitis & Pranesh (PeerJ CS 7:e330, 2021) for V100/A100; the PTX ISA
(NVIDIA, "Parallel Thread Execution ISA" 8.x, sections on mma, wgmma, tcgen05.mma)
and the AMD CDNA1/2/3 ISA reference guides for the instruction shapes and types.
"""
from __future__ import annotations

import dataclasses

from ..formats import Format, get_format
from ..rounding import Rounding

ALGORITHMS = ("fdpa", "grouped", "two_stage", "two_stage_pairs", "exact", "ftz_chain", "fma")
# Each output rounding: the rounding mode and the significant bits it keeps (the
# one reading of these words; `MatrixUnit.output_mode`, `output_precision`).
_OUTPUT = {"RNE-FP16": (Rounding.NEAREST_EVEN, 11), "RNE-FP32": (Rounding.NEAREST_EVEN, 24),
           "RZ-FP32": (Rounding.TOWARD_ZERO, 24), "RZ-E8M13": (Rounding.TOWARD_ZERO, 14)}
OUTPUT_ROUNDINGS = tuple(_OUTPUT)


@dataclasses.dataclass(frozen=True)
class MatrixUnit:
    """One matrix instruction's arithmetic (see the module docstring).

    Fields
    ------
    arch : str
        Canonical architecture name ("volta", ..., "cdna3").
    instruction : str
        The instruction's shape-and-type string as MMA-Sim spells it
        ("m16n8k16.f32.f16.f16.f32", "m64n8k32.f32.e4m3.e4m3", "f32_32x32x8_f16", ...).
    family : str
        "mma", "mma_block_scale", "wgmma", "tcgen05", "tcgen05_block_scale", "mfma".
    m, n, k : int
        The instruction's shape (k: its K; longer K chains instructions).
    a_fmt, b_fmt, c_fmt, out_fmt : Format
        Operand formats (tf32 operands are tf32 encodings: see `truncate_tf32`);
        out_fmt is the D type, c_fmt the C type (the same but for Volta's
        m8n8k4.f32.f16.f16.f16); chained instructions carry D as the next C.
    algorithm : str
        One of `ALGORITHMS`.
    chunk : int
        Products fused per step (the hardware's chunk; at most ``k``).
    frac_bits, frac_bits2 : int or None
        Alignment fraction bits F (and the second stage's, AMD CDNA3).
    e_zero : int or None
        Exponent given to zero terms ("fdpa", "grouped").
    output_rounding : str or None
        One of `OUTPUT_ROUNDINGS` (None: "ftz_chain", "fma").
    group : int or None
        Products summed exactly per group ("grouped").
    products_per_step : int or None
        "ftz_chain": 2 or 4.
    scale_fmt : Format or None
        Block-scale format (e8m0, or fp8_e4m3 read without its sign: ue4m3).
    scale_block : int or None
        K elements per scale factor.
    sources : tuple of str
        Where the parameters come from.
    """

    arch: str
    instruction: str
    family: str
    m: int
    n: int
    k: int
    a_fmt: Format
    b_fmt: Format
    c_fmt: Format
    out_fmt: Format
    algorithm: str
    chunk: int
    frac_bits: int | None = None
    frac_bits2: int | None = None
    e_zero: int | None = None
    output_rounding: str | None = None
    group: int | None = None
    products_per_step: int | None = None
    scale_fmt: Format | None = None
    scale_block: int | None = None
    sources: tuple = ()

    def __post_init__(self):
        for name in ("a_fmt", "b_fmt", "c_fmt", "out_fmt"):
            v = getattr(self, name)
            if not isinstance(v, Format):       # (fp64 only as the Format object)
                object.__setattr__(self, name, get_format(v))
        if self.scale_fmt is not None:
            object.__setattr__(self, "scale_fmt", get_format(self.scale_fmt))
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"MatrixUnit.algorithm must be one of {ALGORITHMS}, "
                             f"got {self.algorithm!r}")
        if self.output_rounding is not None and self.output_rounding not in OUTPUT_ROUNDINGS:
            raise ValueError(f"MatrixUnit.output_rounding must be one of {OUTPUT_ROUNDINGS}, "
                             f"got {self.output_rounding!r}")
        if not (isinstance(self.k, int) and isinstance(self.chunk, int) and self.k >= 1
                and 1 <= self.chunk and self.k % self.chunk == 0):
            raise ValueError(f"MatrixUnit: chunk ({self.chunk}) must divide k ({self.k})")
        if (self.scale_fmt is None) != (self.scale_block is None):
            raise ValueError("MatrixUnit: scale_fmt and scale_block go together")
        if self.scale_block is not None and self.k % self.scale_block:
            raise ValueError("MatrixUnit: scale_block must divide k")
        if self.algorithm == "grouped" and (self.group is None or self.chunk % self.group
                                            or self.scale_block % self.group):
            raise ValueError("MatrixUnit: a grouped model needs group dividing chunk and "
                             "scale_block")

    # the name of the accumulator format, as softfloat.accumulate reads a model
    @property
    def fmt(self) -> Format:
        """The accumulator (D) format: ``out_fmt``."""
        return self.out_fmt

    @property
    def scaled(self) -> bool:
        return self.scale_fmt is not None

    @property
    def output_mode(self) -> Rounding | None:
        """The rounding of ``output_rounding`` (a `softfloat.Rounding`; None
        without one)."""
        return None if self.output_rounding is None else _OUTPUT[self.output_rounding][0]

    @property
    def output_precision(self) -> int | None:
        """The significant bits ``output_rounding`` keeps (11 for RNE-FP16, 24 for
        the binary32 ones, 14 for RZ-E8M13; None without one)."""
        return None if self.output_rounding is None else _OUTPUT[self.output_rounding][1]

    def describe(self) -> str:
        """One line: the instruction and its parameters."""
        p = [f"{self.algorithm}", f"chunk={self.chunk}"]
        for name in ("frac_bits", "frac_bits2", "e_zero", "output_rounding", "group",
                     "products_per_step", "scale_block"):
            v = getattr(self, name)
            if v is not None:
                p.append(f"{name}={v}")
        if self.scale_fmt is not None:
            p.append(f"scale_fmt={self.scale_fmt.name}")
        return (f"{self.arch} {self.family} {self.instruction}: "
                f"{self.a_fmt.name} x {self.b_fmt.name} + {self.c_fmt.name}; " + ", ".join(p))
