"""Sums, dot products and matrix products with an explicit accumulation model.

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

__all__ = []

import dataclasses
import functools
import operator

import numpy as np

from . import _validate as V
from ._kernels.accum import (abs_range_f32, block_fma, matmul_f32_blocked, matmul_f32_seq,
                             reduce_program, sum_f32_seq)
from .context import kernel_policy, random_key, resolve
from .conversions import convert, from_bits, to_bits
from .flags import Flags
from .formats import FP32, Format, get_format
from .rounding import Rounding, get_rounding
from .specialize import kernel_fresh_nan
from .mma import MatrixUnit, canonical_arch, mma as _mma, tensor_core

__all__ = ["Accumulator", "BlockFMA", "MatrixUnit", "tensor_core", "block_fma_preset",
           "TENSOR_CORE_PRESETS", "sum", "dot",
           "matmul", "sum_values", "dot_values", "matmul_values", "ORDERS", "PRODUCTS"]

ORDERS = ("sequential", "pairwise", "blocked", "blas")
PRODUCTS = ("exact", "fused", "rounded")


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Accumulator:
    """An IEEE-style accumulation: every addition rounded once into ``fmt``.

    Parameters
    ----------
    fmt : Format or str
        The accumulator's format (``"fp32"``, ``"fp16"``, ...).
    rounding : str, optional
        Rounding mode of each addition (None: the context's).
    order : {"sequential", "pairwise", "blocked"} or nested tuples of indices
        The summation tree (see the module docstring).
    block : int, optional
        Block size for ``order="blocked"``.
    products : {"exact", "fused", "rounded"}
        Products kept exact (each enters one rounded addition, an FMA) or rounded
        into ``product_fmt`` (default: ``fmt``) first.
    product_fmt : Format or str, optional
    kahan : bool
        Compensated (Kahan) summation (sequential order only).
    """

    fmt: object = "fp32"
    rounding: object = None
    order: object = "sequential"
    block: object = None
    products: str = "exact"
    product_fmt: object = None
    kahan: bool = False

    def __post_init__(self):
        object.__setattr__(self, "fmt", get_format(self.fmt))
        if self.rounding is not None:
            get_rounding(self.rounding)
        if self.products not in PRODUCTS:
            raise ValueError(f"products must be one of {PRODUCTS}, got {self.products!r}")
        if self.product_fmt is not None:
            object.__setattr__(self, "product_fmt", get_format(self.product_fmt))
        if isinstance(self.order, str):
            if self.order not in ORDERS:
                raise ValueError(f"unknown order {self.order!r}; expected one of {ORDERS} "
                                 f"or an explicit tree of nested tuples of indices")
            if self.order == "blas":
                if self.fmt != FP32 or self.products not in ("exact", "fused") or self.kahan:
                    raise ValueError("order='blas' accumulates in fp32 with exact products "
                                     "(no kahan, no rounded products)")
                if self.rounding is not None and \
                        get_rounding(self.rounding) != Rounding.NEAREST_EVEN:
                    raise ValueError("order='blas' rounds to nearest even")
            if self.order == "blocked":
                if (not isinstance(self.block, (int, np.integer)) or isinstance(self.block, bool)
                        or self.block < 1):
                    raise ValueError(f"order='blocked' needs block=<positive int>, got "
                                     f"{self.block!r}")
        elif not isinstance(self.order, (tuple, list, int, np.integer)):
            raise TypeError(f"order must be a name in {ORDERS} or nested tuples of term "
                            f"indices, got {type(self.order).__name__}")
        if self.kahan and self.order != "sequential":
            raise ValueError("kahan=True sums in sequential order only")


# A block wider than any term count is one block; the bound keeps the kernel's
# int64 index arithmetic far from overflow.
_MAX_BLOCK_WIDTH = (1 << 31) - 1


@dataclasses.dataclass(frozen=True)
class BlockFMA:
    """The block fused multiply-add of tensor cores (see the module docstring).

    Parameters
    ----------
    width : int
        Products per block (V100 4, A100 8, H100/B200 16 for fp16/bf16 inputs).
    extra_bits : int
        Extra alignment bits below the frame's ``frame_bits`` fraction bits
        (V100 0, A100 1, H100/B200 2; negative for Hopper/Blackwell fp8).
    fmt : Format or str
        Format of each block's result, which is also the running accumulator.
    rounding : str
        Rounding of each block's result: ``toward_zero`` (NVIDIA, fp32 output) or
        ``nearest_even`` (fp16 output).
    frame_bits, frame_emin : int
        Fraction bits and smallest exponent of the alignment frame (binary32: 23, -126).
    """

    width: int = 4
    extra_bits: int = 0
    fmt: object = "fp32"
    rounding: str = "toward_zero"
    frame_bits: int = 23
    frame_emin: int = -126

    def __post_init__(self):
        object.__setattr__(self, "fmt", get_format(self.fmt))
        get_rounding(self.rounding)
        for name in ("width", "extra_bits", "frame_bits", "frame_emin"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise TypeError(f"BlockFMA.{name} must be an int, got {v!r}")
            object.__setattr__(self, name, int(v))     # Python ints reach the kernel
        if not 1 <= self.width <= _MAX_BLOCK_WIDTH:
            raise ValueError(f"BlockFMA.width must be in [1, 2**31 - 1], got {self.width}")
        if not -1074 <= self.frame_emin <= 1023:
            raise ValueError(f"BlockFMA.frame_emin must be in [-1074, 1023], got "
                             f"{self.frame_emin}")
        if not -23 <= self.extra_bits <= 8 or not 1 <= self.frame_bits <= 30:
            raise ValueError("BlockFMA: extra_bits must be in [-23, 8] and frame_bits in [1, 30]")


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


def _arch_name(acc):
    """The architecture an ``acc=`` string names (a GPU or architecture name that
    is not a format name), or None."""
    try:
        get_format(acc)
        return None
    except (ValueError, TypeError):
        pass
    try:
        return canonical_arch(acc)
    except ValueError:
        return None


def _model(acc, fmt: Format, order, block, products, product_fmt, kahan, rounding):
    """The model named by the keywords: an Accumulator, a BlockFMA or a MatrixUnit."""
    if isinstance(acc, (BlockFMA, MatrixUnit)):
        if order != "sequential" or kahan or products not in (None, "exact", "fused"):
            raise ValueError(f"a {type(acc).__name__} model fixes order and products; do "
                             f"not pass order=, kahan= or products=")
        if isinstance(acc, MatrixUnit) and rounding is not None:
            raise ValueError("a MatrixUnit model fixes its rounding; do not pass rounding=")
        return acc
    if isinstance(acc, str) and _arch_name(acc) is not None:
        return _model(tensor_core(acc, fmt), fmt, order, block, products, product_fmt,
                      kahan, rounding)
    if isinstance(acc, Accumulator):
        given = dict(order=order != "sequential", block=block is not None,
                     products=products is not None, product_fmt=product_fmt is not None,
                     kahan=bool(kahan), rounding=rounding is not None)
        if any(given.values()):
            raise ValueError("an Accumulator model carries its own order, block, products, "
                             "kahan and rounding; set them on the model")
        return acc
    if acc is None:
        acc = fmt
    if not isinstance(acc, (str, Format)):
        raise TypeError(f"acc must be a format, a format name, an Accumulator, a BlockFMA, "
                        f"a MatrixUnit or a GPU name, got {type(acc).__name__}")
    return Accumulator(acc, rounding, order, block, products or "exact", product_fmt,
                       bool(kahan))


# ---------------------------------------------------------------------------
# Programs: an order as a list of (kind, dst, src) operations on slots
# ---------------------------------------------------------------------------
def _tree_program(tree, K: int):
    """An explicit order tree -> program. Iterative (an explicit stack, no
    recursion), so trees of any depth compile; the ops are those of a depth-first
    walk: a leaf child enters its parent's slot (0 = first, 1 = add); an inner
    child gets the next slot number (pre-order), is compiled, then enters its
    parent's slot (3 = first, 2 = add)."""
    ops = []
    seen = []
    counter = 0

    def is_leaf(t):
        return isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_))

    def leaf(t):
        if not 0 <= int(t) < K:
            raise ValueError(f"order tree: index {int(t)} out of range for {K} terms")
        seen.append(int(t))
        return int(t)

    def inner(node):
        if not isinstance(node, (tuple, list)) or len(node) == 0:
            raise ValueError(f"order tree: expected an index or a non-empty tuple/list, "
                             f"got {type(node).__name__} {node!r:.60}")
        return node

    if is_leaf(tree):
        ops.append((0, 0, leaf(tree)))
    else:
        stack = [[inner(tree), 0, 0]]          # [node, slot, index of the next child]
        while stack:
            frame = stack[-1]
            node, slot, i = frame
            if i == len(node):
                stack.pop()
                if stack:
                    parent = stack[-1]
                    ops.append((3 if parent[2] == 0 else 2, parent[1], slot))
                    parent[2] += 1
                continue
            child = node[i]
            if is_leaf(child):
                ops.append((0 if i == 0 else 1, slot, leaf(child)))
                frame[2] += 1
            else:
                counter += 1
                stack.append([inner(child), counter, 0])
    if sorted(seen) != list(range(K)):
        raise ValueError(f"order tree must use every term index in range({K}) exactly once")
    return np.array(ops, np.int64).reshape(-1, 3), counter + 1


