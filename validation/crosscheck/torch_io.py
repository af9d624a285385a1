"""Encodings in and out of torch: torch imported on first use, the dtype names, a
tensor holding given encodings on a device (`to_torch`, `t_from64` for float64
values) and the encodings of a tensor (`from_torch`)."""
from __future__ import annotations

import numpy as np

_torch = None


def torch():
    global _torch
    if _torch is None:
        import torch as t
        _torch = t
    return _torch


def tdtype(name):
    return {"float16": torch().float16, "bfloat16": torch().bfloat16,
            "float32": torch().float32, "float64": torch().float64}[name]


def to_torch(bits: np.ndarray, dtype: str, device: str):
    """A torch tensor of ``dtype`` holding the encodings ``bits`` (uint16/uint32)."""
    t = torch()
    if bits.dtype == np.uint16:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int16))
    elif bits.dtype == np.uint32:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int32))
    else:
        x = t.from_numpy(np.ascontiguousarray(bits).view(np.int64))
    return x.to(device).view(tdtype(dtype))


def from_torch(x) -> np.ndarray:
    """Encodings of a torch tensor, as uint16/uint32/uint64."""
    t = torch()
    x = x.detach().contiguous()
    if x.element_size() == 2:
        return x.view(t.int16).cpu().numpy().view(np.uint16)
    if x.element_size() == 4:
        return x.view(t.int32).cpu().numpy().view(np.uint32)
    return x.view(t.int64).cpu().numpy().view(np.uint64)


def t_from64(x: np.ndarray, device: str):
    return torch().from_numpy(np.ascontiguousarray(x)).to(device)
