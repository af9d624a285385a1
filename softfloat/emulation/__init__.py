"""``softfloat.emulation``: ``sf.emulate(device)`` runs an unchanged PyTorch
program on CPU tensors with every aten op computed as ``device`` computes it.

    with sf.emulate("h100") as run:
        loss = model(x).float().pow(2).mean()
        loss.backward()
    print(run.report())

A `torch.utils._python_dispatch.TorchDispatchMode` (mode.py) sends each op to a
model: GEMMs to `softfloat.cublas.gemm` (gemm.py), 16-bit elementwise ops and
casts to the ``torch_cuda`` platform (elementwise.py), reductions and float32
opmath ops to stated models (reductions.py); data movement is exact; the rest
runs natively and is counted (``strict=True`` raises instead). The report
(report.py) gives per op the calls, the model and the claim level. See
docs/emulate.md. The package imports torch only when `emulate` is called.
"""
from __future__ import annotations

import contextlib

from .._extras import require as _require
from .device import EmulatedDevice, EmulationError
from .report import CLAIMS, Report, Row

__all__ = ["emulate", "Run", "EmulatedDevice", "EmulationError", "Report", "Row", "CLAIMS"]


class Run:
    """One ``sf.emulate`` region: a context manager; `report` at any time."""

    def __init__(self, device: EmulatedDevice):
        from .mode import EmulateMode   # torch, imported here: not by `import softfloat`
        self.device = device
        self.mode = EmulateMode(device)
        self._stack = None

    def __enter__(self):
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        if self._stack is not None:
            raise RuntimeError("this sf.emulate region is already active")
        st = contextlib.ExitStack()
        # scaled_dot_product_attention through its math path: the fused CPU
        # kernel would hide its GEMMs and softmax from the mode
        st.enter_context(sdpa_kernel([SDPBackend.MATH]))
        st.enter_context(self.mode)
        self._stack = st
        del torch
        return self

    def __exit__(self, *exc):
        st, self._stack = self._stack, None
        return st.__exit__(*exc)

    def report(self) -> Report:
        d = self.device
        settings = {"arch": d.arch, "splitk": d.splitk, "strict": d.strict,
                    "allow_tf32": "torch.backends" if d.allow_tf32 is None else d.allow_tf32}
        return self.mode.counter.report(d.name, settings)


def emulate(device, *, splitk=None, strict=False, allow_tf32=None) -> Run:
    """A context manager that computes the aten ops of CPU tensors as ``device``.

    device : a GPU or architecture name `softfloat.mma.tensor_core` takes
        ("h100", "a100", "hopper", "b200", ...) or "h100_pcie", "h100_sxm", "rtx4060".
    splitk : None (S = 1), (S, order) with order "contiguous", "interleaved" or
        "pairwise", or "auto" (cuBLASLt's choice from mmaemu's recorded heuristics
        when mmaemu is installed), passed to softfloat.cublas.gemm.
    strict : raise `EmulationError` on the first op without a model.
    allow_tf32 : None (read ``torch.backends.cuda.matmul.allow_tf32`` at each
        float32 GEMM) or a bool.
    """
    _require("torch", "sf.emulate")
    return Run(EmulatedDevice.make(device, splitk=splitk, allow_tf32=allow_tf32,
                                   strict=strict))