def _program(order, block, K: int, has_c: bool):
    if isinstance(order, str) and order == "sequential" or has_c:
        if has_c and order != "sequential":
            raise ValueError("an initial accumulator c= needs order='sequential'")
        if has_c:
            ops = [(4, 0, 0)] + [(1, 0, k) for k in range(K)]
        else:
            ops = [(0, 0, 0)] + [(1, 0, k) for k in range(1, K)]
        return np.array(ops, np.int64).reshape(-1, 3), 1
    if isinstance(order, str) and order == "pairwise":
        nodes = list(range(K))
        while len(nodes) > 1:
            nxt = [(nodes[i], nodes[i + 1]) for i in range(0, len(nodes) - 1, 2)]
            if len(nodes) % 2:
                nxt.append(nodes[-1])
            nodes = nxt
        return _tree_program(nodes[0], K)
    if isinstance(order, str) and order == "blocked":
        blocks = [tuple(range(s, min(K, s + block))) for s in range(0, K, block)]
        blocks = [b[0] if len(b) == 1 else b for b in blocks]
        return _tree_program(tuple(blocks) if len(blocks) > 1 else blocks[0], K)
    return _tree_program(order, K)


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------
_LUTS: dict = {}


def _to_f32(bits: np.ndarray, fin: Format) -> np.ndarray:
    """float32 values of encodings (exact for formats inside binary32's range; the
    caller checks). Formats of <= 16 bits go through a table."""
    if fin.nbits <= 16:
        key = (fin.ebits, fin.mbits, fin.bias, fin.kind)
        t = _LUTS.get(key)
        if t is None:
            allb = np.arange(1 << fin.nbits, dtype=np.int64).astype(fin.dtype)
            with np.errstate(over="ignore", invalid="ignore"):
                t = from_bits(allb, fin).astype(np.float32)
            _LUTS[key] = t
        return t[bits]
    with np.errstate(over="ignore", invalid="ignore"):
        return from_bits(bits, fin).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _f32_fits(fin: Format) -> bool:
    """Every finite value of fin is a binary32 number."""
    return (fin.max <= FP32.max and fin.emin - fin.mbits >= FP32.emin - FP32.mbits
            and fin.mbits <= 23)


