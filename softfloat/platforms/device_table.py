"""Which devices the library describes, and where each is described: one table
(`devices`) over the three kinds of device record.

* ``platform``: a `Platform` preset (softfloat/platforms/presets.py, ``PRESETS``,
  `get_platform`): what a machine or library does for elementwise operations,
  conversions, NaNs, scalars, fused ops and reductions; a platform whose
  reductions are transcribed bit for bit names the module of its registered
  models (``torch_cpu``: softfloat/platforms/torch_cpu/).
* ``matrix unit``: a GPU matrix-instruction architecture (softfloat/mma/presets.py,
  ``ARCHS``, ``INSTRUCTIONS``, `softfloat.tensor_core`), the models behind
  ``acc=`` a GPU or architecture name; GPU names are its aliases (``"h100"`` is
  ``hopper``).
* ``block-FMA``: a paper-based `BlockFMA` tensor-core preset (`TENSOR_CORE_PRESETS`,
  `softfloat.block_fma_preset`), kept beside the matrix units it agrees with on
  fp16/bf16/tf32 inputs. Its row is named ``<gpu>_blockfma`` (``h100_blockfma``:
  ``block_fma_preset("h100")``), so that a name means one device: ``"h100"`` is
  the matrix unit, as under ``acc=``.
* ``fp8 GEMM``: an fp8 GEMM model of a library on a matrix unit
  (`softfloat.mx_gemm.FP8_GEMM_PRESETS`, `softfloat.mx_gemm.fp8_gemm_model`).

Every name and alias of the table names one row (tests/test_platforms.py).

Each row says where its record is defined (``module``, read from the lookup
function itself) and the call that returns it (``lookup``, an expression in the
``softfloat`` namespace ``sf``):

>>> import softfloat.platforms as P
>>> [(d.name, d.kind, d.lookup) for d in P.devices() if "h100" in d.name + str(d.aliases)]
[('hopper', 'matrix unit', "sf.tensor_core('hopper')"), ('h100_blockfma', 'block-FMA', "sf.block_fma_preset('h100')")]
"""
from __future__ import annotations

from dataclasses import dataclass

from ..accumulate import TENSOR_CORE_PRESETS, block_fma_preset
from ..mma import ARCH_ALIASES, ARCHS, tensor_core
from ..model_hook import MODEL_MODULES
from ..mx_gemm import FP8_GEMM_PRESETS, fp8_gemm_model
from .presets import _ALIASES, PRESETS, get_platform

__all__ = ["Device", "DEVICE_KINDS", "devices"]

DEVICE_KINDS = ("platform", "matrix unit", "block-FMA", "fp8 GEMM")


@dataclass(frozen=True)
class Device:
    """One device record: its ``name`` and ``kind`` (`DEVICE_KINDS`), the other
    names it is found by (``aliases``), the module that describes it, the module
    of its registered bit-exact models (``models``, or None), ``lookup``, the
    call that returns its record (default formats: fp16 in, fp32 out), and the
    input formats a block-FMA preset covers (``formats``)."""
    name: str
    kind: str
    module: str
    lookup: str
    aliases: tuple = ()
    models: str | None = None
    formats: tuple = ()


def devices(kind: str | None = None) -> list:
    """Every device the library describes (`Device` rows), or those of one
    ``kind`` (one of `DEVICE_KINDS`)."""
    if kind is not None and kind not in DEVICE_KINDS:
        raise ValueError(f"kind must be None or one of {DEVICE_KINDS}, got {kind!r}")
    rows = []
    for name in PRESETS:
        rows.append(Device(name, "platform", get_platform.__module__,
                           f"sf.get_platform({name!r})",
                           tuple(a for a, n in _ALIASES.items() if n == name),
                           MODEL_MODULES.get(name)))
    for arch in ARCHS:
        rows.append(Device(arch, "matrix unit", tensor_core.__module__,
                           f"sf.tensor_core({arch!r})",
                           tuple(ARCH_ALIASES.get(arch, ()))))
    for gpu, table in TENSOR_CORE_PRESETS.items():
        rows.append(Device(f"{gpu}_blockfma", "block-FMA", block_fma_preset.__module__,
                           f"sf.block_fma_preset({gpu!r})", formats=tuple(table)))
    for name in FP8_GEMM_PRESETS:
        rows.append(Device(name, "fp8 GEMM", fp8_gemm_model.__module__,
                           f"sf.mx_gemm.fp8_gemm_model({name!r})"))
    return [r for r in rows if kind is None or r.kind == kind]
