"""torch tensors <-> arrays of the library's encodings (no rounding anywhere:
the bits are reinterpreted)."""
from __future__ import annotations

import numpy as np
import torch

# torch dtype -> (the library's format name, the torch integer dtype of the same width)
FORMATS = {
    torch.float32: ("fp32", torch.int32),
    torch.float16: ("fp16", torch.int16),
    torch.bfloat16: ("bf16", torch.int16),
    torch.float8_e4m3fn: ("fp8_e4m3", torch.uint8),
    torch.float8_e5m2: ("fp8_e5m2", torch.uint8),
}
DTYPES = {fmt: dt for dt, (fmt, _) in FORMATS.items()}
_UINT = {torch.int32: np.uint32, torch.int16: np.uint16, torch.uint8: np.uint8}
LOW = (torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def fmt_of(dtype) -> str:
    return FORMATS[dtype][0]


def to_bits(t: torch.Tensor) -> np.ndarray:
    """The encodings of ``t`` as a contiguous numpy array of the format's uint dtype."""
    fmt, it = FORMATS[t.dtype]
    return t.detach().contiguous().view(it).numpy().view(_UINT[it])


def from_bits(bits: np.ndarray, dtype) -> torch.Tensor:
    """A torch tensor of ``dtype`` holding ``bits`` (the library's encodings)."""
    fmt, it = FORMATS[dtype]
    a = np.ascontiguousarray(bits, dtype=_UINT[it])
    if it == torch.uint8:
        return torch.from_numpy(a.copy()).view(dtype)
    sig = {torch.int32: np.int32, torch.int16: np.int16}[it]
    return torch.from_numpy(a.view(sig).copy()).view(dtype)