@functools.lru_cache(maxsize=None)
def _products_exact(fin: Format) -> bool:
    """Every product of two finite values of fin is exact in binary32 (no overflow,
    no bits below 2**-149, at most 24 significant bits)."""
    return (_f32_fits(fin) and 2 * fin.precision <= 24 and fin.max * fin.max <= FP32.max
            and 2 * (fin.emin - fin.mbits) >= FP32.emin - FP32.mbits)


def _ulp_exp_of(vmin, fin: Format) -> int:
    """The exponent of the ulp of fin at the magnitude vmin (the smallest nonzero
    |value|; inf when there is none: 0)."""
    if not np.isfinite(vmin):
        return 0
    _, e = np.frexp(np.float64(vmin))
    return max(int(e) - 1, fin.emin) - fin.mbits


def _min_ulp_exp(vals: np.ndarray, fin: Format) -> int:
    nz = np.abs(vals[vals != 0])
    if nz.size == 0:
        return 0
    _, e = np.frexp(nz.min())
    return max(int(e) - 1, fin.emin) - fin.mbits


from ._kernels.mx import caller_flushes as _caller_flushes  # noqa: E402


def _fast_ok(model, fin: Format, res, return_flags) -> bool:
    return (isinstance(model, Accumulator) and model.fmt == FP32 and not model.kahan
            and isinstance(model.order, str) and model.order in ("sequential", "blocked")
            and model.products in ("exact", "fused") and not return_flags
            and res.rounding == Rounding.NEAREST_EVEN and not res.ftz and not res.daz
            and res.overflow in (None, "ieee") and _f32_fits(fin)
            and not _caller_flushes())          # FTZ/DAZ in MXCSR: the integer path


