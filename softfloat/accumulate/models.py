"""The accumulation model records and the reading of ``acc=``.

`Accumulator` (every addition rounded once into a format, in a stated order, with
exact or rounded products, optionally compensated) and `BlockFMA` (the block fused
multiply-add of tensor cores, after Fasi et al. and Khattak & Mikaitis) validate
their fields when made; `resolve_model` turns the keywords of `sum`/`dot`/`matmul`
(``acc=`` a format, a model, a `MatrixUnit` or a GPU name, and ``order=``,
``block=``, ``products=``, ``kahan=``, ``rounding=``) into one model. The models
themselves are described in the package docstring (softfloat/accumulate/__init__.py).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..formats import FP32, Format, get_format
from ..mma import MatrixUnit, canonical_arch, tensor_core
from ..rounding import Rounding, get_rounding

__all__ = ["Accumulator", "BlockFMA", "ORDERS", "PRODUCTS"]

ORDERS = ("sequential", "pairwise", "blocked", "blas")
PRODUCTS = ("exact", "fused", "rounded")


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


def _format_or_device(acc: str) -> None:
    """ValueError naming the formats and the devices when ``acc`` is neither."""
    try:
        get_format(acc)
    except ValueError:
        from ..formats import formats
        from ..mma import ARCH_ALIASES
        raise ValueError(
            f"unknown acc {acc!r}: neither a format nor a device. Formats: "
            f"{', '.join(f.name for f in formats())}. Devices (matrix units, acc=<name>): "
            + "; ".join(f"{a}: {', '.join(v)}" for a, v in ARCH_ALIASES.items())) from None


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


def resolve_model(acc, fmt: Format, order, block, products, product_fmt, kahan, rounding):
    """The model named by the keywords: an Accumulator, a BlockFMA or a MatrixUnit."""
    if isinstance(acc, (BlockFMA, MatrixUnit)):
        if order != "sequential" or kahan or products not in (None, "exact", "fused"):
            raise ValueError(f"a {type(acc).__name__} model fixes order and products; do "
                             f"not pass order=, kahan= or products=")
        if block is not None or product_fmt is not None:
            raise ValueError(f"a {type(acc).__name__} model fixes its blocks and products; "
                             f"do not pass block= or product_fmt=")
        if isinstance(acc, MatrixUnit) and rounding is not None:
            raise ValueError("a MatrixUnit model fixes its rounding; do not pass rounding=")
        return acc
    if isinstance(acc, str) and _arch_name(acc) is not None:
        return resolve_model(tensor_core(acc, fmt), fmt, order, block, products, product_fmt,
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
    if isinstance(acc, str):
        _format_or_device(acc)
    if not isinstance(acc, (str, Format)):
        raise TypeError(f"acc must be a format, a format name, an Accumulator, a BlockFMA, "
                        f"a MatrixUnit or a GPU name, got {type(acc).__name__}")
    return Accumulator(acc, rounding, order, block, products or "exact", product_fmt,
                       bool(kahan))
