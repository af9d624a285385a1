"""Sums, dot products and matrix products with an explicit accumulation model.

The package: `models` (the `Accumulator` and `BlockFMA` records and the reading
of ``acc=``), `paper_presets` (the paper-based tensor-core `BlockFMA` presets;
the validated GPU matrix units are in softfloat/mma/presets.py), `programs`
(orders compiled to slot programs), `dispatch` (which kernel or fast path runs a
model), `bits` (the encodings API) and `values` (the values API). This docstring
states the API and the models every file implements.

Public API (signatures are stable; other modules may code against them)
----------------------------------------------------------------------
``sum(x, fmt, axis=-1, *, acc=None, order="sequential", block=None, kahan=False,
      out_fmt=None, rounding=None, out_rounding=None, return_flags=False, **policies)``
    Sum encodings ``x`` of ``fmt`` along ``axis`` (an int; None sums everything).
``dot(a, b, fmt, *, acc=None, order=..., ..., return_flags=False, **policies)``
    Inner product of two 1-D encodings arrays of ``fmt`` (the same length).
``matmul(a, b, fmt, *, acc=None, order="sequential", block=None, products=None,
         kahan=False, out_fmt=None, rounding=None, out_rounding=None, c=None,
         return_flags=False, **policies)``
    ``a`` (..., m, k) @ ``b`` (..., k, n) on encodings of ``fmt`` (1-D operands as in
    ``numpy.matmul``; leading dimensions broadcast). ``c`` (optional, encodings of the
    accumulator format, broadcastable to the result): the initial accumulator value
    (D = A B + C, as tensor cores do).
``matmul_values(a, b, fmt, *, acc=None, out_fmt=None, rounding=None, **kw)``
    The same on float64 arrays whose entries are exactly representable in ``fmt``
    (anything else raises ValueError); returns float64 values of ``out_fmt``.
``dot_values``, ``sum_values``: the values face of ``dot`` and ``sum``.

All return encodings of ``out_fmt`` (default: the accumulator's format), or
``(encodings, flags)`` with ``return_flags=True`` (uint8 per output element, the OR
of the flags raised on the way to it). Flags are OR-ed into the context's sticky flags.

The accumulation model
----------------------
``acc`` is a format (``"fp32"``, ``softfloat.FP16``, ...), a `Accumulator`, a
`BlockFMA`, a `MatrixUnit` (softfloat.mma: a GPU matrix instruction, K run as
the chain of instructions), or a GPU or architecture name (``"v100"``, ``"a100"``,
``"h100"``, ``"b200"``, ``"hopper"``, ``"mi300x"``, ...: ``tensor_core(name, fmt)``,
the instruction a dense GEMM uses). ``acc=None`` accumulates in ``fmt`` itself
(every addition rounded to the working precision, as in MATLAB's chop).

`Accumulator(fmt, rounding=None, order="sequential", block=None, products="exact",
product_fmt=None, kahan=False)`:

* terms: the inputs themselves (``sum``) or the products ``a_i * b_i``: ``"exact"``
  (kept exactly; each enters one rounded addition, so a sequential sum is a chain of
  fused multiply-adds; ``"fused"`` is an alias) or ``"rounded"`` (rounded into
  ``product_fmt``, default the accumulator format, before being added).
* order: ``"sequential"`` (((t0 + t1) + t2) + ...), ``"pairwise"`` (a balanced binary
  tree: level by level, adjacent pairs are added; an odd last node moves up
  unchanged), ``"blocked"`` (sequential sums of ``block`` consecutive terms, then a
  sequential sum of the block sums: Higham's blocked summation), or an explicit tree:
  nested tuples/lists of term indices, each index in ``range(k)`` exactly once, e.g.
  ``((0, 1), (2, 3))``. A node's value is its children summed left to right: the first
  child rounded into the accumulator, then ``v = round(v + child)`` for each next child,
  where a leaf child enters exactly and a node child enters as its rounded value.
  ``"blas"``: the fast model (fp32 accumulator, nearest-even, exact products only;
  see "Orders and their guarantees" below).
* every addition rounds once into the accumulator format with ``rounding`` (default:
  the context's) and the context's policies (subnormals, overflow, NaN, ...).
  Stochastic rounding draws one random number per addition from the seeded stream.
* ``kahan=True``: compensated (Kahan) summation in the accumulator format, sequential
  order only: ``y = x - c; t = s + y; c = (t - s) - y; s = t``, each step rounded.

`BlockFMA(width, extra_bits=0, fmt="fp32", rounding="toward_zero", frame_bits=23,
frame_emin=-126)`: the tensor-core model of Fasi, Higham, Mikaitis & Pranesh (2021)
and Khattak & Mikaitis (2025). Terms are taken in blocks of ``width`` products (the
last block padded with zeros); for each block with running accumulator ``c``:
products are exact; the exponent of a product is ``ea + eb`` (the inputs' binade
exponents, subnormals counted at emin: products are not normalised); the block's
exponent ``E`` is the largest over nonzero products and ``c`` (``c`` counted at
``max(floor(log2|c|), frame_emin)``); every term is truncated toward zero to a
multiple of ``2**(E - frame_bits - extra_bits)`` (no guard, round or sticky bits);
the truncated terms are added exactly, normalised once and rounded into ``fmt`` with
``rounding`` (truncation on NVIDIA for fp32 output, nearest-even for fp16 output);
the result is the next block's ``c``. NaN or infinite terms give NaN/inf for the
whole dot product (NaN if any NaN or both infinities).

Fast path: ``acc="fp32"`` with ``nearest_even``, sequential or blocked order, exact products of
inputs whose products are exact in float32 (fp16, bf16 within range, fp8), no FTZ/DAZ,
IEEE overflow, finite inputs and no ``return_flags``: computed with native float32
arithmetic (vectorised over the output columns, the k order kept), which is provably
the same (exact products; IEEE float32 addition is RNE). That path does not raise
the context's sticky flags (ask for ``return_flags=True`` to get them: that runs
the integer kernel).

Orders and their guarantees
---------------------------
* ``"sequential"``, ``"pairwise"``, ``"blocked"``, explicit trees, Kahan, and every
  `BlockFMA` (tensor-core) model are **exact models**: the result is the bit pattern
  the model defines (tests compare each with a Fraction-arithmetic reference, bit for
  bit, flags included). ``"blocked"`` is Higham's blocked summation (block sums, then
  their sum, every addition rounded into the accumulator); the tensor-core models
  sum each k-block exactly (after their alignment truncation) and round once per block.
* ``"blas"`` is a **bounded model**, the promise a GPU's tensor cores or a CPU BLAS
  make for fp32 accumulation: each output is a float32 sum of the K products (plus
  ``c``) in an unspecified order, computed by NumPy's float32 ``matmul`` (BLAS) or
  ``sum``. It needs an fp32 accumulator, nearest-even rounding, exact products, IEEE
  overflow, no FTZ/DAZ and no ``return_flags`` (the BLAS raises no flags; the
  context's sticky flags are left as they are), else ValueError. Inputs are converted
  to float32 exactly. The products ``a_i b_i`` are exact in float32 when the inputs
  have at most 12 significant bits (fp16, bf16, tf32, fp8) and the exact product lies
  in [2**-149, 2**128) with its last bit at or above 2**-149: always for fp16 and fp8
  (fp16 products lie in [2**-48, 2**32)), but not for bf16 (products below 2**-126
  lose bits in float32's subnormals and below 2**-149 vanish; above float32's
  largest value they overflow) nor for inputs of more than 12 bits (tf32's 11 bits
  are fine, fp32 inputs are not: their products round). The guarantee, for finite
  results with no overflow anywhere, with u = 2**-24, p_i the exact products and
  s = c + sum p_i:

      |result - s| <= gamma(K) * (|c| + sum |p_i|) + K * 2**-150,
      gamma(K) = K u / (1 - K u),

  where the last term is zero when every product is exact (then the bound is the
  classical one for recursive summation in any order, Higham 2002, eq. 4.4, with K
  additions). It assumes a conventional GEMM (each product enters once; BLAS
  libraries may use FMA, blocking, vector lanes or wider accumulators, all within
  the bound; not Strassen-like algorithms). NaNs come out as the policy's fresh
  NaN of the accumulator; infinities and overflow follow IEEE float32 arithmetic in the order
  the BLAS chose. The tests check the bound on cancelling and wide-range inputs.

GPU matrix units: `tensor_core` gives the `MatrixUnit` models of softfloat.mma,
every instruction MMA-Sim 2.1.1 models (NVIDIA Volta to Blackwell, AMD CDNA1-3),
validated against it bit for bit (docs/matrix-units.md). The paper-based
`BlockFMA` presets (`block_fma_preset`, `TENSOR_CORE_PRESETS`: fp16, bf16, tf32)
remain as generic models. Valpey, Li, Pai & Gopalakrishnan (2025,
arXiv:2502.15999) report that V100-A100 accumulation is not round-toward-zero and
needs 3 extra carry-out bits for a 5-term block; the presets follow Fasi et al. and
Khattak & Mikaitis, and a `BlockFMA` with other parameters can be built directly.
"""
from __future__ import annotations

from ..mma import MatrixUnit, tensor_core
from .bits import dot, matmul, sum
from .models import ORDERS, PRODUCTS, Accumulator, BlockFMA
from .paper_presets import TENSOR_CORE_PRESETS, block_fma_preset
from .values import dot_values, matmul_values, sum_values

__all__ = ["Accumulator", "BlockFMA", "MatrixUnit", "tensor_core", "block_fma_preset",
           "TENSOR_CORE_PRESETS", "sum", "dot",
           "matmul", "sum_values", "dot_values", "matmul_values", "ORDERS", "PRODUCTS"]