def _fast(A3, B3, has_b, C3, fin: Format, pol, block=None):
    """The native float32 path (sequential, or blocked with ``block``), or None where
    it would not be exact."""
    nb, m, K = A3.shape
    has_c = C3 is not None
    av = _to_f32(A3, fin)
    if not np.isfinite(av).all():
        return None
    if has_b:
        bv = _to_f32(B3, fin)
        if not np.isfinite(bv).all():
            return None
        if not _products_exact(fin):
            # products exact for these values? (binary32 range and 24 bits)
            if 2 * fin.precision > 24:
                return None
            amax, bmax = float(np.abs(av).max(initial=0)), float(np.abs(bv).max(initial=0))
            if (amax * bmax > FP32.max
                    or _min_ulp_exp(av, fin) + _min_ulp_exp(bv, fin) < FP32.emin - FP32.mbits):
                return None
        n = B3.shape[2]
        out = np.empty((nb, m, n), np.float32)
        Cf = from_bits(C3, FP32).astype(np.float32) if has_c else np.zeros((1, 1, 1), np.float32)
        if has_c and np.isnan(Cf).any():
            # a NaN addend decides the result's NaN (sign, payload, signaling or
            # not, the NaN policy): the general kernel's rules, not re-spelt here
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            if block is not None:
                if has_c:
                    return None
                matmul_f32_blocked(av, bv, block, out)
            else:
                matmul_f32_seq(av, bv, Cf, has_c, out)
    elif block is not None:
        return None
    elif not has_c:
        out = np.empty(nb * m, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            sum_f32_seq(av.reshape(nb * m, K), out)
        out = out.reshape(nb, m, 1)
    else:
        return None
    bits = out.view(np.uint32)
    nan = np.isnan(out)
    if nan.any():                       # only inf - inf: the policy's fresh NaN
        bits = bits.copy()
        bits[nan] = np.uint32(kernel_fresh_nan(pol))
    return bits


def _blas_check(res, return_flags):
    if return_flags:
        raise ValueError("order='blas' raises no flags (the BLAS does not report them); "
                         "use order='sequential' for flags")
    if (res.rounding != Rounding.NEAREST_EVEN or res.ftz or res.daz
            or res.overflow not in (None, "ieee")):
        raise ValueError("order='blas' is IEEE float32 arithmetic: nearest-even rounding, "
                         "no ftz/daz, IEEE overflow")


def _blas(A3, B3, has_b, C3, fin: Format, res, return_flags, pol):
    """The bounded fast model (see the module docstring): float32 BLAS."""
    _blas_check(res, return_flags)
    av = _to_f32(A3, fin)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if has_b:
            out = np.matmul(av, _to_f32(B3, fin))
        else:
            out = np.sum(av, axis=-1, dtype=np.float32, keepdims=True)
        if C3 is not None:
            out = out + from_bits(C3, FP32).astype(np.float32)
    bits = np.ascontiguousarray(out, np.float32).view(np.uint32)
    nan = np.isnan(out)
    if nan.any():
        bits = bits.copy()
        bits[nan] = np.uint32(kernel_fresh_nan(pol))
    return bits


def _accumulate(A3, B3, has_b, C3, model, fin: Format, res, return_flags, fast=True):
    """Run the model on A3 (nb, m, K) [and B3 (nb, K, n)]; returns accumulator
    encodings (nb, m, n), flags (or None) and the OR of all flags."""
    return_flags = V.boolean(return_flags, "return_flags")
    nb, m, K = A3.shape
    n = B3.shape[2] if has_b else 1
    afmt = model.fmt
    has_c = C3 is not None
    if K == 0:
        out = (np.broadcast_to(C3, (nb, m, n)).copy() if has_c
               else np.full((nb, m, n), 0, afmt.dtype))
        return out, (np.zeros((nb, m, n), np.uint8) if return_flags else None), 0
    if isinstance(model, MatrixUnit):
        if fin != model.a_fmt or fin != model.b_fmt:
            raise ValueError(f"{model.arch} {model.instruction} takes {model.a_fmt.name} x "
                             f"{model.b_fmt.name} operands, not {fin.name} (softfloat.mma.mma "
                             f"takes operands of two formats)")
        BB = B3 if has_b else np.zeros((nb, K, 1), fin.dtype)
        r = _mma(model, A3, BB, C3, return_flags=True)
        out, flg = r
        allf = int(np.bitwise_or.reduce(flg, axis=None)) if flg.size else 0
        return out, (flg if return_flags else None), allf
    pol = kernel_policy(res, afmt)
    if isinstance(model, Accumulator) and isinstance(model.order, str) \
            and model.order == "blas":
        if not _caller_flushes():
            return _blas(A3, B3, has_b, C3, fin, res, return_flags, pol), None, 0
        # FTZ/DAZ in the caller's MXCSR would flush the BLAS's float32 arithmetic: the
        # sequential order (one of the orders the bounded model allows) on the integer path
        _blas_check(res, return_flags)
        model = dataclasses.replace(model, order="sequential")
    if fast and res.fast_paths and _fast_ok(model, fin, res, return_flags):
        bits = _fast(A3, B3, has_b, C3, fin, pol,
                     model.block if model.order == "blocked" else None)
        if bits is not None:
            return bits, None, 0
    # One array type for every format (uint32) keeps the number of compiled
    # specialisations of the kernels at one.
    flg = np.zeros((nb, m, n) if return_flags else (1, 1, 1), np.uint8)
    out = np.empty((nb, m, n), np.uint32)
    iE, iM, ib, ik = fin.params
    aE, aM, ab, ak = afmt.params
    u32 = np.uint32
    A3 = np.ascontiguousarray(A3, u32)
    Cin = np.ascontiguousarray(C3, u32) if has_c else np.zeros((1, 1, 1), u32)
    BTin = (np.ascontiguousarray(np.swapaxes(B3, 1, 2), u32) if has_b
            else np.zeros((1, 1, 1), u32))
    if isinstance(model, BlockFMA):
        bres = dataclasses.replace(res, rounding=get_rounding(model.rounding))
        bpol = kernel_policy(bres, afmt)
        allf = block_fma(A3, BTin, Cin, has_c, out, flg, return_flags, int(model.width),
                         int(model.extra_bits), int(model.frame_bits), int(model.frame_emin),
                         iE, iM, ib, ik, aE, aM, ab, ak, pol, bpol, 64)
        return out.astype(afmt.dtype), (flg if return_flags else None), allf
    prog, nslots = _program(model.order, model.block, K, has_c)
    pfmt = model.product_fmt or afmt
    ppol = kernel_policy(res, pfmt)
    pE, pM, pb, pk = pfmt.params
    sr = res.rounding == Rounding.STOCHASTIC
    key = random_key(res.seed) if sr else 0
    allf = reduce_program(A3, BTin, has_b, Cin, has_c, out, flg, return_flags, prog, nslots,
                          iE, iM, ib, ik, aE, aM, ab, ak, pol,
                          has_b and model.products == "rounded", pE, pM, pb, pk, ppol,
                          bool(model.kahan), key, 64)
    return out.astype(afmt.dtype), (flg if return_flags else None), allf


def _finish(out, flg, allf, afmt: Format, out_fmt, out_rounding, res, policies, shape,
            return_flags):
    ctx = res.context
    if allf:
        ctx.flags |= Flags(int(allf))
    ofmt = afmt if out_fmt is None else get_format(out_fmt)
    if ofmt != afmt:
        r = convert(out, afmt, ofmt, out_rounding, return_flags=return_flags, **policies)
        if return_flags:
            out, f2 = r
            flg = flg | f2
        else:
            out = r
    out = out.reshape(shape)
    if return_flags:
        return out, flg.reshape(shape)
    return out


_POLICY_KEYS = ("subnormals", "ftz", "daz", "overflow", "tininess", "nan", "sr_bits", "seed",
                "rng")


def _split_policies(policies):
    bad = set(policies) - set(_POLICY_KEYS)
    if bad:
        raise TypeError(f"unexpected keyword(s) {sorted(bad)}; policies are {_POLICY_KEYS}")
    return policies


def _resolve_for(model, rounding, policies):
    r = rounding
    if isinstance(model, Accumulator) and model.rounding is not None:
        r = model.rounding
    return resolve(r, **policies)


def matmul(a, b, fmt, *, acc=None, order="sequential", block=None, products=None,
           product_fmt=None, kahan=False, out_fmt=None, rounding=None, out_rounding=None,
           c=None, return_flags=False, **policies):
    """Matrix product of encodings of ``fmt`` with an explicit accumulation model.

    ``a`` (..., m, k) and ``b`` (..., k, n) as in `numpy.matmul` (1-D operands
    promoted and the added axis removed; leading axes broadcast). See the module
    docstring for ``acc``, ``order``, ``block``, ``products``, ``kahan``; ``rounding``
    is the accumulator's rounding (default: the context's), ``out_fmt`` and
    ``out_rounding`` the final conversion (default: keep the accumulator's format).
    ``c``: initial accumulator (encodings of the accumulator's format).

    Wraps `softfloat._kernels.accum.reduce_program` / `block_fma` /
    `matmul_f32_seq` (the float32 fast path).
    """
    policies = _split_policies(policies)
    fin = V.target_format(fmt)
    A = V.as_bits(a, fin, "a")
    B = V.as_bits(b, fin, "b")
    if A.ndim == 0 or B.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    va, vb = A.ndim == 1, B.ndim == 1
    if va:
        A = A[None, :]
    if vb:
        B = B[:, None]
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"matmul: shapes {A.shape} and {B.shape} do not align "
                         f"(k = {A.shape[-1]} vs {B.shape[-2]})")
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    m, K, n = A.shape[-2], A.shape[-1], B.shape[-1]
    nbt = int(np.prod(batch, dtype=np.int64))
    A3 = np.ascontiguousarray(np.broadcast_to(A, batch + (m, K))).reshape(nbt, m, K)
    B3 = np.ascontiguousarray(np.broadcast_to(B, batch + (K, n))).reshape(nbt, K, n)
    model = _model(acc, fin, order, block, products, product_fmt, kahan, rounding)
    res = _resolve_for(model, rounding, policies)
    shape = batch + (m, n)
    C3 = None
    if c is not None:
        Cb = V.as_bits(c, model.c_fmt if isinstance(model, MatrixUnit) else model.fmt, "c")
        C3 = np.ascontiguousarray(np.broadcast_to(Cb, shape)).reshape(nbt, m, n)
    out, flg, allf = _accumulate(A3, B3, True, C3, model, fin, res, return_flags)
    final = batch + ((m,) if not va else ()) + ((n,) if not vb else ())
    return _finish(out, flg, allf, model.fmt, out_fmt, out_rounding, res, policies, final,
                   return_flags)


