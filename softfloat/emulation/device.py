"""The emulated device: a small frozen record of what ``sf.emulate`` was asked
for (the device name, its architecture, cuBLAS's split of K, where the tf32
switch is read, strict mode), validated once when the mode is entered."""
from __future__ import annotations

from dataclasses import dataclass

# Devices the cuBLAS-level GEMM models know besides the architecture and GPU
# names of softfloat.mma.tensor_core (name -> architecture).
EXTRA_DEVICES = {"h100_pcie": "hopper", "h100_sxm": "hopper", "rtx4060": "ada"}


class EmulationError(RuntimeError):
    """An op that ``sf.emulate(strict=True)`` has no model for, or a tensor it
    cannot take (a CUDA tensor)."""


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def canonical_device(name) -> tuple:
    """(device name as given, normalised; its architecture) or ValueError
    listing the valid names."""
    from ..mma.presets import ARCH_ALIASES, canonical_arch
    if not isinstance(name, str):
        raise TypeError(f"device must be a str such as 'h100', got {type(name).__name__}")
    key = _norm(name)
    if key in EXTRA_DEVICES:
        return key, EXTRA_DEVICES[key]
    try:
        return key, canonical_arch(name)
    except ValueError:
        names = sorted(EXTRA_DEVICES) + [n for a, al in ARCH_ALIASES.items() for n in (a, *al)]
        raise ValueError(f"unknown device {name!r}; expected one of: {', '.join(names)}") from None


def check_splitk(splitk):
    """None, "auto" or (S, order) with S >= 1 and order one of
    softfloat.cublas.SPLIT_ORDERS."""
    from ..cublas import SPLIT_ORDERS
    if splitk is None or splitk == "auto":
        return splitk
    if (isinstance(splitk, tuple) and len(splitk) == 2 and isinstance(splitk[0], int)
            and not isinstance(splitk[0], bool) and splitk[0] >= 1
            and splitk[1] in SPLIT_ORDERS):
        return splitk
    raise ValueError(f"splitk must be None, 'auto' or (S, order) with an int S >= 1 and "
                     f"order one of {SPLIT_ORDERS}, got {splitk!r}")


@dataclass(frozen=True)
class EmulatedDevice:
    """What one ``sf.emulate(...)`` region computes as.

    name : the device as given, normalised ("h100", "h100_pcie", "rtx4060", ...)
    arch : its architecture ("hopper", "ada", ...)
    splitk : None, "auto" or (S, order), passed to softfloat.cublas.gemm
    allow_tf32 : None (read torch.backends.cuda.matmul.allow_tf32 at each
        float32 GEMM, as torch does) or a bool that overrides it
    strict : raise on the first op without a model instead of running it natively
    """
    name: str
    arch: str
    splitk: object = None
    allow_tf32: object = None
    strict: bool = False

    @classmethod
    def make(cls, device, *, splitk=None, allow_tf32=None, strict=False):
        name, arch = canonical_device(device)
        if not isinstance(strict, bool):
            raise TypeError(f"strict must be a bool, got {type(strict).__name__}")
        if allow_tf32 is not None and not isinstance(allow_tf32, bool):
            raise TypeError(f"allow_tf32 must be None (read torch.backends.cuda.matmul."
                            f"allow_tf32) or a bool, got {type(allow_tf32).__name__}")
        return cls(name, arch, check_splitk(splitk), allow_tf32, strict)

    def tf32(self) -> bool:
        """Whether a float32 GEMM runs as tf32 now."""
        if self.allow_tf32 is not None:
            return self.allow_tf32
        import torch
        return bool(torch.backends.cuda.matmul.allow_tf32)