def dot(a, b, fmt, *, acc=None, order="sequential", block=None, products=None,
        product_fmt=None, kahan=False, out_fmt=None, rounding=None, out_rounding=None,
        return_flags=False, **policies):
    """Inner product of two 1-D arrays of encodings of ``fmt`` (a 0-d array out);
    the model's keywords as in `matmul`."""
    fin = V.target_format(fmt)
    A = V.as_bits(a, fin, "a")
    B = V.as_bits(b, fin, "b")
    if A.ndim != 1 or B.ndim != 1 or A.shape != B.shape:
        raise ValueError(f"dot: expected two 1-D arrays of the same length, got shapes "
                         f"{A.shape} and {B.shape}")
    return matmul(A, B, fin, acc=acc, order=order, block=block, products=products,
                  product_fmt=product_fmt, kahan=kahan, out_fmt=out_fmt, rounding=rounding,
                  out_rounding=out_rounding, return_flags=return_flags, **policies)


def sum(x, fmt, axis=-1, *, acc=None, order="sequential", block=None, kahan=False,
        out_fmt=None, rounding=None, out_rounding=None, return_flags=False, **policies):
    """Sum encodings of ``fmt`` along ``axis`` (an int, or None for all elements)
    with an explicit accumulation model (see the module docstring; a `BlockFMA`
    model sums the terms as products with 1)."""
    policies = _split_policies(policies)
    fin = V.target_format(fmt)
    X = V.as_bits(x, fin, "x")
    if axis is None:
        X = X.reshape(1, X.size)
        shape = ()
    else:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"axis must be an int or None, got {axis!r}")
        if X.ndim == 0:
            raise ValueError("sum: a 0-d array has no axis; use axis=None")
        ax = operator.index(axis)
        if not -X.ndim <= ax < X.ndim:
            raise ValueError(f"axis {ax} is out of bounds for an array of dimension {X.ndim}")
        X = np.moveaxis(X, ax, -1)
        shape = X.shape[:-1]
        X = X.reshape(int(np.prod(shape, dtype=np.int64)), X.shape[-1])
    model = _model(acc, fin, order, block, None, None, kahan, rounding)
    res = _resolve_for(model, rounding, policies)
    A3 = np.ascontiguousarray(X)[None]
    if isinstance(model, (BlockFMA, MatrixUnit)):
        one = to_bits(np.ones(A3.shape[2:], np.float64), fin)
        B3 = np.ascontiguousarray(one.reshape(1, -1, 1))
        out, flg, allf = _accumulate(A3, B3, True, None, model, fin, res, return_flags)
    else:
        out, flg, allf = _accumulate(A3, None, False, None, model, fin, res, return_flags)
    return _finish(out, flg, allf, model.fmt, out_fmt, out_rounding, res, policies, shape,
                   return_flags)


# ---------------------------------------------------------------------------
# The values face
# ---------------------------------------------------------------------------
def _exact_bits(x, fin: Format, name: str) -> np.ndarray:
    v = V.as_values(x, name)
    bits = to_bits(v, fin, "nearest_even")
    back = from_bits(bits, fin)
    v64 = v.astype(np.float64)
    same = (back == v64) | (np.isnan(back) & np.isnan(v64))
    if not np.all(same):
        bad = v64[~same].ravel()[0]
        raise ValueError(f"{name}: {bad!r} is not exactly representable in {fin.name}; "
                         f"round it first (softfloat.quantize(x, {fin.name!r}))")
    # signed zeros: to_bits keeps the sign
    return bits


def _values_out(r, fmt_out, return_flags):
    if return_flags:
        return from_bits(r[0], fmt_out), r[1]
    return from_bits(r, fmt_out)


def _out_format(acc, fin, out_fmt, kw):
    if out_fmt is not None:
        return get_format(out_fmt)
    m = _model(acc, fin, kw.get("order", "sequential"), kw.get("block"), kw.get("products"),
               kw.get("product_fmt"), kw.get("kahan", False), kw.get("rounding"))
    return m.fmt


def _values_fast(a, b, fin: Format, acc, out_fmt, rounding, kw):
    """matmul_values(check=False) for 2-D operands and an fp32 accumulator in
    sequential, blocked or blas order, straight on float32 values (no trip through
    encodings); None where it does not apply. The sequential kernel is the same one
    the encodings path uses (`_fast`): exact products, IEEE float32 additions in k
    order (infinities and NaNs follow IEEE arithmetic, as the model does)."""
    if set(kw) - {"order", "products", "block"} or \
            kw.get("products") not in (None, "exact", "fused") or _caller_flushes():
        return None                       # (FTZ/DAZ in MXCSR: the encodings path)
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == 2
            and b.ndim == 2 and a.dtype in (np.float32, np.float64)
            and b.dtype in (np.float32, np.float64)):
        return None
    if out_fmt is not None and get_format(out_fmt) != FP32:
        return None
    model = _model(acc, fin, kw.get("order", "sequential"), kw.get("block"),
                   kw.get("products"), None, False, rounding)
    if not (isinstance(model, Accumulator) and model.fmt == FP32 and isinstance(model.order, str)
            and model.order in ("sequential", "blas", "blocked")
            and model.products in ("exact", "fused")):
        return None
    res = _resolve_for(model, rounding, {})
    if (res.rounding != Rounding.NEAREST_EVEN or res.ftz or res.daz
            or res.overflow not in (None, "ieee")):
        if model.order == "blas":
            _blas_check(res, False)
        return None
    if not _f32_fits(fin) or 2 * fin.precision > 24:
        return None
    m, K = a.shape
    n = b.shape[1]
    a32 = np.ascontiguousarray(a, np.float32)
    b32 = np.ascontiguousarray(b, np.float32)
    if model.order != "blas" and not _products_exact(fin):
        # (blas: no scan; its bound covers products that round in float32)
        # products exact for these values? (no overflow; every product's last bit at
        # or above 2**-149: the smallest ulps of a and b multiply to at least that)
        amax, amin = abs_range_f32(a32.reshape(-1))
        bmax, bmin = abs_range_f32(b32.reshape(-1))
        with np.errstate(over="ignore", invalid="ignore"):
            if not (float(amax) * float(bmax) <= FP32.max
                    and _ulp_exp_of(amin, fin) + _ulp_exp_of(bmin, fin)
                    >= FP32.emin - FP32.mbits):
                return None
    if K == 0:
        return np.zeros((m, n), np.float32)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        if model.order == "blas":
            return np.matmul(a32, b32)
        out = np.empty((1, m, n), np.float32)
        if model.order == "blocked":
            matmul_f32_blocked(a32[None], b32[None], model.block, out)
        else:
            matmul_f32_seq(a32[None], b32[None], np.zeros((1, 1, 1), np.float32), False, out)
    return out[0]


def _check_matmul_shapes(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError("matmul: operands must have at least one dimension")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ValueError(f"matmul: shapes {sa} and {sb} do not align (k = {ka} vs {kb})")


def matmul_values(a, b, fmt, *, acc=None, out_fmt=None, rounding=None, check=True,
                  out_dtype=np.float64, **kw):
    """`matmul` on float arrays whose entries are values of ``fmt``; returns the
    values of the result (``out_dtype``: float64, or float32 where the output
    format fits in it).

    ``check=True`` (default): every entry is verified to be exactly representable in
    ``fmt`` (ValueError otherwise). ``check=False`` is the validated-values entry
    point for callers that construct their operands as values of ``fmt`` (nn's
    activations and weights, rounded once when they were made): the entries are not
    scanned again (entries that are not values of ``fmt`` give unspecified, but
    memory-safe, results); shapes are always checked. With ``check=False``, 2-D
    operands and an fp32 accumulator in sequential, blocked or blas order run straight on
    float32 values (the same kernels as the encodings path)."""
    fin = V.target_format(fmt)
    if out_dtype not in (np.float64, np.float32):
        raise ValueError(f"out_dtype must be numpy.float64 or numpy.float32, got {out_dtype!r}")
    if not isinstance(check, (bool, np.bool_)):
        raise TypeError(f"check must be True or False, got {check!r}")
    _check_matmul_shapes(a, b)
    if not check:
        r = _values_fast(a, b, fin, acc, out_fmt, rounding, kw)
        if r is not None:
            return r.astype(out_dtype, copy=False)
        A = to_bits(V.as_values(a, "a"), fin, "nearest_even")
        B = to_bits(V.as_values(b, "b"), fin, "nearest_even")
    else:
        A, B = _exact_bits(a, fin, "a"), _exact_bits(b, fin, "b")
    r = matmul(A, B, fin, acc=acc, out_fmt=out_fmt, rounding=rounding, **kw)
    ofmt = _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding))
    if out_dtype == np.float32 and not (ofmt == FP32 or _f32_fits(ofmt)):
        raise ValueError(f"out_dtype float32 cannot hold the values of {ofmt.name}")
    r = _values_out(r, ofmt, kw.get("return_flags", False))
    if isinstance(r, tuple):
        return r[0].astype(out_dtype, copy=False), r[1]
    return r.astype(out_dtype, copy=False)


def dot_values(a, b, fmt, *, acc=None, out_fmt=None, rounding=None, **kw):
    """`dot` on exactly representable float values; float64 out."""
    fin = V.target_format(fmt)
    r = dot(_exact_bits(a, fin, "a"), _exact_bits(b, fin, "b"), fin, acc=acc,
            out_fmt=out_fmt, rounding=rounding, **kw)
    return _values_out(r, _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding)),
                       kw.get("return_flags", False))


def sum_values(x, fmt, axis=-1, *, acc=None, out_fmt=None, rounding=None, **kw):
    """`sum` on exactly representable float values; float64 out."""
    fin = V.target_format(fmt)
    r = sum(_exact_bits(x, fin, "x"), fin, axis, acc=acc, out_fmt=out_fmt,
            rounding=rounding, **kw)
    return _values_out(r, _out_format(acc, fin, out_fmt, dict(kw, rounding=rounding)),
                       kw.get("return_flags", False))
